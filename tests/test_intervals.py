"""Honesty of the half-sampling intervals (clm_nb.intervals, issue 39): coverage on generated data with a known
population value, and the estimated standard error against the observed spread of the score.

The population: three overlapping Gaussian classes in 2-D with sizes 30/50/70. Its value of a score at this size,
E[score_n], is estimated by the mean over the generated datasets (its own error, sd/sqrt(S), is a tenth of the
intervals' half-width). Tolerance: with S datasets, a 95 % interval's coverage has binomial sd sqrt(.95 .05 / S)
(0.024 at S = 80); we accept coverage >= 0.95 - 4 sd = 0.85, and an se within a factor 1.6 of the observed sd (the sd
of an sd estimated from 80 datasets is about 8 %). The larger run, every leaderboard measure, is
benchmarks/bench_interval_coverage.py (figures in docs/benchmarks.md).

issue 40: the half-samples of a dissimilarity matrix are index subsets."""
import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from clm_nb.checks import check_ci
from clm_nb.core import half_sample, stratified_sample
from clm_nb.intervals import resample_scores

from helpers import needs

S, B = 80, 20
MEANS = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
Y = np.repeat([0, 1, 2], [30, 50, 70])


@pytest.fixture(scope="module")
def runs():
    rows = []
    for s in range(S):
        X = MEANS[Y] + np.random.default_rng([5, s]).standard_normal((Y.size, 2))
        r = resample_scores(X, Y, measures=["ch_a", "sc_a", "ch_btwn"], n_resamples=B, n_permutations=10,
                            random_state=s)
        rows.append(r.table.assign(seed=s).reset_index())
    return pd.concat(rows)


@pytest.mark.parametrize("measure", ["ch_a", "sc_a", "ch_btwn"])
def test_coverage_at_nominal_rate(runs, measure):
    g = runs[runs.measure == measure]
    target = g.value.mean()
    coverage = ((g.low <= target) & (target <= g.high)).mean()
    assert 0.85 <= coverage <= 1.0, (measure, coverage)


@pytest.mark.parametrize("measure", ["ch_a", "sc_a", "ch_btwn"])
def test_se_matches_the_spread_over_datasets(runs, measure):
    g = runs[runs.measure == measure]
    ratio = g.se.mean() / g.value.std()
    assert 1 / 1.6 <= ratio <= 1.6, (measure, ratio)


def test_half_samples_keep_every_class_and_no_duplicates():
    codes = np.repeat(np.arange(5), [1, 2, 3, 10, 101])
    rows = half_sample(codes, np.random.default_rng(0))
    assert len(set(rows)) == len(rows)
    assert np.bincount(codes[rows]).tolist() == [1, 2, 2, 5, 50]


def test_stratified_sample_sizes_add_up():
    codes = np.random.default_rng(1).integers(0, 7, 10_000)
    for size in (200, 1234, 9999):
        s = stratified_sample(codes, size, np.random.default_rng(size))
        assert s.size == size and len(set(s)) == size


def test_bad_options_are_refused_before_any_work():
    X = np.random.default_rng(0).standard_normal((30, 2))
    y = np.repeat([0, 1], 15)
    for kw, text in [({"ci": 1.5}, "ci"), ({"ci": 90}, "percentage"), ({"n_resamples": 3}, "n_resamples"),
                     ({"max_points": 10}, "max_points"), ({"random_state": -1}, "random_state"),
                     ({"measures": ["silhouette"]}, "silhouette")]:
        with pytest.raises(ValueError, match=text):
            resample_scores(X, y, **kw)
    with pytest.raises(ValueError, match="ci"):
        check_ci(float("nan"))


def test_a_measure_refused_on_half_samples_gets_no_interval(monkeypatch):
    # fault injection: sc_a refuses every half-sample (the full data still scores): the note says so, and neither an
    # interval nor draws are made up from too few half-samples
    import dataclasses
    import clm_nb.intervals as intervals
    real = intervals.subset_pair_scores

    def flaky(measures, data, subsets, **kw):
        s = real(measures, data, subsets, **kw)
        return dataclasses.replace(s, values=s.values | {"sc_a": np.full_like(s.values["sc_a"], np.nan)})

    monkeypatch.setattr(intervals, "subset_pair_scores", flaky)
    X = np.random.default_rng(0).standard_normal((40, 2))
    y = np.repeat([0, 1], 20)
    r = resample_scores(X, y, measures=["ch_a", "sc_a"], n_resamples=10, random_state=0)
    assert np.isfinite(r.table.at["sc_a", "value"]) and np.isnan(r.table.at["sc_a", "low"])
    assert "only 0 of 10 half-samples" in r.table.at["sc_a", "note"]
    assert r.draws["sc_a"].isna().all() and r.draws["ch_a"].notna().all()
    assert np.isfinite(r.table.at["ch_a", "low"])


# ---- issue 40: the half-samples of a dissimilarity matrix are index subsets.

@needs("precomputed", "sc_a")
def test_half_samples_of_a_matrix_are_index_subsets(iris):
    X, y = iris
    kw = dict(measures=["sc_a"], n_resamples=10, n_permutations=5, random_state=3)
    e = resample_scores(X, y, **kw)
    p = resample_scores(cdist(X, X), y, metric="precomputed", **kw)
    np.testing.assert_allclose(p.draws["sc_a"], e.draws["sc_a"], rtol=0, atol=1e-12)
    assert p.interval("sc_a") == pytest.approx(e.interval("sc_a"), abs=1e-12)
