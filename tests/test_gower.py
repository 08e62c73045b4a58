"""Gower's dissimilarity (clm_nb.gower, issue 40) against R's cluster::daisy(metric = "gower") on mixed tables with
missing values (goldens in tests/data/gower, made by make_goldens.R there), and its properties."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from clm_nb.gower import gower, gower_data

DATA = Path(__file__).parent / "data" / "gower"
KIND = {"I": "numeric", "O": "ordinal", "N": "nominal", "S": "symmetric", "A": "asymmetric"}


def _case(name):
    X = pd.read_csv(DATA / f"{name}_X.csv")
    types = pd.read_csv(DATA / f"{name}_types.csv")
    levels = pd.read_csv(DATA / f"{name}_levels.csv")
    ordinal = {}
    for c, lv in zip(levels.column, levels.levels):
        lv = lv.split("|")
        ordinal[c] = [int(v) for v in lv] if pd.api.types.is_numeric_dtype(X[c]) else lv
    kinds = dict(zip(types.column, types.type.map(KIND)))
    D = pd.read_csv(DATA / f"{name}_daisy.csv").to_numpy(dtype=float)
    return X, kinds, ordinal, dict(zip(types.column, types.weight)), D


@pytest.mark.parametrize("name", ["flower", "mixed"])
def test_gower_equals_daisy(name):
    X, kinds, ordinal, weights, D = _case(name)
    G = gower(X, kinds=kinds, ordinal=ordinal, weights=weights)
    assert X.isna().any().any()                                        # the goldens have missing cells
    np.testing.assert_allclose(G, D, rtol=0, atol=1e-12)


def test_default_kinds_follow_daisy_on_the_mixed_table():
    "Without kinds=, a DataFrame with proper dtypes gets daisy's own defaults (booleans asymmetric, ...)."
    X, kinds, ordinal, weights, D = _case("mixed")
    X["flag"] = X["flag"].astype("boolean")
    X["size"] = pd.Categorical(X["size"], categories=ordinal["size"], ordered=True)
    G = gower(X, weights=list(weights.values()))
    np.testing.assert_allclose(G, D, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 25), st.integers(0, 2**31 - 1))
def test_gower_is_a_bounded_symmetric_dissimilarity(n, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("abc"), n), "b": rng.random(n) < 0.5})
    X.loc[rng.random(n) < 0.2, "x"] = np.nan
    G = gower(X)
    ok = ~np.isnan(G)
    assert np.all((G[ok] >= 0) & (G[ok] <= 1 + 1e-15))
    assert np.array_equal(np.nan_to_num(G, nan=-1), np.nan_to_num(G.T, nan=-1))
    assert np.all(np.diag(G)[~np.isnan(np.diag(G))] == 0)
    # blocks of any shape and chunk agree with the whole matrix, bit for bit
    g = gower_data(X)
    half = np.arange(n)[::2]
    assert np.array_equal(np.nan_to_num(g.block(half, None, chunk=3), nan=-1), np.nan_to_num(G[half], nan=-1))


def test_bad_input_is_refused_with_the_fix():
    X = pd.DataFrame({"a": [1.0, 2.0], "b": ["y", "n"]})
    with pytest.raises(ValueError, match="yes/no values"):
        gower(X, kinds={"b": "asymmetric"})
    with pytest.raises(ValueError, match="not a column of X"):
        gower(X, kinds={"z": "nominal"})
    with pytest.raises(ValueError, match="non-negative"):
        gower(X, weights=[1, -1])
    with pytest.raises(ValueError, match="kinds"):
        gower(X, kinds={"a": "interval"})
    with pytest.raises(ValueError, match="at least one row"):
        gower(X.iloc[:0])
