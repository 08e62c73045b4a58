"""Issue 51, item 5: the 27 held-out real datasets, read as a user reads them (the CLI, --json), in both modes, beside
the ground truth (paper 000's nine techniques, 20 trials, on the points assess scored) and the issue's oracle (best
AMI of a scikit-learn pool on standardized features). Writes /work/store/i51/heldout_results.csv. Run ONCE, at the end."""
import json, subprocess, sys, warnings
from pathlib import Path
import numpy as np, pandas as pd
warnings.filterwarnings("ignore")
HERE = Path("/work/store/i51/heldout")
MAN = pd.read_csv("/work/main/benchmarks/reference/issue51_heldout/manifest.csv")
CLI = "/work/main/.venv/bin/clm-nb"

def cli_assess(f, label, mode, extra=()):
    r = subprocess.run([CLI, "assess", str(HERE / f), "--label-col", label, "--json", "--verdict-by", mode, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    return json.loads(r.stdout), ""

def oracle(X, y, seed=0):
    from sklearn.preprocessing import StandardScaler
    from sklearn.cluster import KMeans, AgglomerativeClustering, Birch, HDBSCAN, SpectralClustering
    from sklearn.mixture import GaussianMixture
    from sklearn.metrics import adjusted_mutual_info_score as ami
    Z = StandardScaler().fit_transform(X)
    K = len(np.unique(y))
    pool = [KMeans(K, n_init=10, random_state=seed), GaussianMixture(K, random_state=seed), Birch(n_clusters=K)]
    pool += [AgglomerativeClustering(K, linkage=l) for l in ("ward", "average", "complete", "single")]
    pool += [HDBSCAN(min_cluster_size=m) for m in (5, 10, 20)]
    if len(y) <= 3000:
        pool.append(SpectralClustering(K, random_state=seed, affinity="nearest_neighbors"))
    best = 0.0
    for est in pool:
        try:
            best = max(best, ami(y, est.fit_predict(Z)))
        except Exception:
            pass
    return best

def main():
    from clm_nb.readers import read_labeled_table
    from clm_nb.prepare import prepare
    from clm_nb.clusterers import PAPER000_TECHNIQUES, ground_truth_task
    rows = []
    for _, m in MAN.iterrows():
        row = {"file": m.file, "label": m.label}
        extra = ()
        a, err = cli_assess(m.file, m.label, "prediction")
        if a is None and "missing" in err.lower():          # a user follows the message: drop those rows
            extra = ("--missing", "drop"); a, err = cli_assess(m.file, m.label, "prediction", extra)
        row["options"] = " ".join(extra); row["error"] = err
        if a is None:
            rows.append(row); print(m.file, "ERROR", err, flush=True); continue
        r, _ = cli_assess(m.file, m.label, "rule", extra)
        p = a["prediction"] or {}
        row |= {"n": a["n"], "d": a["d"], "K": a["n_classes"], "verdict": a["verdict"], "rule_verdict": a["rule_verdict"],
                "rule_verdict_cli": r["verdict"] if r else "", "expected": p.get("expected"), "low": p.get("low"),
                "high": p.get("high"), "borderline": "/".join(a["borderline"] or []), "left_out": ";".join(a["left_out"]),
                "warnings": len(a["warnings"])}
        X, y = read_labeled_table(str(HERE / m.file), m.label)
        prep = prepare(X, y, missing="drop" if extra else "refuse", noise="ignore")
        Xp, yp = np.asarray(prep.X, float), np.asarray(prep.y)
        gts = [ground_truth_task(Xp, yp, t, n_trials=20, noise="ignore", max_points=5000, random_state=0)
               for t in PAPER000_TECHNIQUES]
        row["gt_ami"] = max(g["ami"] for g in gts)
        row["gt_best"] = max(gts, key=lambda g: g["ami"])["technique"]
        row["oracle_ami"] = oracle(Xp, yp)
        rows.append(row); print(m.file, {k: row[k] for k in ("verdict", "rule_verdict", "expected", "gt_ami", "oracle_ami")}, flush=True)
        pd.DataFrame(rows).to_csv("/work/store/i51/heldout_results.csv", index=False)
    pd.DataFrame(rows).to_csv("/work/store/i51/heldout_results.csv", index=False)

if __name__ == "__main__":
    main()
