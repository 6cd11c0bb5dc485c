"""Runs every benchmark, prints one table, writes JSON with the machine description.

    python benchmarks/run.py [--quick] [--devices 2 4] [--json benchmarks/results/latest.json]

Each part runs in its own process (simulated devices and peak memory need a fresh
TensorFlow). On a machine with real GPUs nothing changes: the parts use the GPUs
instead of simulated ones (pass --devices no larger than the GPU count).
Goals (from the benchmark issue): shim/native training throughput >= 0.98, wrap no
slower than building natively in scope, peak memory <= 1.05x native, hook start-up
< 2 ms, codemod >= 20x tf_upgrade_v2's throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("training", "memory", "startup", "codemod")
ROOT = HERE.parent


def _rows(script: str, *args: str, timeout: float = 3600) -> list[dict]:
    result = subprocess.run(
        [sys.executable, str(HERE / script), *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    if result.returncode != 0:
        raise SystemExit(f"{script} failed:\n{result.stderr[-3000:]}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def _machine() -> dict:
    import tensorflow as tf  # only for versions and devices, in this parent process

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    import keras

    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1),
        "gpus": gpus or "none (simulated GPUs on logical CPU devices)",
        "python": platform.python_version(), "tensorflow": tf.__version__,
        "keras": keras.__version__, "date": time.strftime("%Y-%m-%d"),
    }


def _codemod_latency() -> dict:
    """Rewrite latency of one typical 300-line legacy script (in process, and via the CLI)."""
    import statistics
    import tempfile

    sys.path.insert(0, str(ROOT))
    from multi_gpu_codemod import transform_source

    site = (ROOT / "fixtures/codemod/seed/xception_doc.before.py").read_text()
    filler = "".join(
        f"\n\ndef helper_{i}(xs, k={i}):\n    total = 0\n    for x in xs:\n        total += x * k\n"
        f"    return total / max(len(xs), 1)\n" for i in range(40)
    )
    source = (site + filler).encode()
    lines = source.count(b"\n")
    times = []
    for _ in range(20):
        start = time.perf_counter()
        transform_source(source, "script.py")
        times.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "script.py")
        cli = []
        for _ in range(5):
            path.write_bytes(source)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "multi_gpu_codemod", str(path)], capture_output=True, cwd=ROOT)
            cli.append(time.perf_counter() - start)
    return {"lines": lines, "in_process_ms": statistics.median(times) * 1000,
            "cli_ms": statistics.median(cli) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and runs (a smoke run)")
    parser.add_argument("--devices", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--json", default=str(HERE / "results" / "latest.json"))
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="run only these parts (default: all)")
    args = parser.parse_args()
    steps, runs, files = ("15", "10", "600") if args.quick else ("40", "40", "3000")
    devices = [str(d) for d in args.devices]

    report: dict = {"machine": _machine()}
    print("machine:", ", ".join(f"{k}={v}" for k, v in report["machine"].items()), flush=True)
    if "training" in args.parts:
        report["training"] = _rows("training.py", "--devices", *devices, "--steps", steps)
    if "memory" in args.parts:
        report["memory"] = [
            row for n in devices for kind in ("native", "shim")
            for row in _rows("memory.py", "--kind", kind, "--devices", n, "--steps", steps)
        ]
    if "startup" in args.parts:
        report["startup"] = _rows("startup.py", "--runs", runs)
    if "codemod" in args.parts:
        report["codemod_latency"] = _codemod_latency()
        codemod = subprocess.run(
            [sys.executable, str(HERE / "codemod_throughput.py"), "--files", files],
            capture_output=True, text=True, cwd=ROOT,
        )
        report["codemod_throughput"] = codemod.stdout

    _print_table(report, devices)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


def _spread(s: dict) -> str:
    return f"{s['median']:.3f} ({s['min']:.3f}-{s['max']:.3f})"


def _print_table(report: dict, devices: list[str]) -> None:
    if "training" in report:
        print(f"\n{'measure':<26}{'model':<15}{'dev':>4}  {'shim':<27}{'native':<27}"
              f"{'one device':<27}{'native/shim':>11}")
        for row in report["training"]:
            one = _spread(row["one device"]) if "one device" in row else "-"
            # native time / shim time: the shim's relative throughput (goal >= 0.98; wrap >= 1)
            ratio = row["native"]["median"] / row["shim"]["median"]
            print(f"{row['what']:<26}{row['model']:<15}{row['devices']:>4}  {_spread(row['shim']):<27}"
                  f"{_spread(row['native']):<27}{one:<27}{ratio:>11.2f}")
        print()
    for n in devices if "memory" in report else []:
        native, shim = (next(r for r in report["memory"] if r["kind"] == k and str(r["devices"]) == n)
                        for k in ("native", "shim"))
        print(f"peak memory, {n} devices: shim {shim['peak_bytes'] / 2**20:.0f} MiB, native "
              f"{native['peak_bytes'] / 2**20:.0f} MiB, shim/native "
              f"{shim['peak_bytes'] / native['peak_bytes']:.3f} ({shim['unit']})")
    for row in report.get("startup", []):
        print(f"start-up {row['command']}: {row['with_hook_ms']:.2f} ms with the hook, "
              f"{row['without_ms']:.2f} ms without, cost {row['cost_ms']:+.2f} ms "
              f"(median of {row['runs']})")
    if "codemod_latency" in report:
        lat = report["codemod_latency"]
        print(f"codemod on one {lat['lines']}-line script: {lat['in_process_ms']:.1f} ms in process, "
              f"{lat['cli_ms']:.0f} ms through the CLI (interpreter start included)")
        print("\n" + report["codemod_throughput"])


if __name__ == "__main__":
    sys.exit(main())
