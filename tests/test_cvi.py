"""Ratkowsky–Lance, WB, CVNN and CVDD against brute-force versions written straight from their formulas, their
degenerate limits, bad inputs, and the invariances each one claims in the registry.

issue 41: COP and CDbw against from-definition oracles (no peer is installed for either: clusterCrit and fpc are R
packages).

issue 41: the scatter-matrix family, S_Dbw/SD and NbClust's split statistics against permetrics 2.1.0, the s_dbw
package 0.4.0 and from-definition oracles.

issue 40: CVNN beyond Euclidean coordinates: precomputed, condensed, memmapped and sparse forms give the coordinate
path's value, and its compactness is in the metric's units."""
import itertools
import math
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import cdist
from scipy.stats import f as f_dist, ortho_group
from sklearn.datasets import load_iris, load_wine, make_blobs

import clm_nb
from clm_nb.catalog import get_measure
from clm_nb.core import check_data
from clm_nb.cvi import (CDBW_SHRINK, CDbwParts, CVNNParts, banfeld_raftery, beale, cdbw, cdbw_parts, cop, cvdd, cvnn,
                        cvnn_normalize, cvnn_parts, det_ratio, duda_hart, friedman, hartigan, ksq_detw, log_det_ratio,
                        log_ss_ratio, ratkowsky_lance, ray_turi, s_dbw, scott_symons, sd, trace_w, wb)
from clm_nb.internal import xie_beni

from helpers import COORDINATE, blobs, forms


def _case(seed, n_max=60):
    "Small random labelled data (n <= 60), with some cluster structure, in general position (no distance ties)."
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(12, n_max + 1)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
    y = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    X = rng.normal(scale=rng.uniform(0.5, 4), size=(k, d))[y] + rng.normal(size=(n, d)) * rng.uniform(0.2, 2)
    return X * rng.uniform(0.1, 10) + rng.uniform(-5, 5, size=d), y


def _pairwise(X):
    n = len(X)
    return np.array([[np.sqrt(np.sum((X[i] - X[j]) ** 2)) for j in range(n)] for i in range(n)])


# --- brute-force references, one loop per symbol of the formulas -------------------------------------------------

def _rl_naive(X, y, variant="vendramin"):
    ks = np.unique(y)
    ratios = []
    for j in range(X.shape[1]):
        if np.ptp(X[:, j]) == 0:      # constant: TSS = 0 exactly (the float mean of n copies of 3.7 is not 3.7)
            continue
        c = X[:, j].mean()
        tss = sum((x - c) ** 2 for x in X[:, j])
        bgss = sum((y == k).sum() * (X[y == k, j].mean() - c) ** 2 for k in ks)
        ratios.append(bgss / tss)
    ratios = np.array(ratios)
    if variant == "vendramin":
        return np.mean(np.sqrt(ratios)) / np.sqrt(len(ks))
    return np.sqrt(np.mean(ratios) / len(ks))


def _wb_naive(X, y):
    ks = np.unique(y)
    c = X.mean(0)
    ssw = sum(np.sum((x - X[y == y[i]].mean(0)) ** 2) for i, x in enumerate(X))
    ssb = sum((y == k).sum() * np.sum((X[y == k].mean(0) - c) ** 2) for k in ks)
    return len(ks) * ssw / ssb


def _cvnn_naive(X, y, k, D=None):
    "(Sep, Com, mean pairwise distance), with ties at the k-th distance shared out equally (exact for integer data)."
    D = _pairwise(X) if D is None else D
    n, ks = len(X), np.unique(y)
    q = np.zeros(n)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        r = sorted(D[i, j] for j in others)[k - 1]
        closer = [j for j in others if D[i, j] < r]
        tied = [j for j in others if D[i, j] == r]
        q[i] = sum(y[j] != y[i] for j in closer) + (k - len(closer)) * sum(y[j] != y[i] for j in tied) / len(tied)
    sep = max(np.mean(q[y == c] / k) for c in ks)
    com = 0.0
    for c in ks:
        idx = np.flatnonzero(y == c)
        if len(idx) > 1:
            com += 2 / (len(idx) * (len(idx) - 1)) * sum(D[a, b] for a, b in itertools.combinations(idx, 2))
    mean_d = sum(D[a, b] for a, b in itertools.combinations(range(n), 2)) / (n * (n - 1) / 2)
    return sep, com, mean_d


def _minimax(W):
    "Minimax path distance: the largest edge on the best path, by a Floyd-Warshall sweep over intermediate points."
    M = W.copy()
    for m in range(len(M)):
        M = np.minimum(M, np.maximum(M[:, m:m + 1], M[m:m + 1, :]))
    return M


def _cvdd_naive(X, y, k=7):
    D = _pairwise(X)
    n = len(X)
    den = np.array([np.mean(sorted(D[i, j] for j in range(n) if j != i)[:k]) for i in range(n)])
    f_den = den / den.max()
    rel = den[:, None] / den[None, :]
    f_rel = 1 - np.exp(-np.abs(rel + rel.T - 2))
    dr_d = D + (den[:, None] + den[None, :]) * f_rel
    np.fill_diagonal(dr_d, 0.0)
    dd = _minimax(dr_d) * np.sqrt(f_den[:, None] * f_den[None, :])
    sep = com = 0.0
    for c in np.unique(y):
        a, b = y == c, y != c
        sep += dd[np.ix_(a, b)].min()
        P = _minimax(D[np.ix_(a, a)])
        com += (np.std(P, ddof=1) / a.sum()) * P.mean() if a.sum() > 1 else 0.0
    return sep / com


