"""Golden values and scikit-learn agreement for the classic internal indices, and their degenerate limits."""
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.datasets import load_iris

import clm_nb
from clm_nb import calinski_harabasz, davies_bouldin, dunn, i_index, silhouette, xie_beni
from clm_nb.core import check_data

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
