"""Coverage of the paired differences of `clm_nb.representations.compare_representations` (issue 53), by hand:

    .venv/bin/python benchmarks/bench_paired_coverage.py [datasets] [half-samples] > paired_coverage.txt

A population of three overlapping Gaussian classes in 2-D (sizes 30 : 50 : 70, as tests/test_intervals.py), and two
representations of the same points: A the points, B the points with one pure-noise feature appended (sd 1.5), so
that B scores lower and the two share every point's position. `datasets` independent datasets (default 200) are
compared with `compare_representations` (every leaderboard measure, `n_resamples` half-samples, the dataset's index
as the seed); for every measure the paired difference value(A) - value(B) and its 95 % interval come from the two
assessments' draws (`score_difference`, with both values' Monte-Carlo errors, as the comparison computes them for its
ranking score). The target is E[value(A) - value(B)] at this size, the mean over the datasets (its own error,
sd/sqrt(datasets), is printed). Prints per measure: the coverage of the paired interval with its binomial standard
error, the ratio of the mean estimated se to the observed sd of the difference (1 = honest), the mean width, and the
same coverage and ratio for the unpaired form sqrt(se_A^2 + se_B^2), which ignores the covariance of A and B.
"""
import math
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from clm_nb.profile import LEADERBOARD_MEASURES
from clm_nb.representations import compare_representations, score_difference

S = int(sys.argv[1]) if len(sys.argv) > 1 else 200
B = int(sys.argv[2]) if len(sys.argv) > 2 else 20
MEANS = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
Y = np.repeat([0, 1, 2], [30, 50, 70])


def processor() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "unknown")


t0 = time.perf_counter()
rows = []
for s in range(S):
    rng = np.random.default_rng([5, s])
    X = MEANS[Y] + rng.standard_normal((Y.size, 2))
    Xb = np.hstack([X, 1.5 * rng.standard_normal((Y.size, 1))])
    c = compare_representations({"A": X, "B": Xb}, Y, n_resamples=B, random_state=s, progress=False)
    a, b = c.assessments["A"], c.assessments["B"]
    for m in LEADERBOARD_MEASURES:
        va, vb = a.scores.at[m, "value"], b.scores.at[m, "value"]
        mc = math.hypot(*(0.0 if pd.isna(x.scores.at[m, "se"]) else x.scores.at[m, "se"] for x in (a, b)))
        p = score_difference(a.draws[m], b.draws[m], va, vb, mc_se=mc)
        u = score_difference(a.draws[m], b.draws[m], va, vb, mc_se=mc, paired=False)
        rows.append(dict(measure=m, seed=s, difference=p.difference, se=p.se, low=p.low, high=p.high,
                         se_unpaired=u.se, low_unpaired=u.low, high_unpaired=u.high))
t = pd.DataFrame(rows)
out = []
for m, g in t.groupby("measure", sort=False):
    g = g.dropna(subset=["se"])
    target, sd = g.difference.mean(), g.difference.std()
    out.append(dict(measure=m, target=target, target_sd=sd / np.sqrt(len(g)), datasets=len(g),
                    coverage=((g.low <= target) & (target <= g.high)).mean(), binomial_se=np.sqrt(0.95 * 0.05 / len(g)),
                    se_over_sd=g.se.mean() / sd, mean_width=(g.high - g.low).mean(),
                    coverage_unpaired=((g.low_unpaired <= target) & (target <= g.high_unpaired)).mean(),
                    se_over_sd_unpaired=g.se_unpaired.mean() / sd))
print(f"{S} datasets of n = {Y.size}, {B} half-samples each, 95 % intervals; {time.perf_counter() - t0:.0f} s; "
      f"processor {processor()}")
print(pd.DataFrame(out).round(4).to_string(index=False))
