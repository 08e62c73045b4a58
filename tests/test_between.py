"""The between-dataset measures of 13_between against oracles written straight from the formulas of paper 000 and
its journal version, their golden behaviour, their limits and bad input, and check_axioms.

issue 40: the between-dataset measures with any distance: sc_a and dbcv_btwn on every pair-engine metric, sparse X, a
precomputed matrix and a Gower table; the centroid measures' spherical view of cosine; the Euclidean coordinate path
unchanged, bit for bit.

issue 39: the quadratic between-dataset measures on stratified samples above QUADRATIC_MAX_POINTS."""
import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.optimize import minimize
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.datasets import make_blobs
from sklearn.metrics import calinski_harabasz_score

import clm_nb
from clm_nb.between import (K_CH_A, K_DB_A, K_DUNN_A, K_I_A, QUADRATIC_MAX_POINTS, QUADRATIC_SAMPLES, MonteCarloScore,
                            between, ch_a, ch_btwn, ch_t2, ch_t4, check_axioms, class_pair_scores, class_pairs, db_a,
                            dbcv_btwn, dunn_a, i_a, pair_breakdown, quadratic_measures, relabellings,
                            sampled_breakdowns, sc_a, xb_a)
from clm_nb.core import check_data
from clm_nb.gower import gower
from clm_nb.pairs import summarize
from clm_nb.profile import LEADERBOARD_MEASURES
from clm_nb.registry import PAIR_METRICS

BETWEEN = ["ch_btwn", "ch_t2", "ch_t4", "ch_a", "db_a", "dunn_a", "i_a", "xb_a", "sc_a"]


def blobs(n=300, k=3, d=3, std=2.0, seed=0, box=(-10, 10)):
    X, y = make_blobs(n, d, centers=k, cluster_std=std, center_box=box, random_state=seed)
    return X, y


# ---------------------------------------------------------------- oracles, one class pair at a time, plain numpy
def _pair_data(X, y):
    "Every class pair in the order and canonical point order the measures use, in the caller's units."
    data = check_data(X, y)
    return [(p, data.X[p.rows], p.in_a) for p in class_pairs(data)]


def _ch1_direct(Z, in_a, form):
    c = Z.mean(axis=0)
    r = np.linalg.norm(Z - c, axis=1)
    sigma = r.std()
    g = lambda u: np.exp(u / sigma) if form == "exp" else u ** 2
    num = den = 0.0
    for mask in (in_a, ~in_a):
        ci = Z[mask].mean(axis=0)
        num += mask.sum() * g(np.linalg.norm(ci - c))
        den += g(np.linalg.norm(Z[mask] - ci, axis=1)).sum()
    return (num / 1) / (den / (len(Z) - 2))


def ch_btwn_oracle(X, y, seed, T=20, form="exp"):
    vals = []
    for p, Z, in_a in _pair_data(X, y):
        ch2 = lambda m: 1 / (1 + 1 / _ch1_direct(Z, m, form))
        rand = [ch2(g == 0) for chunk in relabellings([p.n_a, p.n_b], T, seed) for g in chunk]
        m = np.mean(rand)
        vals.append((ch2(in_a) - m) / (1 - m))
    return float(np.mean(vals))