# --- agreement with the brute force -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_ratkowsky_lance_matches_formula(seed):
    X, y = _case(seed)
    for variant in ["vendramin", "ratio"]:
        assert ratkowsky_lance(X, y, variant=variant) == pytest.approx(_rl_naive(X, y, variant), rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_wb_matches_formula(seed):
    X, y = _case(seed)
    assert wb(X, y) == pytest.approx(_wb_naive(X, y), rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_cvnn_matches_formula(seed):
    X, y = _case(seed)
    k = int(np.random.default_rng(seed).integers(1, 11))
    sep, com, mean_d = _cvnn_naive(X, y, k)
    parts = cvnn_parts(X, y, k=k)
    assert parts.separation == pytest.approx(sep, rel=1e-12, abs=1e-15)
    assert parts.compactness == pytest.approx(com, rel=1e-12)
    assert cvnn(X, y, k=k) == pytest.approx(sep + com / mean_d, rel=1e-12)


def test_cvnn_other_metric_matches_formula():
    X, y = _case(3)
    D = np.abs(X[:, None, :] - X[None, :, :]).sum(-1)
    sep, com, mean_d = _cvnn_naive(X, y, 5, D=D)
    assert cvnn(X, y, k=5, metric="manhattan") == pytest.approx(sep + com / mean_d, rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_cvnn_ties_are_shared_out_and_order_free(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(30, 2)).astype(float)       # integer grid: many exactly tied distances, duplicates
    y = np.r_[0, 1, 2, rng.integers(0, 3, 27)]
    sep, com, mean_d = _cvnn_naive(X, y, 4)
    assert cvnn(X, y, k=4) == pytest.approx(sep + com / mean_d, rel=1e-12)
    p = rng.permutation(30)
    assert cvnn(X[p], y[p], k=4) == pytest.approx(cvnn(X, y, k=4), rel=1e-12)


@pytest.mark.parametrize("path", ["blocks", "tree"])
@pytest.mark.parametrize("seed", range(4))
def test_cvnn_neighbours_exact_across_blocks_and_where_the_dot_product_cancels(seed, path, monkeypatch):
    """The neighbours come from blocks of a matrix product, refined exactly where its error bound cannot decide, or
    from a k-d tree. Rows far from the origin (the product cancels), up to 40 dimensions, an integer grid (ties,
    duplicates) and blocks or chunks of a few rows: q_k must equal the definition on exact distances for every point
    and metric."""
    import clm_nb.cvi as cvi
    monkeypatch.setattr(cvi, "_BLOCK_MB", 0.02)             # a block holds a few rows: many block boundaries
    monkeypatch.setattr(cvi, "_TREE_MAX_P", 0 if path == "blocks" else 10**6)
    monkeypatch.setattr(cvi, "_TREE_CHUNK", 50)             # radius lists in chunks of about 50: many chunk boundaries
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(40, 160)), int(rng.integers(1, 41))
    X = rng.integers(0, 3, size=(n, d)) * 10.0 ** int(rng.integers(-3, 3)) + rng.choice([0.0, 1e4, 1e7])
    y, k = rng.integers(0, 3, n), int(rng.integers(1, 12))
    for metric in ("euclidean", "sqeuclidean", "cityblock", "chebyshev"):
        diff = np.abs(X[:, None] - X[None])
        D = {"euclidean": _pairwise(X), "sqeuclidean": _pairwise(X) ** 2,
             "cityblock": diff.sum(-1), "chebyshev": diff.max(-1)}[metric]
        np.fill_diagonal(D, np.inf)
        r = np.sort(D, axis=1)[:, k - 1:k]
        closer, tied = D < r * (1 - 1e-9), (D >= r * (1 - 1e-9)) & (D <= r * (1 + 1e-9))
        other = y[None, :] != y[:, None]
        want = (closer & other).sum(1) + (k - closer.sum(1)) / tied.sum(1) * (tied & other).sum(1)
        np.testing.assert_array_equal(cvi._foreign_neighbours(X, y, k, metric), want)


def test_cvnn_tie_example_from_the_notebook():
    X, y = np.array([[-1.], [0], [1], [1.5]]), [0, 0, 1, 1]
    for p in itertools.permutations(range(4)):
        assert cvnn_parts(X[list(p)], np.array(y)[list(p)], k=1).separation == 0.25


@pytest.mark.parametrize("seed", range(8))
def test_cvdd_matches_formula(seed):
    X, y = _case(seed, n_max=40)
    for k in [1, 7]:
        assert cvdd(X, y, k=k) == pytest.approx(_cvdd_naive(X, y, k), rel=1e-12)


def test_cvdd_with_singleton_cluster_matches_formula():
    X, y = _case(4, n_max=30)
    y = y.copy(); y[0] = y.max() + 1                           # a cluster of one point: com = 0 for it
    assert cvdd(X, y) == pytest.approx(_cvdd_naive(X, y), rel=1e-12)


# --- worked examples (the same as in nbs/07_cvi.ipynb) ---------------------------------------------------------------

def test_worked_examples():
    X = np.array([[0., 0, 1], [0, 2, 3], [4, 0, 3], [4, 2, 5]]); y = [0, 0, 1, 1]
    assert ratkowsky_lance(X, y) == pytest.approx((np.sqrt(2) + 1) / 6, rel=1e-15)
    assert ratkowsky_lance(X, y, variant="ratio") == pytest.approx(0.5, rel=1e-15)
    assert wb(np.array([[0.], [2], [10], [12]]), [0, 0, 1, 1]) == pytest.approx(0.08, rel=1e-15)
    X6 = np.array([[0.], [1], [3], [4], [6], [7]]); y6 = [0, 0, 0, 1, 1, 1]
    assert cvnn_parts(X6, y6, k=2) == CVNNParts(1 / 6, 4.0)
    assert cvnn(X6, y6, k=2) == pytest.approx(1 / 6 + 4 / 3.4, rel=1e-15)
    X5 = np.array([[0.], [1], [2], [10], [12]]); y5 = [0, 0, 0, 1, 1]
    expected = np.sqrt(2) * (8 + 3 * -np.expm1(-0.5)) / (1 / 9 + 1 / np.sqrt(3))
    assert cvdd(X5, y5, k=1) == pytest.approx(expected, rel=1e-14)


# --- limits ------------------------------------------------------------------------------------------------------

def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args, **kwargs)


IDENTICAL_POINT_CLUSTERS = (np.array([[0.3, 0.1]] * 8 + [[2.7, -1.9]] * 9), [0] * 8 + [1] * 9)


def test_identical_point_clusters_reach_documented_limits():
    X, y = IDENTICAL_POINT_CLUSTERS
    assert _quiet(ratkowsky_lance, X, y) == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert _quiet(ratkowsky_lance, X, y, variant="ratio") == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert _quiet(wb, X, y) == 0.0
    assert _quiet(cvnn, X, y, k=5) == 0.0                  # every neighbour at distance 0 is in the own cluster
    assert _quiet(cvdd, X, y) == np.inf                   # compactness 0, separation > 0


def test_all_points_identical():
    X, y = np.ones((12, 3)), [0] * 6 + [1] * 6
    assert _quiet(wb, X, y) == np.inf                     # SSB = 0
    assert _quiet(cvdd, X, y) == 0.0                      # separation 0
    # mean pairwise distance 0: the compactness term is 0; every other point is a tied neighbour, half of them foreign
    assert _quiet(cvnn, X, y, k=3) == pytest.approx(6 / 11, rel=1e-15)
    with pytest.raises(ValueError, match="every variable is constant"):
        ratkowsky_lance(X, y)


def test_coincident_centroids_wb_inf():
    X = np.array([[0., 0], [2, 0], [1, 1], [1, -1]])
    assert _quiet(wb, X, [0, 0, 1, 1]) == np.inf


def test_points_shared_across_clusters_give_cvdd_zero():
    X = np.r_[np.arange(10.)[:, None], [[4.0]]]
    y = [0] * 5 + [1] * 5 + [1]                            # the point 4.0 sits in both clusters
    assert _quiet(cvdd, X, y) == 0.0


def test_constant_variables_are_left_out_of_rl():
    X, y = _case(5)
    Xc = np.c_[X, np.full(len(X), 3.7), X[:, :1]]
    assert ratkowsky_lance(np.c_[X, np.full(len(X), 3.7)], y) == pytest.approx(ratkowsky_lance(X, y), rel=1e-14)
    assert ratkowsky_lance(Xc, y) == pytest.approx(_rl_naive(Xc, y), rel=1e-12)


def test_cvnn_normalize_matches_hand_computation():
    parts = [CVNNParts(0.2, 3.0), CVNNParts(0.5, 1.0), CVNNParts(0.1, 6.0)]
    np.testing.assert_allclose(cvnn_normalize(parts), [0.2 / 0.5 + 3 / 6, 1 + 1 / 6, 0.1 / 0.5 + 1], rtol=1e-15)
    assert isinstance(cvnn_normalize(parts), np.ndarray)
    # a term whose maximum over the candidates is 0 counts 0 (no division by zero, no warning)
    np.testing.assert_array_equal(_quiet(cvnn_normalize, [CVNNParts(0.0, 2.0), CVNNParts(0.0, 1.0)]), [1.0, 0.5])
    np.testing.assert_array_equal(_quiet(cvnn_normalize, [CVNNParts(0.0, 0.0)]), [0.0])


def test_cvnn_normalize_over_real_candidates_prefers_the_truth():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(8, 1, (30, 2))]
    truth, halves = np.r_[np.zeros(30), np.ones(30)], (X[:, 0] > np.median(X[:, 0])) ^ (rng.random(60) < 0.3)
    values = cvnn_normalize([cvnn_parts(X, truth), cvnn_parts(X, halves)])
    assert values[0] < values[1]


