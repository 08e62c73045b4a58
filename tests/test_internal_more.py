"""Issue 41's additions to `06_internal`, against genieclust 1.3.0 (the authors' code of the 2021 CVI study), fpc's
definitions (fpc is not installed: oracles written from its `cluster.stats`) and plain O(n^2) loops:

- `dunn`: the centroid options without the pair engine, the same values as before; genieclust's
  `generalised_dunn_index` for every (delta, Delta), with its two departures from our reading of Bezdek & Pal (Delta_2
  halved, delta_5 to the own centroid; clusterCrit does the same) shown as `peer == f(ours)`; delta_6 (Hausdorff).
- `dbcv_parts`: the weighted sum of its parts is `dbcv`, in the caller's class order.
- WCSS (genieclust's `negated_wcss_index`) is `ClusterStats.wss` (clusterCrit's trace_w); genieclust's Ball-Hall is
  -K times ours.
- `silhouette_w`, `wcnn`, `dunn_owa` equal genieclust's; `g_plus`, `tau`, `mcclain_rao` equal the loops;
  `sindex`, `widest_gap`, `size_entropy` equal fpc's definitions.
"""
import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import cdist, pdist
from sklearn.datasets import load_iris, load_wine, make_blobs

import clm_nb.internal as internal
from clm_nb.core import check_data
from clm_nb.catalog import measures
from clm_nb.internal import (DUNN_BETWEEN, DUNN_WITHIN, ball_hall, dbcv, dbcv_parts, dunn, dunn_owa, g_plus,
                             mcclain_rao, silhouette_w, sindex, size_entropy, tau, wcnn, widest_gap)

genieclust = pytest.importorskip("genieclust")
cv = genieclust.cluster_validity


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


# --- Dunn: the centroid options, the generalised family against genieclust --------------------------------------

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


@pytest.mark.parametrize("name", NAMES)
def test_dunn_centroid_options_need_no_pair(name, monkeypatch):
    X, y = DATA[name]
    def no_pairs(*a, **k):
        raise AssertionError("the pair engine was called")
    monkeypatch.setattr(internal, "summarize", no_pairs)
    for between in ("centroid", "centroid_average"):
        new = dunn(X, y, between=between, within="centroid")
        assert abs(new - _dunn_old(X, y, between, "centroid")) <= 1e-12 * max(1, new)


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


def test_delta5_follows_the_paper_not_genieclust():
    "Moving the clusters apart leaves genieclust's delta_5 where it was; Bezdek & Pal's (ours) grows."
    X, y = DATA["unequal"]
    far = X + (y[:, None] * 50.0)
    assert cv.generalised_dunn_index(far, y, 5, 3) == pytest.approx(cv.generalised_dunn_index(X, y, 5, 3), rel=1e-12)
    assert dunn(far, y, between="centroid_average", within="centroid") > \
        5 * dunn(X, y, between="centroid_average", within="centroid")


def test_hausdorff_definition():
    X, y = DATA["unequal"]
    C = [X[y == k] for k in range(3)]
    h = min(max(cdist(C[s], C[t]).min(1).max(), cdist(C[s], C[t]).min(0).max())
            for s in range(3) for t in range(3) if s != t)
    assert dunn(X, y, between="hausdorff") == pytest.approx(h / max(pdist(c).max() for c in C), rel=1e-12)
    D = cdist(X, X)
    assert dunn(D, y, between="hausdorff", metric="precomputed") == pytest.approx(dunn(X, y, between="hausdorff"),
                                                                                  rel=1e-12)


def test_dunn_bad_options():
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="between='ward' is not an option"):
        dunn(X, y, between="ward")
    with pytest.raises(ValueError, match="Euclidean"):
        dunn(X, y, between="centroid", metric="cityblock")


# --- DBCV's parts -----------------------------------------------------------------------------------------------

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


# --- WCSS and Ball-Hall: conventions ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_wcss_is_clusterstats_wss_and_ball_hall_times_k(name):
    X, y = DATA[name]
    st = check_data(X, y).stats
    wss = st.wss * st.scale ** 2                                     # clusterCrit's trace_w (07_cvi)
    assert -cv.negated_wcss_index(X, y) == pytest.approx(wss, rel=1e-12)
    K = y.max() + 1
    assert cv.negated_ball_hall_index(X, y) == pytest.approx(-K * ball_hall(X, y), rel=1e-12)


# --- genieclust's SilhouetteW, WCNN, DuNN-OWA --------------------------------------------------------------------

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


# --- G(+), Tau, McClain-Rao against O(n^2) loops -----------------------------------------------------------------

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


@pytest.mark.parametrize("case", range(4))
def test_pair_rank_indices_against_loops(case):
    X, y = list(_small())[case]
    sp, sm, within, between = _loops(X, y)
    nw, nb = len(within), len(between); nt = nw + nb
    assert g_plus(X, y) == pytest.approx(2 * sm / (nt * (nt - 1)), abs=1e-15)
    assert tau(X, y) == pytest.approx((sp - sm) / np.sqrt(nw * nb * nt * (nt - 1) / 2), abs=1e-12)
    assert mcclain_rao(X, y) == pytest.approx(np.mean(within) / np.mean(between), rel=1e-12)


# --- fpc's sindex, widestgap, entropy ----------------------------------------------------------------------------

def _fpc_sindex(X, y, p=0.1):
    "fpc: psep[i] = min(dmat[i, clustering != clustering[i]]); mean(sort(psep)[1:floor(n * sepprob)])."
    D = cdist(X, X)
    psep = np.sort([D[i, y != y[i]].min() for i in range(len(y))])
    m = int(np.floor(len(y) * p))
    return psep[:max(m, 1)].mean()                                   # R's 1:0 is c(1, 0): the smallest value


def _fpc_widestgap(X, y):
    "fpc: max over clusters of max(hclust(..., 'single')$height); 0 for a singleton."
    return max((linkage(X[y == k], "single")[:, 2].max() if (y == k).sum() > 1 else 0.0) for k in np.unique(y))


@pytest.mark.parametrize("name", NAMES)
def test_sindex_and_widest_gap_against_fpc_definitions(name):
    X, y = DATA[name]
    assert sindex(X, y) == pytest.approx(_fpc_sindex(X, y), rel=1e-12)
    assert sindex(X, y, p=0.25) == pytest.approx(_fpc_sindex(X, y, 0.25), rel=1e-12)
    assert widest_gap(X, y) == pytest.approx(_fpc_widestgap(X, y), rel=1e-12)


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


# --- bad input common to the new measures ------------------------------------------------------------------------

NEW = [silhouette_w, g_plus, tau, mcclain_rao, wcnn, dunn_owa, sindex, widest_gap]


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