def ivm_a_oracle(X, y, name):
    vals = []
    for p, Z, in_a in _pair_data(X, y):
        n, na, nb = len(Z), in_a.sum(), (~in_a).sum()
        c, ca, cb = Z.mean(0), Z[in_a].mean(0), Z[~in_a].mean(0)
        r2 = ((Z - c) ** 2).sum(1)
        sigma, sigma1 = r2.std(), np.sqrt(r2).std()
        wss_a, wss_b = ((Z[in_a] - ca) ** 2).sum(), ((Z[~in_a] - cb) ** 2).sum()
        tss, bss = r2.sum(), na * ((ca - c) ** 2).sum() + nb * ((cb - c) ** 2).sum()
        L = lambda v, k: 1 / (1 + np.exp(-k * v))
        step = lambda v, e, k: (L(v, k) - L(e, k)) / (1 - L(e, k))
        if name == "ch_a":
            v = bss / (2 * n * sigma) * np.exp(bss / (n * sigma)); vals.append(step(v, 0, K_CH_A))
        elif name == "db_a":
            R = (np.exp(wss_a / (na * sigma)) + np.exp(wss_b / (nb * sigma))) / (
                (((ca - cb) ** 2).sum() / sigma) * (tss / (n * sigma)))
            vals.append(step(1 / R, 0, K_DB_A))
        elif name in ("i_a", "xb_a"):
            v = np.exp(tss / (n * sigma)) / np.exp((wss_a + wss_b) / (n * sigma)) * np.linalg.norm(ca - cb) / sigma1
            vals.append(step(v, 0, K_I_A))
        elif name == "dunn_a":
            A, B = Z[in_a], Z[~in_a]
            m_ab, m_a, m_b, m = cdist(A, B).mean(), pdist(A).mean(), pdist(B).mean(), pdist(Z).mean()
            gm = minimize(lambda v: np.linalg.norm(Z - v, axis=1).mean(), np.median(Z, 0), method="Nelder-Mead",
                          options=dict(xatol=1e-12, fatol=1e-15, maxiter=40000)).fun
            v = np.exp(m_ab / sigma1) / np.exp(max(m_a, m_b) / sigma1)
            vals.append(step(v, np.exp(gm / sigma1) / np.exp(m / sigma1), K_DUNN_A))
        elif name == "sc_a":
            D = cdist(Z, Z)
            means = []
            for own in (in_a, ~in_a):
                a = D[np.ix_(own, own)].sum(1) / (own.sum() - 1)
                b = D[np.ix_(own, ~own)].mean(1)
                s = (np.exp(b / sigma1) - np.exp(a / sigma1)) / np.exp(np.maximum(a, b) / sigma1)
                means.append(s.mean())
            vals.append(np.mean(means))
    return float(np.mean(vals))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("form, name", [("exp", "ch_btwn"), ("square", "ch_t4")])
def test_ch_btwn_matches_the_formulas(seed, form, name):
    "Vectorised, log-space relabellings against a loop over the same relabellings with plain exponentials."
    X, y = blobs(240, 4, std=3.0, seed=seed)
    got = clm_nb.score(name, X, y, random_state=seed)
    assert got == pytest.approx(ch_btwn_oracle(X, y, seed, form=form), abs=1e-9)


def test_ch_t2_is_the_mean_of_ch1():
    X, y = blobs(200, 3, std=4.0)
    want = np.mean([_ch1_direct(Z, in_a, "exp") for _, Z, in_a in _pair_data(X, y)])
    assert clm_nb.ch_t2(X, y) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("name", ["ch_a", "db_a", "i_a", "xb_a", "dunn_a", "sc_a"])
@pytest.mark.parametrize("std", [1.0, 4.0])
def test_adjusted_ivms_match_the_formulas(name, std):
    X, y = blobs(150, 3, d=2, std=std, seed=3, box=(-6, 6))
    assert clm_nb.score(name, X, y) == pytest.approx(ivm_a_oracle(X, y, name), abs=1e-7)


def test_xb_a_is_i_a():
    X, y = blobs()
    assert clm_nb.xb_a(X, y) == clm_nb.i_a(X, y)


def test_two_classes_t3_is_the_identity():
    X, y = blobs(200, 2)
    assert between("calinski_harabasz", adjust=False)(X, y) == pytest.approx(calinski_harabasz_score(X, y), rel=1e-12)
    assert between("calinski_harabasz")(X, y, random_state=4) == pytest.approx(clm_nb.ch_t4(X, y, random_state=4), abs=1e-12)


