"""Golden values and scikit-learn agreement for the classic internal indices, and their degenerate limits.

DBCV (Moulavi et al., SDM 2014) against a brute-force oracle written from the paper's definition, its limits, noise
policies, bad input, the invariances it claims and hdbscan's implementation.

issue 40: DBCV beyond Euclidean coordinates (a precomputed, condensed or memmapped matrix, sparse rows, Gower's
tables), its exponent d (the Levina-Bickel intrinsic dimension) and `squared=True` (the authors' MATLAB convention).

issue 38: the silhouette stays within max_memory with thousands of clusters.

issue 41: the additions to the internal indices against genieclust 1.3.0 (the authors' code of the 2021 CVI study),
fpc's definitions and plain O(n^2) loops."""
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from scipy import sparse
from scipy.cluster.hierarchy import linkage
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist, pdist, squareform
from scipy.special import logsumexp
from scipy.stats import ortho_group
from sklearn import metrics as skm
from sklearn.datasets import load_iris, load_wine, make_blobs, make_circles, make_moons
from sklearn.metrics import pairwise_distances

import clm_nb
import clm_nb.internal as internal
from clm_nb import calinski_harabasz, davies_bouldin, i_index, silhouette, xie_beni
from clm_nb.catalog import measures
from clm_nb.core import check_data
from clm_nb.cvi import cvnn
from clm_nb.gower import gower
from clm_nb.internal import (LB_NEIGHBOURS, ball_hall, _coordinates, dbcv, _dbcv_parts, dbcv_parts, dbcv_value, dunn,
                             dunn_owa, g_plus, intrinsic_dimension, mcclain_rao, _prim, silhouette_w, sindex,
                             size_entropy, tau, wcnn, widest_gap)
from clm_nb.registry import PAIR_METRICS

from helpers import COORDINATE, blobs, forms
from hostile import bounded

IRIS_X, IRIS_Y = load_iris(return_X_y=True)

# Golden values on scikit-learn's iris with the species labels (issue 2).
GOLDEN = {"calinski_harabasz": 487.330876, "davies_bouldin": 0.751371, "silhouette": 0.503477,
          "dunn": 0.058481, "xie_beni": 0.226702}


@pytest.mark.parametrize("name, expected", GOLDEN.items())
def test_iris_golden(name, expected):
    assert clm_nb.score(name, IRIS_X, IRIS_Y) == pytest.approx(expected, abs=5e-7)


def test_iris_string_labels_same_as_codes():
    names = np.array(["setosa", "versicolor", "virginica"])[IRIS_Y]
    for name in GOLDEN:
        assert clm_nb.score(name, IRIS_X, names) == pytest.approx(clm_nb.score(name, IRIS_X, IRIS_Y), rel=1e-12)


def _random_case(seed):
    rng = np.random.default_rng(seed)
    n, d, k = rng.integers(10, 200), rng.integers(1, 8), rng.integers(2, 7)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10) + rng.uniform(-5, 5, size=d)
    y = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    X[y == 0] += rng.normal(scale=3, size=d)     # some structure
    return X, y


