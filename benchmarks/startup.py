"""Start-up cost of the import hook: `python -c pass` and `python -c "import numpy"`,
with the hook and with MULTI_GPU_COMPAT_DISABLE=1, alternating, many runs each.

Usage: python benchmarks/startup.py [--runs 40]   (prints one JSON row per command)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _time(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    on = {k: v for k, v in os.environ.items() if k != "MULTI_GPU_COMPAT_DISABLE"}
    off = dict(on, MULTI_GPU_COMPAT_DISABLE="1")
    for code in ("pass", "import numpy"):
        cmd = [sys.executable, "-c", code]
        _time(cmd, on), _time(cmd, off)  # warm the file cache
        with_hook, without = [], []
        for _ in range(args.runs):  # alternate so drift hits both alike
            with_hook.append(_time(cmd, on))
            without.append(_time(cmd, off))
        row = {
            "command": f"python -c {code!r}",
            "with_hook_ms": statistics.median(with_hook) * 1000,
            "without_ms": statistics.median(without) * 1000,
            "runs": args.runs,
        }
        row["cost_ms"] = row["with_hook_ms"] - row["without_ms"]
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
