"""Bounded fuzzing of codemod/core.py and codemod/notebook.py (the long run: benchmarks/fuzz_codemod.py)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_strategies import (check_contract, check_notebook_contract, check_split_notebook_contract, generated_program,
                             mutated_fixture, split_notebook)

FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


@pytest.mark.slow  # test_generated_programs_keep_the_contract keeps fuzzing in the fast lane
@FAST
@given(mutated_fixture())
def test_mutated_fixtures_keep_the_contract(source):
    check_contract(source)


@settings(FAST, max_examples=25)
@given(generated_program())
def test_generated_programs_keep_the_contract(source):
    check_contract(source)


@settings(FAST, max_examples=20)
@given(st.lists(mutated_fixture(), min_size=1, max_size=3))
def test_mutated_notebooks_keep_the_contract(sources):
    check_notebook_contract(sources)


@pytest.mark.slow  # the longest fuzz run; notebooks keep a fast fuzz test (mutated cells)
@settings(FAST, max_examples=40)
@given(split_notebook())
def test_scripts_cut_into_cells_keep_the_contract(case):
    check_split_notebook_contract(*case)
