"""What the parallel model adds to a Keras model, on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import _internals
from .notices import notify_once

_SAVE_NOTICE = (
    "Saving the model returned by `multi_gpu_model` writes its template (the "
    "single-device model you passed in) with the trained weights, as the "
    "`multi_gpu_model` documentation asked for; the file loads without this "
    "project installed."
)


def tensor_name(tensor: Any) -> str:
    """The name of the input layer that produced a symbolic tensor."""
    return _internals.producing_layer_name(tensor) or str(tensor.name).split(":")[0]


def reset_compiled_functions(model: Any) -> None:
    """Functions traced before the variables were mirrored captured the old ones."""
    model.train_function = model.test_function = model.predict_function = None


# How a family of legacy modules named the parallel model's outputs when the template repeats
# a name (a shared sub-model called twice, a siamese network). The import path a script used
# decides (`legacy_modules.LEGACY_MODULES`, "output_naming"):
KERAS_NAMING = "keras"  # Keras 2.2.3-2.3 (`keras.utils`): add, nested_1, nested_2
TF_KERAS_NAMING = "tf.keras"  # tf.keras of TF 2.x, tf_keras: add, nested, nested_1
OUTPUT_NAMINGS = (KERAS_NAMING, TF_KERAS_NAMING)


def output_names(template: Any, count: int, naming: str | None = None) -> list[str]:
    """The names of the parallel model's `count` outputs.

    `naming` None (a direct `multi_gpu_compat.multi_gpu_model` call): the template's own
    output names, a repeated one numbered as Keras 2.2.3+ numbered it (Keras 3 repeats
    names, tf_keras does not). `KERAS_NAMING` / `TF_KERAS_NAMING`: the names that family's
    `multi_gpu_model` gave, computed from the names of the layers producing the outputs.
    """
    own = list(getattr(template, "output_names", None) or [])  # Keras 3 Sequential has none
    layers = _output_layer_names(template)
    names = layers if naming is not None and len(layers) == count else own
    if len(names) != count:
        names = layers
    if len(names) != count:
        names = [f"output_{i + 1}" for i in range(count)]
    return _uniquified(names) if naming == TF_KERAS_NAMING else _numbered_repeats(names)


def _output_layer_names(template: Any) -> list[str]:
    try:
        names = [_internals.producing_layer_name(t) for t in template.outputs]
    except (AttributeError, TypeError, ValueError, IndexError):
        return []
    return [n for n in names if n is not None] if all(names) else []


def _numbered_repeats(names: list[str]) -> list[str]:
    """Keras 2.2.3-2.3: every repeated name numbered from 1, the unique ones kept.

    A suffixed name that is already taken is skipped (['a', 'a', 'a_1'] gives a_2, a_3, a_1,
    where Keras 2.3 gave a duplicate a_1 and failed).
    """
    repeated = {n for n in names if names.count(n) > 1}
    taken = set(names) - repeated
    last_suffix: dict[str, int] = {}
    result = []
    for name in names:
        if name not in repeated:
            result.append(name)
            continue
        suffix = last_suffix.get(name, 0) + 1
        while f"{name}_{suffix}" in taken:
            suffix += 1
        last_suffix[name] = suffix
        taken.add(f"{name}_{suffix}")
        result.append(f"{name}_{suffix}")
    return result


def _uniquified(names: list[str]) -> list[str]:
    """tf.keras: the first of a name kept, later ones numbered from 1 (as its models name outputs)."""
    taken: set[str] = set()
    next_suffix: dict[str, int] = {}
    result = []
    for name in names:
        proposal = name
        while proposal in taken:
            suffix = next_suffix.get(name, 1)
            proposal = f"{name}_{suffix}"
            next_suffix[name] = suffix + 1
        taken.add(proposal)
        result.append(proposal)
    return result


def fresh_inputs(keras: Any, specs: Any) -> list[Any]:
    """New symbolic inputs like the template's `inputs`: same shapes, dtypes and names."""
    return [keras.Input(batch_shape=tuple(t.shape), dtype=t.dtype, name=tensor_name(t)) for t in specs]


def unknown_inputs_error(template: Any, functional_model: str, built_with: str = "") -> ValueError:
    """The error for a subclassed template whose input shape cannot be told.

    `functional_model` is how the backend spells `Model` in the suggested fix,
    `built_with` what the template was built with, if the backend knows.
    """
    detail = f": it was built with {built_with}" if built_with else ""
    return ValueError(
        "`multi_gpu_model` cannot tell the inputs of the subclassed model "
        f"{template.name!r}{detail}. Build it by calling it once on a batch with a single "
        "input tensor, or wrap it in a functional model: "
        f"`{functional_model}(inputs, template(inputs))`."
    )


