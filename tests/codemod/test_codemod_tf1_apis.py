"""codemod/fixers/tf1_apis.py: TensorFlow 1 calls left in a rewritten file are reported once each,
at their first line, with their TensorFlow 2 form; nothing is rewritten, and a file left
unchanged, or one using `tf.compat.v1`, gets no such finding."""

from multi_gpu_codemod import transform_source

HEAD = "import tensorflow as tf\nfrom keras import backend as K\nfrom keras.utils import multi_gpu_model\n\n"
SITE = "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile(optimizer=OPT, loss='mse')\n"


def _findings(source: str) -> list[tuple[int, str, str]]:
    result = transform_source(source.encode(), "train.py")
    return [(f.line, f.code, f.message) for f in result.findings if f.code == "MGPU407"]


def test_a_tf1_session_set_up_and_optimizer_are_reported_once_each_with_their_tf2_form():
    # round 37, jb19: a TF 1.13 script was rewritten into TF 2 strategy code beside `tf.ConfigProto`
    source = HEAD + (
        "config = tf.ConfigProto()\nconfig.gpu_options.allow_growth = True\n"
        "K.set_session(tf.Session(config=config))\nOPT = tf.train.AdamOptimizer(1e-4)\n"
        "other = tf.Session()\n" + SITE
    )
    found = _findings(source)
    assert [(line, code) for line, code, _ in found] == [(5, "MGPU407"), (7, "MGPU407"), (7, "MGPU407"), (8, "MGPU407")]
    messages = " ".join(message for _, _, message in found)
    assert "`tf.config.experimental.set_memory_growth(gpu, True)`" in messages
    assert "`tf.keras.optimizers.Adam(...)`, built under the scope" in messages
    assert "`tf.compat.v1.keras.backend.set_session`" in messages
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "config = tf.ConfigProto()\n" in out and "tf.train.AdamOptimizer(1e-4)" in out  # (reported, not rewritten)


def test_compat_v1_calls_and_files_left_alone_get_no_finding():
    assert _findings(HEAD + "config = tf.compat.v1.ConfigProto()\n" + SITE) == []
    left = HEAD + "config = tf.ConfigProto()\nparallel = multi_gpu_model(build(), gpus=2)\n"  # (no compile: reported)
    assert _findings(left) == []
