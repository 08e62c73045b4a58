"""Scale-out of the study's tasks: a simulation of the runner's scheduling on recorded task times, a measured 1 -> 2
worker speed-up on a real Dask cluster, and the fit of the ground-truth cost model (run by hand).

    .venv/bin/python benchmarks/bench_scaleout.py simulate [RECORDS] [--workers 1 2 8 32 128]
    .venv/bin/python benchmarks/bench_scaleout.py measure [--data-dir ../shared/datasets] [--n-trials 20]
    .venv/bin/python benchmarks/bench_scaleout.py study STORE [--workers 1 2 8 32 128]
    .venv/bin/python benchmarks/bench_scaleout.py fit [RECORDS]

RECORDS is a task store of a dataset-ranking run (a folder of parquet files: its ground-truth tasks are read) or its
`ground_truth_tasks.csv`; default: results/issue20_store, filtered to the paper-scale run (`--collection
hjn_labeled96 --n-trials 20 --max-points 2000`: tasks keyed with that max_points, or none for smaller datasets).

simulate  greedy list scheduling of the recorded task times (each worker that becomes free takes the next task, as
          `clm_nb.runner.run` hands them out) in three orders: the study's task order (largest dataset first, as
          `ground_truth_tasks` lists them; the csv's row order, or rebuilt from the manifest for a store), longest
          first by the runner's cost estimate (`Task.cost` from `clm_nb.tasks.ground_truth_cost`: what the runner
          does), and longest first by the recorded time (the ideal). Prints, per number of workers, the makespan of
          each order, the lower bound max(longest task, total / workers), the ratios to it, and the speed-up over
          one worker and minutes of the runner's order; above it, the longest task and how well the estimate ranks
          the recorded times (Spearman).
measure   starts `dask scheduler` and N `dask worker` processes (one thread each) on loopback, for N = 1 and then 2,
          runs the same ground-truth tasks (default: 4 datasets x 4 techniques of hjn_labeled96) through
          `clm_nb.runner.run(..., executor="dask", dask_address=...)` from an empty store each time, and prints the
          wall time per N, the speed-up, whether both runs gave identical values, and the load average before and
          after. The workers are warmed up (imports) before the clock starts, but numba compiles the
          kernels on their first call: on a fresh checkout run it twice (the first 1-worker run pays the compilation;
          2026-11-23: 3.35x cold, 1.57x warm).
study     the whole study from a task store (RECORDS must be a folder): its three phases (measures, ground truth,
          classifier proxies) run one after the other, each scheduled longest first by recorded time; prints per
          phase and number of workers the makespan, its lower bound max(longest task, total / workers), and the
          study's projected minutes (the sum of the phases; what the runner reaches when its estimate orders well).
fit       fits log(seconds / n_trials) = log a_t + p_t log n + q_t log d per technique (least squares) on the
          recorded tasks and prints the `GT_COST_MODEL` literal of `clm_nb.tasks` and each fit's residual spread.
"""
import argparse
import heapq
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RECORDS = ROOT / "results" / "issue20_store"
MEASURE_DATASETS = ["yeast", "website_phishing", "mnist64", "statlog_german_credit"]
MEASURE_TECHNIQUES = ["kmeans", "xmeans", "birch", "hdbscan"]


# ---------------------------------------------------------------- recorded task times

def _dims(data_dir: Path) -> pd.DataFrame:
    "n (after dropping noise labels), d per (collection, name) from the manifest; d read from the file when missing."
    m = pd.read_csv(data_dir / "manifest.csv")
    m = m[m.status == "included"].copy()
    for i in m.index[m.d.isna()]:
        with np.load(data_dir / m.at[i, "file"]) as z:
            m.at[i, "d"] = z["X"].shape[1]
    m["n_kept"] = m.n - m.n_noise.fillna(0)
    return m.set_index(["collection", "name"])[["n_kept", "d"]]


