"""Runs the codemod over the real-world corpus (fixtures/realworld) and prints, per defect class
of its manifest, how many sites were rewritten / reported / left quiet as required, and how many
were silent, wrong, misleading or crashed.

    python benchmarks/corpus.py [--json] [--details]

Goal: 0 crashes, 0 wrong rewrites, 0 silent sites, at least half of all sites rewritten.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "codemod"))
sys.path.insert(0, str(ROOT))

from realworld import OUTCOMES, corpus_files, evaluate, table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--details", action="store_true", help="list every site not graded as required")
    args = parser.parse_args(argv)
    graded, runs = evaluate()
    rows = table(graded)
    if args.json:
        for row in rows:
            print(json.dumps({"part": "corpus", **row}))
    else:
        print(f"real-world corpus: {len(corpus_files())} files, {len(graded)} sites, "
              f"{sum(r.error is not None for r in runs.values())} files crashed the codemod")
        width = max(len(r["class"]) for r in rows)
        print(f"{'class':<{width}}  {'sites':>5}  " + "  ".join(f"{o:>10}" for o in OUTCOMES))
        for row in rows:
            print(f"{row['class']:<{width}}  {row['sites']:>5}  " + "  ".join(f"{row[o]:>10}" for o in OUTCOMES))
    if args.details:
        for g in graded:
            required = "rewritten" if g.expect == "rewritten" else "quiet" if g.expect == "quiet" else "reported"
            if g.outcome != required:
                print(f"  {g.path}: {g.at.splitlines()[0]!r} expected {g.expect}, got {g.outcome} {g.detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