def test_cvnn_parts_units():
    X, y = _case(2)
    a, b = cvnn_parts(X, y), cvnn_parts(3.0 * X, y)
    assert b.separation == pytest.approx(a.separation, rel=1e-12)
    assert b.compactness == pytest.approx(3.0 * a.compactness, rel=1e-12)


# --- bad input ---------------------------------------------------------------------------------------------------

MEASURES = {"ratkowsky_lance": ratkowsky_lance, "wb": wb, "cvnn": cvnn, "cvdd": cvdd}


@pytest.mark.parametrize("name", MEASURES)
def test_bad_inputs(name):
    f = MEASURES[name]
    X, y = _case(1)
    Xnan = X.copy(); Xnan[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f(Xnan, y)
    with pytest.raises(ValueError, match="one label"):
        f(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="one label per point"):
        f(X, y[:-1])
    with pytest.raises(ValueError, match="labels are required"):
        f(X)


@pytest.mark.parametrize("f", [cvnn, cvnn_parts, cvdd])
def test_k_must_be_below_n(f):
    X, y = _case(1)
    n = len(X)
    with pytest.raises(ValueError, match="nearest neighbours need more than k points"):
        f(X, y, k=n)
    for bad in [0, -1, 2.5, True]:
        with pytest.raises(ValueError, match="positive integer"):
            f(X, y, k=bad)
    assert np.isfinite(f(X, y, k=n - 1) if f is not cvnn_parts else f(X, y, k=n - 1).separation)


def test_metric_and_variant_refused():
    X, y = _case(1)
    for f in [ratkowsky_lance, wb]:
        with pytest.raises(ValueError, match="Euclidean"):
            f(X, y, metric="manhattan")
    with pytest.raises(ValueError, match="Euclidean"):
        cvdd(X, y, metric="cosine")
    with pytest.raises(ValueError, match="not supported"):
        cvnn(X, y, metric="mahalanobis")
    with pytest.raises(ValueError, match="variant"):
        ratkowsky_lance(X, y, variant="original")


def test_cvdd_memory_guard():
    X, y = _case(1)
    with pytest.raises(ValueError, match=r"max_points = 10\b.*pass max_points="):
        cvdd(X, y, max_points=10)
    assert cvdd(X, y, max_points=len(X)) == cvdd(X, y)


def test_cvnn_normalize_refuses_bad_parts():
    with pytest.raises(ValueError, match="no candidate"):
        cvnn_normalize([])
    with pytest.raises(ValueError, match="not a CVNNParts"):
        cvnn_normalize([(0.1, 2.0)])
    with pytest.raises(ValueError, match="finite and non-negative"):
        cvnn_normalize([CVNNParts(np.nan, 1.0)])


def test_noise_policy_and_labeled_data():
    X, y = _case(6)
    y = y.copy(); y[:4] = -1
    kept = y != -1
    for name, f in MEASURES.items():
        assert f(X, y, noise="ignore") == pytest.approx(f(X[kept], y[kept]), rel=1e-12)
        assert f(check_data(X, y)) == f(X, y)


# --- invariances: each claim in the registry is checked here on fixed seeds (tests/test_common_invariances.py adds
# --- hypothesis-generated cases once the module is imported by the package) ----------------------------------------

def _transform(name, X, y, rng):
    if name == "relabel":
        return X, np.array([f"c{v}" for v in rng.permutation(50)[:y.max() + 1]])[y]
    if name == "permutation":
        p = rng.permutation(len(y)); return X[p], y[p]
    if name == "scale":
        return X * float(10 ** rng.uniform(-3, 3)), y
    if name == "translation":
        return X + rng.uniform(-100, 100, size=X.shape[1]), y
    if name == "rotation":
        return (X @ ortho_group.rvs(X.shape[1], random_state=int(rng.integers(2**31))) if X.shape[1] > 1 else -X), y
    if name == "data-cardinality":                          # every point repeated: same distribution, m times the size
        m = int(rng.integers(2, 4)); return np.repeat(X, m, axis=0), np.repeat(y, m)
    raise AssertionError(name)


CLAIMS = [(name, inv) for name in MEASURES for inv in get_measure(name).invariances]


@pytest.mark.parametrize("name, invariance", CLAIMS)
@pytest.mark.parametrize("seed", range(4))
def test_claimed_invariances_hold(name, invariance, seed):
    rng = np.random.default_rng(100 + seed)
    X, y = _case(seed, n_max=40)
    X = np.round(X, int(rng.integers(0, 3)))              # ties and duplicates on purpose
    before = MEASURES[name](X, y)
    after = MEASURES[name](*_transform(invariance, X, y, rng))
    assert after == pytest.approx(before, rel=1e-9, abs=1e-12)


def test_registry_claims():
    assert set(get_measure("ratkowsky_lance").invariances) == {"relabel", "permutation", "scale", "translation",
                                                              "data-cardinality"}
    assert set(get_measure("cvdd").invariances) == {"relabel", "permutation", "translation", "rotation"}
    assert get_measure("wb").direction == get_measure("cvnn").direction == "min"
    assert get_measure("ratkowsky_lance").direction == get_measure("cvdd").direction == "max"


def test_rl_is_not_rotation_invariant():
    X = np.array([[0., 0], [1, 0], [0, 1], [1, 1], [5, 0], [6, 0]]); y = [0, 0, 0, 0, 1, 1]
    R = ortho_group.rvs(2, random_state=1)
    assert abs(ratkowsky_lance(X @ R, y) - ratkowsky_lance(X, y)) > 1e-3


def test_cvdd_carries_inverse_units():
    X, y = _case(7, n_max=40)
    assert cvdd(2.5 * X, y) == pytest.approx(cvdd(X, y) / 2.5, rel=1e-12)


@pytest.mark.parametrize("factor", [1e-150, 1e150])
def test_no_overflow_at_extreme_scales(factor):
    X, y = _case(8, n_max=40)
    for f in [ratkowsky_lance, wb, cvnn]:
        assert _quiet(f, X * factor, y) == pytest.approx(f(X, y), rel=1e-9)
    assert _quiet(cvdd, X * factor, y) * factor == pytest.approx(cvdd(X, y), rel=1e-9)


@pytest.mark.parametrize("name", MEASURES)
def test_value_is_python_float_in_declared_range(name):
    X, y = _case(9)
    info = get_measure(name)
    v = MEASURES[name](X, y, random_state=0)
    assert type(v) is float and info.lower <= v <= info.upper


@pytest.mark.parametrize("name", ["s_dbw", "cop", "cdbw"])
def test_many_tiny_classes_refused_up_front_by_the_class_pair_bound(name):
    """Issue 49: 10^4 classes of 2 points ran s_dbw, cop and cdbw past 120 s without a word. Their work grows with the
    class pairs (cluster by cluster for COP): the package's class-pair bound (`check_class_pairs`) refuses up front,
    with the count and the fix."""
    import clm_nb
    K = 1001                                                     # 500,500 class pairs: just over the bound
    X = np.random.default_rng(0).normal(size=(2 * K, 2))
    with pytest.raises(ValueError, match=rf"{name}: 1,001 classes make 500,500 class pairs.*Merge classes"):
        clm_nb.score(name, X, np.repeat(np.arange(K), 2))


# ---- issue 41: COP and CDbw against from-definition oracles (no peer is installed for either: clusterCrit and fpc ...

def _unequal_blobs(seed):
    X, y = make_blobs(n_samples=[60, 15, 5], centers=[[0, 0], [4, 1], [1, 5]], cluster_std=[1.0, 0.4, 0.2],
                      random_state=seed)
    return X, y


def _datasets():
    iris_X, iris_y = load_iris(return_X_y=True)
    wine_X, wine_y = load_wine(return_X_y=True)
    wine_X = (wine_X - wine_X.mean(0)) / wine_X.std(0)
    rng = np.random.default_rng(3)
    out = {"iris": (iris_X, iris_y), "wine": (wine_X, wine_y),
           "iris-random": (iris_X, rng.integers(0, 4, len(iris_y)))}
    for seed in (0, 1, 2):
        out[f"unequal-{seed}"] = _unequal_blobs(seed)
    return out


DATA = _datasets()


def cop_oracle(X, y):
    "COP as Gurrutxaga et al. (2010) define it: full cross-distance matrices, one cluster at a time."
    total = 0.0
    for k in np.unique(y):
        A, B = X[y == k], X[y != k]
        intra = np.mean(np.sqrt(((A - A.mean(axis=0)) ** 2).sum(axis=1)))
        inter = cdist(B, A).max(axis=1).min()          # min over outside points of the max over inside points
        total += len(A) * (intra / inter if inter > 0 else 1.0)
    return total / len(y)


@pytest.mark.parametrize("name", list(DATA))
def test_cop_equals_oracle(name):
    X, y = DATA[name]
    assert abs(cop(X, y) - cop_oracle(X, y)) <= 1e-12


def test_cop_singletons_and_bounds():
    X, y = _unequal_blobs(0)
    y = y.copy()
    y[:3] = [3, 4, 5]                                   # three singleton clusters: intra 0, they add 0
    v = cop(X, y)
    assert v == pytest.approx(cop_oracle(X, y), abs=1e-12)
    assert 0 <= v <= 1


def test_cop_identical_points_limit():
    X = np.array([[0.0, 0], [0, 0], [0, 0], [5, 5], [6, 5]])
    # cluster 0 = two copies of a point that cluster 1 also holds: intra = inter = 0, the ratio is taken as 1
    assert cop(X, [0, 0, 1, 1, 1]) == pytest.approx(cop_oracle(X, np.array([0, 0, 1, 1, 1])), abs=1e-15)
    assert cop(X, [0, 0, 0, 1, 1]) == pytest.approx(2 * 0.5 / np.sqrt(61) / 5, abs=1e-15)   # {0,0,0}: ratio 0


def test_cop_bad_input():
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="Euclidean"):
        cop(X, y, metric="cityblock")
    with pytest.raises(ValueError, match="K = 1"):
        cop(X, np.zeros(len(y)))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN|finite"):
        cop(Xn, y)