@pytest.mark.parametrize("seed", range(25))
def test_matches_sklearn_on_random_inputs(seed):
    X, y = _random_case(seed)
    assert calinski_harabasz(X, y) == pytest.approx(skm.calinski_harabasz_score(X, y), rel=1e-10)
    assert davies_bouldin(X, y) == pytest.approx(skm.davies_bouldin_score(X, y), rel=1e-10)
    assert silhouette(X, y) == pytest.approx(skm.silhouette_score(X, y), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine"])
def test_silhouette_other_metrics_match_sklearn(metric):
    X, y = _random_case(3)
    assert silhouette(X, y, metric=metric) == pytest.approx(skm.silhouette_score(X, y, metric=metric), rel=1e-10)


def _naive_dunn(X, y):
    from scipy.spatial.distance import cdist
    ks = np.unique(y)
    sep = min(cdist(X[y == a], X[y == b]).min() for a in ks for b in ks if a != b)
    diam = max(cdist(X[y == a], X[y == a]).max() for a in ks)
    return sep / diam


def _naive_xie_beni(X, y):
    ks = np.unique(y)
    cs = np.array([X[y == k].mean(0) for k in ks])
    wss = sum(((X[y == k] - cs[i]) ** 2).sum() for i, k in enumerate(ks))
    sep = min(((cs[i] - cs[j]) ** 2).sum() for i in range(len(ks)) for j in range(len(ks)) if i != j)
    return wss / (len(X) * sep)


def _naive_i_index(X, y):
    ks = np.unique(y)
    cs = np.array([X[y == k].mean(0) for k in ks])
    e1 = np.linalg.norm(X - X.mean(0), axis=1).sum()
    ek = sum(np.linalg.norm(X[y == k] - cs[i], axis=1).sum() for i, k in enumerate(ks))
    dk = max(np.linalg.norm(a - b) for a in cs for b in cs)
    return (e1 / ek * dk / len(ks)) ** 2


@pytest.mark.parametrize("seed", range(10))
def test_dunn_xb_i_match_direct_formulas(seed):
    X, y = _random_case(seed)
    assert dunn(X, y) == pytest.approx(_naive_dunn(X, y), rel=1e-10)
    assert dunn(X, y, max_memory=4096) == pytest.approx(_naive_dunn(X, y), rel=1e-10)
    assert xie_beni(X, y) == pytest.approx(_naive_xie_beni(X, y), rel=1e-10)
    assert i_index(X, y) == pytest.approx(_naive_i_index(X, y), rel=1e-10)


# Two clusters, each of identical points, at distinct places: every index reaches its best limit, without warnings.
TWO_POINT_CLUSTERS = (np.array([[0.3, 0.1]] * 4 + [[2.7, -1.9]] * 5), [0] * 4 + [1] * 5)
BEST_LIMIT = {"calinski_harabasz": np.inf, "davies_bouldin": 0.0, "dunn": np.inf, "silhouette": 1.0,
              "xie_beni": 0.0, "i_index": np.inf}


@pytest.mark.parametrize("name, expected", BEST_LIMIT.items())
def test_identical_point_clusters_reach_documented_limit(name, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clm_nb.score(name, *TWO_POINT_CLUSTERS) == expected


# Coincident centroids: clusters that cannot be told apart by their centres.
COINCIDENT = (np.array([[0., 0], [2, 0], [1, 1], [1, -1], [5, 5], [6, 5]]), [0, 0, 1, 1, 2, 2])
COINCIDENT_LIMIT = {"davies_bouldin": np.inf, "xie_beni": np.inf}


@pytest.mark.parametrize("name, expected", COINCIDENT_LIMIT.items())
def test_coincident_centroids_are_worst(name, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clm_nb.score(name, *COINCIDENT) == expected


def test_all_centroids_coincide_ch_is_zero():
    X = np.array([[0., 0], [2, 0], [1, 1], [1, -1]])
    assert calinski_harabasz(X, [0, 0, 1, 1]) == 0.0


def test_points_shared_across_clusters_dunn_zero():
    X = np.array([[0., 0], [1, 0], [1, 0], [3, 0]])
    assert dunn(X, [0, 0, 1, 1]) == 0.0


def test_all_points_identical_returns_limits_without_warnings():
    X = np.ones((6, 3))
    y = [0, 0, 0, 1, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert calinski_harabasz(X, y) == 0.0       # no separation
        assert davies_bouldin(X, y) == np.inf       # coincident centroids
        assert xie_beni(X, y) == np.inf
        assert dunn(X, y) == 0.0                    # clusters touch
        assert silhouette(X, y) == 0.0              # a = b = 0
        assert i_index(X, y) == 0.0


@pytest.mark.parametrize("factor", [1e-150, 1e-6, 1e3, 1e150])
def test_no_overflow_at_extreme_scales(factor):
    X, y = _random_case(1)
    for name in ["calinski_harabasz", "davies_bouldin", "dunn", "silhouette", "xie_beni"]:
        assert clm_nb.score(name, X * factor, y) == pytest.approx(clm_nb.score(name, X, y), rel=1e-9)
    assert np.log(i_index(X * factor, y)) == pytest.approx(np.log(i_index(X, y)) + 2 * np.log(factor), rel=1e-9)


def test_centroid_indices_refuse_other_metrics():
    for name in ["calinski_harabasz", "davies_bouldin", "xie_beni", "i_index"]:
        with pytest.raises(ValueError, match="Euclidean"):
            clm_nb.score(name, IRIS_X, IRIS_Y, metric="manhattan")


def test_noise_policy_changes_partition():
    X, y = _random_case(2)
    y = y.copy(); y[:5] = -1
    kept = y != -1
    assert silhouette(X, y, noise="ignore") == pytest.approx(silhouette(X[kept], y[kept]), rel=1e-12)
    assert silhouette(X, y, noise="cluster") == pytest.approx(silhouette(X, y), rel=1e-12)


def test_shared_labeled_data_gives_same_values():
    data = check_data(IRIS_X, IRIS_Y)
    for name in GOLDEN:
        assert clm_nb.score(name, data) == clm_nb.score(name, IRIS_X, IRIS_Y)


@pytest.mark.parametrize("between", ["single", "complete", "average", "centroid", "centroid_average"])
@pytest.mark.parametrize("within", ["diameter", "average", "centroid"])
def test_generalised_dunn_matches_formulas(between, within):
    from scipy.spatial.distance import cdist
    X, y = _random_case(5)
    ks = np.unique(y)
    C = {k: X[y == k] for k in ks}
    c = {k: C[k].mean(0) for k in ks}

    def delta(s, t):
        D = cdist(C[s], C[t])
        return {"single": D.min(), "complete": D.max(), "average": D.mean(),
                "centroid": np.linalg.norm(c[s] - c[t]),
                "centroid_average": (cdist(C[s], c[t][None]).sum() + cdist(C[t], c[s][None]).sum())
                / (len(C[s]) + len(C[t]))}[between]

    def diam(k):
        D = cdist(C[k], C[k])
        n = len(C[k])
        return {"diameter": D.max(), "average": D.sum() / (n * (n - 1)) if n > 1 else 0.0,
                "centroid": 2 * cdist(C[k], c[k][None]).mean()}[within]

    expected = min(delta(s, t) for s in ks for t in ks if s != t) / max(diam(k) for k in ks)
    assert clm_nb.dunn(X, y, between=between, within=within) == pytest.approx(expected, rel=1e-10)


def test_pair_rank_indices_on_identical_points_give_the_neutral_value():
    """Issue 49: on 30 identical points G(+) and the C-index returned 0.0, their best score, while Gamma, Tau and the
    silhouette give their neutral 0. Every couple tied: the value under a random tie-break (C = 1/2,
    G(+) = N_w N_b / (N_t (N_t - 1)), its value under random labels)."""
    import clm_nb
    X, y = np.ones((30, 2)), np.repeat([0, 1, 2], 10)
    nw, nb = 3 * 45, 435 - 135
    assert clm_nb.score("c_index", X, y) == 0.5
    assert clm_nb.score("g_plus", X, y) == pytest.approx(nw * nb / (435 * 434), rel=1e-15)
    assert [clm_nb.score(m, X, y) for m in ("gamma", "tau", "silhouette")] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["silhouette", "silhouette_w"])
def test_silhouette_sums_stay_within_one_gib_whatever_max_memory(name, monkeypatch):
    """Issue 49: 10^4 classes of 2 points took silhouette_w to 4.9 GB, its n x K sums sized by max_memory (half the
    free memory). The sums take at most 1 GiB (the bound of the engine's K-sized tables), in chunks beyond."""
    import clm_nb.internal as internal
    seen = []
    real = internal.silhouette_widths
    monkeypatch.setattr(internal, "silhouette_widths", lambda sd, mm: seen.append(mm) or real(sd, mm))
    X, y = load_iris(return_X_y=True)
    getattr(internal, name)(X, y, max_memory=64 * 2**30)
    assert seen and max(seen) <= 2**30


# ---- DBCV (Moulavi et al., SDM 2014) against a brute-force oracle written from the paper's definition, its ...

# ----------------------------------------------------------------------------------------------- the oracle
def core_distances(P):
    "All-points core distances of one cluster: (mean over x != o of (1/d(o, x))^dim)^(-1/dim), in log space."
    m, dim = P.shape
    if m == 1:
        return np.zeros(1)
    D = cdist(P, P)
    with np.errstate(divide="ignore"):
        logs = np.where(np.eye(m, dtype=bool), -np.inf, -dim * np.log(D))
    return np.exp(-(logsumexp(logs, axis=1) - np.log(m - 1)) / dim)


def leximax_mst(P, core):
    "Edges (a, b, weight) of the MST of the mutual-reachability graph, ties ordered by leximax then by index."
    m = len(P)
    D = cdist(P, P)
    W = np.maximum(np.maximum.outer(core, core), D)
    I, J = np.triu_indices(m, 1)
    lo, mid, hi = np.sort(np.stack([core[I], core[J], D[I, J]]), axis=0)
    R = np.zeros((m, m))
    R[I, J] = np.argsort(np.lexsort((J, I, lo, mid, hi))) + 1          # distinct ranks: a unique MST
    T = minimum_spanning_tree(R).tocoo()
    return T.row, T.col, W[T.row, T.col], W


def oracle(X, y, n_total=None):
    "DBCV from the definition, with the documented limits."
    X, y = np.asarray(X, float), np.asarray(y)
    parts = {}
    for k in np.unique(y):
        P = X[y == k]
        core = core_distances(P)
        if len(P) == 1:
            parts[k] = (core, np.array([0]), 0.0)
            continue
        a, b, w, _ = leximax_mst(P, core)
        deg = np.bincount(np.r_[a, b], minlength=len(P))
        inner = np.flatnonzero(deg > 1) if (deg > 1).any() else np.arange(len(P))   # no internal node: all
        both = (deg[a] > 1) & (deg[b] > 1)
        parts[k] = (core, inner, w[both].max() if both.any() else w.max())        # no internal edge: all edges
    total = 0.0
    for k, (core, inner, dsc) in parts.items():
        sep = min(np.maximum(np.maximum.outer(core[inner], c2[i2]), cdist(X[y == k][inner], X[y == l][i2])).min()
                  for l, (c2, i2, _) in parts.items() if l != k)
        size = int((y == k).sum())
        if size > 1 and max(sep, dsc) > 0:                                      # singleton, 0/0: V_C = 0
            total += size * (sep - dsc) / max(sep, dsc)
    return total / (len(y) if n_total is None else n_total)


def random_case(seed, n_max=70, d_max=6):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(k + 1, n_max))
    d = int(rng.integers(1, d_max))
    y = np.r_[np.arange(k), rng.integers(0, k, n - k)]                         # sizes from 1 up
    X = rng.normal(size=(k, d))[y] * rng.uniform(0, 5) + rng.normal(size=(n, d)) * 10 ** rng.uniform(-3, 3)
    return X, y


# ---------------------------------------------------------------------------------------- against the oracle
@pytest.mark.parametrize("seed", range(40))
def test_matches_the_definition(seed):
    X, y = random_case(seed)
    ref = oracle(X, y)
    assert dbcv(X, y) == pytest.approx(ref, abs=1e-10)
    g = np.unique(y, return_inverse=True)[1].astype(np.int64)
    assert dbcv_value(X, g) == pytest.approx(ref, abs=1e-10)
    assert dbcv_value(X, g, distances=cdist(X, X)) == pytest.approx(ref, abs=1e-10)


@pytest.mark.parametrize("d", [50, 400, 1617])
def test_high_dimensions_do_not_overflow(d):
    rng = np.random.default_rng(d)
    y = np.repeat([0, 1, 2], [30, 25, 5])
    X = rng.normal(size=(60, d)) + 0.5 * y[:, None]
    for scale in (1e-3, 1.0, 1e3):                       # (1/dist)^d alone under- or overflows at each of these
        v = dbcv(X * scale, y)
        assert np.isfinite(v) and v == pytest.approx(oracle(X, y), abs=1e-10)


def test_duplicates_agree_with_the_definition():
    "Exact ties between duplicate points: any tie order gives the same value (exchanging twins is a symmetry)."
    for seed in range(15):
        X, y = random_case(seed, n_max=40, d_max=4)
        r = np.random.default_rng(seed).integers(1, 4, len(y))
        Xd, yd = np.repeat(X, r, axis=0), np.repeat(y, r)
        assert dbcv(Xd, yd) == pytest.approx(oracle(Xd, yd), abs=1e-10)


def test_tree_is_a_minimum_spanning_tree_of_the_plain_weights():
    for seed in range(5):
        P = np.random.default_rng(seed).normal(size=(120, 3))
        core = core_distances(P)
        src, bw, deg = np.empty(120, np.int64), np.empty(120), np.zeros(120, np.int64)
        _prim(_coordinates(P), core, 0, 120, src, bw, deg, np.empty((5, 120)),
              np.empty((2, 120), np.int64))
        a, b, w, W = leximax_mst(P, core)
        assert {frozenset(e) for e in zip(a, b)} == {frozenset((v, src[v])) for v in range(1, 120)}
        assert bw[1:].sum() == pytest.approx(minimum_spanning_tree(W).sum(), rel=1e-12)
        I, J = np.triu_indices(120, 1)
        assert np.isin(W[I, J], bw[1:]).sum() > 2 * 119   # ties are the rule: many other edges weigh as a tree edge


def test_parallel_lanes_give_the_same_value():
    rng = np.random.default_rng(3)
    X = np.ascontiguousarray(np.r_[rng.normal(size=(2500, 2)), rng.normal(size=(300, 2)) + 4])
    starts = np.array([0, 2500, 2800])                    # 2500^2 pairs: above the threshold for lanes
    one = _dbcv_parts(_coordinates(X), starts, 2, 2800, 1)
    two = _dbcv_parts(_coordinates(X), starts, 2, 2800, 2)
    assert one.value == two.value
    assert np.array_equal(one.core, two.core) and np.array_equal(one.internal, two.internal)


# --------------------------------------------------------------------------------------- documented limits
def test_singleton_cluster_scores_zero_with_its_weight():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(30, 2)), [[9.0, 9.0]]]
    y = np.r_[np.zeros(30, int), 1]
    order = np.argsort(y, kind="stable")
    parts = _dbcv_parts(_coordinates(X[order]), np.array([0, 30, 31]), 2, 31, 1)
    assert parts.validity[1] == 0.0 and parts.sparseness[1] == 0.0
    assert dbcv(X, y) == pytest.approx(30 / 31 * parts.validity[0], abs=1e-15)
    assert dbcv(X, y) == pytest.approx(oracle(X, y), abs=1e-12)


