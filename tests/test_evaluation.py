"""Protocols of 26_evaluation on hand-computed examples: Table-1 correlations, pairwise rank stability, CLM-aware
technique rankings.

issue 39: the bootstrap intervals of `spearman_table`, `rho_differences` and `index_correlation` cover a known
population value at the nominal rate."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from clm_nb.evaluation import clm_aware_ranking, rank_stability, rho_differences, spearman_table


def test_spearman_table_orients_registered_measures_and_reports_p_values():
    truth = pd.Series([5.0, 4, 3, 2, 1, 0], index=list("abcdef"))
    comp = pd.DataFrame({"davies_bouldin": [1, 2, 3, 4, 5, 6.0], "svm": [0.9, 0.5, 0.7, 0.1, 0.3, 0.2],
                         "calinski_harabasz": [np.nan, 9, 8, 7, 6, 5.0]}, index=truth.index)
    tab = spearman_table(truth, comp).set_index("competitor")
    assert tab.loc["davies_bouldin", "rho"] == pytest.approx(1.0)              # minimised: reversed, perfect
    rho, p = spearmanr(truth, comp.svm)
    assert (tab.loc["svm", "rho"], tab.loc["svm", "p_value"]) == pytest.approx((rho, p))
    assert tab.loc["calinski_harabasz", "datasets"] == 5                       # NaN dataset dropped
    assert list(tab.place[:3]) == ["1st", "2nd", "3rd"]


def test_rank_stability_hand_computed():
    # A beats B on datasets 0 and 1, B beats A on dataset 2; with subsets of one dataset, p = 2/3 exactly in the limit
    scores = pd.DataFrame({"A": [1.0, 1.0, 0.0], "B": [0.0, 0.0, 1.0]})
    st = rank_stability(scores, n_draws=3000, size=1, random_state=0)
    assert st.pairwise.loc["A", "B"] == pytest.approx(2 / 3, abs=0.03)
    # with all three datasets in every draw, the order is fixed: P = 1
    assert rank_stability(scores, n_draws=10, size=3, random_state=0).pairwise.loc["A", "B"] == 1.0
    tie = pd.DataFrame({"A": [0.5, 0.5], "B": [0.5, 0.5]})
    assert rank_stability(tie, n_draws=5, size=2).pairwise.loc["A", "B"] == 0.5


def test_clm_aware_ranking_hand_computed():
    res = pd.DataFrame({"A": [0.6, 0.6, 0.9], "B": [0.9, 0.8, 0.1], "C": [0.5, 0.5, 0.5]}, index=["g1", "g2", "bad"])
    clm = pd.Series({"g1": 0.6, "g2": 0.2, "bad": -0.3})
    rep = clm_aware_ranking(res, clm)
    assert rep.weights.tolist() == pytest.approx([0.75, 0.25, 0.0])
    assert rep.table.loc["B", "clm_mean"] == pytest.approx(0.75 * 0.9 + 0.25 * 0.8)
    assert rep.table.loc["A", "mean"] == pytest.approx(0.7) and rep.table.loc["A", "rank"] == 1
    assert set(map(tuple, rep.flipped[["a", "b"]].values)) == {("A", "B")}
    top = clm_aware_ranking(res, clm, mode="filter", quantile=1 / 3)
    assert top.weights.tolist() == [1.0, 0.0, 0.0] and top.table.index[0] == "B"
    with pytest.raises(ValueError, match="indexes must match"):
        clm_aware_ranking(res, pd.Series({"x": 1.0}))


# --- judging internal indices on a pool (papers 002-004) -------------------------------------------------------------
from hypothesis import given, settings, strategies as st
from scipy.stats import friedmanchisquare, kendalltau, pearsonr

from clm_nb.evaluation import friedman_nemenyi, hit_the_best, index_correlation, rank_difference, regret


def test_pool_protocols_on_a_hand_computed_3x3_case():
    """Three partitions, ARI 0.6 / 0.9 / 0.3 (ARI ranks 2, 1, 3). Silhouette 0.5 / 0.4 / 0.1 ranks them 1, 2, 3:
    rank difference |2-1| + |1-2| + |3-3| = 2, a miss, regret 0.9 - 0.6 = 0.3. Davies-Bouldin 0.8 / 0.7 / 0.2 is
    minimised: ranks 3, 2, 1, rank difference 1 + 1 + 2 = 4, a miss (it picks the worst), regret 0.9 - 0.3 = 0.6."""
    scores = pd.DataFrame({"silhouette": [0.5, 0.4, 0.1], "davies_bouldin": [0.8, 0.7, 0.2]}, index=["p1", "p2", "p3"])
    ari = pd.Series([0.6, 0.9, 0.3], index=scores.index, name="ari")
    assert rank_difference(scores, ari).to_dict() == {"silhouette": 2.0, "davies_bouldin": 4.0}
    assert hit_the_best(scores, ari).to_dict() == {"silhouette": 0.0, "davies_bouldin": 0.0}
    assert regret(scores, ari).to_dict() == pytest.approx({"silhouette": 0.3, "davies_bouldin": 0.6})
    r = index_correlation(scores, ari)
    assert r.silhouette == pytest.approx(pearsonr(scores.silhouette, ari)[0])
    assert r.davies_bouldin == pytest.approx(pearsonr(-scores.davies_bouldin, ari)[0])    # oriented by the registry
    assert index_correlation(scores, ari, method="kendall").silhouette == pytest.approx(kendalltau(scores.silhouette, ari)[0])


def test_a_minimised_external_measure_is_oriented_too():
    scores = pd.DataFrame({"silhouette": [0.5, 0.4, 0.1]})
    nvd = pd.Series([0.4, 0.1, 0.7], name="nvd")                              # NVD: lower is better, partition 1 best
    assert hit_the_best(scores, nvd).silhouette == 0.0
    assert regret(scores, nvd).silhouette == pytest.approx(0.3)              # 0.4 chosen vs 0.1 best
    assert rank_difference(scores, nvd).silhouette == 2.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=4, max_size=12, unique=True), st.integers(0, 2**31))
def test_pool_protocols_are_invariant_to_monotone_rescaling_and_row_order(ints, seed):
    values = [i / 10 for i in ints]                                           # distinct values that exp() keeps distinct
    rng = np.random.default_rng(seed)
    scores = pd.DataFrame({"silhouette": values})
    ari = pd.Series(rng.random(len(values)), name="ari")
    rescaled = pd.DataFrame({"silhouette": np.exp(np.asarray(values))})      # monotone: same ranks, same best
    for f in (hit_the_best, rank_difference, regret):
        assert f(scores, ari).silhouette == pytest.approx(f(rescaled, ari).silhouette)
    assert index_correlation(scores, ari, method="spearman").silhouette == pytest.approx(
        index_correlation(rescaled, ari, method="spearman").silhouette)
    perm = rng.permutation(len(values))
    for f in (hit_the_best, rank_difference, regret, index_correlation):
        assert f(scores.iloc[perm], ari.iloc[perm]).silhouette == pytest.approx(f(scores, ari).silhouette)
    assert rank_difference(pd.DataFrame({"silhouette": ari.to_numpy()}), ari).silhouette == 0.0   # the truth itself


def test_friedman_nemenyi_matches_scipy_and_demsar():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.random((12, 5)) + np.array([0.5, 0.3, 0.2, 0.1, 0.0]), columns=list("ABCDE"))
    fn = friedman_nemenyi(table)
    stat, p = friedmanchisquare(*[table[c] for c in table])
    assert (fn.statistic, fn.p_value) == pytest.approx((stat, p))
    assert fn.mean_ranks.sum() == pytest.approx(5 * 6 / 2)
    assert fn.critical_difference == pytest.approx(2.728 * np.sqrt(5 * 6 / (6 * 12)), abs=2e-3)   # Demsar: q_0.05(k=5) = 2.728
    P = fn.pairwise_p
    assert np.allclose(P, P.T) and np.allclose(np.diag(P), 1.0)
    d = (fn.mean_ranks.to_numpy()[:, None] - fn.mean_ranks.to_numpy()[None, :])
    assert ((np.abs(d) > fn.critical_difference) == (P.to_numpy() < 0.05)).all()   # CD and p-values are the same test
    for g in fn.groups():
        assert fn.mean_ranks[g].max() - fn.mean_ranks[g].min() <= fn.critical_difference + 1e-12


def test_friedman_nemenyi_bad_input():
    with pytest.raises(ValueError, match="at least 3"):
        friedman_nemenyi(pd.DataFrame({"A": [1.0, 2.0], "B": [2.0, 1.0]}))
    with pytest.raises(ValueError, match="at least 2 rows"):
        friedman_nemenyi(pd.DataFrame({"A": [1.0, np.nan], "B": [2.0, 1.0], "C": [0.0, 0.5]}))
    with pytest.raises(ValueError, match="alpha"):
        friedman_nemenyi(pd.DataFrame({"A": [1.0, 2.0], "B": [2.0, 1.0], "C": [0.0, 0.5]}), alpha=1.5)


# --- number of clusters (paper 004 §4) ------------------------------------------------------------------------------
from clm_nb.evaluation import knee_point, predict_k


def test_knee_rules_on_hand_computed_curves():
    k = np.arange(2, 8)
    v = np.array([10, 4, 2, 1.8, 1.6, 1.4])
    assert knee_point(k, v) == 3                               # second differences 4, 1.8, 0, 0 at k = 3..6
    assert knee_point(k, v, rule="chord") == 4                 # gaps to the chord 0, .498, .530, .353, .177, 0
    assert knee_point(k, 5 * v + 7) == 3 and knee_point(k, 5 * v + 7, rule="chord") == 4   # affine maps keep the knee
    elbow = np.r_[np.linspace(12, 3, 4), np.linspace(2.8, 2.2, 5)]    # steep then flat: the bend is at k = 5
    assert knee_point(np.arange(2, 11), elbow) == 5 and knee_point(np.arange(2, 11), elbow, rule="chord") == 5


def test_predict_k_uses_the_registry_optimum_and_direction():
    curves = pd.DataFrame({"silhouette": [0.2, 0.7, 0.5, 0.7], "xie_beni": [0.9, 0.3, 0.1, 0.4],
                           "ball_hall": [9.0, 3.0, 2.5, 2.2]}, index=pd.Index([2, 3, 4, 5], name="k"))
    k_hat = predict_k(curves)
    assert k_hat.silhouette == 3                              # maximised; tie between 3 and 5 -> the smaller k
    assert k_hat.xie_beni == 4                                # minimised
    assert k_hat.ball_hall == 3                               # knee (its minimum would always be the largest k)
    assert np.isnan(predict_k(curves.assign(silhouette=np.nan)).silhouette)
    with pytest.raises(ValueError, match="no measure named"):
        predict_k(curves.rename(columns={"silhouette": "silhouete"}))


# --- which_index says what the evidence supports (issue 49) ----------------------------------------------------------


# ---- issue 39: the bootstrap intervals of `spearman_table`, `rho_differences` and `index_correlation` cover a ...

SEEDS, N, LEVEL = 200, 100, 0.95


TOLERANCE = 3 * np.sqrt(LEVEL * (1 - LEVEL) / SEEDS)


def _correlated(rng, n, *rs):
    "A truth t and one variable per r, each normal with correlation r with t (independent noises)."
    t = rng.normal(size=n)
    return t, [r * t + np.sqrt(1 - r * r) * rng.normal(size=n) for r in rs]


def _spearman(r):
    return 6 / np.pi * np.arcsin(r / 2)


def _assert_covers(hits, what):
    coverage = np.mean(hits)
    assert abs(coverage - LEVEL) <= TOLERANCE, f"{what}: coverage {coverage:.3f} over {SEEDS} seeds"
    return coverage


@pytest.mark.parametrize("r", [0.3, 0.8])
def test_spearman_table_interval_covers_the_population_rho(r):
    "rho = 0.786 at r = 0.8 is about Table 1's CH_btwn; 0.287 at r = 0.3 is a weak measure."
    hits = []
    for seed in range(SEEDS):
        t, (x,) = _correlated(np.random.default_rng(seed), N, r)
        row = spearman_table(pd.Series(t), pd.DataFrame({"x": x}), n_boot=500, random_state=seed).iloc[0]
        hits.append(row.low <= _spearman(r) <= row.high)
    _assert_covers(hits, f"Spearman rho at r = {r}")


def test_rho_differences_interval_covers_the_population_difference():
    "Two measures of the same truth, r = 0.85 and 0.7: the paired interval of rho_a - rho_b holds the true difference."
    truth_diff = _spearman(0.85) - _spearman(0.7)
    hits = []
    for seed in range(SEEDS):
        t, (a, b) = _correlated(np.random.default_rng(seed), N, 0.85, 0.7)
        row = rho_differences(pd.Series(t), pd.DataFrame({"a": a, "b": b}), n_boot=500, random_state=seed).iloc[0]
        assert (row.a, row.b) == ("a", "b") or (row.a, row.b) == ("b", "a")
        sign = 1 if row.a == "a" else -1
        hits.append(row.low <= sign * truth_diff <= row.high)
    _assert_covers(hits, "difference of two Spearman rhos")


@pytest.mark.parametrize("method, population", [("pearson", lambda r: r),
                                                ("kendall", lambda r: 2 / np.pi * np.arcsin(r))])
def test_index_correlation_interval_covers(method, population):
    "The pool's interval, where the partitions really are independent draws (here: normal pairs), covers."
    r, hits = 0.6, []
    for seed in range(SEEDS):
        t, (x,) = _correlated(np.random.default_rng(seed), 60, r)
        row = index_correlation(pd.DataFrame({"x": x}), t, method=method, ci=LEVEL, n_boot=400, random_state=seed).loc["x"]
        hits.append(row.low <= population(r) <= row.high)
    _assert_covers(hits, f"{method} at r = {r}")


def test_spearman_table_missing_values_and_seed():
    "A competitor with missing values is correlated on its own datasets; the draws depend on random_state only."
    rng = np.random.default_rng(0)
    t, (a, b) = _correlated(rng, 50, 0.8, 0.5)
    b[:10] = np.nan
    idx = [f"d{i}" for i in range(50)]
    comp = pd.DataFrame({"a": a, "b": b}, index=idx)
    tab = spearman_table(pd.Series(t, index=idx), comp, random_state=3).set_index("competitor")
    assert tab.datasets.to_dict() == {"a": 50, "b": 40}
    assert (tab.low < tab.rho).all() and (tab.rho < tab.high).all()
    again = spearman_table(pd.Series(t, index=idx), comp, random_state=3).set_index("competitor")
    pd.testing.assert_frame_equal(tab, again)
    other = spearman_table(pd.Series(t, index=idx), comp, random_state=4).set_index("competitor")
    assert not np.allclose(tab.low, other.low)
    diff = rho_differences(pd.Series(t, index=idx), comp, random_state=3).iloc[0]
    assert diff.datasets == 40
