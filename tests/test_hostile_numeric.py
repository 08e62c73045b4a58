"""Issue 38, numbers at the door and memory at scale: the probes of a careless or hostile user, each bounded.

- #15: features of ±1e308 gave 0, NaN or inf and a confident verdict; int64 near 2^60 collapsed to identical points in
  float64. Both are now a ValueError naming the column and the fix, from `score`, `assess` and the command line.
- #14: `silhouette(max_memory=...)` with thousands of clusters held n x K sums far beyond the budget; 10^5 classes
  ended in a MemoryError (or never ended) in `assess` and `score`. The silhouette now walks its sums in chunks, and
  the K-sized work is refused at the door with the reason and the fix.
- Low: dict labels and `score(None, ...)` raised TypeError; nested-list labels a misleading "shape" error.

Every probe that may allocate a lot runs in a subprocess under RLIMIT_AS and a timeout, and asserts its peak memory.
"""
import json
import os
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import clm_nb
from clm_nb.cli import cli
from clm_nb.catalog import score

RNG = np.random.default_rng(38)
Y60 = np.repeat([0, 1, 2], 20)


def blobs(n_per=20, k=3, d=3, seed=0):
    "k well separated Gaussian blobs of n_per points in d dimensions, and their labels."
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(loc=4 * c, size=(n_per, d)) for c in range(k)])
    return X, np.repeat(np.arange(k), n_per)


def huge(X):
    "X with its second column replaced by ±1e308 (finite, and the probe of the issue)."
    X = X.copy()
    X[:, 1] = np.where(np.random.default_rng(1).random(len(X)) < 0.5, 1e308, -1e308)
    return X