def test_small_clusters_fall_back_to_the_whole_tree():
    # two 2-point clusters: no internal node, so both points are internal and the single edge is the sparseness.
    # Core distances of a pair are their distance: DSC = 1 and 2, DSPC = max(1, 2, 9) = 9.
    X = np.array([[0.0], [1], [10], [12]])
    assert dbcv(X, [0, 0, 1, 1]) == pytest.approx((2 * 8 / 9 + 2 * 7 / 9) / 4, abs=1e-15)
    # three points (a path with one internal node and no internal edge) and a star: DSC = the largest edge
    for P in (np.array([[0.0, 0], [1, 0], [3, 0]]), np.array([[0.0, 0], [1, 0], [-1.1, 0], [0, 1.2], [0, -1.3]])):
        X = np.r_[P, P + 50]
        y = np.repeat([0, 1], len(P))
        core = core_distances(P)
        a, b, w, _ = leximax_mst(P, core)
        deg = np.bincount(np.r_[a, b], minlength=len(P))
        assert not ((deg[a] > 1) & (deg[b] > 1)).any()                   # indeed no internal edge
        inner = np.flatnonzero(deg > 1)
        sep = np.maximum(np.maximum.outer(core[inner], core[inner]), cdist(P[inner], P[inner] + 50)).min()
        assert dbcv(X, y) == pytest.approx((sep - w.max()) / max(sep, w.max()), abs=1e-12)


def test_coincident_points():
    assert dbcv(np.zeros((6, 2)), [0, 0, 0, 1, 1, 1]) == 0.0                                   # 0/0 -> 0
    clusters_are_points = np.repeat(np.array([[0.0, 0], [5, 5], [9, 0]]), 4, axis=0)
    assert dbcv(clusters_are_points, np.repeat([0, 1, 2], 4)) == 1.0                           # DSC = 0 < DSPC
    shared = np.array([[0.0], [0], [0], [3], [6], [0], [0], [0]])          # internal twins at 0 in both clusters
    assert dbcv(shared, [0, 0, 0, 0, 0, 1, 1, 1]) == (5 * -1 + 3 * 0) / 8                  # DSPC = 0: -1 and 0/0


def test_a_duplicate_has_core_distance_zero():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    X[7] = X[3]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    order = np.arange(40)
    parts = _dbcv_parts(_coordinates(X), np.array([0, 20, 40]), 2, 40, 1)
    assert parts.core[3] == parts.core[7] == 0.0 and (np.delete(parts.core, [3, 7]) > 0).all()
    assert dbcv(X, y) == pytest.approx(oracle(X, y), abs=1e-12)


def test_values_stay_in_range_and_are_floats():
    for seed in range(30):
        X, y = random_case(seed)
        v = dbcv(X, y)
        assert type(v) is float and -1.0 <= v <= 1.0


# -------------------------------------------------------------------------------------------------- noise
def _moons_with_noise():
    X, y = make_moons(300, noise=0.06, random_state=1)
    yn = y.copy()
    yn[::10] = -1
    return X, y, yn


def test_noise_ignore_counts_noise_in_the_total():
    X, y, yn = _moons_with_noise()
    keep = yn >= 0
    assert dbcv(X, yn, noise="ignore") == pytest.approx(dbcv(X[keep], yn[keep]) * keep.sum() / 300, abs=1e-12)
    assert dbcv(X, yn, noise="ignore") == pytest.approx(oracle(X[keep], yn[keep], n_total=300), abs=1e-12)
    data = check_data(X, yn, noise="ignore")                       # a validated LabeledData keeps |O|
    assert data.n_noise == 30 and dbcv(data) == dbcv(X, yn, noise="ignore")


def test_noise_cluster_and_singletons():
    X, y, yn = _moons_with_noise()
    assert dbcv(X, yn, noise="cluster") == dbcv(X, yn)                    # None: -1 is one more cluster too
    assert dbcv(X, yn, noise="cluster") == pytest.approx(oracle(X, yn), abs=1e-12)
    single = np.where(yn < 0, 2 + np.arange(300), yn)
    assert dbcv(X, yn, noise="singletons") == pytest.approx(oracle(X, single), abs=1e-12)
    # the same trees, and each noise point can only lower the clusters' separation: never above 'ignore'
    assert dbcv(X, yn, noise="singletons") <= dbcv(X, yn, noise="ignore")


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw, fragment", [
    ({"metric": "mahalanobis"}, "dbcv: metric='mahalanobis' is not supported"),
    ({"metric": ["euclidean"]}, "dbcv: metric="),
    ({"metric": None}, "dbcv: metric=None"),
    ({"max_memory": 0}, "dbcv: max_memory=0"),
    ({"max_memory": 1.5}, "dbcv: max_memory=1.5"),
    ({"max_memory": np.nan}, "dbcv: max_memory=nan"),
    ({"noise": "drop"}, "not a noise policy"),
    ({"dim": 0}, "dbcv: dim=0"),
    ({"squared": "yes"}, "dbcv: squared="),
])
def test_bad_options(kw, fragment):
    X, y = make_moons(50, random_state=0)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        dbcv(X, y, **kw)


