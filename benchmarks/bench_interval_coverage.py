"""Coverage of the half-sampling intervals of `clm_nb.intervals.resample_scores` (issue 39), by hand:

    .venv/bin/python benchmarks/bench_interval_coverage.py [datasets] [n] [half-samples] > coverage.txt

A population of three overlapping Gaussian classes in 4-D (sizes 1 : 2 : 3, so the classes are unequal). `datasets`
independent datasets of n points each (default 300 datasets of n = 240) get their 95 % interval of every leaderboard
measure. Two population values are checked:
  - E[score_n]: the mean of the score over the datasets, the value the interval targets at this size (its own
    uncertainty, sd/sqrt(datasets), is printed: it is small against the intervals' width);
  - score_large: the mean score over 5 datasets of 10 n points: the score of the population when the measure
    depends on the sample size (a minimum distance shrinks as points are added); coverage of it shows the bias.
Prints, per measure, the coverage of both with its binomial standard error, the mean interval width, and the ratio
of the mean estimated se to the observed sd of the score over the datasets (1 = honest se).
"""
import sys, time
import numpy as np, pandas as pd
from clm_nb.intervals import resample_scores
from clm_nb.profile import LEADERBOARD_MEASURES, clm_profile

S = int(sys.argv[1]) if len(sys.argv) > 1 else 300
n = int(sys.argv[2]) if len(sys.argv) > 2 else 240
B = int(sys.argv[3]) if len(sys.argv) > 3 else 40
MEANS = np.array([[0, 0, 0, 0], [2.2, 0, 0, 0], [0, 2.2, 0, 0]], dtype=float)
SIZES = np.array([1, 2, 3]) / 6

def draw(rng, size):
    y = np.repeat([0, 1, 2], np.round(SIZES * size).astype(int))
    return MEANS[y] + rng.standard_normal((y.size, 4)), y

t0 = time.perf_counter()
names = list(LEADERBOARD_MEASURES)
large = []
for s in range(5):
    X, y = draw(np.random.default_rng([99, s]), 10 * n)
    p = clm_profile(X, y, measures=names, primary=None, random_state=s)
    large.append(p[p.part == "score"].set_index("measure").value)
large = pd.concat(large, axis=1).mean(axis=1)
rows = []
for s in range(S):
    X, y = draw(np.random.default_rng([7, s]), n)
    r = resample_scores(X, y, measures=names, n_resamples=B, random_state=s)
    rows.append(r.table.assign(seed=s).reset_index())
t = pd.concat(rows)
out = []
for m, g in t.groupby("measure", sort=False):
    target = g.value.mean()
    cov = ((g.low <= target) & (target <= g.high)).mean()
    cov_large = ((g.low <= large[m]) & (large[m] <= g.high)).mean()
    out.append(dict(measure=m, E_score_n=target, target_sd=g.value.std() / np.sqrt(len(g)), score_large=large[m],
                    coverage=cov, coverage_large=cov_large, binomial_se=np.sqrt(0.95 * 0.05 / len(g)),
                    mean_width=(g.high - g.low).mean(), se_over_sd=g.se.mean() / g.value.std()))
print(f"{S} datasets of n = {n}, {B} half-samples each, 95 % intervals; {time.perf_counter() - t0:.0f} s")
print(pd.DataFrame(out).round(4).to_string(index=False))
