"""The shim trains what hand-written MirroredStrategy code trains, for every pair of features.

The slow half of test_differential.py (which explains the cases), in a module of its own: it is
the longest table of the suite, and pytest-xdist (`--dist loadfile`, .ci/test) gives each module
to one worker, so this one runs beside the rest instead of after it.
"""

from __future__ import annotations

import pytest

import differential_cases as dc


@pytest.mark.slow
@pytest.mark.parametrize("case", dc.pairs(), ids=lambda c: c.id)
def test_every_pair_of_features_trains_as_native_code(keras_module, case):
    dc.assert_shim_matches_native(keras_module, case)
