"""The curve measures (clm_nb.curves, notebook 08_curves).

The curve measures' fast mode (issue 23): every estimate lies within its certified bound of the exact value, and
every bound within the tolerance asked for — on random small data with ties, duplicates and degenerate labels, with
buckets forced coarse so that the bounds, not the opened buckets, carry the result. Oracle: scikit-learn on the
materialised pair vector."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.spatial.distance import pdist
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

import clm_nb
from clm_nb.core import check_data
from clm_nb.curves import CURVE_MEASURES, BoundedScore, bounded_score
from clm_nb.distances import sort_by_cluster
from clm_nb.pairs import ROUNDING_ALLOWANCE, PairSummary, _TolerantResolver, _fill_ranks, _upper_bound

SLACK = 1e-12                                                     # rounding between the two computations


def _oracle(X, y):
    "AUCC, AP, AP trapezoid, inverse AP, inverse AP trapezoid over all pairs."
    D = pdist(X)
    i, j = np.triu_indices(len(y), 1)
    w = np.asarray(y)[i] == np.asarray(y)[j]
    p, r, _ = precision_recall_curve(w, -D)
    pi, ri, _ = precision_recall_curve(~w, D)
    return np.array([roc_auc_score(w, -D), average_precision_score(w, -D), auc(r, p),
                     average_precision_score(~w, D), auc(ri, pi)])


def _data(kind, n, k, seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        X = rng.normal(size=(n, 2))
    elif kind == "grid":
        X = rng.integers(0, 3, size=(n, 2)).astype(float)
    else:
        X = np.repeat(rng.normal(size=(n // 3 + 1, 2)), 3, axis=0)[:n]
    y = rng.integers(0, k, n)
    y[:2] = [0, 1]                                                # two clusters at least
    y[2:4] = 0                                                    # and a within pair
    return X, y


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["normal", "grid", "duplicates"]), n=st.integers(6, 70), k=st.integers(2, 4),
       seed=st.integers(0, 10**6), tol=st.sampled_from([0.0, 1e-6, 1e-3, 0.05, 1.0]),
       measure=st.sampled_from(sorted(CURVE_MEASURES)), estimator=st.sampled_from(["step", "trapezoid"]))
def test_estimate_within_bound_within_tolerance(kind, n, k, seed, tol, measure, estimator):
    X, y = _data(kind, n, k, seed)
    ref = _oracle(X, y)
    col = {"aucc": [0], "auprc": [1], "auiprc": [3], "sauprc": [1, 3]}[measure]
    col = [c + (estimator == "trapezoid" and measure != "aucc") for c in col]
    b = bounded_score(X, y, measure, tolerance=tol, estimator=estimator)
    assert isinstance(b, BoundedScore)
    assert abs(b.value - ref[col].mean()) <= b.bound + SLACK
    assert b.bound <= tol


@pytest.mark.parametrize("seed", range(12))
def test_bounds_hold_with_coarse_buckets_and_nothing_opened(seed):
    "Few wide buckets, none opened (or a random few): the estimate rests on the bounds alone."
    rng = np.random.default_rng(seed)
    X, y = _data(["normal", "grid", "duplicates"][seed % 3], int(rng.integers(10, 80)), int(rng.integers(2, 5)), seed)
    ref = _oracle(X, y)
    sd = sort_by_cluster(check_data(X, y))
    r = _TolerantResolver(sd, {"ranks", "pr", "pr_inverse"}, 2**24, tolerant=True)
    top = r.fine_range(_upper_bound(sd), 10.0, nb=int(rng.choice([1, 2, 4, 8])))
    res = r.counts(top)
    opened = rng.random(top.size) < 0.3 if seed % 2 else np.zeros(top.size, bool)
    r.process(top, res, opened=opened)
    out = PairSummary(sd.n_within, sd.n_pairs - sd.n_within)
    _fill_ranks(out, r)
    got = np.array([(out.concordant + out.ties / 2) / (out.n_within * out.n_between), out.ap, out.ap_trapezoid,
                    out.ap_inverse, out.ap_inverse_trapezoid])
    assert (np.abs(got - ref) <= r.half + SLACK).all(), (got, ref, r.half)
    assert r.half.max() > 0                                       # the bounds were really used


def test_degenerate_data():
    X = np.zeros((6, 2))                                          # every distance 0: one tied group
    y = [0, 0, 0, 1, 1, 1]
    b = bounded_score(X, y, "aucc", tolerance=1e-3)
    assert (b.value, b.bound) == (0.5, ROUNDING_ALLOWANCE)        # nothing estimated; the allowance for rounding stays
    b = bounded_score(X, y, "aucc", tolerance=0.0)
    assert (b.value, b.bound) == (0.5, 0.0)                       # tolerance 0: the exact passes, bound 0
    X = np.r_[np.zeros((4, 2)), np.full((4, 2), 10.0)] + np.random.default_rng(0).normal(scale=1e-3, size=(8, 2))
    y = [0] * 4 + [1] * 4                                         # perfectly separated: exact from counts
    for m in CURVE_MEASURES:
        b = bounded_score(X, y, m, tolerance=1e-3)
        assert b.value == pytest.approx(1.0, abs=1e-12) and b.bound <= 1e-3


def test_registered_measures_take_a_tolerance_and_return_floats():
    X, y = _data("normal", 120, 3, 5)
    ref = _oracle(X, y)
    for m, exact in [("aucc", ref[0]), ("auprc", ref[1]), ("auiprc", ref[3]), ("sauprc", (ref[1] + ref[3]) / 2)]:
        v = clm_nb.score(m, X, y, tolerance=1e-4)
        assert type(v) is float and abs(v - exact) <= 1e-4
        assert clm_nb.score(m, X, y, tolerance=0.0) == pytest.approx(exact, abs=1e-12)


def test_bounded_score_bad_input():
    X, y = _data("normal", 30, 2, 1)
    with pytest.raises(ValueError, match="bounded_score: measure='dsi'"):
        bounded_score(X, y, "dsi")
    with pytest.raises(ValueError, match="bounded_score: tolerance=-1"):
        bounded_score(X, y, tolerance=-1)
    with pytest.raises(ValueError, match="sauprc: estimator='mid'"):
        bounded_score(X, y, "sauprc", estimator="mid")
    with pytest.raises(ValueError, match="aucc: estimator='mid'"):       # aucc ignores it, but it is still checked
        bounded_score(X, y, "aucc", estimator="mid")