@pytest.mark.parametrize("X, y, fragment", [
    (np.zeros((5, 2)), [0, 0, 0, 0, 0], "one label"),
    (np.zeros((5, 2)), [0, 1, 2, 3, 4], "its own cluster"),
    (np.array([[0.0, np.nan], [1, 1], [2, 2]]), [0, 0, 1], "NaN"),
    (np.zeros((4, 2)), [0, 0, 1], "one label per point"),
    (np.zeros((4, 2)), [0, -1, -1, -1], "noise='ignore'"),
])
def test_bad_data(X, y, fragment):
    with pytest.raises(ValueError, match=fragment):
        dbcv(X, y, noise="ignore" if "noise" in fragment else None)


def test_max_memory_only_changes_the_lanes():
    X, y = make_moons(400, noise=0.05, random_state=0)
    assert dbcv(X, y, max_memory=1) == dbcv(X, y) == dbcv(X, y, max_memory=1e12)


def test_registry_entry():
    info = clm_nb.get_measure("dbcv")
    assert (info.kind, info.direction, info.lower, info.upper) == ("internal", "max", -1.0, 1.0)
    assert set(info.invariances) == {"relabel", "permutation", "scale", "translation", "rotation"}
    assert "Moulavi" in info.reference and clm_nb.score("dbcv", *make_moons(60, random_state=0)) > 0


# --------------------------------------------------------------------------------------- the building block
def test_dbcv_value_options():
    rng = np.random.default_rng(7)
    g = np.repeat([0, 1, 2], [15, 20, 10]).astype(np.int64)
    X = rng.normal(size=(45, 3)) + 3 * g[:, None]
    base = dbcv_value(X, g)
    assert dbcv_value(X, g, n_total=60) == pytest.approx(base * 45 / 60, abs=1e-15)
    X1 = np.ascontiguousarray(X[:, :1])                                     # dim is the exponent, not X's width
    assert dbcv_value(np.c_[X1, np.zeros(45)], g, dim=1) == pytest.approx(dbcv_value(X1, g), abs=1e-15)
    p = rng.permutation(45)                                                 # groups need not be sorted
    assert dbcv_value(X[p], g[p]) == pytest.approx(base, abs=1e-12)
    assert dbcv_value(X[p], g[p], distances=cdist(X[p], X[p])) == pytest.approx(base, abs=1e-12)
    with pytest.raises(AssertionError):
        dbcv_value(X, np.zeros(45, np.int64))


# ----------------------------------------------------------------------------------- invariances (hypothesis)
@st.composite
def labelled(draw, ties: bool):
    n = draw(st.integers(6, 45))
    d = draw(st.integers(1, 4))
    k = draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    X = rng.normal(scale=draw(st.floats(0.0, 5.0)), size=(k, d))[y] + rng.normal(size=(n, d))
    if ties:
        X = np.round(X, draw(st.integers(0, 2)))                   # lattices and duplicates, on purpose
    return X, y, rng


def _no_near_ties(X):
    D = np.sort(pdist(X))
    return D[0] > 0 and bool(np.all(np.diff(D) > 1e-9 * D[1:]))


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@SETTINGS
@given(case=labelled(ties=True))
def test_permutation_invariance_is_exact_even_with_ties(case):
    X, y, rng = case
    p = rng.permutation(len(y))
    assert dbcv(X[p], y[p]) == dbcv(X, y)


@SETTINGS
@given(case=labelled(ties=True))
def test_relabel_invariance_even_with_ties(case):
    X, y, rng = case
    names = np.array([f"c{v}" for v in rng.permutation(10)])[y]
    assert dbcv(X, names) == pytest.approx(dbcv(X, y), abs=1e-12)


@SETTINGS
@given(case=labelled(ties=False), transform=st.sampled_from(["scale", "translation", "rotation"]))
def test_geometric_invariances(case, transform):
    "On data without near ties (a rounding transform can reorder exactly tied distances, and so the tree)."
    X, y, rng = case
    assume(_no_near_ties(X))
    if transform == "scale":
        X2 = X * float(10 ** rng.uniform(-3, 3))
    elif transform == "translation":
        X2 = X + rng.uniform(-100, 100, size=X.shape[1])
    else:
        X2 = -X if X.shape[1] == 1 else X @ ortho_group.rvs(X.shape[1], random_state=int(rng.integers(2**31)))
    assert dbcv(X2, y) == pytest.approx(dbcv(X, y), abs=1e-9)


# ----------------------------------------------------------------------------------- published behaviour
def test_known_shapes():
    rng = np.random.default_rng(0)
    for X, y in (make_moons(500, noise=0.05, random_state=0), make_circles(500, noise=0.03, factor=0.5, random_state=0)):
        assert dbcv(X, y) > 0.5
        assert dbcv(X, rng.permutation(y)) < -0.5
    gauss = lambda sep: (np.r_[rng.normal(size=(250, 2)), rng.normal(size=(250, 2)) + [sep, 0]], np.repeat([0, 1], 250))
    touching, apart = dbcv(*gauss(1.0)), dbcv(*gauss(8.0))
    assert touching < -0.5 < 0.5 < apart


# ---------------------------------------------------------------------------------------------- hdbscan
def hdbscan_rule(X, y):
    """DBCV from the definition with hdbscan 0.8.44's choices (read from its source, not copied): within-cluster distances
    from scikit-learn's pairwise_distances (the |x|^2 + |y|^2 - 2 x.y expansion: some duplicates get ~1e-8, not 0);
    zero distances left out of the core-distance sum, and the core distances set to 0 when every sum is 0; Prim's tree from the first
    point, each later edge re-attached to the lowest-indexed tree point whose mutual reachability is numpy.isclose to
    the edge's weight; no internal node -> the first point only; noise (-1) out of the clusters, in |O|."""
    n, dim = X.shape
    ks = [k for k in np.unique(y) if k >= 0]
    core, inner, dsc = {}, {}, {}
    for k in ks:
        P = X[y == k]
        m = len(P)
        D = pairwise_distances(P)
        with np.errstate(divide="ignore", over="ignore"):
            T = np.where(D > 0, (1.0 / np.where(D > 0, D, 1.0)) ** dim, 0.0)
            s = T.sum(1) / (m - 1)
            c = np.zeros(m) if s.sum() == 0 else s ** (-1.0 / dim)
        W = np.maximum(np.maximum.outer(c, c), D)
        in_tree, best, src = np.zeros(m, bool), np.full(m, np.inf), np.zeros(m, int)
        cur, edges = 0, []
        for _ in range(m - 1):
            in_tree[cur] = True
            new, bw = -1, np.inf
            for j in np.flatnonzero(~in_tree):
                if W[cur, j] < best[j]:
                    best[j], src[j] = W[cur, j], cur
                if best[j] < bw:
                    bw, new = best[j], j
            edges.append([src[new], new, bw])
            cur = new
        E = np.array(edges, float)
        for i in range(1, len(E)):
            seen = np.unique(np.array(edges)[:i, :2].astype(int))
            cand = seen[np.isclose(W[int(E[i, 1]), seen], E[i, 2])]
            E[i, 0] = cand[cand != E[i, 1]][0]
        deg = np.bincount(E[:, :2].astype(int).ravel(), minlength=m)
        nodes = np.flatnonzero(deg > 1) if (deg > 1).any() else np.array([0])
        sel = np.isin(E[:, 0], nodes) & np.isin(E[:, 1], nodes)
        core[k], inner[k], dsc[k] = c, nodes, (E[sel] if sel.any() else E)[:, 2].max()
    total = 0.0
    for k in ks:
        sep = min(np.maximum(np.maximum.outer(core[k][inner[k]], core[l][inner[l]]),
                             cdist(X[y == k][inner[k]], X[y == l][inner[l]])).min() for l in ks if l != k)
        total += (y == k).sum() / n * (sep - dsc[k]) / max(sep, dsc[k])
    return total


def _hdbscan(X, y):
    validity = pytest.importorskip("hdbscan.validity")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return validity.validity_index(np.asarray(X, float), np.asarray(y, np.intp))