def bounded(code: str, limit_bytes: int = 3 << 30, timeout: int = 120) -> dict:
    """Run `code` (which prints one JSON line last) in a fresh interpreter under RLIMIT_AS = `limit_bytes` and a
    timeout; return the parsed JSON."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NUMBA_NUM_THREADS="2")
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
                       preexec_fn=limit, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


# --- #15: magnitudes and integers float64 cannot carry -------------------------------------------------------------

@pytest.mark.parametrize("measure", ["silhouette", "calinski_harabasz", "davies_bouldin", "dunn", "ch_btwn", "sc_a"])
def test_huge_features_refused_by_score(measure):
    X, y = blobs()
    with pytest.raises(ValueError, match=r"X column 1 reaches 1e\+308 in magnitude.*Divide X by a constant"):
        score(measure, huge(X), y)


def test_huge_features_refused_by_assess_with_the_column_name():
    X, y = blobs()
    df = pd.DataFrame(huge(X), columns=["a", "big", "c"])
    for scaling in ("none", "standardize"):
        with pytest.raises(ValueError, match=r"column 'big' reaches 1e\+308.*X / 1e308"):
            clm_nb.assess(df, y, scaling=scaling)


def test_the_fix_the_message_names_works():
    "Dividing by the constant the message names gives the verdict of the unscaled data, under every scaling."
    from clm_nb.core import magnitude_bound
    X, y = blobs()
    ref = clm_nb.assess(X, y)
    s = 0.9 * magnitude_bound(*X.shape) / np.abs(X).max()          # just inside the bound: still the same verdicts
    near = clm_nb.assess(X * s, y)
    assert near.verdict == ref.verdict != "not scored"
    assert near.variants.verdict.to_dict() == ref.variants.verdict.to_dict()
    assert np.allclose(near.variants.drop(columns="verdict").to_numpy(float),
                       ref.variants.drop(columns="verdict").to_numpy(float), rtol=1e-6)
    with pytest.raises(ValueError, match="Divide X by a constant"):
        clm_nb.assess(X * s * 4, y)


def test_int64_beyond_2_53_refused_with_the_exact_fix():
    Xi = (2 ** 60 + RNG.integers(0, 1000, size=(60, 2))).astype(np.int64)
    with pytest.raises(ValueError, match=r"X column 0 holds integers.*subtract the column's minimum.*range, 9\d\d, fits"):
        score("silhouette", Xi, Y60)
    with pytest.raises(ValueError, match=r"column 'id' holds integers"):
        score("silhouette", pd.DataFrame({"id": Xi[:, 0], "f": RNG.normal(size=60)}), Y60)
    with pytest.raises(ValueError, match=r"prepare: X column 'id' holds integers"):
        clm_nb.assess(pd.DataFrame({"id": Xi[:, 0], "f": RNG.normal(size=60)}), Y60)
    shifted = Xi - Xi.min(axis=0)                                      # the fix: exact, distances unchanged
    assert score("silhouette", shifted, Y60) == score("silhouette", shifted.astype(float), Y60)
    exact = (2 ** 60 + 1024 * RNG.integers(0, 1000, size=(60, 2))).astype(np.int64)   # beyond 2^53 but exact
    assert np.isfinite(score("silhouette", exact, Y60))


@pytest.fixture(scope="module")
def hostile_csvs(tmp_path_factory):
    d = tmp_path_factory.mktemp("numeric")
    X, y = blobs()
    lab = np.array(["a", "b", "c"])[y]
    pd.DataFrame({"f": X[:, 0], "g": huge(X)[:, 1], "y": lab}).to_csv(d / "huge.csv", index=False)
    pd.DataFrame({"f": X[:, 0], "g": 2 ** 60 + RNG.integers(0, 1000, 60), "y": lab}).to_csv(d / "bigint.csv", index=False)
    return d


@pytest.mark.parametrize("file,fragment", [("huge.csv", "column 'g' reaches 1e+308"),
                                           ("bigint.csv", "column 'g' holds integers")])
@pytest.mark.parametrize("command", [["assess"], ["score", "silhouette"], ["score", "ch_btwn"]])
def test_cli_refuses_in_one_line(hostile_csvs, file, fragment, command):
    r = CliRunner().invoke(cli, [*command, str(hostile_csvs / file), "-l", "y"], prog_name="clm-nb")
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], r.stderr
    assert "Traceback" not in r.output and r.stdout == ""


# --- #14: memory at scale -------------------------------------------------------------------------------------------

def test_silhouette_stays_within_max_memory_with_thousands_of_clusters():
    "n = 6,000 points in 3,000 clusters under a 32 MB budget: the old n x K sums alone were 144 MB, held three times."
    out = bounded("""
        import json, resource, numpy as np
        from clm_nb.internal import silhouette
        rng = np.random.default_rng(0)
        X = rng.normal(size=(6000, 2)); y = np.arange(6000) % 3000
        silhouette(X[:60], y[:60] % 3, max_memory=32 << 20)                  # compile outside the measurement
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        v = silhouette(X, y, max_memory=32 << 20)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ref = silhouette(X, y, max_memory=4 << 30)                           # triangle mode: the old path
        print(json.dumps(dict(grown_mb=(peak - base) / 1024, v=v, ref=ref)))
    """)
    print(out)
    assert out["grown_mb"] < 32 + 40, out        # the budget, plus the sorted copy of X and the lanes' row buffers
    assert out["v"] == pytest.approx(out["ref"], abs=1e-12)


def test_a_hundred_thousand_classes_refused_at_the_door():
    "2e5 points in 1e5 classes: each call a ValueError saying why and the fix, in well under a second, no big memory."
    out = bounded("""
        import json, resource, time, numpy as np, warnings
        warnings.simplefilter("ignore")
        import clm_nb
        from clm_nb.catalog import score
        rng = np.random.default_rng(0)
        n, K = 200_000, 100_000
        X = rng.normal(size=(n, 2)); y = np.arange(n) % K
        calls = {"assess": lambda: clm_nb.assess(X, y)}
        for m in ["ch_btwn", "sc_a", "dbcv_btwn", "calinski_harabasz", "davies_bouldin", "xie_beni", "dunn", "dsi", "ami"]:
            calls[m] = lambda m=m: score(m, y, rng.permutation(y)) if m == "ami" else score(m, X, y)
        out = {}
        for k, f in calls.items():
            t = time.time()
            try:
                f(); out[k] = "no error"
            except ValueError as e:
                out[k] = str(e)
            out[k + "_s"] = time.time() - t
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(out))
    """, limit_bytes=4 << 30, timeout=150)
    assert "prepare: 100,000 classes make 4,999,950,000 class pairs" in out["assess"]
    assert "set the rare ones aside" in out["assess"]
    for m in ["ch_btwn", "sc_a", "dbcv_btwn"]:
        assert out[m].startswith(f"{m}: 100,000 classes make"), out[m]
    for m in ["calinski_harabasz", "davies_bouldin", "xie_beni"]:
        assert "K x K tables of centroid distances" in out[m], out[m]
    assert out["dunn"].startswith("dunn: 100,000 classes") and "extremes" in out["dunn"]
    assert out["dsi"].startswith("dsi: 100,000 clusters: the ks summary"), out["dsi"]
    assert out["ami"].startswith("ami: ") and "nmi" in out["ami"], out["ami"]
    assert all(out[k] < 5 for k in out if k.endswith("_s")), out
    assert out["peak_mb"] < 1024, out


def test_leakage_check_counts_ties_without_a_dense_table():
    "tie_mixing over 200,000 distinct values and 1,000 classes: the old crosstab was a 1.6 GB table."
    out = bounded("""
        import json, resource, numpy as np
        from clm_nb.prepare import tie_mixing
        rng = np.random.default_rng(0)
        v = rng.permutation(200_000).astype(float); c = np.arange(200_000) % 1000
        v[:10] = v[10]                                     # 11 points share one value: 10 beyond its top label
        r = tie_mixing(v, c)
        print(json.dumps(dict(r=r, peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
    """, limit_bytes=3 << 30)
    assert out["r"] == 10 and out["peak_mb"] < 1024, out


# --- Low: label containers -------------------------------------------------------------------------------------------

X6 = np.random.default_rng(0).normal(size=(6, 2))


@pytest.mark.parametrize("labels,fragment", [
    ({i: i % 2 for i in range(6)}, "labels is a dict of 6 entries"),
    ({0, 1, 2, 3, 4, 5}, "labels is a set"),
    (None, "labels are required"),
    ("aaabbb", "labels is a single str"),
    ([[0, 0, 0], [1, 1, 1]], "labels is a nested list (2 lists of 3)"),
    ([[0], [0], [0], [1], [1], [1]], "labels is a nested list (6 lists of 1)"),
    ([[0, 0], [1, 1, 1, 1]], "labels is a nested list (a list at position 0)"),
    (pd.Series([[0], [0], [0], [1], [1], [1]]), "labels hold a list at position 0"),
])
def test_label_containers_give_a_value_error_that_names_them(labels, fragment):
    with pytest.raises(ValueError) as e:
        score("silhouette", X6, labels)
    assert fragment in str(e.value)


@pytest.mark.parametrize("call,fragment", [
    (lambda: score("ari", {0: 1, 1: 2}, [1, 2]), "labels_a is a dict"),
    (lambda: score("ari", [[0, 1], [1, 0]], [0, 1, 0, 1]), "labels_a is a nested list (2 lists of 2)"),
    (lambda: score(None, X6, [0, 0, 0, 1, 1, 1]), "a measure is named by a string such as 'silhouette'; got None"),
    (lambda: score(["silhouette"], X6, [0, 0, 0, 1, 1, 1]), "named by a string"),
    (lambda: clm_nb.assess(X6, {i: i % 2 for i in range(6)}), "labels is a dict of 6 entries"),
    (lambda: clm_nb.assess(X6, None), "labels is None"),
])
def test_score_and_assess_refuse_with_value_errors(call, fragment):
    with pytest.raises(ValueError) as e:
        call()
    assert fragment in str(e.value)


# --- a small property: an integer column is carried exactly or refused, never rounded silently ----------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


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


# --- issue 49: hostile numbers at the data layer ------------------------------------------------------------------

def _with_inf(X, row=5, col=2, value=np.inf):
    X = X.copy()
    X[row, col] = value
    return X


@pytest.mark.parametrize("as_frame", [False, True])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_feature_refused_by_assess_naming_column_and_row(as_frame, value):
    """Issue 49: ±inf made `assess` crash with `OverflowError: cannot convert float infinity to integer` (the
    magnitude check formatted log10(inf) before any finiteness check); it is a ValueError naming column and row."""
    X, y = blobs()
    Xi = _with_inf(X, value=value)
    data = pd.DataFrame(Xi, columns=["a", "b", "c"]) if as_frame else Xi
    col = "'c'" if as_frame else "'x2'"
    with pytest.raises(ValueError, match=rf"X column {col} holds 1 infinite value\(s\), first at row 5"):
        clm_nb.assess(data, y)


def test_magnitude_check_refuses_inf_before_formatting_it():
    "Issue 49: `check_magnitude` on data holding inf names the place instead of overflowing in its own message."
    from clm_nb.core import check_magnitude
    X, _ = blobs()
    with pytest.raises(ValueError, match="1 infinite value.*first at row 5, column 'c'"):
        check_magnitude(_with_inf(X), ["a", "b", "c"], who="prepare")


def test_complex_column_refused_by_assess():
    "Issue 49 (the class of Gower's complex cells): a complex column was cast to real behind a ComplexWarning."
    X, y = blobs()
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(z=X[:, 0] + 1j)
    with pytest.raises(ValueError, match="X column 'z' holds complex numbers"):
        clm_nb.assess(df, y)


def _dissimilarities(n_per=20):
    from scipy.spatial.distance import pdist, squareform
    X, y = blobs(n_per=n_per)
    return squareform(pdist(X)), y


@pytest.mark.parametrize("measure", ["sc_a", "dbcv_btwn", "point_biserial", "silhouette"])
def test_precomputed_magnitude_refused_with_the_constant(measure):
    """Issue 49: from 1e154 `sc_a` and `dbcv_btwn` raised OverflowError and `point_biserial` returned NaN; the door
    refuses dissimilarities whose squares would overflow, naming the constant to divide by."""
    D, y = _dissimilarities()
    pattern = rf"{measure}: metric='precomputed': the dissimilarities reach .*e\+155.*D / 1e155"
    with pytest.raises(ValueError, match=pattern):
        score(measure, D * 1e154, y, metric="precomputed")


def test_precomputed_just_inside_the_bound_is_finite():
    "Issue 49: the bound is not too strict: just below it every measure that overflowed gives a finite value."
    from clm_nb.core import magnitude_bound
    D, y = _dissimilarities()
    s = 0.99 * magnitude_bound(len(D), 1) / D.max()
    for measure in ("sc_a", "point_biserial", "silhouette"):
        assert np.isfinite(score(measure, D * s, y, metric="precomputed")), measure


@pytest.mark.parametrize("D", [np.empty((0, 0)), np.empty(0)])
def test_empty_precomputed_matrix_refused(D):
    "Issue 49: an empty matrix raised ZeroDivisionError in the scan of the matrix."
    with pytest.raises(ValueError, match="the matrix is empty"):
        score("silhouette", D, [], metric="precomputed")
    with pytest.raises(ValueError, match="the matrix is empty"):
        clm_nb.assess(D, [], metric="precomputed")


def test_sparse_magnitude_message_gives_the_matrix_shape():
    """Issue 49: a sparse 150 x 4 matrix times 1e200 was refused 'with 600 points in 1 feature(s)' (its stored values
    as one column); the message gives the matrix's own shape and bound."""
    from scipy import sparse
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"with 150 points in 4 feature\(s\)"):
        score("silhouette", sparse.csr_matrix(X * 1e200), y, metric="euclidean")


@pytest.mark.parametrize("sparse_x", [False, True])
def test_cosine_all_zero_rows_refused_naming_them(sparse_x):
    """Issue 49: under cosine, all-zero rows (no direction: the cosine is undefined) were scored silently at
    dissimilarity 1; `score` and `assess` refuse them, naming the rows."""
    from scipy import sparse
    X, y = blobs()
    X[[3, 7]] = 0
    data = sparse.csr_matrix(X) if sparse_x else X
    with pytest.raises(ValueError, match=r"silhouette: metric='cosine': 2 row\(s\) of X are all zero \(row 3, 7\)"):
        score("silhouette", data, y, metric="cosine")
    if not sparse_x:
        with pytest.raises(ValueError, match=r"all zero \(row 3, 7\)"):
            clm_nb.assess(data, y, metric="cosine")
