"""DBCV (Moulavi et al., SDM 2014) against a brute-force oracle written from the paper's definition, its documented
limits, noise policies, bad input, the invariances it claims (hypothesis), and hdbscan's implementation.

The oracle builds full distance matrices and takes each cluster's MST with scipy. The mutual-reachability graph has
many exactly equal weights, so the MST is not unique; `dbcv` picks the tree of the leximax order of
(core_a, core_b, dist) (see nbs/06_internal.ipynb), and the oracle ranks the edges in that order before calling scipy,
so both use the same tree. On continuous random data the three values never tie exactly, so the index order that
breaks the remaining ties does not matter there."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist, pdist
from scipy.special import logsumexp
from scipy.stats import ortho_group
from sklearn.datasets import make_circles, make_moons
from sklearn.metrics import pairwise_distances

import clm_nb
from clm_nb import dbcv
from clm_nb.core import check_data
from clm_nb.internal import _coordinates, _dbcv_parts, _prim, dbcv_value


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