def load_records(path: Path, collection: str, n_trials: int, max_points, data_dir: Path) -> pd.DataFrame:
    "One row per recorded ground-truth task (technique, points, d, n_trials, seconds, ...), in the study's order."
    from clm_nb.clusterers import PAPER000_TECHNIQUES
    if path.is_dir():
        frames = [pd.read_parquet(f) for f in sorted(path.glob("*.parquet"))]
        d = pd.concat([f for f in frames if {"technique", "points"} <= set(f.columns)], ignore_index=True)
        d["max_points"] = d["_key"].map(lambda k: json.loads(k).get("max_points"))
    else:
        d = pd.read_csv(path)
    d = d[d.technique.ne("classifiers") & (d.error.isna() | d.error.astype(str).eq(""))]
    if collection != "all":
        d = d[d.collection == collection]
    if n_trials:
        d = d[d.n_trials == n_trials]
    if max_points != "any":
        d = d[d.max_points.isna() | (d.max_points == float(max_points))]
    if "_key" in d:
        d = d.drop_duplicates("_key")
    dims = _dims(data_dir)
    idx = list(zip(d.collection, d.dataset))
    d = d.assign(d=dims.d.reindex(idx).to_numpy(), n_kept=dims.n_kept.reindex(idx).to_numpy())
    if path.is_dir():                            # the study's order: largest dataset first, techniques in list order
        tech = {t: i for i, t in enumerate(PAPER000_TECHNIQUES)}
        d = d.assign(_t=d.technique.map(tech)).sort_values(["n_kept", "collection", "dataset", "_t"],
                                                           ascending=[False, True, True, True], kind="stable")
    return d.reset_index(drop=True)[["collection", "dataset", "technique", "points", "d", "n_trials", "seconds"]]


# ---------------------------------------------------------------- simulation

def makespan(seconds, workers: int) -> float:
    "Greedy list scheduling: each worker, as it becomes free, takes the next task of `seconds` (in that order)."
    free = [0.0] * workers
    for s in seconds:
        heapq.heapreplace(free, free[0] + s)
    return max(free)


def simulate(args):
    from clm_nb.runner import longest_first
    from clm_nb.tasks import ground_truth_cost
    rec = load_records(args.records, args.collection, args.n_trials, args.max_points, args.data_dir)
    est = [ground_truth_cost(t, p, d, n) for t, p, d, n in zip(rec.technique, rec.points, rec.d, rec.n_trials)]
    s = rec.seconds.to_numpy()
    orders = {"given order": np.arange(len(s)), "longest first (estimate)": np.array(longest_first(est)),
              "longest first (recorded)": np.argsort(-s, kind="stable")}
    longest = rec.loc[s.argmax()]
    print(f"{len(s)} tasks from {args.records}: {s.sum():.0f} task-seconds, median {np.median(s):.1f} s, longest "
          f"{s.max():.1f} s ({longest.dataset} / {longest.technique}, {longest.points} points x {longest.d:.0f})")
    rho = pd.Series(est).corr(pd.Series(s), method="spearman")
    print(f"cost estimate vs recorded time: Spearman rho {rho:.3f}; total estimate {np.nansum(est):.0f} s")
    rows = []
    for w in args.workers:
        bound = max(s.max(), s.sum() / w)
        row = {"workers": w, "lower bound (s)": bound}
        for name, order in orders.items():
            row[f"{name} (s)"] = makespan(s[order], w)
        row["est. order / bound"] = row["longest first (estimate) (s)"] / bound
        row["given / bound"] = row["given order (s)"] / bound
        row["speed-up (est. order)"] = s.sum() / row["longest first (estimate) (s)"]
        row["minutes (est. order)"] = row["longest first (estimate) (s)"] / 60
        rows.append(row)
    table = pd.DataFrame(rows).set_index("workers")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(2).to_string())


def study(args):
    from clm_nb.clusterers import PAPER000_TECHNIQUES
    if not args.records.is_dir():
        raise SystemExit(f"study: {args.records} is not a task store (a folder of parquet files)")
    rows = []
    for f in sorted(args.records.glob("*.parquet")):
        d = pd.read_parquet(f)
        if not len(d):
            continue
        r = d.iloc[0]
        phase = ("measures" if r.get("part") == "measures" else "classifiers" if r.get("technique") == "classifiers"
                 else "ground truth" if r.get("technique") in PAPER000_TECHNIQUES else None)
        if phase:
            rows.append((phase, r.dataset, float(r.seconds)))
    rec = pd.DataFrame(rows, columns=["phase", "dataset", "seconds"])
    table = []
    for phase, g in rec.groupby("phase", sort=False):
        s = np.sort(g.seconds.to_numpy())[::-1]
        longest = g.loc[g.seconds.idxmax()]
        print(f"{phase}: {len(s)} tasks, {s.sum():.0f} task-seconds, longest {s[0]:.1f} s ({longest.dataset})")
        for w in args.workers:
            table.append({"phase": phase, "workers": w, "makespan (s)": makespan(s, w),
                          "bound (s)": max(s[0], s.sum() / w)})
    t = pd.DataFrame(table)
    whole = t.groupby("workers")[["makespan (s)", "bound (s)"]].sum()
    whole["minutes"] = whole["makespan (s)"] / 60
    whole["speed-up"] = whole["makespan (s)"].iloc[0] / whole["makespan (s)"] if args.workers[0] == 1 else np.nan
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(t.pivot(index="workers", columns="phase", values="makespan (s)").round(1).to_string())
        print(whole.round(2).to_string())