def test_cop_streams_without_a_pair_matrix():
    X, y = make_blobs(n_samples=6000, centers=4, random_state=0)
    cop(X[:50], y[:50])                                 # compile first
    tracemalloc.start()
    cop(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * 6000 * 6000 / 20, peak            # far below one n x n float64 matrix (288 MB)


TIE = 1e-9


def _first_best(values, largest):
    "The paper's argmax/argmin; ties (within TIE, relatively) go to the first candidate in canonical order."
    best = max(values) if largest else min(values)
    for i, v in enumerate(values):
        if (v >= best - TIE * abs(best)) if largest else (v <= best + TIE * abs(best)):
            return i


def _dist(a, b):
    return math.sqrt(sum((p - q) ** 2 for p, q in zip(a, b)))


def cdbw_oracle(X, y, r=10, shrink=CDBW_SHRINK):
    "CDbw step by step as Halkidi & Vazirgiannis (2008) define it, with loops over representatives and points."
    clusters = []
    for k in np.unique(y):
        A = X[y == k]
        clusters.append(A[np.lexsort(A.T[::-1])])       # canonical order of the points: lexicographic
    K = len(clusters)
    means = [A.mean(axis=0) for A in clusters]
    sigma = [math.sqrt(np.mean([_dist(x, m) ** 2 for x in A])) for A, m in zip(clusters, means)]
    stdev = sum(sigma) / K
    # representatives, farthest-first
    reps = []
    for A, m in zip(clusters, means):
        chosen = [_first_best([_dist(x, m) ** 2 for x in A], largest=True)]
        while len(chosen) < min(r, len(A)):
            gap = [min(_dist(x, A[c]) ** 2 for c in chosen) for x in A]
            if max(gap) == 0:
                break
            chosen.append(_first_best(gap, largest=True))
        reps.append([A[c] for c in chosen])
    # respective closest representatives, density and distance between every pair of clusters
    dens = np.zeros((K, K))
    dist = np.full((K, K), np.inf)
    for i in range(K):
        for j in range(K):
            if i == j:
                continue
            closest_j = [_first_best([_dist(v, w) for w in reps[j]], largest=False) for v in reps[i]]
            closest_i = [_first_best([_dist(v, w) for v in reps[i]], largest=False) for w in reps[j]]
            rcr = [(a, closest_j[a]) for a in range(len(reps[i])) if closest_i[closest_j[a]] == a]
            both = np.concatenate([clusters[i], clusters[j]])
            d_sum, dens_sum = 0.0, 0.0
            for a, b in rcr:
                v, w = reps[i][a], reps[j][b]
                u = (v + w) / 2
                card = sum(1 for x in both if _dist(x, u) <= stdev) / len(both)
                dens_sum += _dist(v, w) / (2 * stdev) * card
                d_sum += _dist(v, w)
            dens[i, j] = dens_sum / len(rcr)
            dist[i, j] = d_sum / len(rcr)
    inter_dens = np.mean([max(dens[i, j] for j in range(K) if j != i) for i in range(K)])
    sep = np.mean([min(dist[i, j] for j in range(K) if j != i) for i in range(K)]) / (1 + inter_dens)
    intra = []
    for s in shrink:
        dens_cl = 0.0
        for A, m, R in zip(clusters, means, reps):
            total = 0.0
            for v in R:
                vs = v + s * (m - v)
                total += sum(1 for x in A if _dist(x, vs) <= stdev) / len(A)
            dens_cl += total / len(R)
        intra.append(dens_cl / (K * stdev))
    compactness = np.mean(intra)
    change = sum(abs(intra[t + 1] - intra[t]) for t in range(len(intra) - 1)) / (len(intra) - 1)
    cohesion = compactness / (1 + change)
    return dict(cdbw=cohesion * sep * compactness, cohesion=cohesion, compactness=compactness, sep=sep,
                intra_change=change, inter_dens=inter_dens, stdev=stdev)


def _small(name):
    X, y = DATA[name]
    if len(y) > 90:                                     # every third point: the loop oracle stays fast
        X, y = X[::3], y[::3]
    return X, y


@pytest.mark.parametrize("name", list(DATA))
def test_cdbw_parts_equal_oracle(name):
    X, y = _small(name)
    got, want = cdbw_parts(X, y), cdbw_oracle(X, y)
    for field, value in want.items():
        assert getattr(got, field) == pytest.approx(value, rel=1e-12, abs=1e-15), field
    assert cdbw(X, y) == got.cdbw


@pytest.mark.parametrize("r, shrink", [(1, (0.1, 0.9)), (3, (0.2, 0.5, 0.7)), (25, CDBW_SHRINK)])
def test_cdbw_options_equal_oracle(r, shrink):
    X, y = _small("unequal-1")
    assert cdbw(X, y, n_representatives=r, shrink=shrink) == pytest.approx(cdbw_oracle(X, y, r, shrink)["cdbw"], rel=1e-12)


def test_cdbw_permutation_and_relabel_bit_for_bit():
    X, y = DATA["iris"]                                 # one decimal: many exact distance ties
    base = cdbw(X, y)
    rng = np.random.default_rng(0)
    for _ in range(5):
        p = rng.permutation(len(y))
        names = np.array(["z", "a", "m"])[rng.permutation(3)]
        assert cdbw(X[p], names[y[p]]) == base


def test_cdbw_translation_and_replication():
    X, y = DATA["unequal-2"]
    base = cdbw(X, y)
    assert cdbw(X + [100.0, -7.5], y) == pytest.approx(base, rel=1e-9)
    assert cdbw(np.repeat(X, 3, axis=0), np.repeat(y, 3)) == pytest.approx(base, rel=1e-12)


def test_cdbw_units_are_documented_not_scale_free():
    X, y = _small("unequal-0")
    a, b = cdbw_parts(X, y), cdbw_parts(4.0 * X, y)
    assert b.sep == pytest.approx(4 * a.sep, rel=1e-12)
    assert b.compactness == pytest.approx(a.compactness / 4, rel=1e-12)
    assert b.intra_change == pytest.approx(a.intra_change / 4, rel=1e-12)
    assert b.inter_dens == pytest.approx(a.inter_dens, rel=1e-12)
    assert b.cdbw != pytest.approx(a.cdbw, rel=1e-3)    # 1 + Intra_change mixes units
    assert "scale" not in clm_nb.get_measure("cdbw").invariances


def test_cdbw_prefers_the_true_partition():
    X, y = DATA["iris"]
    assert cdbw(X, y) > cdbw(X, np.random.default_rng(1).permutation(y))


def test_cdbw_singleton_cluster_and_few_distinct_points():
    X = np.array([[0.0, 0], [1, 0], [0, 1], [1, 1], [5, 5], [5, 5], [9, 0]])
    y = np.array([0, 0, 0, 0, 1, 1, 2])             # a cluster of two copies and a singleton: one representative each
    got, want = cdbw_parts(X, y), cdbw_oracle(X, y)
    assert got.cdbw == pytest.approx(want["cdbw"], rel=1e-12)
    assert isinstance(got, CDbwParts) and got.sc == pytest.approx(got.sep * got.compactness)


def test_cdbw_bad_input():
    X, y = DATA["iris"]
    for bad in (0, 2.5, -1, "10"):
        with pytest.raises(ValueError, match="n_representatives"):
            cdbw(X, y, n_representatives=bad)
    for bad in ((0.5,), (0.5, 0.2), (0.0, 0.5), (0.1, 1.0), "ab", 0.5, (0.1, np.nan)):
        with pytest.raises(ValueError, match="shrink"):
            cdbw(X, y, shrink=bad)
    with pytest.raises(ValueError, match="Euclidean"):
        cdbw(X, y, metric="cosine")
    with pytest.raises(ValueError, match="K = 1"):
        cdbw(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="identical points"):
        cdbw(np.array([[0.0], [0], [3], [3]]), [0, 0, 1, 1])


def test_cdbw_scales_linearly():
    X, y = make_blobs(n_samples=20000, centers=5, n_features=3, random_state=0)
    cdbw(X[:100], y[:100])
    t = time.perf_counter()
    cdbw(X, y)
    assert time.perf_counter() - t < 5.0


# ---- issue 41: the scatter-matrix family, S_Dbw/SD and NbClust's split statistics against permetrics 2.1.0, the ...

REL = 1e-9


def datasets():
    "iris, wine and three blob sets of unequal sizes (20, 50, 90) in 3 dimensions."
    out = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)}
    for seed in range(3):
        out[f"blobs{seed}"] = make_blobs(n_samples=[20, 50, 90], n_features=3, cluster_std=[1.0, 2.0, 0.7],
                                         random_state=seed)
    return out


