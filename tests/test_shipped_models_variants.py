"""The shipped one-head and saturated models retrained and compared with their files (the check:
tests/shipped_models.py; the other kinds: tests/test_shipped_models.py)."""

import pytest
from shipped_models import SHIPPED, VARIANTS, check_reproduces_shipped_model, ids  # tests/ is on sys.path

THERE = [(n, s) for n, s in SHIPPED if n in VARIANTS]


@pytest.mark.parametrize(("name", "seed"), THERE, ids=ids(THERE))
def test_code_reproduces_shipped_model(name, seed, request):
    check_reproduces_shipped_model(name, seed, request)