def _hdbscan_cases():
    rng = np.random.default_rng(0)
    X, y = make_moons(300, noise=0.05, random_state=0)
    yn = y.copy()
    yn[::7] = -1
    return [("moons", X, y), ("moons with noise", X, yn), ("moons x 1e-9", X * 1e-9, y),
            ("moons, duplicated", np.repeat(X[::3], 2, axis=0), np.repeat(y[::3], 2)),
            ("gaussians 3-D", rng.normal(size=(200, 3)) + np.repeat([[0, 0, 0], [3, 0, 0]], 100, axis=0),
             np.repeat([0, 1], 100)),
            ("1617-D", rng.normal(size=(60, 1617)) + np.repeat([0.0, 0.5], 30)[:, None], np.repeat([0, 1], 30))]


@pytest.mark.parametrize("name, X, y", _hdbscan_cases(), ids=[c[0] for c in _hdbscan_cases()])
def test_hdbscan_differs_only_by_its_documented_choices(name, X, y):
    "Re-implementing hdbscan's choices from the definition reproduces its value: the listed reasons are the whole story."
    assert _hdbscan(X, y) == pytest.approx(hdbscan_rule(X, y), abs=1e-10)


def test_hdbscan_depends_on_row_order_and_scale_dbcv_does_not():
    X, y = make_moons(1000, noise=0.05, random_state=0)
    shuffled = [(lambda q: _hdbscan(X[q], y[q]))(np.random.default_rng(s).permutation(1000)) for s in range(5)]
    assert max(shuffled) - min(shuffled) > 0.05
    assert abs(_hdbscan(X * 1e-10, y) - _hdbscan(X, y)) > 0.05
    ours = [dbcv(X[q], y[q]) for q in (np.random.default_rng(s).permutation(1000) for s in range(5))]
    assert len(set(ours)) == 1 and dbcv(X * 1e-10, y) == pytest.approx(ours[0], abs=1e-12)


# ---- issue 40: DBCV beyond Euclidean coordinates (a precomputed, condensed or memmapped matrix, sparse rows, ...

# ------------------------------------------------------------------------------- equal to the coordinate path
@pytest.mark.parametrize("metric", COORDINATE)
def test_dbcv_precomputed_and_sparse_equal_the_coordinate_path(metric, tmp_path):
    X, y = blobs()
    want = dbcv(X, y, metric=metric)
    for name, D in forms(cdist(X, X, metric), tmp_path).items():
        assert dbcv(D, y, metric="precomputed", dim=X.shape[1]) == pytest.approx(want, abs=1e-12), name
    assert dbcv(sparse.csr_matrix(X), y, metric=metric) == pytest.approx(want, abs=1e-12)
    Xs = X.copy()
    Xs[Xs < 5] = 0.0                                        # really sparse rows: the same as their dense form
    Xs[~Xs.any(axis=1), 0] = 1.0                            # no all-zero row: cosine refuses them (undefined)
    assert dbcv(sparse.csr_matrix(Xs), y, metric=metric) == pytest.approx(dbcv(Xs, y, metric=metric), abs=1e-12)


def test_gower_equals_its_precomputed_matrix():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], 30)
    df = pd.DataFrame({"x": rng.normal(size=90) + 3 * y, "z": rng.uniform(size=90),
                       "colour": np.array(["red", "green", "blue"])[(y + (rng.random(90) < 0.2)) % 3]})
    df.loc[rng.choice(90, 6, replace=False), "z"] = np.nan
    G = gower(df)
    assert dbcv(df, y, metric="gower", dim=2) == pytest.approx(dbcv(G, y, metric="precomputed", dim=2), abs=1e-12)
    assert dbcv(df, y, metric="gower") == pytest.approx(dbcv(G, y, metric="precomputed"), abs=1e-12)
    assert cvnn(df, y, metric="gower", k=5) == pytest.approx(cvnn(G, y, metric="precomputed", k=5), abs=1e-12)