# ---------------------------------------------------------------- golden behaviour
@pytest.mark.parametrize("n", [500, 2000])
@pytest.mark.parametrize("k", [2, 10])
def test_blobs_near_one_shuffled_near_zero(n, k):
    X, y = make_blobs(n, 5, centers=k, cluster_std=1.0, center_box=(-60, 60), random_state=k)
    ys = np.random.default_rng(n).permutation(y)
    for name in ["ch_btwn", "ch_a", "db_a", "dunn_a", "i_a", "xb_a", "sc_a"]:
        f = clm_nb.get_measure(name).func
        assert f(X, y, random_state=0) > 0.99, name
        bad = f(X, ys, random_state=0)
        limit = {"dunn_a": 0.25, "i_a": 0.75, "xb_a": 0.75}.get(name, 0.1)   # see 13_between, golden behaviour
        assert abs(bad) < limit, (name, bad)


def test_exponentials_never_overflow():
    "Tight, distant classes: e^{d/sigma} would overflow (the authors' code gives NaN at x1000); log space does not."
    X, y = make_blobs(400, 3, centers=4, cluster_std=0.01, center_box=(-1000, 1000), random_state=0)
    for name in BETWEEN:
        f = clm_nb.get_measure(name).func
        ref = f(X, y, random_state=0)
        assert not np.isnan(ref), name
        for s in (1000.0, 1e-6, 2.0 ** 400):     # 2^400: huge, within core.magnitude_bound (2^600 is refused)
            assert f(s * X, y, random_state=0) == pytest.approx(ref, rel=1e-9), (name, s)


def test_standard_error_and_permutation_count():
    X, y = blobs(300, 3, std=4.0)
    s20 = clm_nb.ch_btwn(X, y, random_state=0, return_se=True)
    s200 = clm_nb.ch_btwn(X, y, random_state=0, n_permutations=200, return_se=True)
    assert isinstance(s20, MonteCarloScore) and s20.n_permutations == 20 and float(s20) == s20.value
    assert 2.0 < s20.se / s200.se < 5.0                       # ~ sqrt(10)
    assert abs(s20.value - s200.value) < 5 * s20.se
    draws = [clm_nb.ch_btwn(X, y, random_state=i) for i in range(30)]
    assert np.std(draws) == pytest.approx(s20.se, rel=0.6)     # the reported error is the spread over seeds


def test_relabellings_preserve_sizes_and_are_uniform():
    counts = np.zeros(6)
    for chunk in relabellings([2, 4], 3000, seed=0):
        assert ((chunk == 0).sum(axis=1) == 2).all()
        counts += (chunk == 0).sum(axis=0)
    assert np.allclose(counts / 3000, 2 / 6, atol=0.03)


def test_class_pair_scores():
    X, y = blobs(300, 4)
    names = np.array(["a", "b", "c", "d"], dtype=object)[y]
    t = class_pair_scores("sc_a", X, names)
    assert len(t) == 6 and set(t.class_a) | set(t.class_b) == {"a", "b", "c", "d"}
    assert t.value.mean() == pytest.approx(clm_nb.sc_a(X, names), rel=1e-12)
    assert (t.se == 0).all()


# ---------------------------------------------------------------- limits and bad input
def test_degenerate_pairs_have_documented_limits():
    same = np.zeros((12, 2))
    for name in BETWEEN:
        v = clm_nb.score(name, same, np.repeat([0, 1, 2], 4), random_state=0)
        assert v == (6.0 if name == "ch_t2" else 0.0), (name, v)    # ch_t2 = CH_1 = n_S - 2 with every e^0 = 1
    # two singletons next to a real class: the singleton pair scores 0, the others are defined
    X = np.r_[np.random.default_rng(0).normal(size=(20, 2)), [[50, 50], [-50, 50]]]
    y = np.r_[np.zeros(20, int), 1, 2]
    t = class_pair_scores("ch_btwn", X, y, random_state=0)
    assert t.loc[(t.n_a == 1) & (t.n_b == 1), "value"].item() == 0.0
    assert np.isfinite(t.value).all()
    # equidistant points (sigma_d = 0): the sigma -> 0+ limit, here perfect separation
    sq = np.array([[-1.0, 0], [-1, 0], [1, 0], [1, 0]])
    assert clm_nb.ch_btwn(np.repeat(sq, 5, axis=0), np.repeat([0, 0, 1, 1], 5), random_state=0) > 0.99