# ---------------------------------------------------------------- fit

def fit(args):
    rec = load_records(args.records, args.collection, args.n_trials, args.max_points, args.data_dir)
    print(f"# fitted on {len(rec)} tasks of {args.records} (collection {args.collection}, n_trials {args.n_trials}, "
          f"max_points {args.max_points})")
    print("GT_COST_MODEL = {   # technique: (a, p, q) of seconds = a * n_trials * n**p * d**q")
    spread = {}
    for tech, g in rec.groupby("technique"):
        A = np.c_[np.ones(len(g)), np.log(g.points), np.log(g.d)]
        y = np.log(g.seconds / g.n_trials)
        coef = np.linalg.lstsq(A, y, rcond=None)[0]
        spread[tech] = (y - A @ coef).std()
        print(f'    "{tech}": ({np.exp(coef[0]):.3g}, {coef[1]:.2f}, {coef[2]:.2f}),')
    print("}")
    print("# residual sd of log(seconds) per technique: "
          + ", ".join(f"{t} {v:.2f}" for t, v in spread.items()))


# ---------------------------------------------------------------- measured speed-up on a real cluster

def _start(args, log):
    with open(log, "w") as out:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _stop(procs):
    "SIGTERM to every process group, SIGKILL to what is left after 10 s."
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in procs:
            try: os.killpg(p.pid, sig)
            except ProcessLookupError: pass
        deadline = time.time() + 10
        while time.time() < deadline and any(p.poll() is None for p in procs):
            time.sleep(0.1)


def _warm():
    "Import what the tasks import, so that the clock measures the tasks, not the workers' start."
    import optuna, sklearn.cluster, clm_nb.clusterers   # noqa: F401,E401
    return os.getpid()


def timed_run(tasks, n_workers: int, tmp: Path):
    "(wall seconds, results) of `tasks` on a fresh cluster of `n_workers` one-thread workers, from an empty store."
    from distributed import Client
    from clm_nb.runner import run
    sched = tmp / f"scheduler{n_workers}.json"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                     str(sched)], tmp / "scheduler.log")]
    try:
        procs += [_start(["worker", "--scheduler-file", str(sched), "--nthreads", "1", "--nworkers", "1", "--host",
                          "127.0.0.1", "--no-dashboard", "--death-timeout", "60", "--local-directory",
                          str(tmp / f"w{n_workers}_{i}")], tmp / f"worker{i}.log") for i in range(n_workers)]
        while not sched.exists():
            time.sleep(0.1)
        address = json.loads(sched.read_text())["address"]
        with Client(address) as client:
            client.wait_for_workers(n_workers, timeout=120)
            client.run(_warm)
        t0 = time.perf_counter()
        res = run(tasks, store=tmp / f"store{n_workers}", executor="dask", dask_address=address, progress=False)
        return time.perf_counter() - t0, res
    finally:
        _stop(procs)


def measure(args):
    from clm_nb.bundle import load_dataset
    from clm_nb.tasks import ground_truth_tasks
    data = [load_dataset(n, args.data_dir, collection="hjn_labeled96") for n in args.datasets]
    tasks = ground_truth_tasks(data, techniques=args.techniques, n_trials=args.n_trials, max_points=2000)
    print(f"{len(tasks)} ground-truth tasks ({len(data)} datasets x {len(args.techniques)} techniques, "
          f"{args.n_trials} TPE trials); load average before: {os.getloadavg()}", flush=True)
    walls, results = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, 2):
            walls[n], results[n] = timed_run(tasks, n, Path(tmp))
            failed = int((results[n].error != "").sum())
            print(f"{n} worker(s): {walls[n]:.1f} s wall, {results[n].seconds.sum():.1f} task-seconds, {failed} failed;"
                  f" load average {os.getloadavg()}", flush=True)
    same = results[1].drop(columns="seconds").equals(results[2].drop(columns="seconds"))
    print(f"speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}; identical values: {same}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["simulate", "measure", "study", "fit"])
    ap.add_argument("records", nargs="?", type=Path, default=DEFAULT_RECORDS)
    ap.add_argument("--collection", default="hjn_labeled96", help="'all' keeps every collection")
    ap.add_argument("--n-trials", type=int, default=20, help="0 keeps every n_trials")
    ap.add_argument("--max-points", default="2000", help="'any' keeps every max_points")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 8, 32, 128])
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--datasets", nargs="+", default=MEASURE_DATASETS)
    ap.add_argument("--techniques", nargs="+", default=MEASURE_TECHNIQUES)
    args = ap.parse_args()
    {"simulate": simulate, "measure": measure, "study": study, "fit": fit}[args.mode](args)


if __name__ == "__main__":
    main()
