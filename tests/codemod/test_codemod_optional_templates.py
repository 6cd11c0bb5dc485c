"""codemod/optional_templates.py: a handle bound only when the wrap ran goes, with the `if` choosing it."""

import pytest

from multi_gpu_codemod import transform_source

_SOURCE = (
    "from keras.utils import multi_gpu_model\n\n\ndef main(gpu_num):\n    model = build()\n\n"
    "    # support multi-gpu training\n    template_model = None\n    if gpu_num >= 2:\n"
    "        template_model = model\n        model = multi_gpu_model(model, gpus=gpu_num)\n"
    "    model.compile('adam', 'mse')\n    model.fit(x, y)\n\n"
    "    if template_model is not None:\n        template_model.save_weights({saved!r})\n"
    "    else:\n        model.save_weights('final.h5')\n{after}"
)


def _migrated(saved: str = "final.h5", after: str = "") -> str:
    return transform_source(_SOURCE.format(saved=saved, after=after).encode(), "train.py").output.decode()


def test_the_handle_and_the_if_choosing_it_go():
    # round 56, au04 (keras-yolo3's forks): both branches save the one model now
    assert _migrated().endswith(
        "    with strategy.scope():\n        model = build()\n\n        model.compile('adam', 'mse')\n"
        "    model.fit(x, y)\n\n    model.save_weights('final.h5')\n"
    )


@pytest.mark.parametrize("saved,after", [
    ("template.h5", ""),  # the branches differ: which file is written depends on the handle
    ("final.h5", "    print(template_model)\n"),  # the handle is read elsewhere: it stays
])
def test_a_handle_whose_if_is_not_a_choice_between_the_same_two_stays(saved, after):
    out = _migrated(saved, after)
    assert "template_model = None\n" in out and "if template_model is not None:\n" in out, out