SCATTER_DATA = datasets()


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(1.0, abs(b))


def scatter_oracle(X, y):
    "W, B, T and the per-cluster W_k by loops over the clusters and points."
    X = np.asarray(X, float)
    c = X.mean(axis=0)
    d = X.shape[1]
    W, B, Wk, sizes = np.zeros((d, d)), np.zeros((d, d)), [], []
    for k in np.unique(y):
        Y = X[y == k]
        ck = Y.mean(axis=0)
        M = np.zeros((d, d))
        for x in Y:
            M += np.outer(x - ck, x - ck)
        Wk.append(M); sizes.append(len(Y))
        W += M
        B += len(Y) * np.outer(ck - c, ck - c)
    return W, B, W + B, Wk, np.array(sizes)


@pytest.mark.parametrize("name", list(SCATTER_DATA))
def test_scatter_family_equals_oracle(name):
    X, y = SCATTER_DATA[name]
    W, B, T, Wk, sizes = scatter_oracle(X, y)
    K, n = len(sizes), len(y)
    assert close(trace_w(X, y), np.trace(W))
    assert close(det_ratio(X, y), np.linalg.det(T) / np.linalg.det(W))
    assert close(log_det_ratio(X, y), n * (np.linalg.slogdet(T)[1] - np.linalg.slogdet(W)[1]))
    assert close(log_ss_ratio(X, y), np.log(np.trace(B) / np.trace(W)))
    assert close(ksq_detw(X, y), K ** 2 * np.linalg.det(W))
    assert close(scott_symons(X, y), sum(m * np.linalg.slogdet(M / m)[1] for M, m in zip(Wk, sizes)))
    assert close(friedman(X, y), np.trace(np.linalg.inv(W) @ B))
    assert close(banfeld_raftery(X, y), sum(m * np.log(np.trace(M) / m) for M, m in zip(Wk, sizes)))
    cents = np.array([X[y == k].mean(axis=0) for k in np.unique(y)])
    min_sep = min(((cents[i] - cents[j]) ** 2).sum() for i in range(K) for j in range(K) if i != j)
    assert close(ray_turi(X, y), np.trace(W) / n / min_sep)


