"""Issue 51, second held-out set, phase 1: the ground truth (paper 000's nine techniques, 20 trials, on the points
assess scores, after following the tool's advice) and the issue's oracle (best AMI of a scikit-learn pool on
standardized features). No verdict or prediction is computed or read here. Resumable row by row."""
import sys, warnings
from pathlib import Path
import numpy as np, pandas as pd
warnings.filterwarnings("ignore")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parents[1] / "issue51_heldout" / "scripts"))
from advice import follow_advice
from heldout import oracle                     # the same pool as the first held-out set
DATA = Path(sys.argv[1]); OUT = Path(sys.argv[2])
MAN = pd.read_csv(HERE.parent / "manifest.csv")

def main():
    from clm_nb.readers import read_labeled_table
    from clm_nb.prepare import prepare
    from clm_nb.clusterers import PAPER000_TECHNIQUES, ground_truth_task
    read = lambda p, l, drop, miss: read_labeled_table(p, l, drop_cols=drop, missing=miss)
    prep = lambda X, y, miss: prepare(X, y, missing=miss, noise="ignore")
    done = pd.read_csv(OUT) if OUT.exists() else pd.DataFrame(columns=["file"])
    rows = done.to_dict("records")
    for _, m in MAN.iterrows():
        if m["file"] in set(done.file):
            continue
        row = {"file": m["file"]}
        try:
            p, opts = follow_advice(read, prep, str(DATA / m["file"]), m["label"])
            Xp, yp = np.asarray(p.X, float), np.asarray(p.y)
            gts = [ground_truth_task(Xp, yp, t, n_trials=20, noise="ignore", max_points=5000, random_state=0)
                   for t in PAPER000_TECHNIQUES]
            best = max(gts, key=lambda g: g["ami"])
            row |= {"options": " ".join(opts), "gt_n": len(yp), "gt_ami": best["ami"], "gt_best": best["technique"],
                    "gt_ami_half": max(g["ami_half"] for g in gts), "oracle_ami": oracle(Xp, yp)}
        except Exception as e:                                   # recorded, never the end of the run
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        pd.DataFrame(rows).to_csv(OUT, index=False)
        print(m["file"], "done", flush=True)

if __name__ == "__main__":
    main()
