"""Codemod time on the real-world corpus (fixtures/realworld), this tree against a git revision, side by side.

    python benchmarks/corpus_speed.py [--baseline REV] [--rounds 7] [--repeat 3]

The baseline's `codemod/` is exported with `git archive` into a temporary folder and imported as
`multi_gpu_codemod` in its own child process; the two are run alternately, `--rounds` times, each
child migrating every corpus file (`.py` with transform_source, `.ipynb` with transform_notebook)
`--repeat` times after one warm-up pass. Prints the median, min and max seconds per pass and the
ratio now / baseline (goal: <= 1.0, the codemod no slower).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "fixtures" / "realworld"

_CHILD = r"""
import json, sys, time
from pathlib import Path
import multi_gpu_codemod
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.notebook import transform_notebook
files = sorted(p for p in Path(sys.argv[1]).rglob("*") if p.suffix in (".py", ".ipynb"))
data = [(p.suffix, p.read_bytes(), p.name) for p in files]
def one_pass():
    for suffix, source, name in data:
        (transform_notebook if suffix == ".ipynb" else transform_source)(source, name)
one_pass()
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    one_pass()
    times.append(time.perf_counter() - start)
print(json.dumps({"package": multi_gpu_codemod.__file__, "files": len(files), "times": times}))
"""


def _export(revision: str, into: Path) -> Path:
    """`codemod/` of `revision`, as an importable `multi_gpu_codemod` package under `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "codemod"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "codemod").rename(into / "multi_gpu_codemod")
    return into


def _child(path_entry: Path | None, repeat: int) -> dict:
    env = dict(os.environ)
    if path_entry is not None:
        env["PYTHONPATH"] = f"{path_entry}{os.pathsep}{env.get('PYTHONPATH', '')}"
    out = subprocess.run([sys.executable, "-c", _CHILD, str(CORPUS), str(repeat)], check=True,
                         capture_output=True, text=True, env=env, cwd=tempfile.gettempdir()).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision to compare with (default: HEAD)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"baseline": [], "now": []}
    with tempfile.TemporaryDirectory() as folder:
        baseline = _export(args.baseline, Path(folder))
        files = 0
        for _ in range(args.rounds):
            for label, entry in (("baseline", baseline), ("now", None)):
                result = _child(entry, args.repeat)
                files = result["files"]
                times[label] += result["times"]
    print(f"real-world corpus: {files} files; seconds per pass over all of them, median (min-max), "
          f"{args.rounds} rounds x {args.repeat} passes, alternating")
    for label in ("baseline", "now"):
        values = times[label]
        name = f"{label} ({args.baseline})" if label == "baseline" else "now (this tree)"
        print(f"  {name:<28} {statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})")
    ratio = statistics.median(times["now"]) / statistics.median(times["baseline"])
    print(f"  now / baseline: {ratio:.3f} (goal <= 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
