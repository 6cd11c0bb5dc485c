"""Peak memory of one training run: the shim's parallel model or hand-written MirroredStrategy code.

Usage: python benchmarks/memory.py --kind shim|native [--devices 2] [--steps 30]
Prints one JSON row. Run each kind in its own process (run.py does): peak resident
memory (ru_maxrss) on CPU / simulated GPUs, or TensorFlow's peak GPU allocation on real GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["shim", "native"], required=True)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    import multi_gpu_compat as compat
    import tensorflow as tf

    real_gpus = len(tf.config.list_physical_devices("GPU"))
    if not real_gpus:
        compat.simulate_gpus(args.devices)
    import keras
    import numpy as np

    from multi_gpu_compat import _devices

    def mlp() -> keras.Model:
        inp = keras.Input((784,))
        h = keras.layers.Dense(1536, activation="relu")(inp)
        h = keras.layers.Dense(1536, activation="relu")(h)
        return keras.Model(inp, keras.layers.Dense(10)(h))

    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if args.kind == "shim":
        model = compat.multi_gpu_model(mlp(), gpus=args.devices)
        model.compile("adam", loss)
    else:
        strategy = _devices.strategy_for(_devices.replica_devices(list(range(args.devices))))
        with strategy.scope():
            model = mlp()
            model.compile("adam", loss)
    rng = np.random.default_rng(0)
    x = rng.random((256 * args.steps, 784), dtype=np.float32)
    y = rng.integers(0, 10, len(x))
    model.fit(x, y, batch_size=256, epochs=1, verbose=0)
    if real_gpus:
        peak = sum(
            tf.config.experimental.get_memory_info(f"GPU:{i}")["peak"] for i in range(args.devices)
        )
        unit = "GPU bytes (sum of peaks)"
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        unit = "resident bytes (ru_maxrss)"
    print(json.dumps({"kind": args.kind, "devices": args.devices, "peak_bytes": peak, "unit": unit,
                      "params": model.count_params()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
