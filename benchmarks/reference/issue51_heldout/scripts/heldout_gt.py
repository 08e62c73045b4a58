"""Issue 51, item 5, phase 1: the ground truth (nine techniques, 20 trials, on the points assess scores) and the issue's
oracle (best AMI of a scikit-learn pool on standardized features) of the 27 held-out sets. No verdict is computed or
read here. Writes /work/store/i51/heldout_gt.csv (resumable row by row)."""
import sys, warnings
from pathlib import Path
import numpy as np, pandas as pd
warnings.filterwarnings("ignore")
sys.path.insert(0, "/work/store/i51/dev")
from heldout import oracle, HERE, MAN
OUT = Path("/work/store/i51/heldout_gt.csv")

def main():
    from clm_nb.readers import read_labeled_table
    from clm_nb.prepare import prepare
    from clm_nb.clusterers import PAPER000_TECHNIQUES, ground_truth_task
    done = pd.read_csv(OUT) if OUT.exists() else pd.DataFrame(columns=["file"])
    rows = done.to_dict("records")
    for _, m in MAN.iterrows():
        if m.file in set(done.file):
            continue
        row = {"file": m.file}
        try:
            X, y = read_labeled_table(str(HERE / m.file), m.label)
            try:
                prep, row["missing"] = prepare(X, y, noise="ignore"), "refuse"
            except ValueError as e:
                if "missing" not in str(e).lower():
                    raise
                prep, row["missing"] = prepare(X, y, missing="drop", noise="ignore"), "drop"
            Xp, yp = np.asarray(prep.X, float), np.asarray(prep.y)
            gts = [ground_truth_task(Xp, yp, t, n_trials=20, noise="ignore", max_points=5000, random_state=0)
                   for t in PAPER000_TECHNIQUES]
            best = max(gts, key=lambda g: g["ami"])
            row |= {"gt_n": len(yp), "gt_ami": best["ami"], "gt_best": best["technique"],
                    "gt_ami_half": max(g["ami_half"] for g in gts), "oracle_ami": oracle(Xp, yp)}
        except Exception as e:                                   # recorded, never the end of the run
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        pd.DataFrame(rows).to_csv(OUT, index=False)
        print(m.file, "done", flush=True)

if __name__ == "__main__":
    main()