@pytest.mark.parametrize("name", BETWEEN)
def test_bad_input(name):
    info = clm_nb.get_measure(name)
    f = info.func
    X, y = blobs(60, 3)
    if "cityblock" not in info.metrics:                       # a metric it does not read: refused, naming it
        with pytest.raises(ValueError, match="metric='cityblock'"):
            f(X, y, metric="cityblock")
    with pytest.raises(ValueError, match="NaN"):
        f(np.where(np.eye(60, 3) > 0, np.nan, X), y)
    with pytest.raises(ValueError, match="at least 2 clusters"):
        f(X, np.zeros(60))
    with pytest.raises(ValueError, match="one label per point"):
        f(X, y[:-1])
    with pytest.raises(ValueError, match="distance_shift"):
        f(X, y, distance_shift=np.inf)


def test_bad_parameters():
    X, y = blobs(60, 3)
    with pytest.raises(ValueError, match="at least 2"):
        clm_nb.ch_btwn(X, y, n_permutations=1)
    with pytest.raises(ValueError, match="non-negative"):
        clm_nb.ch_btwn(X, y, random_state=-3)
    with pytest.raises(ValueError, match="pairwise between-dataset"):
        class_pair_scores("calinski_harabasz", X, y)
    with pytest.raises(ValueError, match="internal"):
        between("ch_btwn")
    with pytest.raises(ValueError, match="no measure named"):
        between("silhuette")


def test_noise_policy_passes_through():
    X, y = blobs(200, 3)
    y = y.copy(); y[:15] = -1
    kept = y != -1
    assert clm_nb.ch_a(X, y, noise="ignore") == pytest.approx(clm_nb.ch_a(X[kept], y[kept]), rel=1e-12)
    assert clm_nb.ch_a(X, y, noise="cluster") != clm_nb.ch_a(X, y, noise="ignore")


def test_random_state_generators():
    X, y = blobs(100, 3)
    a = clm_nb.ch_btwn(X, y, random_state=np.random.default_rng(1))
    b = clm_nb.ch_btwn(X, y, random_state=np.random.default_rng(1))
    assert a == b and np.isfinite(a)


# ---------------------------------------------------------------- generic tricks and axiom checks
@pytest.mark.parametrize("base", ["silhouette", "davies_bouldin", "dunn"])
def test_between_generic_reads_zero_on_random_labels(base):
    X, y = blobs(200, 3, std=2.0)
    f = between(base)
    assert f(X, y, random_state=0) > 0.1
    vals = [f(X, np.random.default_rng(i).permutation(y), random_state=i) for i in range(8)]
    assert abs(np.mean(vals)) < 0.1


def test_check_axioms_separates_within_from_between():
    X, y = blobs(240, 3, d=2, std=1.5)
    ch, btwn = check_axioms("calinski_harabasz", X, y), check_axioms("ch_btwn", X, y)
    assert btwn.loc[["W1 scale", "W4 isomorphism", "B2 shift", "B3 class pairs"], "holds"].all()
    assert not ch.loc[["B1 alpha=1/2", "B3 class pairs", "B4 random labels"], "holds"].any()
    assert ch.loc["B2 shift", "holds"] is None
    assert btwn.loc["B3 class pairs", "deviation"] < 1e-12
    sil = check_axioms(between("silhouette"), X, y)          # functions from between() can be checked too
    assert sil.loc["B3 class pairs", "holds"] and sil.loc["B4 random labels", "holds"]


def test_between_measures_over_a_shared_collection(shared_data_dir):
    "All between measures on a few real datasets of the bundle: finite, in range, ranked by the runner."
    from clm_nb.bundle import iter_datasets
    from clm_nb.tasks import score_datasets
    long = score_datasets(iter_datasets(shared_data_dir, collections="hjn_labeled96", max_datasets=4, max_n=2000),
                          BETWEEN, random_state=0, progress=False)
    assert (long.error.fillna("") == "").all(), long[long.error != ""]
    assert long.value.notna().all()
    bounded = long[long.measure != "ch_t2"]
    assert (bounded.value <= 1 + 1e-12).all()


