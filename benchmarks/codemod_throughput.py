"""Codemod throughput vs `tf_upgrade_v2 --intree` on one generated corpus, in the same run.

    python benchmarks/codemod_throughput.py [--files 3000] [--site-every 50] [--tf-timeout 600]

Generates a corpus (mostly unrelated Python, one file in `--site-every` with a multi_gpu_model
site) in a temp dir, then times: the codemod with 1 job, with all jobs (`--check`, so every file
is processed the same way each run), and tf_upgrade_v2 on the same tree. If tf_upgrade_v2 does
not finish within --tf-timeout it is rerun on a subset and the rate extrapolated (said so).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = (ROOT / "fixtures" / "codemod" / "seed" / "xception_doc.before.py").read_text()

_FUNC = '''
def {name}(data, scale={k}):
    """Helper number {k}: normalise and aggregate."""
    total = 0
    for i, item in enumerate(data):
        if item is None:
            continue
        total += (item * scale) / (i + 1)
    result = {{"total": total, "count": len(data), "name": "{name}"}}
    return [v for v in sorted(result)] if total > {k} else result
'''
_CLASS = '''
class {name}:
    def __init__(self, size={k}):
        self.size = size
        self.values = [x ** 2 for x in range(size)]

    def __len__(self):
        return len(self.values)

    def update(self, other):
        try:
            self.values.extend(other)
        except TypeError as error:
            raise ValueError("bad {name}") from error
'''


def make_corpus(root: Path, files: int, site_every: int, seed: int = 0) -> tuple[int, int]:
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = ["import os\nimport numpy as np\nimport tensorflow as tf\n"]
        for k in range(rng.randint(3, 25)):
            template = _FUNC if rng.random() < 0.6 else _CLASS
            parts.append(template.format(name=f"thing_{n}_{k}" if template is _FUNC else f"Thing{n}_{k}", k=k))
        if n % site_every == 0:
            parts.append(SITE)
        text = "".join(parts)
        (folder / f"mod_{n}.py").write_text(text)
        total += len(text.encode())
    return files, total


def time_codemod(corpus: Path, jobs: int) -> float:
    start = time.perf_counter()
    command = [sys.executable, "-m", "multi_gpu_codemod", "--check", "-j", str(jobs), "--progress", "never",
               str(corpus)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"codemod failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
    print(f"  codemod -j {jobs}: {done.stdout.strip().splitlines()[-1]}")
    return elapsed


def time_tf_upgrade(corpus: Path, timeout: float) -> float | None:
    tool = Path(sys.executable).with_name("tf_upgrade_v2")
    out = Path(tempfile.mkdtemp(prefix="tfup_out_"))
    shutil.rmtree(out)
    try:
        start = time.perf_counter()
        subprocess.run([str(tool), "--intree", str(corpus), "--outtree", str(out), "--reportfile", str(out) + ".txt"],
                       capture_output=True, timeout=timeout, check=False)
        return time.perf_counter() - start
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(out, ignore_errors=True)
        Path(str(out) + ".txt").unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--site-every", type=int, default=50)
    parser.add_argument("--tf-timeout", type=float, default=600)
    parser.add_argument("--subset", type=int, default=300, help="files for tf_upgrade_v2 if the full run times out")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="codemod_bench_") as tmp:
        corpus = Path(tmp) / "corpus"
        files, size = make_corpus(corpus, args.files, args.site_every)
        mb = size / 1e6
        with_site = (files + args.site_every - 1) // args.site_every
        print(f"corpus: {files} files, {mb:.1f} MB, {with_site} with a site; {cores} cores")
        rows = [("codemod -j 1", time_codemod(corpus, 1), files, mb)]
        rows.append((f"codemod -j {cores}", time_codemod(corpus, cores), files, mb))
        tf_time = time_tf_upgrade(corpus, args.tf_timeout)
        if tf_time is not None:
            rows.append(("tf_upgrade_v2 --intree", tf_time, files, mb))
        else:
            subset = Path(tmp) / "subset"
            n, sub_size = make_corpus(subset, args.subset, args.site_every)
            sub_time = time_tf_upgrade(subset, args.tf_timeout)
            label = f"tf_upgrade_v2 (subset {n} files; full run > {args.tf_timeout:.0f}s)"
            rows.append((label, sub_time or float("inf"), n, sub_size / 1e6))
    print(f"\n{'tool':52} {'seconds':>8} {'files/s':>9} {'MB/s':>7}")
    for name, seconds, n, megabytes in rows:
        print(f"{name:52} {seconds:8.2f} {n / seconds:9.1f} {megabytes / seconds:7.2f}")
    tf_rate = rows[-1][2] / rows[-1][1]
    for name, seconds, n, _ in rows[:-1]:
        print(f"{name}: {n / seconds / tf_rate:.1f}x tf_upgrade_v2's files/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
