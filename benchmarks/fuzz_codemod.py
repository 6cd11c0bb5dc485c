"""Longer fuzz run of the codemod: `python benchmarks/fuzz_codemod.py [--examples N] [--seed S]`.

Same properties as tests/codemod/test_codemod_fuzz.py (never crashes, failed files untouched,
every output parses, a second run changes nothing), with many more examples and a random seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "codemod")]

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fuzz_strategies import check_contract, check_notebook_contract, generated_program, mutated_fixture  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per property (default 2000)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    config = settings(max_examples=args.examples, deadline=None, database=None, print_blob=True,
                      suppress_health_check=list(HealthCheck))
    properties = {
        "mutated fixtures": given(mutated_fixture())(check_contract),
        "hypothesmith programs": given(generated_program())(check_contract),
        "mutated notebooks": given(st.lists(mutated_fixture(), min_size=1, max_size=4))(check_notebook_contract),
    }
    for name, test in properties.items():
        test = config(test)
        if args.seed is not None:
            test = seed(args.seed)(test)
        start = time.perf_counter()
        test()
        print(f"{name}: {args.examples} examples OK in {time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