def test_between_without_pairs_uses_the_same_relabellings():
    "pairwise=False (T4 on the whole dataset) coincides with the pairwise form when there are two classes."
    X, y = blobs(150, 2, std=3.0)
    whole = between("calinski_harabasz", pairwise=False)(X, y, random_state=5)
    assert whole == pytest.approx(between("calinski_harabasz")(X, y, random_state=5), abs=1e-12)
    X3, y3 = blobs(150, 3, std=3.0)
    assert -1 < between("silhouette", pairwise=False)(X3, y3, random_state=5) <= 1


# ---- issue 40: the between-dataset measures with any distance: sc_a and dbcv_btwn on every pair-engine metric, ...

CENTROID = (ch_btwn, ch_t2, ch_t4, ch_a, db_a, i_a, xb_a)


COORDINATE = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine")


FAST = dict(n_permutations=5, max_pair_points=100)          # dbcv_btwn, small and fast


def _data():
    X, y = make_blobs([40, 30, 25], 3, random_state=3, cluster_std=4.0)
    return X, y


def _sqeuclidean_units_ok() -> bool:
    "Whether the pair engine's sqeuclidean cluster_sums, times its scale, are in the caller's units (main's 4eb92c0)."
    X, y = _data()
    s = summarize(X, y, ["cluster_sums"], metric="sqeuclidean")
    codes = check_data(X, y).labels
    return np.allclose(s.cluster_sums[:, 0] * s.scale, cdist(X, X[codes == 0], "sqeuclidean").sum(1), rtol=1e-9)


def _metrics():
    ok = _sqeuclidean_units_ok()
    return [pytest.param(m, marks=pytest.mark.skipif(
        m == "sqeuclidean" and not ok, reason="needs the pair engine's sqeuclidean units fix (main 4eb92c0)"))
        for m in COORDINATE]


# values of the Euclidean coordinate path computed on main (3dccb9e) before this change: they must not move
GOLDEN = {"ch_btwn": 0.9341355843298502, "ch_t2": 77.77763497513132, "ch_t4": 0.9772332861552716,
          "ch_a": 0.8573806091237529, "db_a": 0.8058807886702479, "i_a": 0.823276517754158, "xb_a": 0.823276517754158,
          "dunn_a": 0.8757075008522867, "sc_a": 0.8167057706615152, "dbcv_btwn": 0.3200580824279457}


def test_euclidean_coordinates_bit_for_bit_unchanged():
    X, y = _data()
    for f in (*CENTROID, dunn_a, sc_a, dbcv_btwn):
        assert f(X, y, random_state=0) == GOLDEN[f.__name__], f.__name__
    assert sc_a(X, y, distance_shift=2.5) == 0.8167057706615152
    assert dunn_a(X, y, distance_shift=2.5) == 0.8757075008522865


@pytest.mark.parametrize("metric", _metrics())
def test_sc_a_coordinates_equal_precomputed(metric):
    X, y = _data()
    D = cdist(X, X, metric)
    ref = sc_a(X, y, metric=metric)
    assert abs(sc_a(D, y, metric="precomputed") - ref) <= 1e-12
    assert abs(sc_a(squareform(D, checks=False), y, metric="precomputed") - ref) <= 1e-12     # condensed


@pytest.mark.parametrize("metric", _metrics())
def test_dbcv_btwn_coordinates_equal_precomputed(metric):
    "Same seed, same canonical order, same relabelling stream: equal to rounding (DBCV reads the same block)."
    X, y = _data()
    ref = dbcv_btwn(X, y, metric=metric, random_state=1, **FAST)
    got = dbcv_btwn(cdist(X, X, metric), y, metric="precomputed", dim=X.shape[1], random_state=1, **FAST)
    assert abs(got - ref) <= 1e-12