def test_memmap_is_read_in_blocks_not_copied(tmp_path):
    X, y = blobs(n=1200, d=2, seed=3)
    D = forms(cdist(X, X), tmp_path)["memmap"]
    data = check_data(D, y, metric="precomputed")                   # the check reads in tiles (core's business)
    dbcv(D[:50, :50], y[:50], metric="precomputed", dim=2)           # compile outside the traced call
    tracemalloc.start()
    value = dbcv(data, metric="precomputed", dim=2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert value == pytest.approx(dbcv(X, y), abs=1e-12)
    assert peak < D.nbytes / 8, f"peak {peak / 2**20:.1f} MiB for an {D.nbytes / 2**20:.1f} MiB matrix"


# ------------------------------------------------------------------------------------------------ row order
def test_precomputed_value_does_not_depend_on_the_row_order():
    rng = np.random.default_rng(4)
    for lattice in (True, False):                           # a lattice: exact ties everywhere
        X = rng.integers(0, 5, size=(80, 2)).astype(float) if lattice else rng.normal(size=(80, 3))
        y = rng.integers(0, 3, 80)
        D = cdist(X, X)
        base = dbcv(D, y, metric="precomputed", dim=2)
        for seed in range(4):
            p = np.random.default_rng(seed).permutation(80)
            assert dbcv(D[np.ix_(p, p)], y[p], metric="precomputed", dim=2) == base
            assert dbcv(squareform(D[np.ix_(p, p)], checks=False), y[p], metric="precomputed", dim=2) == base
            assert cvnn(D[np.ix_(p, p)], y[p], metric="precomputed", k=5) == pytest.approx(
                cvnn(D, y, metric="precomputed", k=5), rel=1e-12)          # the pair sums run in another order


# ---------------------------------------------------------------------------------------- the exponent d
def test_dim_defaults():
    X, y = blobs(d=4)
    assert dbcv(X, y) == dbcv(X, y, dim=4)                                  # coordinates: the columns
    assert dbcv(sparse.csr_matrix(X), y) == pytest.approx(dbcv(X, y, dim=4), abs=1e-12)
    assert dbcv(X, y, dim=1) != dbcv(X, y)
    D = cdist(X, X)                                                         # no columns: estimated, reproducibly
    est = intrinsic_dimension(D, metric="precomputed")
    assert est == pytest.approx(intrinsic_dimension(X), abs=1e-12)
    used = max(1, int(np.floor(est + 0.5)))
    assert dbcv(D, y, metric="precomputed") == dbcv(D, y, metric="precomputed", dim=used)
    assert dbcv(D, y, metric="precomputed") == pytest.approx(dbcv(X, y, dim=used), abs=1e-12)


@pytest.mark.parametrize("case, true_dim", [("circle", 1), ("swiss roll", 2), ("gaussian 3-D", 3),
                                            ("4-D plane in 10-D", 4)])
def test_levina_bickel_recovers_known_dimensions(case, true_dim):
    rng = np.random.default_rng(5)
    t = rng.uniform(0, 4 * np.pi, 1200)
    Z = {"circle": lambda: np.c_[np.cos(t), np.sin(t)],
         "swiss roll": lambda: np.c_[t * np.cos(t), rng.uniform(0, 10, 1200), t * np.sin(t)],
         "gaussian 3-D": lambda: rng.normal(size=(1200, 3)),
         "4-D plane in 10-D": lambda: rng.normal(size=(1200, 4)) @ rng.normal(size=(4, 10))}[case]()
    est = intrinsic_dimension(Z)
    assert abs(est - true_dim) < 0.5, est
    assert intrinsic_dimension(Z * 1e5 + 3) == pytest.approx(est, rel=1e-9)   # scale and translation free


def test_levina_bickel_known_biases():
    # a lattice's shells of equal distances push it up (TwoNN would be infinite: T1 = T2 everywhere); a cube's faces
    # pull it down as the dimension grows. Documented in nbs/06_internal.ipynb, not tuned away.
    assert 2 < intrinsic_dimension(np.indices((30, 30)).reshape(2, -1).T.astype(float)) < 3
    assert 4 < intrinsic_dimension(np.random.default_rng(5).uniform(size=(1500, 5))) < 4.6


def test_levina_bickel_formula_by_hand():
    # four points on a line at 0, 1, 3, 7 with k1 = k2 = 2: per point, 1/m = log(T2 / T1)
    x = np.array([[0.0], [1], [3], [7]])
    inv = [np.log(3 / 1), np.log(2 / 1), np.log(3 / 2), np.log(6 / 4)]
    assert intrinsic_dimension(x, k1=2, k2=2) == pytest.approx(1 / np.mean(inv), rel=1e-14)
    assert LB_NEIGHBOURS == (10, 20)


# ------------------------------------------------------------------------------------------- squared=True
def matlab_style(D, y, dim):
    """DBCV on the distances the authors' MATLAB code uses (dbcv.m: dist = squareform(pdist(data)).^2, core distances
    with d = the number of columns), re-written with numpy for data without duplicates or singletons; D is that
    squared matrix. The mutual-reachability graph has many equal weights, so the tree is the one of clm_nb's leximax
    order (see nbs/06_internal.ipynb; MATLAB's Prim breaks those ties its own way)."""
    labels = np.unique(y)
    core, comp, inner = np.zeros(len(y)), {}, {}
    for c in labels:
        idx = np.flatnonzero(y == c)
        Dc = D[np.ix_(idx, idx)]
        with np.errstate(divide="ignore"):
            P = Dc ** (-float(dim))
        P[~np.isfinite(P)] = 0
        core[idx] = (P.sum(0) / (len(idx) - 1)) ** (-1 / dim)
        W = np.maximum(np.maximum.outer(core[idx], core[idx]), Dc)
        I, J = np.triu_indices(len(idx), 1)
        lo, mid, hi = np.sort(np.stack([core[idx][I], core[idx][J], Dc[I, J]]), axis=0)
        R = np.zeros_like(W)
        R[I, J] = np.argsort(np.lexsort((J, I, lo, mid, hi))) + 1           # rank of each edge in the leximax order
        T = minimum_spanning_tree(R).tocoo()
        T.data = W[T.row, T.col]
        deg = np.bincount(np.r_[T.row, T.col], minlength=len(idx))
        both = (deg[T.row] > 1) & (deg[T.col] > 1)
        comp[c] = T.data[both].max() if both.any() else T.data.max()
        inner[c] = idx[deg > 1] if (deg > 1).any() else idx
    total = 0.0
    for c in labels:
        sep = min(np.maximum(np.maximum.outer(core[inner[c]], core[inner[o]]), D[np.ix_(inner[c], inner[o])]).min()
                  for o in labels if o != c)
        total += (y == c).sum() * (sep - comp[c]) / max(sep, comp[c])
    return total / len(y)


def test_squared_reproduces_the_reference_convention():
    # by hand: {0, 1} and {10, 12}; squared distances 1, 4 inside, 81 between the nearest: (2 * 80/81 + 2 * 77/81) / 4
    x, y = np.array([[0.0], [1], [10], [12]]), [0, 0, 1, 1]
    assert dbcv(x, y, squared=True) == pytest.approx(157 / 162, abs=1e-15)
    assert dbcv(x, y) == pytest.approx(15 / 18, abs=1e-15)
    X, y = blobs(n=90, d=2, seed=6)
    D2 = cdist(X, X) ** 2
    ref = matlab_style(D2, y, 2)
    assert dbcv(X, y, squared=True) == pytest.approx(ref, abs=1e-12)
    assert dbcv(cdist(X, X), y, metric="precomputed", dim=2, squared=True) == pytest.approx(ref, abs=1e-12)
    assert dbcv(D2, y, metric="precomputed", dim=2) == pytest.approx(ref, abs=1e-12)
    assert abs(dbcv(X, y, squared=True) - dbcv(X, y)) > 1e-3                # the convention matters


# ------------------------------------------------------------------------------------------ bad input, registry
@pytest.mark.parametrize("kw, fragment", [
    ({"dim": 0}, "dim=0"), ({"dim": -2}, "dim=-2"), ({"dim": 2.5}, "dim=2.5"), ({"dim": "3"}, "dim="),
    ({"squared": "yes"}, "squared="), ({"squared": 1}, "squared="),
    ({"metric": "mahalanobis"}, "metric='mahalanobis' is not supported"),
])
def test_dbcv_bad_options(kw, fragment):
    X, y = blobs(n=30)
    with pytest.raises(ValueError, match="dbcv: " + fragment):
        dbcv(X, y, **kw)


def test_refusals_name_the_reason():
    X, y = blobs(n=30)
    with pytest.raises(ValueError, match="cvnn: metric='mahalanobis' is not supported"):
        cvnn(X, y, metric="mahalanobis")
    with pytest.raises(ValueError, match="square"):
        dbcv(X, y, metric="precomputed")                                   # coordinates are not a matrix
    with pytest.raises(ValueError, match="intrinsic_dimension: k2 = 20"):
        intrinsic_dimension(X[:15])
    with pytest.raises(ValueError, match="pass dim="):
        dbcv(np.zeros((6, 6)), [0, 0, 0, 1, 1, 1], metric="precomputed")   # all coincide: no dimension to estimate


def test_registry_states_the_metrics():
    table = clm_nb.measures().set_index("name")
    for name in ("dbcv", "cvnn"):
        assert tuple(table.loc[name, "metrics"]) == tuple(PAIR_METRICS)
        assert bool(table.loc[name, "sparse"])


# ---- issue 38: the silhouette stays within max_memory with thousands of clusters.

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


# ---- issue 41: the additions to the internal indices against genieclust 1.3.0 (the authors' code of the 2021 CVI ...

try:                                    # the peer (the dev extra): the tests below are skipped without it
    import genieclust
    cv = genieclust.cluster_validity
except ImportError:
    genieclust = cv = None
GENIECLUST = pytest.mark.skipif(genieclust is None, reason="genieclust not installed: pip install -e '.[dev]'")


def _unequal(seed=3):
    rng = np.random.default_rng(seed)
    sizes = (70, 40, 30)
    X = np.concatenate([rng.normal(size=(m, 3)) * (1 + k) + 6 * k for k, m in enumerate(sizes)])
    return X, np.repeat(np.arange(3), sizes)


def _datasets():
    out = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True), "unequal": _unequal()}
    for seed in (0, 1, 2):
        X, y = make_blobs(150, centers=3 + seed, n_features=2 + seed, cluster_std=1.5, random_state=seed)
        out[f"blobs{seed}"] = (X, y)
    return {k: (np.ascontiguousarray(X, dtype=float), np.asarray(y, dtype=np.int64)) for k, (X, y) in out.items()}


DATA = _datasets()


NAMES = sorted(DATA)


def _dunn_old(X, y, between, within):
    "The centroid ingredients as `dunn` computed them before issue 41 (point-centroid distances of every cluster)."
    K = y.max() + 1
    c = np.array([X[y == k].mean(0) for k in range(K)])
    to_c = cdist(X, c)
    own = np.array([to_c[y == s].sum(0) for s in range(K)])         # own[s, t] = sum over x in C_s of d(x, c_t)
    sizes = np.bincount(y).astype(float)
    delta = cdist(c, c) if between == "centroid" else (own + own.T) / (sizes[:, None] + sizes[None, :])
    diam = 2 * np.diag(own) / sizes
    return delta[~np.eye(K, dtype=bool)].min() / diam.max()


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_dunn_centroid_options_need_no_pair(name, monkeypatch):
    X, y = DATA[name]
    def no_pairs(*a, **k):
        raise AssertionError("the pair engine was called")
    monkeypatch.setattr(internal, "summarize", no_pairs)
    for between in ("centroid", "centroid_average"):
        new = dunn(X, y, between=between, within="centroid")
        assert abs(new - _dunn_old(X, y, between, "centroid")) <= 1e-12 * max(1, new)


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_generalised_dunn_against_genieclust(name):
    X, y = DATA[name]
    st = check_data(X, y).stats
    sizes = st.sizes.astype(float)
    own = st.within_dist * st.scale                                  # sum over x in C_s of d(x, c_s)
    diam3 = (2 * own / sizes).max()
    # genieclust's delta_5: each point to its OWN centroid (a pooled scatter, not a separation)
    pooled = ((own[:, None] + own[None, :]) / (sizes[:, None] + sizes[None, :]))[~np.eye(len(sizes), dtype=bool)].min()
    lower = {1: "single", 2: "complete", 3: "average", 4: "centroid", 5: "centroid_average", 6: "hausdorff"}
    upper = {1: "diameter", 2: "average", 3: "centroid"}
    for ld, between in lower.items():
        for ud, within in upper.items():
            peer = cv.generalised_dunn_index(X, y, ld, ud)
            if ld == 5:                                              # its Delta as ours (halved for Delta_2)
                D = {1: max(pdist(X[y == k]).max() for k in range(y.max() + 1)),
                     2: max(pdist(X[y == k]).mean() for k in range(y.max() + 1)) / 2,
                     3: diam3}[ud]
                assert abs(peer - pooled / D) <= 1e-9 * max(1, peer), (ld, ud)
                continue
            ours = dunn(X, y, between=between, within=within)
            expected = 2 * ours if ud == 2 else ours                 # genieclust's Delta_2 is half the paper's
            assert abs(peer - expected) <= 1e-9 * max(1, peer), (ld, ud, peer, ours)


