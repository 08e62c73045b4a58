"""The data checks at the door (clm_nb.core, notebook 04_core): every measure refuses what float64 cannot carry, a
dissimilarity matrix out of bounds, label containers that are not labels, and K-sized work beyond its bounds, with a
ValueError that names the place and the fix.

issue 38, numbers at the door and memory at scale: the probes of a careless or hostile user, each bounded.
- #15: features of ±1e308 gave 0, NaN or inf and a confident verdict; int64 near 2^60 collapsed to identical points in
  float64. Both are now a ValueError naming the column and the fix.
- #14: 10^5 classes ended in a MemoryError (or never ended) in `assess` and `score`; the K-sized work is refused at
  the door with the reason and the fix.
- Low: dict labels and `score(None, ...)` raised TypeError; nested-list labels a misleading "shape" error.
issue 49: hostile numbers at the data layer: ±inf, precomputed matrices whose squares overflow or that are empty, the
magnitude of sparse data, all-zero rows under cosine.

Every probe that may allocate a lot runs in a subprocess under RLIMIT_AS and a timeout, and asserts its peak memory.
The same probes through `assess` and the command line are in test_assessment.py and test_cli.py."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import clm_nb
from clm_nb.catalog import score

from hostile import RNG, bounded, huge, separated_blobs, with_inf

Y60 = np.repeat([0, 1, 2], 20)


# --- #15: magnitudes and integers float64 cannot carry -------------------------------------------------------------

@pytest.mark.parametrize("measure", ["silhouette", "calinski_harabasz", "davies_bouldin", "dunn", "ch_btwn", "sc_a"])
def test_huge_features_refused_by_score(measure):
    X, y = separated_blobs()
    with pytest.raises(ValueError, match=r"X column 1 reaches 1e\+308 in magnitude.*Divide X by a constant"):
        score(measure, huge(X), y)


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


# --- #14: memory at scale -------------------------------------------------------------------------------------------


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


# --- issue 49: hostile numbers at the data layer ------------------------------------------------------------------


def test_magnitude_check_refuses_inf_before_formatting_it():
    "Issue 49: `check_magnitude` on data holding inf names the place instead of overflowing in its own message."
    from clm_nb.core import check_magnitude
    X, _ = separated_blobs()
    with pytest.raises(ValueError, match="1 infinite value.*first at row 5, column 'c'"):
        check_magnitude(with_inf(X), ["a", "b", "c"], who="prepare")


def _dissimilarities(n_per=20):
    from scipy.spatial.distance import pdist, squareform
    X, y = separated_blobs(n_per=n_per)
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
    X, y = separated_blobs()
    X[[3, 7]] = 0
    data = sparse.csr_matrix(X) if sparse_x else X
    with pytest.raises(ValueError, match=r"silhouette: metric='cosine': 2 row\(s\) of X are all zero \(row 3, 7\)"):
        score("silhouette", data, y, metric="cosine")
    if not sparse_x:
        with pytest.raises(ValueError, match=r"all zero \(row 3, 7\)"):
            clm_nb.assess(data, y, metric="cosine")


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 400), d=st.sampled_from([1, 2, 4, 6, 33, 40]), K=st.integers(1, 14),
       seed=st.integers(0, 2**31 - 1), fortran=st.booleans(), zeros=st.booleans())
def test_group_sums_has_np_add_at_bits(n, d, K, seed, fortran, zeros):
    """Issue 52: `group_sums` replaces `np.add.at` on the class pairs' hot path; it must give its bits exactly, for one
    column (NumPy sums a contiguous column pairwise), many groups (the sorted path), either memory order and -0.0;
    each of its three paths (np.add.at itself, a mask per group, one sort) is drawn."""
    from clm_nb.core import group_sums
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-8, 8, size=d)
    if zeros:
        Y[rng.random((n, d)) < 0.5] = -0.0
    Y = np.asfortranarray(Y) if fortran else Y
    g = rng.integers(0, K, n)
    ref = np.zeros((K, d))
    np.add.at(ref, g, Y)
    assert group_sums(Y, g, K).tobytes() == ref.tobytes()
