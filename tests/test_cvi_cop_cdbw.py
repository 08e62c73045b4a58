"""COP and CDbw (issue 41) against plain from-definition oracles written here, plus their limits and properties.

No peer is installed for either index (clusterCrit and fpc are R packages); the oracles follow the papers' formulas
step by step, with scipy's cdist and loops, and hold full distance matrices (fine at these sizes)."""
import math
import time
import tracemalloc

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.datasets import load_iris, load_wine, make_blobs

import clm_nb
from clm_nb.cvi import CDBW_SHRINK, CDbwParts, cdbw, cdbw_parts, cop


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


# ---------------------------------------------------------------------------------------------------- COP


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


# ---------------------------------------------------------------------------------------------------- CDbw

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