def build_parallel(
    template: Any,
    strategy: Any,
    parallel_class: Any,
    keras: Any,
    template_inputs: Callable[[Any], tuple[list[Any], Any]],
    output_naming: str | None = None,
) -> Any:
    """Wraps `template` (already distributed) in a `parallel_class` model built under `strategy`.

    The template is called once, as one layer, on fresh inputs like its own
    (`template_inputs` returns them and the structure to call it with); identity
    layers named like its outputs (`output_names`, by `output_naming`) keep the output
    names that losses and metrics dictionaries refer to.
    """
    import tensorflow as tf  # the backend modules that call this imported it already

    with strategy.scope():
        inputs, call_inputs = template_inputs(template)
        raw = template(call_inputs)
        flat = tf.nest.flatten(raw)
        names = output_names(template, len(flat), output_naming)
        flat = [keras.layers.Identity(name=n)(o) for n, o in zip(names, flat)]
        # Inputs and outputs in the template's own structure: a single-input template takes
        # a plain tensor, dict inputs and outputs stay dicts (`predict` returns one, `evaluate`
        # lists its results in the template's order).
        if isinstance(raw, dict):
            outputs = tf.nest.pack_sequence_as(raw, flat)
        else:
            outputs = flat if len(flat) > 1 else flat[0]
        parallel = parallel_class(call_inputs, outputs)
    parallel._init_parallel(template, strategy)
    return parallel


# The methods through which a model class carries its own training logic (TF 2.2+ idiom:
# GANs, custom losses, gradient clipping). Keras calls them on the model being fitted.
TRAINING_LOGIC_METHODS = (
    "train_step",
    "test_step",
    "predict_step",
    "compute_loss",
    "compute_metrics",
)


def carries_training_logic(template: Any, base_model_class: type) -> bool:
    """True when the template's class overrides a step method of Keras's `Model`."""
    cls = type(template)
    return any(
        getattr(cls, name, None) is not getattr(base_model_class, name, None)
        for name in TRAINING_LOGIC_METHODS
        if hasattr(base_model_class, name)
    )


def note_owner(template: Any, current: Any, strategy: Any) -> None:
    """Records that `strategy` now holds the template's variables.

    A template wrapped again on other devices hands its variables to the new
    strategy; parallel models made before that see a new generation and refuse
    to run (`ParallelMixin._check_current`) instead of failing inside TensorFlow.
    """
    generation = template.__dict__.get("_compat_generation", 0)
    if current is not None and current is not strategy:
        generation += 1
    template.__dict__["_compat_generation"] = generation


if TYPE_CHECKING:
    # For the type checker, the mixin extends a Keras model (whose classes are untyped).
    _KerasModel = Any
else:
    _KerasModel = object


