"""Protocols of 26_evaluation on hand-computed examples: Table-1 correlations, pairwise rank stability, CLM-aware
technique rankings."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

import clm_nb
from clm_nb.evaluation import clm_aware_ranking, rank_stability, spearman_table


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

def _rounded_blobs():
    """60 points of three well-separated classes (20 per class: enough to judge), rounded: coinciding points make some
    indices infinite as k nears n."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(60, centers=[[0, 0], [8, 0], [4, 7]], cluster_std=0.6, random_state=1)
    return np.round(X), y


def test_which_index_refuses_empty_measures_and_bad_ks_at_the_door():
    """Issue 49: `measures=[]` and `ks=[0, ...]` gave library errors from deep inside; they are refused before any
    work, naming the option and the fix."""
    from clm_nb.advice import which_index
    X, y = _rounded_blobs()
    with pytest.raises(ValueError, match="measures is empty"):
        which_index(X, y, measures=[])
    with pytest.raises(ValueError, match=r"ks=0 must be an integer in \[2, 59\]"):
        which_index(X, y, ks=[0, 2, 3])
    with pytest.raises(ValueError, match="ks=60"):
        which_index(X, y, ks=[2, 60])
    with pytest.raises(ValueError, match="not internal indices"):
        which_index(X, y, measures=["ari"])


def test_which_index_says_which_indices_it_could_not_judge():
    """Issue 49: with ks up to n - 1, indices that are infinite on some partitions had r = NaN silently, and the reason
    still claimed a lead "over every other index". Each is listed as not judged, with the partitions and the advice
    to rank, and the lead is claimed over the indices judged only."""
    from clm_nb.advice import which_index
    X, y = _rounded_blobs()
    ks = [2, 3, 4, 30, 58, 59]
    choice = which_index(X, y, ks=ks, n_boot=200)
    assert set(choice.not_judged) == {"calinski_harabasz", "davies_bouldin", "dunn"}, choice.not_judged
    assert all("infinite on" in why and "spearman" in why for why in choice.not_judged.values())
    assert "over every other index" not in choice.reason and "could not be judged" in choice.reason
    assert (choice.believe, choice.leader) == ("silhouette", "silhouette") and "every other index judged" in choice.reason
    assert "not judged: infinite on" in repr(choice)
    ranked = which_index(X, y, ks=ks, n_boot=200, method="spearman")      # ranks weigh an infinite score
    assert ranked.not_judged == {} and ranked.table.r.notna().all()


def test_which_index_names_no_index_when_the_lead_is_not_clear():
    """Issue 49: an overlapping interval is no clear lead. On standardised wine (k = 2..8) calinski_harabasz ranks
    first but silhouette's interval overlaps its own: a tie, in rank order, and both pick k-means at k = 3."""
    from sklearn.datasets import load_wine
    from clm_nb.advice import which_index
    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    choice = which_index(X, y, ks=range(2, 9), random_state=0)
    assert choice.believe is None and choice.leader == "calinski_harabasz"
    assert choice.tied == list(choice.table.index[:len(choice.tied)]) and "silhouette" in choice.tied
    assert "pick kmeans k=3" in choice.reason


def test_which_index_does_not_recommend_a_weak_leader():
    """Issue 49: "believe calinski_harabasz" at r = 0.435 with a pick of ARI 0.27 (thyroid). A clear leader whose
    correlation is weak (iris, k = 2..6: r = 0.38) is the leader, not a recommendation."""
    from sklearn.datasets import load_iris
    from clm_nb.advice import which_index
    X, y = load_iris(return_X_y=True)
    choice = which_index(X, y, measures=["calinski_harabasz"], ks=range(2, 7), n_boot=200)
    assert choice.table.r.iloc[0] < 0.5
    assert choice.believe is None and "agrees only weakly" in choice.reason, choice.reason
    assert choice.leader == "calinski_harabasz"
