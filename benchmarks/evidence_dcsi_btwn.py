"""Issue 41 evidence: dcsi_btwn against dbcv_btwn (and ch_btwn) on the datasets of issue 37's paper-scale ground truth
(hjn_labeled96, standardized features, noise ignored): each measure on the same features the ground truth was computed
on; one row per dataset appended to OUT_DIR/scores.csv (resumable).

    python benchmarks/evidence_dcsi_btwn.py OUT_DIR GT_CSV DATA_DIR

GT_CSV: `clm_nb.tasks.best_ground_truth` of the ground-truth tasks on standardized features (collection, dataset,
ami, ari, ...)."""
import sys, time
from pathlib import Path
import numpy as np, pandas as pd
from clm_nb.core import zscore
from clm_nb.bundle import load_dataset
from clm_nb.between import dbcv_btwn, dcsi_btwn, ch_btwn

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
gt = pd.read_csv(sys.argv[2])
done = set(pd.read_csv(out / "scores.csv").dataset) if (out / "scores.csv").exists() else set()
for r in gt.itertuples():
    if r.dataset in done:
        continue
    ds = load_dataset(r.dataset, sys.argv[3], collection=r.collection)
    X = zscore(ds.X)
    row = {"collection": r.collection, "dataset": r.dataset, "n": ds.n, "d": ds.d, "K": ds.n_classes}
    for name, f in (("dbcv_btwn", dbcv_btwn), ("dcsi_btwn", dcsi_btwn), ("ch_btwn", ch_btwn)):
        t0 = time.perf_counter()
        try:
            row[name] = float(f(X, ds.y, noise="ignore", random_state=0))
        except Exception as e:
            row[name] = np.nan; row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:200]
        row[f"{name}_s"] = round(time.perf_counter() - t0, 2)
    pd.DataFrame([row]).to_csv(out / "scores.csv", mode="a", header=not (out / "scores.csv").exists(), index=False)
    print(r.dataset, {k: row[k] for k in ("dbcv_btwn", "dcsi_btwn", "ch_btwn", "dbcv_btwn_s", "dcsi_btwn_s")}, flush=True)
