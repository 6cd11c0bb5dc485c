"""The legacy modules of `multi_gpu_model`, in one table: data only, importing nothing.

Read by the shim's import hook (`import_hook`), which serves them, and by the codemod
(`multi_gpu_codemod.recognise`), which recognises `multi_gpu_model` imported from them, so the
two cannot drift apart. Python 3.9 syntax: the codemod runs there.

`LEGACY_MODULES` maps a module name to what legacy code finds there (absent keys: no):

- `"written"`: scripts imported `multi_gpu_model` from it; the codemod rewrites those imports.
- `"served_import"`: `from <name> import multi_gpu_model` works again through the hook
  (`multi-gpu-compat doctor` lists and tries each).
- `"serve"`: the hook gives the module a `multi_gpu_model` attribute once it is imported.
- `"output_naming"` (with `"serve"`): how that family's `multi_gpu_model` named repeated outputs
  (a shared sub-model called twice), which the served function keeps: `"keras"` (Keras
  2.2.3-2.3, `add, nested_1, nested_2`) or `"tf.keras"` (tf.keras and tf_keras: `add, nested,
  nested_1`). One module has one attribute: where Keras 3 makes `tf.keras.utils` or
  `tf.compat.v1.keras.utils` the module `keras.utils` (or `keras.api.utils`), those attribute
  paths get its naming.
- `"virtual"`: the module no longer exists; the hook creates it when imported (if no real one
  is found), forwarding other attribute look-ups to the module named here (None: to none).
  `"package": True` makes it a package (its children can be imported).
- `"helpers"`: Keras 2's device helpers (`legacy_surface`) the hook adds to it.
- `"submodules"`: its old submodules, made attributes of it (`keras.utils.multi_gpu_utils`
  after a plain `import keras`), created under `"parent"` when it is an alias of another
  name (Keras 3.3-3.8 bind `keras.utils` to `keras.api.utils`).
"""

# Keras 2's `multi_gpu_utils` helpers, and `tensorflow_backend`'s.
_DEVICE_HELPERS = ("_get_available_devices", "_normalize_device_name")
_GPU_HELPER = ("_get_available_gpus",)
_UTILS_SUBMODULES = ("training_utils", "multi_gpu_utils")
# Output naming of the two families (`multi_gpu_compat._parallel.output_names`).
_KERAS = "keras"
_TF_KERAS = "tf.keras"

LEGACY_MODULES: dict = {  # name -> {key: value}, as above
    # --- keras: Keras 2.0-2.3 (standalone), Keras 2.12-2.15 (TensorFlow's), Keras 3 ---------------
    "keras.utils": {"written": True, "served_import": True, "serve": True, "output_naming": _KERAS,
                    "submodules": _UTILS_SUBMODULES},
    "keras.utils.training_utils": {"written": True, "served_import": True, "serve": True, "output_naming": _KERAS,
                                   "virtual": "keras.utils", "helpers": _DEVICE_HELPERS},
    "keras.utils.multi_gpu_utils": {"written": True, "served_import": True, "serve": True, "output_naming": _KERAS,
                                    "virtual": "keras.utils", "helpers": _DEVICE_HELPERS},
    "keras.backend": {"helpers": _GPU_HELPER, "submodules": ("tensorflow_backend",)},
    "keras.backend.tensorflow_backend": {"virtual": "keras.backend", "helpers": _GPU_HELPER},
    # Keras 3.3-3.8: what `keras.utils`, `keras.backend` and `tf.compat.v1.keras.*` are.
    "keras.api.utils": {"serve": True, "output_naming": _KERAS, "submodules": _UTILS_SUBMODULES,
                        "parent": "keras.utils"},
    "keras.api.backend": {"helpers": _GPU_HELPER, "submodules": ("tensorflow_backend",),
                          "parent": "keras.backend"},
    # `tf.keras` on Keras 3, and on Keras 2.12-2.15 (v2; v1 is `tf.compat.v1.keras`).
    "keras._tf_keras.keras.utils": {"serve": True, "output_naming": _TF_KERAS},
    "keras._tf_keras.keras.backend": {"helpers": _GPU_HELPER},
    "keras.api._v2.keras.utils": {"serve": True, "output_naming": _TF_KERAS},
    "keras.api._v2.keras.backend": {"helpers": _GPU_HELPER},
    "keras.api._v1.keras.utils": {"serve": True, "output_naming": _TF_KERAS},
    "keras.api._v1.keras.backend": {"helpers": _GPU_HELPER},
    # --- tensorflow ---------------------------------------------------------------------------
    "tensorflow.keras.utils": {"written": True, "served_import": True, "serve": True, "output_naming": _TF_KERAS},
    "tensorflow.keras.utils.multi_gpu_utils": {"written": True},
    "tensorflow.python.keras.utils": {"written": True, "served_import": True, "serve": True,
                                      "output_naming": _TF_KERAS, "submodules": ("multi_gpu_utils",)},
    "tensorflow.python.keras.utils.multi_gpu_utils": {"written": True, "served_import": True, "serve": True,
                                                      "output_naming": _TF_KERAS,
                                                      "virtual": "tensorflow.keras.utils",
                                                      "helpers": _DEVICE_HELPERS},
    # Has its own `_get_available_gpus`, which sees no simulated GPUs: replaced by one that does.
    "tensorflow.python.keras.backend": {"helpers": _GPU_HELPER},
    "tensorflow._api.v1": {"virtual": None, "package": True},
    "tensorflow._api.v1.keras": {"virtual": "tensorflow.keras", "package": True},
    "tensorflow._api.v1.keras.utils": {"written": True, "served_import": True, "serve": True,
                                       "output_naming": _TF_KERAS, "virtual": "tensorflow.keras.utils"},
    # Attribute paths (`tf.compat.v1.keras.utils.multi_gpu_model`): served through the modules above.
    "tensorflow._api.v2.keras.utils": {"written": True},
    "tensorflow.compat.v1.keras.utils": {"written": True},
    "tensorflow.compat.v2.keras.utils": {"written": True},
    "tensorflow.contrib.keras.utils": {"written": True},
    # --- tf_keras (TF_USE_LEGACY_KERAS=1) -----------------------------------------------------
    "tf_keras.utils": {"written": True, "served_import": True, "serve": True, "output_naming": _TF_KERAS},
    "tf_keras.api._v1.keras.utils": {"serve": True, "output_naming": _TF_KERAS},
    "tf_keras.api._v2.keras.utils": {"serve": True, "output_naming": _TF_KERAS},
    "tf_keras.backend": {"helpers": _GPU_HELPER},
    "tf_keras.api._v1.keras.backend": {"helpers": _GPU_HELPER},
    "tf_keras.api._v2.keras.backend": {"helpers": _GPU_HELPER},
    # --- this project's shim, for scripts that adopted it and now migrate --------------------
    "multi_gpu_compat": {"written": True},
}
