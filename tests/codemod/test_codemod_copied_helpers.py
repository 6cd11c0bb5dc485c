"""codemod/fixers/copied_helpers.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("helpers"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("helpers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)