@pytest.mark.parametrize("name", list(SCATTER_DATA))
def test_scatter_family_equals_permetrics(name):
    "permetrics 2.1.0 follows Desgraupes for these six (Ksq-DetW only with use_normalized=False)."
    from permetrics import ClusteringMetric
    X, y = SCATTER_DATA[name]
    cm = ClusteringMetric(X=X, y_pred=y)
    pairs = {"det_ratio": (det_ratio(X, y), cm.det_ratio_index()),
             "log_det_ratio": (log_det_ratio(X, y), cm.log_det_ratio_index()),
             "log_ss_ratio": (log_ss_ratio(X, y), cm.log_ss_ratio_index()),
             "ksq_detw": (ksq_detw(X, y), cm.ksq_detw_index(use_normalized=False)),
             "banfeld_raftery": (banfeld_raftery(X, y), cm.banfeld_raftery_index()),
             "trace_w": (trace_w(X, y), cm.sum_squared_error_index())}
    for measure, (ours, peer) in pairs.items():
        assert close(ours, peer), (name, measure, ours, peer)
    # permetrics' default Ksq-DetW min-max normalises W's entries first (not in Desgraupes or Marriott)
    assert not close(ksq_detw(X, y), cm.ksq_detw_index())


def test_permetrics_xie_beni_uses_the_nearest_centroid():
    "Ours (and ray_turi) weight each point by its own centroid (Xie & Beni 1991); permetrics takes the nearest one."
    from permetrics import ClusteringMetric
    X, y = np.array([[0.], [1], [2], [9], [10], [11]]), np.array([0, 0, 0, 0, 1, 1])
    ours, peer = xie_beni(X, y), ClusteringMetric(X=X, y_pred=y).xie_beni_index()
    assert close(ours, 50.5 / (6 * 7.5 ** 2)) and close(peer, 16.75 / (6 * 7.5 ** 2))
    assert ray_turi(X, y) == ours
    X, y = SCATTER_DATA["iris"]                                      # versicolor/virginica overlap: they differ
    assert ClusteringMetric(X=X, y_pred=y).xie_beni_index() < xie_beni(X, y)
    X, y = make_blobs(n_samples=90, centers=[[0, 0], [20, 0], [0, 20]], random_state=0)   # separated: they agree
    assert close(xie_beni(X, y), ClusteringMetric(X=X, y_pred=y).xie_beni_index())


def test_determinant_indices_invariant_to_any_linear_map():
    X, y = SCATTER_DATA["wine"]
    rng = np.random.default_rng(0)
    A = rng.normal(size=(X.shape[1], X.shape[1]))
    Z = X @ A + rng.normal(size=X.shape[1])
    for f in (det_ratio, log_det_ratio, friedman):   # rel 1e-6: raw wine's scatter matrices have condition numbers
        assert close(f(Z, y), f(X, y), rel=1e-6), f.__name__   # near 1e7 (proline ~1e3), so 1e-7 failed by rounding alone
    # standardising the columns changes trace W-based indices but not these
    S = (X - X.mean(0)) / X.std(0)
    assert close(det_ratio(S, y), det_ratio(X, y), rel=1e-9)
    assert not close(log_ss_ratio(S, y), log_ss_ratio(X, y))


def test_high_dimension_does_not_overflow():
    "d = 200: det T and det W are far outside the float range; the log-space indices stay exact."
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(4), 250)
    X = rng.normal(size=(1000, 200)) * 50 + rng.normal(size=(4, 200))[y] * 80
    W, B, T, Wk, sizes = scatter_oracle(X, y)
    with np.errstate(over="ignore"):
        assert np.isinf(np.linalg.det(T))                    # the naive determinant overflows
    assert close(log_det_ratio(X, y), 1000 * (np.linalg.slogdet(T)[1] - np.linalg.slogdet(W)[1]))
    assert close(scott_symons(X, y), sum(m * np.linalg.slogdet(M / m)[1] for M, m in zip(Wk, sizes)))
    assert ksq_detw(X, y) == np.inf                          # the value itself exceeds the float range
    assert np.isfinite(friedman(X, y)) and np.isfinite(det_ratio(X, y))
    # 250 points per cluster in 300 dimensions: every W_k is singular (numpy's slogdet returns a finite number)
    X3 = rng.normal(size=(1000, 300)) * 50 + rng.normal(size=(4, 300))[y] * 80
    assert scott_symons(X3, y) == -np.inf and np.isfinite(log_det_ratio(X3, y))


def test_singular_limits():
    y = np.array([0, 0, 0, 1, 1, 1])
    flat = np.array([[0., 0], [1, 0], [2, 0], [0, 5], [1, 5], [2, 5]])        # W singular, T regular
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert det_ratio(flat, y) == np.inf and log_det_ratio(flat, y) == np.inf and friedman(flat, y) == np.inf
        assert ksq_detw(flat, y) == 0.0 and scott_symons(flat, y) == -np.inf
        assert np.isfinite(log_ss_ratio(flat, y)) and np.isfinite(banfeld_raftery(flat, y))
    # rotated and translated, the flat directions stay flat
    R = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    assert det_ratio(flat @ R + 123.4, y) == np.inf and scott_symons(flat @ R + 123.4, y) == -np.inf
    line = np.array([[0., 0], [1, 1], [2, 2], [5, 5], [6, 6], [7, 7]])        # X on a line: T singular
    for f in (det_ratio, log_det_ratio, ksq_detw, scott_symons, friedman):
        with pytest.raises(ValueError, match="spans fewer than its d = 2 dimensions"):
            f(line, y)
    # a singleton cluster (n_k <= d): Scott-Symons and Banfeld-Raftery go to -inf, the pooled indices stay finite
    X, yy = SCATTER_DATA["iris"]
    X1, y1 = np.r_[X, [[9., 9, 9, 9]]], np.r_[yy, 3]
    assert scott_symons(X1, y1) == -np.inf and banfeld_raftery(X1, y1) == -np.inf
    assert np.isfinite(det_ratio(X1, y1)) and np.isfinite(friedman(X1, y1))


