"""Where the classifier proxies' time goes: seconds per classifier of one 10-trial search (run by hand).

    .venv/bin/python benchmarks/bench_classifiers.py fashion_mnist hiva secom \
        [--data-dir ../shared/datasets] [--collection hjn_labeled96] [--n-trials 10] [--max-points 2000]

For each dataset it takes what the dataset-ranking study's classifier task sees: the labelled points under its noise
policy ('ignore': noise dropped), then a stratified subsample of at most `--max-points` points. It then runs
`clm_nb.clusterers.classifier_proxies` once per classifier of `clm_nb.clusterers.CLASSIFIERS` (one seed for all,
`--seed`; a study derives each task's seed from its key), with one BLAS thread as the study's workers have. It prints seconds and best accuracy
per (dataset, classifier), and each classifier's share of the total. Run one process per core for a quick survey;
the timings are then those of a loaded machine, as in a study.
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from clm_nb.clusterers import CLASSIFIERS, classifier_proxies
from clm_nb.core import check_partitions
from clm_nb.bundle import load_dataset
from clm_nb.synthetic import subsample_dataset


def study_view(name: str, data_dir: Path, collection: str, max_points: int, seed: int):
    "(X, y) as the study's classifier task sees them: noise dropped, at most max_points stratified points."
    ds = load_dataset(name, data_dir, collection=collection)
    P = check_partitions(ds.y, ds.y, noise="ignore")
    X, y = ds.X[P.keep], P.codes[0]
    if len(y) > max_points:
        X, y = subsample_dataset(X, y, max_points, random_state=np.random.default_rng(seed))
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+", help="dataset names of the collection")
    ap.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    ap.add_argument("--collection", default="hjn_labeled96")
    ap.add_argument("--n-trials", type=int, default=10, help="TPE trials per classifier (the study's budget: 10)")
    ap.add_argument("--max-points", type=int, default=2000, help="the study's gt_max_points")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rows = []
    with threadpool_limits(limits=1):
        for name in a.datasets:
            X, y = study_view(name, a.data_dir, a.collection, a.max_points, a.seed)
            if np.bincount(y).min() < 5:                 # the study gives such a dataset no classifier task
                print(f"{name}: skipped, as the study does (a class of {np.bincount(y).min()} points < 5 folds)")
                continue
            for c in CLASSIFIERS:
                t = time.perf_counter()
                best = classifier_proxies(X, y, classifiers=(c,), n_trials=a.n_trials, random_state=a.seed)[c]
                rows.append({"dataset": f"{name} ({X.shape[0]} x {X.shape[1]})", "classifier": c,
                             "seconds": time.perf_counter() - t, "accuracy": best})
                print(f"{rows[-1]['dataset']:>45} {c:>20} {rows[-1]['seconds']:7.1f} s  {best:.4f}", flush=True)
    if not rows:
        raise SystemExit("no dataset with a classifier task (each was skipped): nothing to report")
    d = pd.DataFrame(rows)
    table = d.pivot(index="dataset", columns="classifier", values="seconds")[list(CLASSIFIERS)]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\nseconds per 10-trial search" if a.n_trials == 10 else f"\nseconds per {a.n_trials}-trial search")
        print(table.round(1).to_string())
        share = table.sum() / table.to_numpy().sum()
        print("\nshare of the total:", "  ".join(f"{c} {s:.0%}" for c, s in share.items()))


if __name__ == "__main__":
    main()
