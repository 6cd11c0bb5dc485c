"""Shim vs hand-written MirroredStrategy code: wrap time and training step time, side by side.

Usage: python benchmarks/training.py [--devices 2 4] [--steps 40] [--json OUT.json]

Runs on simulated GPUs (logical CPU devices) when the machine has none, or on real
GPUs when it has them (then set --devices to at most the GPU count). Every
configuration is measured in the same process, alternating shim and native runs,
and reported as medians with min-max spread, plus the shim/native ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--steps", type=int, default=40, help="timed training steps per run")
    parser.add_argument("--repeats", type=int, default=3, help="wrap/build repetitions")
    parser.add_argument("--json", help="also write the results here")
    return parser.parse_args()


def main() -> int:
    args = _parse()
    import multi_gpu_compat as compat
    import tensorflow as tf

    real_gpus = len(tf.config.list_physical_devices("GPU"))
    if not real_gpus:
        compat.simulate_gpus(max(args.devices))
    import keras
    import numpy as np

    from multi_gpu_compat import _devices

    def mlp() -> keras.Model:
        inp = keras.Input((784,))
        h = keras.layers.Dense(1536, activation="relu")(inp)
        h = keras.layers.Dense(1536, activation="relu")(h)
        return keras.Model(inp, keras.layers.Dense(10)(h))

    def xception() -> keras.Model:
        return keras.applications.Xception(weights=None, input_shape=(71, 71, 3), classes=10)

    class StepTimer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.times: list[float] = []

        def on_train_batch_begin(self, batch, logs=None):
            self._t = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            self.times.append(time.perf_counter() - self._t)

    rows: list[dict] = []
    rng = np.random.default_rng(0)

    def spread(values: list[float]) -> dict:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    for n in args.devices:
        devices = _devices.replica_devices(list(range(n)))
        strategy = _devices.strategy_for(devices)
        for name, build, shape, batch in (("MLP 3.6M", mlp, (784,), 256), ("Xception 71px", xception, (71, 71, 3), 32)):
            wrap, native_build = [], []
            for _ in range(args.repeats):
                template = build()
                t = time.perf_counter()
                compat.multi_gpu_model(template, gpus=n)
                wrap.append(time.perf_counter() - t)
                t = time.perf_counter()
                with strategy.scope():
                    build()
                native_build.append(time.perf_counter() - t)
            rows.append({"what": "wrap vs native build (s)", "model": name, "devices": n,
                         "shim": spread(wrap), "native": spread(native_build)})

            x = rng.random((batch * (args.steps + 5),) + shape, dtype=np.float32)
            y = rng.integers(0, 10, len(x))
            timings = {}
            for kind in ("shim", "native", "one device"):
                if kind == "shim":
                    model = compat.multi_gpu_model(build(), gpus=n)
                    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
                elif kind == "native":
                    with strategy.scope():
                        model = build()
                        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
                else:
                    model = build()
                    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
                timer = StepTimer()
                model.fit(x, y, batch_size=batch, epochs=1, verbose=0, callbacks=[timer])
                timings[kind] = timer.times[5:]  # first steps include tracing
            rows.append({"what": "train step (ms)", "model": name, "devices": n,
                         **{k: spread([v * 1000 for v in vs]) for k, vs in timings.items()}})

    for row in rows:
        print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": sys.version, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
