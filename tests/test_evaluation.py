"""Protocols of 10_evaluation on hand-computed examples: Table-1 correlations, pairwise rank stability, CLM-aware
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