@pytest.mark.parametrize("f", [trace_w, det_ratio, log_det_ratio, log_ss_ratio, ksq_detw, scott_symons, friedman,
                               banfeld_raftery, ray_turi, s_dbw, sd])
def test_bad_input(f):
    X, y = SCATTER_DATA["iris"]
    with pytest.raises(ValueError, match="K = 1"):
        f(X, np.zeros(len(y)))
    Xn = X.copy(); Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f(Xn, y)
    with pytest.raises(ValueError, match="cityblock"):
        f(X, y, metric="cityblock")
    with pytest.raises(ValueError, match="labels has 3 entries"):
        f(X, [0, 1, 1])


def test_registry_metadata():
    knee = {"trace_w", "det_ratio", "log_det_ratio", "log_ss_ratio", "ksq_detw"}
    for name in knee | {"scott_symons", "friedman", "banfeld_raftery", "ray_turi", "s_dbw", "sd"}:
        info = clm_nb.get_measure(name)
        assert info.kind == "internal" and info.metrics == ("euclidean",)
        assert (info.optimum == "knee") == (name in knee), name
        assert "Desgraupes" in info.reference or name in ("s_dbw", "sd")
    assert "scale" not in clm_nb.get_measure("trace_w").invariances
    assert "scale" in clm_nb.get_measure("det_ratio").invariances
    for name in ("duda_hart", "beale", "hartigan"):                        # two partitions: not in the registry
        assert name not in clm_nb.measures().name.values


@pytest.mark.parametrize("name", list(SCATTER_DATA))
def test_s_dbw_equals_the_package_in_every_variant(name):
    "With spread='std' every (method, centre, nearest) equals s_dbw.S_Dbw, where the package gives a value."
    import s_dbw as peer
    X, y = SCATTER_DATA[name]
    compared = 0
    for method in ("Halkidi", "Kim", "Tong"):
        for centre in ("mean", "median"):
            for nearest in (True, False):
                ours = s_dbw(X, y, method=method.lower(), centre=centre, nearest=nearest, spread="std")
                try:
                    theirs = peer.S_Dbw(X, y, method=method, centr=centre, nearest_centr=nearest)
                except ValueError as e:                  # two or more centres with no point in their neighbourhood
                    assert "density" in str(e)
                    continue
                assert close(ours, theirs, rel=1e-12), (name, method, centre, nearest, ours, theirs)
                compared += 1
    assert compared >= 6
    assert close(s_dbw(X, y, method="tong", nearest=True, spread="std"), peer.S_Dbw(X, y), rel=1e-12)   # its default


@pytest.mark.parametrize("name", list(SCATTER_DATA))
def test_sd_equals_the_package(name):
    import s_dbw as peer
    X, y = SCATTER_DATA[name]
    for alpha in (0.0, 1.0, 3.5):
        for centre in ("mean", "median"):
            for nearest in (True, False):
                ours = sd(X, y, alpha=alpha, centre=centre, nearest=nearest, spread="std")
                theirs = peer.SD(X, y, k=alpha, centr=centre, nearest_centr=nearest)
                assert close(ours, theirs, rel=1e-12), (name, alpha, centre, nearest)
    assert close(sd(X, y, nearest=True, spread="std"), peer.SD(X, y), rel=1e-12)


def s_dbw_paper(X, y):
    "Halkidi & Vazirgiannis (2001) from the definition: variance vectors, mean centres, ball of radius stdev."
    ks = np.unique(y)
    K = len(ks)
    var = {k: X[y == k].var(axis=0) for k in ks}
    cen = {k: X[y == k].mean(axis=0) for k in ks}
    scat = np.mean([np.linalg.norm(var[k]) for k in ks]) / np.linalg.norm(X.var(axis=0))
    stdev = np.sqrt(sum(np.linalg.norm(var[k]) for k in ks)) / K

    def dens(u, clusters):
        return sum(1 for k in clusters for x in X[y == k] if np.linalg.norm(x - u) <= stdev)
    total = 0.0
    for i in ks:
        for j in ks:
            if i != j:
                total += dens((cen[i] + cen[j]) / 2, (i, j)) / max(dens(cen[i], (i,)), dens(cen[j], (j,)))
    return scat + total / (K * (K - 1))


@pytest.mark.parametrize("name", ["iris", "blobs0", "blobs2"])
def test_s_dbw_default_is_the_paper(name):
    X, y = SCATTER_DATA[name]
    assert close(s_dbw(X, y), s_dbw_paper(X, y), rel=1e-12)
    assert close(s_dbw(X * 1000 + 7, y), s_dbw(X, y), rel=1e-9)        # scale-invariant, unlike spread='std'
    if name == "iris":
        assert not close(s_dbw(X * 1000, y, spread="std"), s_dbw(X, y, spread="std"))


def test_s_dbw_and_sd_at_extreme_scales():
    "Squared variances of data at 1e+-150 would overflow or underflow; the indices are computed in normalised units."
    X, y = SCATTER_DATA["blobs1"]
    for a in (2.0 ** 490, 2.0 ** -490):                     # powers of two: the scaled data are exact
        assert close(s_dbw(X * a, y), s_dbw(X, y), rel=1e-12)
        assert close(s_dbw(X * a, y, method="kim", nearest=True, spread="std"),
                     s_dbw(X, y, method="kim", nearest=True, spread="std"), rel=1e-12)   # box: scale-free
        assert close(sd(X * a, y, alpha=0) * a, sd(X, y, alpha=0), rel=1e-12)          # Dis has units 1/length
        scat = sd(X, y, alpha=1) - sd(X, y, alpha=0)
        assert close(sd(X * a, y), scat + sd(X, y, alpha=0) / a, rel=1e-12)              # Scat is unit-free


def test_s_dbw_never_builds_a_pairwise_matrix():
    "n = 200,000: every neighbourhood count reads one or two clusters (an n x n matrix would need 320 GB)."
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 200_000)
    X = rng.normal(size=(200_000, 3)) + 5 * rng.normal(size=(4, 3))[y]
    assert np.isfinite(s_dbw(X, y)) and np.isfinite(sd(X, y))


def test_s_dbw_zero_density_limits():
    "Both centres of a pair with no point within stdev: 0 when the midpoint has none (the package raises)."
    import s_dbw as peer
    X, y = np.array([[0.], [2], [20], [22]]), np.array([0, 0, 1, 1])      # stdev = sqrt(2)/2 < 1 either way
    assert close(s_dbw(X, y), 1 / 101, rel=1e-12)
    with pytest.raises(ValueError):
        peer.S_Dbw(X, y, method="Halkidi", nearest_centr=False)


