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


# --- issue 49: hostile numbers and types -----------------------------------------------------------------------------

def _blobs_table(n_per=20, seed=0):
    "Three well separated blobs in two numeric columns and a category, and their labels."
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(loc=6 * c, size=(n_per, 2)) for c in range(3)])
    y = np.repeat(np.arange(3), n_per)
    return pd.DataFrame({"x": X[:, 0], "w": X[:, 1], "c": np.where(y == 0, "a", "b")}), y


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_value_refused_naming_column_and_row(value):
    """Issue 49: one inf in a numeric column made its range infinite and silently zeroed the column (silhouette
    0.938 -> 1.0, assess TRUSTWORTHY); gower, score and assess refuse it, naming the column and the row."""
    import clm_nb
    from clm_nb.catalog import score
    X, y = _blobs_table()
    X.loc[3, "x"] = value
    pattern = r"gower_data: X column 'x' holds 1 infinite value\(s\), first at row 3"
    with pytest.raises(ValueError, match=pattern):
        gower(X)
    with pytest.raises(ValueError, match=pattern):
        score("silhouette", X, y, metric="gower")
    with pytest.raises(ValueError, match=pattern):
        clm_nb.assess(X, y, metric="gower")


def test_a_range_beyond_float64_is_scaled_safely():
    """Issue 49: values of ±1e308 have a range float64 cannot hold (it overflowed to inf and zeroed the column);
    Gower is scale-free per column: a column stretched to ±1.5e308 gives the dissimilarities of the column itself."""
    X, _ = _blobs_table()
    unit = (X.x - X.x.min()) / (X.x.max() - X.x.min()) * 2 - 1            # the column mapped onto [-1, 1]
    huge = X.assign(x=unit * 1.5e308)                                     # range 3e308 > float64's largest, 1.8e308
    with np.errstate(over="ignore"):
        assert np.isinf(huge.x.max() - huge.x.min())
    G = gower(huge)
    assert np.isfinite(G).all()
    np.testing.assert_allclose(G, gower(X), rtol=0, atol=1e-12)
    assert G.max() > 0.5                                                 # the column counts: it is not zeroed


def test_one_number_written_as_text_keeps_the_column_numeric():
    """Issue 49: one text cell '7' turned a numeric column nominal (60 levels); the column stays numeric, the cell is
    read as the number it writes, and a warning names the column and the cell."""
    X, _ = _blobs_table()
    text = X.astype({"x": object})
    text.loc[59, "x"] = str(X.loc[59, "x"])
    with pytest.warns(UserWarning, match=r"column 'x' holds 1 number\(s\) written as text \(first at row 59"):
        g = gower_data(text)
    assert dict(zip(g.columns, g.kinds))["x"] == "numeric"
    np.testing.assert_allclose(g.block(), gower(X), rtol=0, atol=1e-12)


def test_a_stray_text_cell_in_a_numeric_column_is_refused_naming_it():
    "Issue 49: a cell that is no number among numbers is named (row and value), with the two fixes."
    X, _ = _blobs_table()
    X = X.astype({"x": object})
    X.loc[12, "x"] = "n/a"
    with pytest.raises(ValueError, match=r"column 'x' is numeric, but row 12 holds 'n/a', not a number.*'nominal'"):
        gower(X)
    g = gower_data(X, kinds={"x": "nominal"})                                 # the way out the message names
    assert dict(zip(g.columns, g.kinds))["x"] == "nominal"


def test_dates_are_numeric_time():
    """Issue 49: a datetime column was read as nominal (every date a category of its own); it is numeric time, so
    dates a day apart are near and a year apart far, as their day numbers."""
    days = np.array([0, 1, 2, 365, 366, 400])
    when = pd.Timestamp("2020-01-01") + pd.to_timedelta(days, unit="D")
    for col in (when, when - when[0], pd.Series(when).dt.date.astype(object)):      # datetime, timedelta, date objects
        np.testing.assert_allclose(gower(pd.DataFrame({"t": col})), gower(pd.DataFrame({"t": days})), atol=1e-12)


def test_complex_numbers_refused():
    "Issue 49: a complex column was kept behind a ComplexWarning (its imaginary parts dropped)."
    with pytest.raises(ValueError, match="holds complex numbers"):
        gower(pd.DataFrame({"z": [1 + 1j, 2, 3], "a": [1.0, 2, 3]}))
    with pytest.raises(ValueError, match="row 0 holds '\\(1\\+1j\\)', a complex number"):
        gower(pd.DataFrame({"z": pd.Series([1 + 1j, 2.0, 3.0], dtype=object)}))


def test_names_and_weights_refused_clearly():
    """Issue 49: weights={'nmu': 5} was ignored while a kinds typo was refused; weights of the wrong length and
    duplicate column names gave pandas' errors. Each is a ValueError that says what to fix."""
    X = pd.DataFrame({"num": [1.0, 2.0, 4.0], "cat": ["a", "b", "a"]})
    with pytest.raises(ValueError, match=r"weights names 'nmu' \(did you mean 'num'\?\), not a column of X"):
        gower(X, weights={"nmu": 5})
    with pytest.raises(ValueError, match=r"kinds names 'ct' \(did you mean 'cat'\?\)"):
        gower(X, kinds={"ct": "nominal"})
    with pytest.raises(ValueError, match=r"weights has 3 value\(s\) for 2 column\(s\)"):
        gower(X, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="must be numbers"):
        gower(X, weights=["heavy", 1])
    with pytest.raises(ValueError, match="'num' occur more than once"):
        gower(pd.concat([X, X[["num"]]], axis=1))
    np.testing.assert_allclose(gower(X, weights={"num": 2}), gower(X, weights=[2, 1]))