@pytest.mark.parametrize("metric", _metrics())
def test_sparse_equals_dense(metric):
    X, y = _data()
    X = np.where(np.abs(X) < 2, 0.0, X)                       # some structural zeros
    X[~X.any(axis=1), 0] = 1.0                                # no all-zero row: cosine refuses them (undefined)
    S = sparse.csr_matrix(X)
    assert abs(sc_a(S, y, metric=metric) - sc_a(X, y, metric=metric)) <= 1e-12
    # equal to rounding: sparse euclidean reads distances only, dense euclidean its coordinates (the other metrics: same bits)
    assert abs(dbcv_btwn(S, y, metric=metric, random_state=2, **FAST)
               - dbcv_btwn(X, y, metric=metric, random_state=2, **FAST)) <= 1e-12


def test_memmap_precomputed(tmp_path):
    X, y = _data()
    np.save(tmp_path / "D.npy", cdist(X, X))
    D = np.load(tmp_path / "D.npy", mmap_mode="r")
    assert abs(sc_a(D, y, metric="precomputed") - sc_a(X, y)) <= 1e-12


def test_precomputed_row_order_invariance():
    X, y = _data()
    D = cdist(X, X, "cityblock")
    p = np.random.default_rng(0).permutation(len(y))
    Dp, yp = D[np.ix_(p, p)], np.array(["u", "v", "w"])[y[p]]     # reordered rows and renamed labels
    assert abs(sc_a(Dp, yp, metric="precomputed") - sc_a(D, y, metric="precomputed")) <= 1e-12
    a = dbcv_btwn(D, y, metric="precomputed", dim=3, random_state=4, **FAST)
    b = dbcv_btwn(Dp, yp, metric="precomputed", dim=3, random_state=4, **FAST)
    assert abs(a - b) <= 1e-12


def test_distance_only_pairs_match_the_coordinates():
    "On Euclidean distances, the distance-only pairs have the coordinates' canonical order and d(x, c) (identity)."
    X, y = _data()
    geo = list(class_pairs(check_data(X, y)))
    dist = list(class_pairs(check_data(cdist(X, X), y, metric="precomputed"), "precomputed"))
    for g, d in zip(geo, dist):
        assert (g.a, g.b) == (d.a, d.b)
        np.testing.assert_array_equal(g.rows, d.rows)
        assert d.Y.shape == (d.n, 0)
        np.testing.assert_allclose(d.to_center * d.scale, g.to_center * g.scale, rtol=1e-12, atol=1e-12)


def test_noise_dropped_with_precomputed():
    X, y = _data()
    y = y.copy(); y[:7] = -1
    keep = y != -1
    got = sc_a(cdist(X, X), y, metric="precomputed", noise="ignore")
    assert abs(got - sc_a(X[keep], y[keep])) <= 1e-12


def test_gower_table_equals_its_matrix():
    rng = np.random.default_rng(0)
    X, y = _data()
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": pd.Categorical(np.where(X[:, 2] > 0, "p", "q"))})
    df.loc[rng.choice(len(df), 8, replace=False), "a"] = np.nan
    G = gower(df)
    assert abs(sc_a(df, y, metric="gower") - sc_a(G, y, metric="precomputed")) <= 1e-12
    assert abs(dbcv_btwn(df, y, metric="gower", dim=2, random_state=0, **FAST)
               - dbcv_btwn(G, y, metric="precomputed", dim=2, random_state=0, **FAST)) <= 1e-12


@pytest.mark.parametrize("f", CENTROID, ids=lambda f: f.__name__)
def test_centroid_measures_read_cosine_on_unit_rows(f):
    X, y = _data()
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    assert f(X, y, metric="cosine", random_state=0) == f(U, y, random_state=0)


@pytest.mark.parametrize("f", CENTROID, ids=lambda f: f.__name__)
def test_centroid_refusals_name_the_reason(f):
    X, y = _data()
    with pytest.raises(ValueError, match="built on centroids, which need coordinates"):
        f(cdist(X, X), y, metric="precomputed")
    with pytest.raises(ValueError, match="built on centroids, which need coordinates"):
        f(pd.DataFrame(X), y, metric="gower")
    for m in ("cityblock", "chebyshev", "sqeuclidean"):
        with pytest.raises(ValueError, match="no centroid of its own"):
            f(X, y, metric=m)
    with pytest.raises(ValueError, match="needs dense coordinates"):
        f(sparse.csr_matrix(X), y)


