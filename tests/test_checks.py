"""The option and column checks (clm_nb.checks, notebook 01_checks).

issue 38: an integer column is carried exactly into float64 or refused, never rounded silently."""
import numpy as np
from hypothesis import given, settings, strategies as st


# ---- issue 38: an integer column is carried exactly into float64 or refused, never rounded silently.

@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=8))
def test_integer_columns_are_exact_or_refused(values):
    from clm_nb.checks import float_column
    a = np.array(values, dtype=np.int64)
    try:
        f = float_column(a, "x")
    except ValueError as e:
        assert "float64 cannot hold" in str(e)
        assert any(int(float(v)) != v for v in values)                 # refused only when a value would round
    else:
        assert [int(v) for v in f] == values                           # accepted: every value exactly