@GENIECLUST
def test_delta5_follows_the_paper_not_genieclust():
    "Moving the clusters apart leaves genieclust's delta_5 where it was; Bezdek & Pal's (ours) grows."
    X, y = DATA["unequal"]
    far = X + (y[:, None] * 50.0)
    assert cv.generalised_dunn_index(far, y, 5, 3) == pytest.approx(cv.generalised_dunn_index(X, y, 5, 3), rel=1e-12)
    assert dunn(far, y, between="centroid_average", within="centroid") > \
        5 * dunn(X, y, between="centroid_average", within="centroid")


@GENIECLUST
def test_hausdorff_definition():
    X, y = DATA["unequal"]
    C = [X[y == k] for k in range(3)]
    h = min(max(cdist(C[s], C[t]).min(1).max(), cdist(C[s], C[t]).min(0).max())
            for s in range(3) for t in range(3) if s != t)
    assert dunn(X, y, between="hausdorff") == pytest.approx(h / max(pdist(c).max() for c in C), rel=1e-12)
    D = cdist(X, X)
    assert dunn(D, y, between="hausdorff", metric="precomputed") == pytest.approx(dunn(X, y, between="hausdorff"),
                                                                                  rel=1e-12)


@GENIECLUST
def test_dunn_bad_options():
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="between='ward' is not an option"):
        dunn(X, y, between="ward")
    with pytest.raises(ValueError, match="Euclidean"):
        dunn(X, y, between="centroid", metric="cityblock")


@GENIECLUST
@pytest.mark.parametrize("name", ["iris", "unequal", "blobs1"])
def test_dbcv_is_the_weighted_sum_of_its_parts(name):
    X, y = DATA[name]
    labels = np.array(["c", "a", "b", "d", "e"])[y]                  # the caller's labels, not sorted by code
    p = dbcv_parts(X, labels)
    assert list(p.classes) == sorted(set(labels))
    assert p.value == dbcv(X, labels)
    assert np.dot(p.sizes, p.validity) / p.n_total == pytest.approx(p.value, abs=1e-15)
    for k, c in enumerate(p.classes):
        assert p.sizes[k] == (labels == c).sum()
    assert np.all(p.validity == np.where(p.sizes == 1, 0, (p.separation - p.sparseness)
                                         / np.maximum(p.separation, p.sparseness)))


@GENIECLUST
def test_dbcv_parts_noise_and_bad_input():
    X, y = DATA["unequal"]
    yn = y.copy(); yn[:10] = -1
    p = dbcv_parts(X, yn, noise="ignore")
    assert (p.n_total, int(p.sizes.sum()), list(p.classes)) == (140, 130, [0, 1, 2])
    assert np.dot(p.sizes, p.validity) / 140 == pytest.approx(dbcv(X, yn, noise="ignore"), abs=1e-15)
    with pytest.raises(ValueError, match="dbcv_parts: dim=0"):
        dbcv_parts(X, y, dim=0)
    with pytest.raises(ValueError, match="one label"):
        dbcv_parts(X, np.zeros(len(y)))


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_wcss_is_clusterstats_wss_and_ball_hall_times_k(name):
    X, y = DATA[name]
    st = check_data(X, y).stats
    wss = st.wss * st.scale ** 2                                     # clusterCrit's trace_w (07_cvi)
    assert -cv.negated_wcss_index(X, y) == pytest.approx(wss, rel=1e-12)
    K = y.max() + 1
    assert cv.negated_ball_hall_index(X, y) == pytest.approx(-K * ball_hall(X, y), rel=1e-12)


def _boundary_ties(X, M):
    "Whether some point's M-th and (M+1)-th nearest neighbours are equally far (then which is 'nearest' is a choice)."
    D = np.sort(cdist(X, X), axis=1)[:, 1:]
    return bool(np.any(D[:, M - 1] == D[:, M]))


def _wcnn_tie_range(X, y, M):
    "The smallest and the largest WCNN over every way of breaking the ties at the M-th neighbour."
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    lo = hi = 0
    for i in range(len(y)):
        v = np.sort(D[i])[M - 1]
        closer, tied, own = D[i] < v * (1 - 1e-9), np.abs(D[i] - v) <= v * 1e-9, y == y[i]
        places, t_own = M - closer.sum(), (tied & own).sum()
        lo += (closer & own).sum() + max(0, places - (tied.sum() - t_own))
        hi += (closer & own).sum() + min(places, t_own)
    return lo / (len(y) * M), hi / (len(y) * M)


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_silhouette_w_and_wcnn_against_genieclust(name):
    """Equal to genieclust without ties at the M-th neighbour. With ties (iris, M = 5, 25) genieclust counts the tied
    points its k-NN search meets first, we their expected share (issue 49: no rule that favours the partition): both
    then lie in the range that tie-breaking can give, ours strictly inside it when the range is wide."""
    X, y = DATA[name]
    assert silhouette_w(X, y) == pytest.approx(cv.silhouette_w_index(X, y), abs=1e-12)
    for M in (1, 5, 25):
        ours, peer = wcnn(X, y, M=M), cv.wcnn_index(X, y, M)
        if not _boundary_ties(X, M):
            assert ours == pytest.approx(peer, abs=1e-15)
        else:
            lo, hi = _wcnn_tie_range(X, y, M)
            assert lo - 1e-15 <= peer <= hi + 1e-15 and lo <= ours <= hi and (lo == hi or lo < ours < hi), (M, lo, hi)


@GENIECLUST
def test_silhouette_w_with_singletons_is_genieclust_times_k_over_k_prime():
    """Issue 49: "SilhouetteW equals genieclust's" is false with singleton clusters: genieclust drops them from the
    mean, we keep their vote of 0. The documented relation: genieclust's = ours x K / K'."""
    X, y = DATA["iris"]
    y = y.copy()
    y[[0, 60]] = [3, 4]                                              # K = 5 clusters, K' = 3 of two points or more
    assert silhouette_w(X, y) * 5 / 3 == pytest.approx(cv.silhouette_w_index(X, y), rel=1e-12)
    assert silhouette_w(X, y) != pytest.approx(cv.silhouette_w_index(X, y), rel=1e-3)
    assert "genieclust" in silhouette_w.__doc__ and "K / K'" in silhouette_w.__doc__


OWA = ["Min", "Max", "Mean", "Const", "SMin:2", "SMin:5", "SMax:3"]


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_dunn_owa_against_genieclust(name):
    X, y = DATA[name]
    if _boundary_ties(X, 10) or _boundary_ties(X, 25):
        pytest.skip("ties at the M-th neighbour: genieclust keeps the one its k-NN search meets first, we share the "
                    "places out (06_internal); tested for row-order invariance below")
    for num in OWA:
        for den in OWA:
            if num == den == "Const":
                continue
            peer = cv.dunnowa_index(X, y, 10, num, den)
            ours = dunn_owa(X, y, M=10, owa_numerator=num, owa_denominator=den)
            assert ours == pytest.approx(peer, rel=1e-12), (num, den, ours, peer)
    assert dunn_owa(X, y) == pytest.approx(cv.dunnowa_index(X, y), rel=1e-12)    # defaults: M=25, SMin:5 / Const