def test_other_refusals():
    X, y = _data()
    for m in ("cosine", "cityblock", "precomputed", "gower"):
        with pytest.raises(ValueError, match="geometric median"):
            dunn_a(X, y, metric=m)
    from clm_nb.internal import intrinsic_dimension                      # no dimension: dbcv's estimate, rounded
    d = max(1, int(np.floor(intrinsic_dimension(cdist(X, X), metric="precomputed") + 0.5)))
    assert dbcv_btwn(cdist(X, X), y, metric="precomputed", random_state=0) == \
        dbcv_btwn(cdist(X, X), y, metric="precomputed", dim=d, random_state=0)
    with pytest.raises(ValueError, match="cannot be estimated"):
        dbcv_btwn(np.zeros((30, 30)), np.repeat([0, 1, 2], 10), metric="precomputed")
    with pytest.raises(ValueError, match="dim"):
        dbcv_btwn(X, y, dim=0)
    with pytest.raises(ValueError, match="precomputed"):
        sc_a(X, y, metric="hamming")                          # unknown: the engine's message
    for f in (sc_a, dbcv_btwn):                               # the old, wrong reason is gone
        with pytest.raises(ValueError) as e:
            f(X, y, metric="hamming")
        assert "Euclidean centroids" not in str(e.value)


def test_registry_says_what_works():
    t = clm_nb.measures("between").set_index("name")
    for name in ("sc_a", "dbcv_btwn"):
        assert tuple(t.loc[name, "metrics"]) == PAIR_METRICS and t.loc[name, "sparse"]
    for f in CENTROID:
        assert tuple(t.loc[f.__name__, "metrics"]) == ("euclidean", "cosine") and not t.loc[f.__name__, "sparse"]
    assert tuple(t.loc["dunn_a", "metrics"]) == ("euclidean",) and not t.loc["dunn_a", "sparse"]


def test_every_claimed_metric_equals_precomputed():
    "The common rule, from the registry: for each metric a measure claims, coordinates equal the precomputed matrix."
    X, y = _data()
    ok = _sqeuclidean_units_ok()
    t = clm_nb.measures("between").set_index("name")
    checked = 0
    for name, row in t.iterrows():
        if "precomputed" not in row["metrics"]:
            continue
        f = clm_nb.get_measure(name).func
        kw = dict(random_state=0, **(FAST if name == "dbcv_btwn" else {}))
        for m in row["metrics"]:
            if m in ("precomputed", "gower") or (m == "sqeuclidean" and not ok):
                continue
            extra = dict(dim=X.shape[1]) if name == "dbcv_btwn" else {}
            assert abs(f(cdist(X, X, m), y, metric="precomputed", **kw, **extra) - f(X, y, metric=m, **kw)) <= 1e-12
            checked += 1
    assert checked >= 8


def test_pair_breakdown_with_a_metric():
    X, y = _data()
    b = pair_breakdown("sc_a", X, y, metric="cosine")
    assert b.score == sc_a(X, y, metric="cosine") and len(b.pairs) == 3


# ---- issue 39: the quadratic between-dataset measures on stratified samples above QUADRATIC_MAX_POINTS.

def test_the_bound_and_the_quadratic_measures_are_the_registrys():
    assert QUADRATIC_MAX_POINTS == 20_000 and QUADRATIC_SAMPLES == 5
    assert quadratic_measures(LEADERBOARD_MEASURES) == ["dunn_a", "sc_a"]
    assert all("n^2" in clm_nb.get_measure(m).complexity for m in quadratic_measures(LEADERBOARD_MEASURES))


def test_sampled_breakdowns_keep_small_classes_whole():
    X, y = make_blobs(n_samples=[3000, 12], centers=[[0, 0], [5, 5]], random_state=0)
    b = sampled_breakdowns(["sc_a"], check_data(X, y), max_points=300, n_samples=3, random_state=0)["sc_a"]
    assert b.score.n_samples == 3 and b.score.sample_size == 300
    assert (b.pairs.n_a.tolist(), b.pairs.n_b.tolist()) == ([12], [3000])
