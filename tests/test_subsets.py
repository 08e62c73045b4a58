"""Issue 52: the half-samples scored in one pass (clm_nb.subsets), the batched DBCV and the SciPy-free log-sum-exp.

- `subset_pair_scores` is invariant to the row order of the data (the subsets' pairs are built in canonical order,
  so even the Monte-Carlo measures' relabellings land on the same points);
- `dbcv_values` is bit-identical to `dbcv_value` labelling by labelling, ties included;
- `log_weighted_sum` is bit-identical to `scipy.special.logsumexp(a, b=w, axis=1)`;
- the interval of a Monte-Carlo measure includes the full score's own Monte-Carlo error, and refuses values without it.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.spatial.distance import cdist
from scipy.special import logsumexp
from sklearn.datasets import make_blobs

from clm_nb.core import check_data, half_sample, log_weighted_sum
from clm_nb.internal import dbcv_value, dbcv_values
from clm_nb.intervals import resample_scores
from clm_nb.subsets import subset_pair_scores

MEASURES = ["ch_btwn", "dbcv_btwn", "ch_a", "db_a", "dunn_a", "i_a", "sc_a"]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4))
def test_subset_scores_ignore_the_row_order(seed, k):
    X, y = make_blobs(90, 3, centers=k, cluster_std=2.0, random_state=seed)
    perm = np.random.default_rng(seed).permutation(len(y))
    inverse = np.argsort(perm)                                     # row r of the data is row inverse[r] after
    d, dp = check_data(X, y), check_data(X[perm], y[perm])
    subsets = [half_sample(d.labels, np.random.default_rng([seed, b])) for b in range(6)]
    a = subset_pair_scores(MEASURES, d, subsets, random_state=3)
    b = subset_pair_scores(MEASURES, dp, [np.sort(inverse[s]) for s in subsets], random_state=3)
    for m in MEASURES:
        np.testing.assert_allclose(b.values[m], a.values[m], rtol=1e-9, atol=1e-12, err_msg=m)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(4, 120), K=st.integers(2, 3), decimals=st.integers(0, 2))
def test_dbcv_values_are_dbcv_value_bit_for_bit(seed, m, K, decimals):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2)).round(decimals)                    # rounded: duplicates and ties in the trees
    G = np.array([rng.permutation(np.arange(m) % K) for _ in range(4)])
    D = cdist(X, X)
    assert dbcv_values(G, D, dim=2).tolist() == [dbcv_value(X, g, distances=D, dim=2) for g in G]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(1, 40), power=st.floats(-3, 6), tie=st.booleans())
def test_log_weighted_sum_is_scipys_logsumexp_bit_for_bit(seed, rows, power, tie):
    rng = np.random.default_rng(seed)
    a = np.abs(rng.standard_normal((rows, 2))) * 10.0 ** power
    if tie:
        a[:, 1] = a[:, 0]
    w = rng.integers(1, 1000, 2).astype(float)
    assert log_weighted_sum(a, w).tolist() == logsumexp(a, b=w, axis=1).tolist()


def test_monte_carlo_intervals_carry_the_full_scores_own_error():
    X, y = make_blobs(120, 2, centers=3, cluster_std=2.5, random_state=0)
    base = resample_scores(X, y, measures=["ch_btwn", "sc_a"], n_resamples=12, random_state=0)
    values = {"ch_btwn": base.table.at["ch_btwn", "value"], "sc_a": base.table.at["sc_a", "value"]}
    with pytest.raises(ValueError, match="ch_btwn_se"):           # a Monte-Carlo measure without its error: refused
        resample_scores(X, y, measures=["ch_btwn", "sc_a"], n_resamples=12, random_state=0, values=values)
    noisy = resample_scores(X, y, measures=["ch_btwn", "sc_a"], n_resamples=12, random_state=0,
                            values=values | {"ch_btwn_se": 0.05})
    quiet = resample_scores(X, y, measures=["ch_btwn", "sc_a"], n_resamples=12, random_state=0,
                            values=values | {"ch_btwn_se": 0.0})
    assert noisy.table.at["ch_btwn", "se"] ** 2 == pytest.approx(quiet.table.at["ch_btwn", "se"] ** 2 + 0.05 ** 2)
    assert noisy.table.at["sc_a", "se"] == quiet.table.at["sc_a", "se"]        # a deterministic measure: no such term
    assert noisy.draws["ch_btwn"].equals(quiet.draws["ch_btwn"])             # the draws are the half-samples' spread


def test_a_degenerate_half_leaves_only_its_own_scores_missing(monkeypatch):
    # fault injection: one measure raises on one class pair of one subset; that subset's score of that measure is NaN,
    # every other score stands
    import clm_nb.subsets as subsets
    real, first = subsets.pair_values, []

    def flaky(measures, pair, **kw):
        first.append(first[0] if first else pair)             # the first class pair of the first subset
        if "dunn_a" in measures and pair is first[0]:
            raise ValueError("degenerate")
        return real(measures, pair, **kw)

    monkeypatch.setattr(subsets, "pair_values", flaky)
    X, y = make_blobs(80, 2, centers=2, random_state=1)
    d = check_data(X, y)
    s = subset_pair_scores(["dunn_a", "sc_a"], d, [half_sample(d.labels, np.random.default_rng(b)) for b in range(3)])
    assert np.isnan(s.values["dunn_a"][0, 0]) and np.isfinite(s.values["dunn_a"][1:]).all()
    assert np.isfinite(s.values["sc_a"]).all()


# ---- found by the review of issue 52's change

def test_points_without_a_dimension_refuse_dbcv_btwn_alone():
    # every dissimilarity equal: no intrinsic dimension, so dbcv_btwn is refused; sc_a still gets its interval
    import clm_nb
    D = np.ones((40, 40))
    np.fill_diagonal(D, 0.0)
    a = clm_nb.assess(D, np.repeat([0, 1], 20), metric="precomputed", scaling="none", variants=False,
                      progress=False, n_resamples=10)
    assert np.isfinite(a.scores.at["sc_a", "low"]) and np.isnan(a.scores.at["dbcv_btwn", "low"])


def test_a_refused_measure_has_no_share_below():
    X, y = make_blobs(60, 2, centers=2, random_state=0)
    r = resample_scores(X, y, metric="cityblock", measures=["ch_btwn", "sc_a"], n_resamples=10)
    assert r.draws["ch_btwn_share_below"].isna().all() and r.draws["sc_a_share_below"].notna().all()


def test_too_many_class_pairs_are_refused_at_the_door():
    y = np.r_[np.arange(1100), np.arange(1100)]                    # 1,100 classes of two points: 604,450 pairs
    d = check_data(np.random.default_rng(0).normal(size=(2200, 2)), y)
    with pytest.raises(ValueError, match="class pairs"):
        subset_pair_scores(["sc_a"], d, [np.arange(2200)])


def test_a_model_without_trees_predicts_its_baseline():
    from clm_nb.prediction import TreeModel
    assert TreeModel((("a", "identity"),), 0.5, ()).predict([{"a": 1.0}, {"a": 2.0}]).tolist() == [0.5, 0.5]


def test_pair_values_asks_for_dim_without_coordinates():
    from clm_nb.between import class_pairs, pair_values
    X, y = make_blobs(40, 2, centers=2, random_state=0)
    pair = next(class_pairs(check_data(cdist(X, X), y, metric="precomputed"), "precomputed"))
    with pytest.raises(ValueError, match="needs dim"):
        pair_values(["dbcv_btwn"], pair)