@GENIECLUST
def test_nearest_neighbour_limits_and_ties():
    X, y = DATA["unequal"]                                         # smallest cluster: 30 points
    assert wcnn(X, y, M=30) == cv.wcnn_index(X, y, 30) == -np.inf
    assert dunn_owa(X, y, M=30) == cv.dunnowa_index(X, y, 30) == -np.inf
    far = X + y[:, None] * 1000.0                                    # no couple crosses clusters
    assert (wcnn(far, y, M=5), dunn_owa(far, y, M=5)) == (1.0, np.inf)
    # a lattice: ties at the M-th neighbour everywhere; any row order gives the same values
    g = np.array([[i, j] for i in range(8) for j in range(8)], float)
    lab = (g[:, 0] >= 4).astype(int) + 2 * (g[:, 1] >= 4)
    ref = (wcnn(g, lab, M=6), dunn_owa(g, lab, M=6, owa_numerator="Mean", owa_denominator="Mean"))
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(len(lab))
        assert (wcnn(g[p], lab[p], M=6),
                dunn_owa(g[p], lab[p], M=6, owa_numerator="Mean", owa_denominator="Mean")) == ref
    with pytest.raises(ValueError, match="wcnn: M=0"):
        wcnn(X, y, M=0)
    with pytest.raises(ValueError, match="owa_numerator='Median' is not an option"):
        dunn_owa(X, y, owa_numerator="Median")
    with pytest.raises(ValueError, match="owa_denominator='SMax:0'"):
        dunn_owa(X, y, owa_denominator="SMax:0")


def _small():
    rng = np.random.default_rng(7)
    yield rng.normal(size=(40, 2)), rng.integers(0, 3, 40)
    X, y = make_blobs(60, centers=4, random_state=4)
    yield X, y
    yield np.round(rng.normal(size=(30, 2)), 0), np.r_[np.zeros(15, int), np.ones(15, int)]     # many ties
    yield DATA["unequal"][0][::3], DATA["unequal"][1][::3]


def _loops(X, y):
    n = len(y)
    within, between = [], []
    for i in range(n):
        for j in range(i + 1, n):
            (within if y[i] == y[j] else between).append(float(np.sqrt(((X[i] - X[j]) ** 2).sum())))
    sp = sm = 0
    for w in within:
        for b in between:
            sp += w < b
            sm += w > b
    return sp, sm, within, between


@GENIECLUST
@pytest.mark.parametrize("case", range(4))
def test_pair_rank_indices_against_loops(case):
    X, y = list(_small())[case]
    sp, sm, within, between = _loops(X, y)
    nw, nb = len(within), len(between); nt = nw + nb
    assert g_plus(X, y) == pytest.approx(2 * sm / (nt * (nt - 1)), abs=1e-15)
    assert tau(X, y) == pytest.approx((sp - sm) / np.sqrt(nw * nb * nt * (nt - 1) / 2), abs=1e-12)
    assert mcclain_rao(X, y) == pytest.approx(np.mean(within) / np.mean(between), rel=1e-12)


def _fpc_sindex(X, y, p=0.1):
    "fpc: psep[i] = min(dmat[i, clustering != clustering[i]]); mean(sort(psep)[1:floor(n * sepprob)])."
    D = cdist(X, X)
    psep = np.sort([D[i, y != y[i]].min() for i in range(len(y))])
    m = int(np.floor(len(y) * p))
    return psep[:max(m, 1)].mean()                                   # R's 1:0 is c(1, 0): the smallest value


def _fpc_widestgap(X, y):
    "fpc: max over clusters of max(hclust(..., 'single')$height); 0 for a singleton."
    return max((linkage(X[y == k], "single")[:, 2].max() if (y == k).sum() > 1 else 0.0) for k in np.unique(y))


@GENIECLUST
@pytest.mark.parametrize("name", NAMES)
def test_sindex_and_widest_gap_against_fpc_definitions(name):
    X, y = DATA[name]
    assert sindex(X, y) == pytest.approx(_fpc_sindex(X, y), rel=1e-12)
    assert sindex(X, y, p=0.25) == pytest.approx(_fpc_sindex(X, y, 0.25), rel=1e-12)
    assert widest_gap(X, y) == pytest.approx(_fpc_widestgap(X, y), rel=1e-12)


@GENIECLUST
def test_fpc_limits_and_entropy():
    X = np.array([[0.0], [1], [5], [6], [20]])
    y = np.array([0, 0, 1, 1, 2])
    assert sindex(X, y) == pytest.approx(4.0)                        # n p < 1: the smallest separation
    assert widest_gap(X, y) == 1.0                                   # the singleton's gap is 0
    assert size_entropy(np.r_[np.zeros(160), np.ones(60)]) == pytest.approx(0.5859526, abs=1e-7)  # fpc's print-out
    assert size_entropy(y) == pytest.approx(-(2 * 0.4 * np.log(0.4) + 0.2 * np.log(0.2)), abs=1e-15)
    assert "size_entropy" not in set(measures().name)                # a size statistic, not a validity index
    with pytest.raises(ValueError, match="sindex: p=1.5"):
        sindex(X, y, p=1.5)


NEW = [silhouette_w, g_plus, tau, mcclain_rao, wcnn, dunn_owa, sindex, widest_gap]


@GENIECLUST
@pytest.mark.parametrize("f", NEW, ids=lambda f: f.__name__)
def test_bad_input(f):
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="one label"):
        f(X, np.zeros(len(y)))
    Xn = X.copy(); Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f(Xn, y)
    with pytest.raises(ValueError, match="metric='mahalanobis'"):
        f(X, y, metric="mahalanobis")
    with pytest.raises(ValueError, match="max_memory=0"):
        f(X, y, max_memory=0)


def _rounded_blobs():
    "The peer check's tied data (issue 49): integer features."
    X, y = make_blobs(300, centers=3, n_features=2, cluster_std=1.2, random_state=11)
    return np.round(X), y


def _shared_neighbours(X, y, M):
    "Oracle: per point, its M nearest with the places left after the surely nearer shared out among the tied points."
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    vals, own_w = [], []
    for i in range(len(y)):
        v = np.sort(D[i])[M - 1]
        closer, tied, own = D[i] < v * (1 - 1e-9), np.abs(D[i] - v) <= v * 1e-9, y == y[i]
        places = M - closer.sum()
        vals += list(D[i, closer]) + [v] * places
        own_w += list(own[closer].astype(float)) + [(tied & own).sum() / tied.sum()] * places
    return np.array(vals), np.array(own_w)


@GENIECLUST
def test_nearest_neighbour_ties_shared_and_banded():
    """Issue 49: WCNN and DuNN-OWA counted tied neighbours of the own cluster first (DuNN-OWA Mean/Mean 4.7 times the
    neutral value on rounded blobs) and split ties by rounding (WCNN moved under a rotation): each tied point now
    holds its expected share of the places left, ties within `TIE_RTOL`."""
    X, y = _rounded_blobs()
    v, w = _shared_neighbours(X, y, 25)
    assert wcnn(X, y) == pytest.approx(w.mean(), rel=1e-12)
    mm = dict(owa_numerator="Mean", owa_denominator="Mean")
    want = (np.dot(1 - w, v) / (1 - w).sum()) / (np.dot(w, v) / w.sum())
    assert dunn_owa(X, y, **mm) == pytest.approx(want, rel=1e-9)
    c, s = np.cos(0.7), np.sin(0.7)
    for Z in (X * 3.7, X + 0.3, X @ np.array([[c, -s], [s, c]])):
        assert wcnn(Z, y) == pytest.approx(wcnn(X, y), rel=1e-12)
        assert dunn_owa(Z, y, **mm) == pytest.approx(dunn_owa(X, y, **mm), rel=1e-9)