class ParallelMixin(_KerasModel):
    """Compile under the strategy; save, load and checkpoint through the template."""

    _compat_template: Any
    _compat_strategy: Any
    # Whether files saved through the parallel model carry its compile settings and
    # optimizer state. Not on Keras 3: it cannot reload its own compiled .h5 files
    # ("Could not deserialize 'keras.metrics.mse'"), so the template stays uncompiled.
    _carries_compile_state = True

    # The base Keras `Model` class of this backend (whose step methods a template may override).
    _keras_model_class: Any = None

    def __init__(self, inputs: Any, outputs: Any, **kwargs: Any) -> None:
        # Not Functional's signature on purpose: `clone_model(parallel)` then builds a plain
        # single-device Functional model with the same layers (a copy of the template as one
        # layer), instead of a ParallelModel that no `multi_gpu_model` call set up.
        super().__init__(inputs, outputs, **kwargs)

    def _init_parallel(self, template: Any, strategy: Any) -> None:
        # Stored in __dict__ directly: Keras would otherwise track the template a
        # second time as a sub-layer and change `layers`.
        self.__dict__["_compat_template"] = template
        self.__dict__["_compat_strategy"] = strategy
        self.__dict__["_compat_generation"] = template.__dict__.get("_compat_generation", 0)
        self.__dict__["_compat_gpus"] = None  # set by `multi_gpu_model` (for copies)
        # A template whose class has its own train_step & co. is fitted by itself (it is a
        # distributed model already): exactly what hand-written MirroredStrategy code runs.
        self.__dict__["_compat_delegates"] = carries_training_logic(template, self._keras_model_class)

    def _runner(self) -> Any:
        """The model whose fit/evaluate/predict serve this one's (itself, or the template)."""
        self._check_current()
        return self._compat_template if self.__dict__.get("_compat_delegates") else None

    def _check_current(self) -> None:
        """Raises if a later `multi_gpu_model` call moved the template's weights elsewhere."""
        template = self._compat_template
        if template.__dict__.get("_compat_generation", 0) == self.__dict__.get("_compat_generation", 0):
            return
        raise RuntimeError(
            f"This parallel model no longer holds the weights of its template "
            f"{template.name!r}: `multi_gpu_model` was called on that template again "
            "with other `gpus`, and the model it returned took the weights over. Use "
            "the model returned by the latest `multi_gpu_model` call, or call "
            "`multi_gpu_model(template, gpus=...)` again to run on these devices "
            "(the template keeps the trained weights either way)."
        )

    @property
    def template(self) -> Any:
        """The single-device model passed to `multi_gpu_model`; shares all variables."""
        return self._compat_template

    def compile(self, *args: Any, **kwargs: Any) -> None:
        self._check_current()
        # Keras 3 needs the optimizer, metrics and loss trackers created in scope.
        self._distribute_compile_objects(args, kwargs)
        with self._compat_strategy.scope():
            super().compile(*args, **kwargs)
        if getattr(self, "optimizer", None) is not None:
            self._distribute_optimizer(self.optimizer)
        self.__dict__["_compat_compile_args"] = (args, kwargs)
        if self.__dict__.get("_compat_delegates"):
            # The template runs its own steps: it gets the same settings and the same
            # (already distributed) optimizer object.
            self._compile_template(args, kwargs)
            self.__dict__["_compat_compiled_template"] = True

    def _distribute_compile_objects(self, args: Any, kwargs: Any) -> None:
        """Moves metric objects created before the call onto the strategy (backend hook)."""

    def _compile_template(self, args: Any, kwargs: Any) -> None:
        args, kwargs = list(args), dict(kwargs)
        if args:
            args[0] = self.optimizer
        else:
            kwargs["optimizer"] = self.optimizer
        with self._compat_strategy.scope():
            self._compat_template.compile(*args, **kwargs)

    def _compile_template_like_self(self) -> None:
        """Before saving through the parallel model, give the template this model's
        compile settings and (shared) optimizer, so that the file resumes training
        like the compiled parallel-model files Keras 2.2+ wrote. A template the user
        compiled differently is left as it is."""
        template, compiled = self._compat_template, self.__dict__.get("_compat_compile_args")
        if not self._carries_compile_state or compiled is None:
            return
        if getattr(template, "optimizer", None) is self.optimizer:
            return
        if getattr(template, "optimizer", None) is not None and not self.__dict__.get(
            "_compat_compiled_template"
        ):
            return
        self._compile_template(*compiled)
        self.__dict__["_compat_compiled_template"] = True

    def _distribute_optimizer(self, optimizer: Any) -> None:
        raise NotImplementedError

    def fit(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().fit(*args, **kwargs)
        self.history = runner.fit(*args, **kwargs)
        return self.history

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().evaluate(*args, **kwargs)
        return runner.evaluate(*args, **kwargs)

    def predict(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().predict(*args, **kwargs)
        return runner.predict(*args, **kwargs)

    def train_on_batch(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().train_on_batch(*args, **kwargs)
        return runner.train_on_batch(*args, **kwargs)

    def test_on_batch(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().test_on_batch(*args, **kwargs)
        return runner.test_on_batch(*args, **kwargs)

    def predict_on_batch(self, *args: Any, **kwargs: Any) -> Any:
        runner = self._runner()
        if runner is None:
            return super().predict_on_batch(*args, **kwargs)
        return runner.predict_on_batch(*args, **kwargs)

    def save(self, filepath: Any, *args: Any, **kwargs: Any) -> Any:
        """Saves the template (the single-device model), as `multi_gpu_model` users were told to."""
        notify_once("save", _SAVE_NOTICE)
        self._compile_template_like_self()
        return self._compat_template.save(filepath, *args, **kwargs)

    def save_weights(self, filepath: Any, *args: Any, **kwargs: Any) -> Any:
        """Saves the template's weights: the file loads into the single-device model."""
        notify_once("save", _SAVE_NOTICE)
        return self._compat_template.save_weights(filepath, *args, **kwargs)

    def load_weights(self, filepath: Any, *args: Any, **kwargs: Any) -> Any:
        """Loads weights into the template, which the parallel model uses at once."""
        return self._compat_template.load_weights(filepath, *args, **kwargs)


    # --- serialization: what Keras lets a plain model do, done through the template ----

    def to_json(self, **kwargs: Any) -> str:
        """The template's JSON: `model_from_json` rebuilds the single-device model, into which
        the files `save_weights` writes (the template's weights) load."""
        return str(self._compat_template.to_json(**kwargs))

    def __reduce__(self) -> Any:
        """Pickles the template; unpickling wraps the copy again on the same GPUs."""
        # `multi_gpu_model` itself, which `multi_gpu_model` left here (`_compat_rebuild`): pickle
        # stores it by name, and this module need not import the one that imports it.
        return (self.__dict__["_compat_rebuild"], (self._compat_template, self.__dict__.get("_compat_gpus")))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """A new parallel model, on the same GPUs, around a deep copy of the template."""
        import copy

        rebuild = self.__dict__["_compat_rebuild"]
        new = rebuild(copy.deepcopy(self._compat_template, memo), self.__dict__.get("_compat_gpus"))
        memo[id(self)] = new
        return new
