"""Issue 51, second held-out set: the counts of phase 2 (python heldout2_report.py RESULTS_CSV)."""
import pandas as pd, numpy as np
r = pd.read_csv(__import__("sys").argv[1])
B = ["unreliable", "doubtful", "trustworthy"]
band = lambda v: np.searchsorted([0.15, 0.5], v, side="right")
def score(verdicts, truth):
    out = {"exact": 0, "one band off (lenient)": 0, "one band off (harsh)": 0, "gross": 0, "not judged": 0}
    for v, t in zip(verdicts, truth):
        if v not in B:
            out["not judged"] += 1; continue
        d = B.index(v) - band(t)
        out["exact" if d == 0 else "gross" if abs(d) == 2 else "one band off (lenient)" if d > 0 else "one band off (harsh)"] += 1
    return out
print(len(r), "held-out sets")
for ref in ("oracle_ami", "gt_ami"):
    for col in ("verdict", "rule_verdict"):
        print(f"{col:13s} vs {ref:10s}", score(r[col], r[ref]))
j = r[r.expected.notna()]
print("interval covers GT:", ((j.low <= j.gt_ami) & (j.gt_ami <= j.high)).sum(), "of", len(j),
      "; covers oracle:", ((j.low <= j.oracle_ami) & (j.oracle_ami <= j.high)).sum())
from scipy.stats import spearmanr
print("rho expected vs gt", spearmanr(j.expected, j.gt_ami).statistic.round(3), "vs oracle", spearmanr(j.expected, j.oracle_ami).statistic.round(3))
pd.set_option("display.width", 250)
print(r[["file","n","K","verdict","borderline","expected","low","high","rule_verdict","gt_ami","oracle_ami","gt_best"]].round(2).to_string())
