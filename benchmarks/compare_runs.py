"""Compare two runs of the dataset-ranking study (run by hand; figures go in the issue note).

    .venv/bin/python benchmarks/compare_runs.py BEFORE_OUT_DIR AFTER_OUT_DIR

`benchmarks/reference/hjn96_paper_scale` holds the tables of the paper-scale run of 2026-11-24 (see
docs/benchmarks.md), a BEFORE_OUT_DIR that survives a new machine.

Each argument is a study's `out_dir` (it holds summary.json, ground_truth.csv, ground_truth_tasks.csv, table1.csv and,
when the classifiers ran, classifier_proxies.csv). It prints
- the wall time of each part (measures, ground truth, classifiers, all) from summary.json;
- ground-truth task-seconds per technique, before and after (sum, median, max, and the speed-up of the sum);
- Spearman's rho between the two runs' ground-truth rankings of the datasets they share, per external measure
  (the acceptance of issue 23 asks rho >= 0.99), and the datasets whose ground truth moved most;
- each run's rho between CH_btwn (and the classifier ensemble, when present) and its own ground truth.
"""
import argparse
import json
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

MEASURES = ["ami", "ari", "v_measure", "nmi_geometric"]


def load(out: Path) -> dict:
    "The tables of one run that exist."
    read = lambda name, **kw: pd.read_csv(out / name, **kw) if (out / name).exists() else None
    return {"summary": json.loads((out / "summary.json").read_text()),
            "gt": read("ground_truth.csv", index_col=0), "tasks": read("ground_truth_tasks.csv"),
            "table1": read("table1.csv"), "classifiers": read("classifier_proxies.csv", index_col=0)}


def walls(runs: dict) -> pd.DataFrame:
    keys = {"measures": "measures_wall_seconds", "ground truth": "ground_truth_wall_seconds",
            "classifiers": "classifier_wall_seconds", "all": "elapsed_seconds"}
    return pd.DataFrame({name: {k: r["summary"].get(v) for k, v in keys.items()} for name, r in runs.items()})


def technique_seconds(runs: dict) -> pd.DataFrame:
    parts = {}
    for name, r in runs.items():
        t = r["tasks"].drop_duplicates(["dataset_id", "technique"]) if "dataset_id" in r["tasks"] else r["tasks"]
        parts[name] = t.groupby("technique").seconds.agg(["sum", "median", "max"])
    out = pd.concat(parts, axis=1)
    out.loc["total"] = out.sum(numeric_only=True)
    out.loc["total", [(n, c) for n in parts for c in ("median", "max")]] = float("nan")
    names = list(parts)
    out[("speed-up", "sum")] = out[(names[0], "sum")] / out[(names[1], "sum")]
    return out.round(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args()
    runs = {"before": load(args.before), "after": load(args.after)}
    pd.set_option("display.width", 160)
    print("Wall seconds per part:")
    print(walls(runs).to_string())
    print("\nGround-truth task-seconds per technique:")
    print(technique_seconds(runs).to_string())
    a, b = runs["before"]["gt"], runs["after"]["gt"]
    shared = a.index.intersection(b.index)
    print(f"\nSpearman rho between the ground-truth rankings of the {len(shared)} shared datasets:")
    print({m: round(spearmanr(a.loc[shared, m], b.loc[shared, m]).statistic, 4) for m in MEASURES})
    moved = (b.loc[shared, MEASURES] - a.loc[shared, MEASURES])
    print("largest changes of the ground truth (after - before):")
    print(moved.assign(abs_ari=moved.ari.abs()).sort_values("abs_ari", ascending=False).head(8)
          .drop(columns="abs_ari").round(3).to_string())
    for name, r in runs.items():
        t = r["table1"]
        if t is None or t.empty:
            continue
        rows = t[t.competitor.isin(["ch_btwn", "ensemble", "svm"])].pivot(index="competitor", columns="gt_measure",
                                                                          values="rho")
        print(f"\n{name}: rho with its own ground truth")
        print(rows.round(3).to_string())


if __name__ == "__main__":
    main()
