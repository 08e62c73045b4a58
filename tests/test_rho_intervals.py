"""Intervals on correlations (issue 39, parts 2 and 4): the bootstrap intervals of `spearman_table`, `rho_differences`
and `index_correlation` cover a known population value at the nominal rate, and `which_index` answers on real data.

Coverage: normal data with a known population correlation -- Spearman rho = (6/pi) asin(r/2), Kendall tau =
(2/pi) asin(r), Pearson r -- drawn for SEEDS seeds; each seed's 95 % interval either holds the population value or not.
If the interval is honest, the number of hits is Binomial(SEEDS, 0.95); the tests accept a coverage within three of its
standard errors of 0.95 (sqrt(0.95 * 0.05 / 200) = 0.0154, so 0.904 to 0.996), which an honest interval fails with
probability about 0.003 per test.
"""
import numpy as np
import pandas as pd
import pytest

from clm_nb.evaluation import index_correlation, rho_differences, spearman_table
from clm_nb.advice import which_index

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


def test_which_index_on_iris_read_back_from_csv(tmp_path):
    "Real data as a user has it (a CSV): the labels are trustworthy, and the answer follows the stated rule."
    from sklearn.datasets import load_iris
    from clm_nb.readers import read_labeled_table
    load_iris(as_frame=True).frame.to_csv(tmp_path / "iris.csv", index=False)
    X, y = read_labeled_table(tmp_path / "iris.csv", "target")
    choice = which_index(X, y, ks=range(2, 7), n_boot=300, random_state=0)
    assert choice.verdict == "trustworthy" and len(choice.pool) == 25
    best = choice.table.index[0]
    separated = (choice.differences.low > 0).all() and choice.table.low[best] > 0
    assert choice.believe == (best if separated else None)
    assert (choice.tied == []) == (choice.believe is not None or not choice.table.low[best] > 0)
    assert set(choice.table.columns) >= {"r", "low", "high", "pick", "pick_k", "pick_ari"}
    assert repr(choice).startswith("IndexChoice: believe ")


def test_which_index_refuses_bad_options_before_work():
    X, y = np.zeros((10, 2)), np.repeat([0, 1], 5)
    with pytest.raises(ValueError, match="ci=0.95"):
        which_index(X, y, ci=95)
    with pytest.raises(ValueError, match="pearson"):
        which_index(X, y, method="cosine")


def test_studies_show_their_intervals(quick_study):
    "The quick runs of the two studies (shared with test_studies.py and the docs) write the intervals and their charts."
    ranking = quick_study("dataset_ranking")
    table1 = pd.read_csv(ranking / "table1.csv")
    assert {"rho", "low", "high", "paper_inside"} <= set(table1.columns)
    assert (ranking / "table1_differences.csv").exists() and (ranking / "charts" / "table1_intervals.svg").exists()
    cvi = quick_study("cvi_evaluation")
    per_dataset = pd.read_csv(cvi / "paper003_correlation_intervals.csv")
    assert {"dataset_id", "measure", "r", "low", "high", "partitions"} <= set(per_dataset.columns)
    mean_r = pd.read_csv(cvi / "paper003_mean_correlation.csv")
    assert ((mean_r.low <= mean_r.mean_r) & (mean_r.mean_r <= mean_r.high)).all()
    assert (cvi / "charts" / "paper003_mean_correlation.svg").exists()
