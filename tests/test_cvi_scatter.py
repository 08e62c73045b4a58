"""Issue 41, the scatter-matrix family, S_Dbw/SD and NbClust's split statistics (nbs/07_cvi.ipynb).

Peers: permetrics 2.1.0 (`ClusteringMetric`) where it follows Desgraupes's definitions, the s_dbw package 0.4.0
(`S_Dbw`, `SD`) for every variant it offers; elsewhere plain from-definition oracles written here (loops over the
points and clusters, numpy determinants). Where a peer departs from the paper the test shows its convention too.
"""
import warnings

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.stats import f as f_dist
from sklearn.datasets import load_iris, load_wine, make_blobs

import clm_nb
from clm_nb.cvi import (banfeld_raftery, beale, det_ratio, duda_hart, friedman, hartigan, ksq_detw, log_det_ratio,
                        log_ss_ratio, ray_turi, s_dbw, scott_symons, sd, trace_w)
from clm_nb.internal import xie_beni

REL = 1e-9


def datasets():
    "iris, wine and three blob sets of unequal sizes (20, 50, 90) in 3 dimensions."
    out = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)}
    for seed in range(3):
        out[f"blobs{seed}"] = make_blobs(n_samples=[20, 50, 90], n_features=3, cluster_std=[1.0, 2.0, 0.7],
                                         random_state=seed)
    return out


DATA = datasets()


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(1.0, abs(b))


# --- oracles, from the definitions ---------------------------------------------------------------------------------

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


@pytest.mark.parametrize("name", list(DATA))
def test_scatter_family_equals_oracle(name):
    X, y = DATA[name]
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


@pytest.mark.parametrize("name", list(DATA))
def test_scatter_family_equals_permetrics(name):
    "permetrics 2.1.0 follows Desgraupes for these six (Ksq-DetW only with use_normalized=False)."
    from permetrics import ClusteringMetric
    X, y = DATA[name]
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
    X, y = DATA["iris"]                                      # versicolor/virginica overlap: they differ
    assert ClusteringMetric(X=X, y_pred=y).xie_beni_index() < xie_beni(X, y)
    X, y = make_blobs(n_samples=90, centers=[[0, 0], [20, 0], [0, 20]], random_state=0)   # separated: they agree
    assert close(xie_beni(X, y), ClusteringMetric(X=X, y_pred=y).xie_beni_index())


def test_determinant_indices_invariant_to_any_linear_map():
    X, y = DATA["wine"]
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
    X, yy = DATA["iris"]
    X1, y1 = np.r_[X, [[9., 9, 9, 9]]], np.r_[yy, 3]
    assert scott_symons(X1, y1) == -np.inf and banfeld_raftery(X1, y1) == -np.inf
    assert np.isfinite(det_ratio(X1, y1)) and np.isfinite(friedman(X1, y1))


@pytest.mark.parametrize("f", [trace_w, det_ratio, log_det_ratio, log_ss_ratio, ksq_detw, scott_symons, friedman,
                               banfeld_raftery, ray_turi, s_dbw, sd])
def test_bad_input(f):
    X, y = DATA["iris"]
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


# --- S_Dbw and SD against the s_dbw package ------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DATA))
def test_s_dbw_equals_the_package_in_every_variant(name):
    "With spread='std' every (method, centre, nearest) equals s_dbw.S_Dbw, where the package gives a value."
    import s_dbw as peer
    X, y = DATA[name]
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


@pytest.mark.parametrize("name", list(DATA))
def test_sd_equals_the_package(name):
    import s_dbw as peer
    X, y = DATA[name]
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
    X, y = DATA[name]
    assert close(s_dbw(X, y), s_dbw_paper(X, y), rel=1e-12)
    assert close(s_dbw(X * 1000 + 7, y), s_dbw(X, y), rel=1e-9)        # scale-invariant, unlike spread='std'
    if name == "iris":
        assert not close(s_dbw(X * 1000, y, spread="std"), s_dbw(X, y, spread="std"))


def test_s_dbw_and_sd_at_extreme_scales():
    "Squared variances of data at 1e+-150 would overflow or underflow; the indices are computed in normalised units."
    X, y = DATA["blobs1"]
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
    X, y = DATA["iris"]
    for kw, word in [({"method": "Tong"}, "method"), ({"centre": "mode"}, "centre"), ({"spread": "var"}, "spread"),
                     ({"nearest": "yes"}, "nearest")]:
        with pytest.raises(ValueError, match=word):
            s_dbw(X, y, **kw)
    with pytest.raises(ValueError, match="alpha"):
        sd(X, y, alpha=np.nan)
    with pytest.raises(ValueError, match="s_dbw: every point of X is the same"):
        s_dbw(np.ones((6, 2)), [0, 0, 0, 1, 1, 1])


# --- Duda-Hart, Beale, Hartigan against from-definition oracles -----------------------------------------------------

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


@pytest.mark.parametrize("name", list(DATA))
@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_split_statistics_equal_oracle(name, K):
    X, _ = DATA[name]
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
    X, y = DATA["iris"]
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
