"""Cost and accuracy of the paper-scale approximate ground truth, from a dataset-ranking task store (run by hand).

    # fill one store twice: with the subsample lever, then on the full data (small datasets are shared tasks)
    make study OUT=/tmp/gt PARAMS="-f params.yaml -p gt_max_points 5000 -p store /tmp/gt/tasks"
    make study OUT=/tmp/gt_full PARAMS="-f params.yaml -p store /tmp/gt/tasks"
    .venv/bin/python benchmarks/bench_ground_truth.py /tmp/gt/tasks [--manifest ../shared/datasets/manifest.csv]

It reads every ground-truth task file of the store (`clm_nb.clusterers.ground_truth_task` results written by
`clm_nb.runner.run`) and prints
- task seconds per technique: all tasks, and the large datasets searched both ways (full data vs subsample);
- the projected task-seconds and 2-worker wall time of a run with and without the lever;
- for the large datasets, the best score per (dataset, technique) and the ground truth (max over techniques) on the
  subsample against the full data: mean absolute difference and the largest ones;
- Spearman's rho between the ground-truth rankings of all datasets with and without the lever.
"""
import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

MEASURES = ["ami", "ari", "v_measure", "nmi_geometric"]


def load_store(store: Path) -> pd.DataFrame:
    frames = [pd.read_parquet(f) for f in sorted(store.glob("*.parquet"))]
    d = pd.concat(frames, ignore_index=True)
    d = d[d.technique.ne("classifiers")].copy()
    key = d["_key"].map(json.loads)
    d["max_points"] = key.map(lambda k: k.get("max_points"))
    d["variant"] = np.where(d.max_points.isna(), "full", "subsample")
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    d = load_store(args.store)
    ok = d[d.error.fillna("") == ""]
    pd.set_option("display.width", 160)
    both = ok.groupby(["dataset", "technique"]).variant.nunique()
    both = both[both == 2].reset_index()[["dataset", "technique"]]
    large = sorted(both.dataset.unique())
    print(f"{d.dataset.nunique()} datasets, {len(d)} ground-truth tasks ({(d.error.fillna('') != '').sum()} failed); "
          f"{len(large)} large datasets searched both ways")

    print("\nTask seconds per technique (all stored tasks):")
    print(d.groupby(["technique", "variant"]).seconds.agg(["count", "sum", "max"]).round(1).unstack("variant").to_string())

    if not large:
        sub = d[d.variant == "subsample"]
        print(f"\n{d.seconds.sum():.0f} task-seconds in all, about {d.seconds.sum() / args.workers / 60:.0f} min on {args.workers} workers "
              f"({sub.dataset.nunique()} datasets searched on a subsample, {sub.seconds.sum():.0f} task-seconds); slowest task "
              f"{d.seconds.max():.0f} s ({d.loc[d.seconds.idxmax(), 'technique']} on {d.loc[d.seconds.idxmax(), 'dataset']}). "
              "Fill the store without the lever too to compare.")
        return
    small = d[~d.dataset.isin(large)]
    for variant in ("full", "subsample"):
        big = d[d.dataset.isin(large) & (d.variant == variant)]
        total = small.seconds.sum() + big.seconds.sum()
        print(f"\nrun {'without' if variant == 'full' else 'with'} the lever: {total:.0f} task-seconds "
              f"({small.seconds.sum():.0f} on the {small.dataset.nunique()} smaller datasets + {big.seconds.sum():.0f} on the large ones), "
              f"about {total / args.workers / 60:.0f} min on {args.workers} workers; slowest task {big.seconds.max():.0f} s")

    if not large:
        return
    pair = ok[ok.dataset.isin(large)].pivot_table(index=["dataset", "technique"], columns="variant", values=MEASURES)
    print("\nBest score per (dataset, technique), subsample - full, on the large datasets:")
    diff = pd.DataFrame({m: pair[(m, "subsample")] - pair[(m, "full")] for m in MEASURES})
    print(diff.abs().agg(["mean", "median", "max"]).round(4).to_string())
    print(diff.assign(abs_ari=diff.ari.abs()).sort_values("abs_ari", ascending=False).head(8).drop(columns="abs_ari").round(3).to_string())

    gts = {}
    for variant in ("full", "subsample"):
        rows = pd.concat([ok[~ok.dataset.isin(large)], ok[ok.dataset.isin(large) & (ok.variant == variant)]])
        gts[variant] = rows.groupby("dataset")[MEASURES].max()
    print("\nGround truth (max over techniques) on the large datasets, full vs subsample:")
    show = pd.concat({v: g.loc[large, ["ari", "ami"]] for v, g in gts.items()}, axis=1).round(3)
    print(show.to_string())
    print("\nSpearman rho between the ground-truth rankings of all datasets with and without the lever:")
    print({m: round(spearmanr(gts["full"][m], gts["subsample"].loc[gts["full"].index, m]).statistic, 4) for m in MEASURES})


if __name__ == "__main__":
    main()
