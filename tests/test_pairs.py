"""The pair engine and every pair-based measure against brute-force oracles over all pairs.

Oracles: scikit-learn's roc_auc_score / average_precision_score / precision_recall_curve + auc on the
materialised pair vector, scipy's ks_2samp per cluster, and direct formulas (exact sums with math.fsum).
Data: continuous (no ties), integer grids (most distances tied), duplicated points (many zero distances,
within and between clusters), imbalanced clusters, and a memory budget small enough to force bucket splitting
and many chunked passes."""
import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist
from scipy.stats import ks_2samp
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

import clm_nb
from clm_nb import pairs
from clm_nb.core import check_data
from clm_nb.distances import sort_by_cluster
from clm_nb.pairs import DEFAULT_MAX_MEMORY, NEEDS, pair_summary, summarize

EPS = 1e-12


def _case(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        y = rng.integers(0, 4, n)
        return rng.normal(size=(n, 3)) + y[:, None] * 0.7, y
    if kind == "grid":
        return rng.integers(0, 5, size=(n, 2)).astype(float), rng.integers(0, 3, n)
    if kind == "duplicates":
        X = np.repeat(rng.normal(size=(n // 4, 2)), 4, axis=0)
        return X, rng.integers(0, 3, len(X))
    if kind == "imbalanced":
        y = np.where(rng.random(n) < 0.9, 0, rng.integers(1, 3, n))
        return rng.normal(size=(n, 4)) + y[:, None], y
    raise ValueError(kind)


CASES = [(k, n, s) for k, n, s in [("normal", 2000, 0), ("grid", 2000, 1), ("duplicates", 2000, 2),
                                    ("imbalanced", 800, 3), ("normal", 60, 4), ("grid", 60, 5)]]


def _oracle(X, y):
    D = pdist(X)
    i, j = np.triu_indices(len(y), 1)
    w = y[i] == y[j]
    p, r, _ = precision_recall_curve(w, -D)
    pi, ri, _ = precision_recall_curve(~w, D)
    dw, db = np.sort(D[w]), np.sort(D[~w])
    below = np.searchsorted(db, dw, "left")
    upto = np.searchsorted(db, dw, "right")
    conc, disc = float((len(db) - upto).sum()), float(below.sum())
    ks = [ks_2samp(pdist(X[y == c]), cdist(X[y == c], X[y != c]).ravel()).statistic
          for c in np.unique(y) if (y == c).sum() > 1]
    Ds, nw = np.sort(D), int(w.sum())
    s_min, s_max = math.fsum(Ds[:nw]), math.fsum(Ds[-nw:])
    return {"aucc": roc_auc_score(w, -D),
            "auprc": average_precision_score(w, -D),
            "auiprc": average_precision_score(~w, D),
            "sauprc": (average_precision_score(w, -D) + average_precision_score(~w, D)) / 2,
            "auprc_trapezoid": auc(r, p), "auiprc_trapezoid": auc(ri, pi),
            "gamma": (conc - disc) / (conc + disc),
            "dsi": float(np.mean(ks)),
            "c_index": (math.fsum(D[w]) - s_min) / (s_max - s_min),
            "point_biserial": float(np.corrcoef(D, (~w).astype(float))[0, 1])}


def _engine(X, y, max_memory=DEFAULT_MAX_MEMORY):
    got = {name: clm_nb.score(name, X, y, max_memory=max_memory)
           for name in ["aucc", "auprc", "auiprc", "sauprc", "gamma", "dsi", "c_index", "point_biserial"]}
    got["auprc_trapezoid"] = clm_nb.auprc(X, y, estimator="trapezoid", max_memory=max_memory)
    got["auiprc_trapezoid"] = clm_nb.auiprc(X, y, estimator="trapezoid", max_memory=max_memory)
    return got


@pytest.mark.parametrize("kind, n, seed", CASES)
def test_every_pair_measure_equals_the_brute_force_oracle(kind, n, seed):
    X, y = _case(kind, n, seed)
    ref, got = _oracle(X, y), _engine(X, y)
    for name in ref:
        assert got[name] == pytest.approx(ref[name], abs=EPS), name


@pytest.mark.parametrize("kind", ["normal", "grid", "duplicates"])
def test_tiny_memory_budget_changes_passes_not_results(kind):
    X, y = _case(kind, 400, 7)
    ref, got = _oracle(X, y), _engine(X, y, max_memory=50_000)
    for name in ref:
        assert got[name] == pytest.approx(ref[name], abs=EPS), name
    s = summarize(X, y, NEEDS, max_memory=50_000)
    if kind != "grid":                                    # grid buckets hold one value each: nothing to open
        assert s.passes > 2                               # the budget really forced chunks / splits


def test_dunn_and_silhouette_match_brute_force():
    X, y = _case("duplicates", 600, 8)
    from sklearn.metrics import silhouette_score
    assert clm_nb.silhouette(X, y) == pytest.approx(silhouette_score(X, y), abs=EPS)
    D = cdist(X, X)
    same = y[:, None] == y[None, :]
    sep, diam = D[~same].min(), D[same].max()
    assert clm_nb.dunn(X, y) == (0.0 if sep == 0 else pytest.approx(sep / diam, rel=1e-12))


@pytest.mark.parametrize("metric", ["cityblock", "chebyshev", "sqeuclidean", "cosine"])
def test_other_metrics(metric):
    X, y = _case("normal", 300, 9)
    D = pdist(X, metric)
    i, j = np.triu_indices(len(y), 1)
    w = y[i] == y[j]
    assert clm_nb.aucc(X, y, metric=metric) == pytest.approx(roc_auc_score(w, -D), abs=EPS)
    ks = [ks_2samp(pdist(X[y == c], metric), cdist(X[y == c], X[y != c], metric).ravel()).statistic
          for c in np.unique(y)]
    assert clm_nb.dsi(X, y, metric=metric) == pytest.approx(np.mean(ks), abs=EPS)


def test_unsupported_metric_is_refused():
    X, y = _case("normal", 50, 0)
    for name in ["aucc", "dsi", "silhouette", "dunn"]:
        with pytest.raises(ValueError, match="not supported by the pair engine"):
            clm_nb.score(name, X, y, metric="mahalanobis")


def test_random_labels_baselines():
    rng = np.random.default_rng(11)
    X, y = rng.normal(size=(1500, 3)), rng.integers(0, 3, 1500)
    assert clm_nb.aucc(X, y) == pytest.approx(0.5, abs=0.01)
    assert clm_nb.gamma(X, y) == pytest.approx(0.0, abs=0.02)
    assert clm_nb.dsi(X, y) < 0.05
    i, j = np.triu_indices(len(y), 1)
    frac_within = np.mean(y[i] == y[j])
    assert clm_nb.auprc(X, y) == pytest.approx(frac_within, abs=0.01)
    assert clm_nb.auiprc(X, y) == pytest.approx(1 - frac_within, abs=0.01)


def test_perfect_separation_limits():
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2)) * 10, np.ones((5, 2)) * [10, -10]]
    X = X + np.random.default_rng(0).normal(scale=1e-3, size=X.shape)
    y = np.repeat([0, 1, 2], 5)
    for name, best in [("aucc", 1.0), ("auprc", 1.0), ("auiprc", 1.0), ("sauprc", 1.0), ("gamma", 1.0),
                       ("dsi", 1.0), ("c_index", 0.0)]:
        assert clm_nb.score(name, X, y) == pytest.approx(best, abs=EPS), name


def test_all_distances_equal_limits():
    X = np.zeros((6, 2))                                  # every pair distance is 0: every couple tied
    y = [0, 0, 0, 1, 1, 1]
    assert clm_nb.aucc(X, y) == 0.5
    assert clm_nb.gamma(X, y) == 0.0
    assert clm_nb.c_index(X, y) == 0.5                    # the neutral limit (issue 49), not its best 0
    assert clm_nb.point_biserial(X, y) == 0.0
    assert clm_nb.dsi(X, y) == 0.0


def test_summary_shares_one_computation():
    X, y = _case("grid", 500, 12)
    s = summarize(X, y, ["ranks", "pr", "pr_inverse", "ks", "c_index", "moments", "extremes"])
    assert (s.concordant + s.ties / 2) / (s.n_within * s.n_between) == pytest.approx(clm_nb.aucc(X, y), abs=1e-15)
    assert s.ap == pytest.approx(clm_nb.auprc(X, y), abs=1e-15)
    assert np.nanmean(s.ks) == pytest.approx(clm_nb.dsi(X, y), abs=1e-15)
    with pytest.raises(ValueError, match="unknown needs"):
        pair_summary(sort_by_cluster(check_data(X, y)), ["roc"])


def test_estimator_is_validated():
    X, y = _case("normal", 60, 1)
    for f in (clm_nb.auprc, clm_nb.auiprc, clm_nb.sauprc):
        with pytest.raises(ValueError, match="estimator"):
            f(X, y, estimator="interpolated")


# --- issue 23: the memory default and the parallel sweep ---

def test_max_memory_default_is_read_from_the_machine(monkeypatch):
    rule = pairs.MEMORY_RULE
    assert pairs.DEFAULT_MAX_MEMORY is None
    assert rule["floor"] <= pairs.check_max_memory(None) <= rule["cap"]
    assert pairs.auto_max_memory(8 * 2**30) == 4 * 2**30                       # half of what is available
    assert pairs.auto_max_memory(10 * 2**20) == rule["floor"]
    assert pairs.auto_max_memory(2**40) == rule["cap"]
    monkeypatch.setattr(pairs, "available_memory", lambda: None)             # unreadable: the fallback
    assert pairs.check_max_memory(None) == rule["fallback"]
    assert pairs.check_max_memory(12345) == 12345                            # explicit values as before
    with pytest.raises(ValueError, match="aucc: max_memory=0"):
        clm_nb.aucc(*_case("normal", 40, 0), max_memory=0)


@pytest.mark.parametrize("kind", ["normal", "grid", "duplicates"])
def test_budget_changes_passes_not_results(kind):
    "The parallel per-bucket sweep (ranks, precision-recall) equals the serial one (forced by asking for KS too)."
    X, y = _case(kind, 500, 21)
    fields = ["concordant", "ties", "discordant", "ap", "ap_inverse", "ap_trapezoid", "ap_inverse_trapezoid"]
    sd = sort_by_cluster(check_data(X, y))
    serial = pair_summary(sd, ["ranks", "pr", "pr_inverse", "ks"], max_memory=None)
    for mm in (None, 2**20, 30_000):
        local = pair_summary(sd, ["ranks", "pr", "pr_inverse"], max_memory=mm)
        for f in fields:
            assert getattr(local, f) == pytest.approx(getattr(serial, f), rel=1e-12, abs=1e-12), (mm, f)


def test_tolerance_is_checked_at_the_door():
    X, y = _case("normal", 60, 2)
    for bad, msg in [(-1e-3, "tolerance=-0.001 must be"), ("1e-6", "tolerance='1e-6'"), (np.nan, "NaN")]:
        with pytest.raises(ValueError, match=msg):
            clm_nb.sauprc(X, y, tolerance=bad)
    with pytest.raises(ValueError, match="pass tolerance=None"):
        summarize(X, y, ["ks"], tolerance=1e-3)
    with pytest.raises(ValueError, match="tolerance applies to"):
        pair_summary(sort_by_cluster(check_data(X, y)), ["ranks", "c_index"], tolerance=1e-3)


def test_curve_summaries_take_the_counting_first_pass(monkeypatch):
    "Ranks and precision-recall alone start with the byte-counter pass; a bucket over the budget brings the stats pass."
    calls = []
    stats = pairs._stats_pass
    monkeypatch.setattr(pairs, "_stats_pass", lambda *a: calls.append(a[-1]) or stats(*a))
    X, y = _case("normal", 1500, 5)                               # 1.1 million pairs: 64 or more a bucket
    sd = sort_by_cluster(check_data(X, y))
    big = pair_summary(sd, ["ranks", "pr"], max_memory=None)
    assert calls == [] and big.passes == 2                       # the counting pass, then one collecting pass
    small = pair_summary(sd, ["ranks", "pr"], max_memory=200_000)
    assert calls and calls[0] == 1                               # a full stats pass over the top range next
    assert (small.concordant, small.ties) == (big.concordant, big.ties)
    assert small.ap == pytest.approx(big.ap, rel=1e-12)
    calls.clear()
    few = pair_summary(sort_by_cluster(check_data(X[:300], y[:300])), ["ranks", "pr"], max_memory=None)
    assert calls == [1] and few.n_within + few.n_between == 300 * 299 // 2   # few pairs: the stats pass


@pytest.mark.parametrize("m", [10, 16_385, 50_000])
def test_sort_segment_sorts_long_segments_in_parts(m):
    "Segments longer than 2 x _SORT_PART go through a first spread into parts: the same order, ties and -0.0 kept."
    rng = np.random.default_rng(m)
    for v in (rng.normal(size=m), rng.integers(-20, 20, m).astype(float), np.r_[np.zeros(m // 2), -np.zeros(m - m // 2)]):
        s = v.copy()
        pairs._sort_segments(s, np.empty(0, np.int32), np.array([0]), np.array([m]), 2)
        assert np.array_equal(np.abs(s), np.sort(np.abs(v))) and np.array_equal(np.sort(s), np.sort(v))
        u, c = np.abs(v), np.arange(m, dtype=np.int32)
        s = u.copy()
        pairs._sort_segments(s, c, np.array([0]), np.array([m]), 2)
        assert np.array_equal(s, np.sort(u)) and np.array_equal(u[c], s)