def test_s_dbw_bad_options():
    X, y = SCATTER_DATA["iris"]
    for kw, word in [({"method": "Tong"}, "method"), ({"centre": "mode"}, "centre"), ({"spread": "var"}, "spread"),
                     ({"nearest": "yes"}, "nearest")]:
        with pytest.raises(ValueError, match=word):
            s_dbw(X, y, **kw)
    with pytest.raises(ValueError, match="alpha"):
        sd(X, y, alpha=np.nan)
    with pytest.raises(ValueError, match="s_dbw: every point of X is the same"):
        s_dbw(np.ones((6, 2)), [0, 0, 0, 1, 1, 1])


def hierarchy(X, K):
    "Ward's partitions at K and K + 1 clusters: consecutive levels of one hierarchy, so the second is nested."
    Z = linkage(X, method="ward")
    return fcluster(Z, K, criterion="maxclust"), fcluster(Z, K + 1, criterion="maxclust")


def wss(X, y):
    return sum(((X[y == k] - X[y == k].mean(axis=0)) ** 2).sum() for k in np.unique(y))


def split_oracle(X, y, y_next):
    "Je(1), Je(2), n_m of the one cluster of y that y_next splits, by brute force over the clusters of y."
    for k in np.unique(y):
        parts = np.unique(y_next[y == k])
        if len(parts) == 2:
            m = y == k
            return wss(X[m], np.zeros(m.sum())), wss(X[m], y_next[m]), int(m.sum())
    raise AssertionError("no split")


@pytest.mark.parametrize("name", list(SCATTER_DATA))
@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_split_statistics_equal_oracle(name, K):
    X, _ = SCATTER_DATA[name]
    y, y_next = hierarchy(X, K)
    je1, je2, m = split_oracle(X, y, y_next)
    p = X.shape[1]
    dh = duda_hart(X, y, y_next)
    crit = 1 - 2 / (np.pi * p) - 3.2 * np.sqrt(2 * (1 - 8 / (np.pi ** 2 * p)) / (m * p))
    assert close(dh.statistic, je2 / je1) and close(dh.threshold, crit) and dh.more_clusters == (je2 / je1 < crit)
    bt = beale(X, y, y_next)
    F = ((je1 - je2) / je2) / ((m - 1) / (m - 2) * 2 ** (2 / p) - 1)
    assert close(bt.statistic, F) and close(bt.p_value, f_dist.sf(F, p, (m - 2) * p), rel=1e-7)
    assert bt.more_clusters == (bt.p_value < 0.1)
    h = hartigan(X, y, y_next)
    assert close(h.statistic, (wss(X, y) / wss(X, y_next) - 1) * (len(X) - K - 1))
    assert h.more_clusters == (h.statistic > 10)


def test_split_statistics_validate_the_pair():
    X, y = SCATTER_DATA["iris"]
    y2 = (y > 0).astype(int)
    with pytest.raises(ValueError, match="exactly one cluster more"):
        duda_hart(X, y, y)
    with pytest.raises(ValueError, match="not nested"):
        beale(X, y2, np.arange(150) % 3)
    assert np.isfinite(hartigan(X, y2, np.arange(150) % 3).statistic)         # Hartigan needs no nesting
    with pytest.raises(ValueError, match="labels has 149 entries"):
        hartigan(X, y2[:149], y)
    Xn = X.copy(); Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        duda_hart(Xn, y2, y)
    with pytest.raises(ValueError, match="alpha"):
        beale(X, y2, y, alpha=0)


def test_split_statistics_degenerate():
    X = np.array([[0.], [0], [0], [0], [5], [5]])
    y, y_next = np.array([0, 0, 0, 0, 1, 1]), np.array([0, 0, 2, 2, 1, 1])   # splitting identical points
    assert duda_hart(X, y, y_next).statistic == 1.0 and not duda_hart(X, y, y_next).more_clusters
    b = beale(X, y, y_next)
    assert b.statistic == 0.0 and b.p_value == 1.0 and not b.more_clusters
    assert hartigan(X, y, y_next).statistic == 0.0                          # tr W = 0 at K and K + 1
    X2 = np.array([[0.], [0], [1], [1], [5], [5]])
    b2 = beale(X2, y, y_next)                                              # Je(2) = 0 < Je(1)
    assert b2.statistic == np.inf and b2.p_value == 0.0 and b2.more_clusters
    assert hartigan(X2, y, y_next).statistic == np.inf


@pytest.mark.parametrize("seed", range(3))
def test_rising_knee_measures_find_four_blobs(seed):
    "det_ratio, log_det_ratio and log_ss_ratio rise with k: predict_k takes their most negative second difference."
    import pandas as pd
    from clm_nb.evaluation import predict_k
    X, _ = make_blobs(n_samples=400, centers=4, n_features=3, center_box=(-15, 15), random_state=seed)
    Z = linkage(X, method="ward")
    names = {"det_ratio": det_ratio, "log_det_ratio": log_det_ratio, "log_ss_ratio": log_ss_ratio}
    curves = pd.DataFrame([dict(k=k, **{m: f(X, fcluster(Z, k, criterion="maxclust")) for m, f in names.items()})
                           for k in range(2, 9)])
    assert (curves[list(names)].diff().iloc[1:] > 0).all().all()            # rising: their maximum says nothing
    assert predict_k(curves).to_dict() == {m: 4.0 for m in names}


# ---- issue 40: CVNN beyond Euclidean coordinates: precomputed, condensed, memmapped and sparse forms give the ...

@pytest.mark.parametrize("metric", COORDINATE)
def test_cvnn_precomputed_and_sparse_equal_the_coordinate_path(metric, tmp_path):
    X, y = blobs(seed=1)
    want, parts = cvnn(X, y, metric=metric, k=7), cvnn_parts(X, y, metric=metric, k=7)
    for name, D in forms(cdist(X, X, metric), tmp_path).items():
        assert cvnn(D, y, metric="precomputed", k=7) == pytest.approx(want, abs=1e-12), name
        got = cvnn_parts(D, y, metric="precomputed", k=7)
        assert got.separation == parts.separation
        assert got.compactness == pytest.approx(parts.compactness, rel=1e-12)
    assert cvnn(sparse.csr_matrix(X), y, metric=metric, k=7) == pytest.approx(want, abs=1e-12)


def test_cvnn_compactness_is_in_the_metrics_units():
    "cvnn_parts' compactness is the sum over clusters of the mean within-cluster distance, sqeuclidean included."
    from scipy.spatial.distance import pdist
    from clm_nb.cvi import cvnn_parts
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)) * 7, np.repeat([0, 1, 2], 20)
    for metric in ("sqeuclidean", "euclidean", "cityblock"):
        ref = sum(pdist(X[y == k], metric).mean() for k in range(3))
        assert abs(cvnn_parts(X, y, metric=metric).compactness - ref) <= 1e-12 * ref
