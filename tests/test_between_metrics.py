"""Between-dataset measures with any distance (issue 40): sc_a and dbcv_btwn on every pair-engine metric, sparse X, a
precomputed matrix (square, condensed, memmap) and a Gower table; the centroid measures' spherical view of cosine; every
refusal's reason; and the Euclidean coordinate path unchanged, bit for bit."""
import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.spatial.distance import cdist, squareform
from sklearn.datasets import make_blobs

import clm_nb
from clm_nb.between import (ch_a, ch_btwn, ch_t2, ch_t4, class_pairs, db_a, dbcv_btwn, dunn_a, i_a, pair_breakdown,
                            sc_a, xb_a)
from clm_nb.registry import PAIR_METRICS
from clm_nb.core import check_data
from clm_nb.gower import gower
from clm_nb.pairs import summarize

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
