"""Issue 52, item 5: the default leaderboard of a bundle, its time and peak memory, against its profiles alone.

    .venv/bin/python benchmarks/bench_leaderboard.py DATA_DIR WORK [--n-jobs 2] [--max-datasets N]

Runs `clm-nb leaderboard DATA_DIR` twice from empty task stores under WORK (created; must not exist):

1. **profiles alone**: `--no-variants --no-labellings --resamples 0`: one profile per labeled dataset, then the site;
2. **the default leaderboard**: every default (the main profiles with their 20 half-samples, the other three
   scalings, every other reference labelling, the site).

For each it prints the wall time, the CPU seconds of the whole process tree, the peak of the tree's summed
resident memory (sampled every 0.2 s with psutil: the CLI, its worker processes and their children), and from
the task store the task-seconds of each stage (main profiles, each scaling, each labelling), read from the
runner's `seconds` column. The ratio the issue targets is (2)'s wall time over (1)'s profile stage.
The processor is printed; compare ratios, not seconds, across machines.
"""
import argparse, json, os, subprocess, sys, threading, time
from pathlib import Path

import pandas as pd
import psutil


def processor() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "unknown")


def run_tree(cmd: list[str], log: Path) -> dict:
    "Run cmd; sample the summed RSS and the CPU seconds of its process tree until it ends."
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    root = psutil.Process(proc.pid)
    peak, cpu_of = 0, {}
    while proc.poll() is None:
        try:
            procs = [root] + root.children(recursive=True)
        except psutil.NoSuchProcess:
            break
        rss = 0
        for p in procs:
            try:
                rss += p.memory_info().rss
                t = p.cpu_times()
                cpu_of[p.pid] = t.user + t.system + t.children_user + t.children_system
            except psutil.NoSuchProcess:
                pass
        peak = max(peak, rss)
        time.sleep(0.2)
    return {"exit": proc.returncode, "wall_s": time.perf_counter() - t0, "cpu_s": sum(cpu_of.values()),
            "peak_rss_gb": peak / 2**30}


def stage_seconds(store: Path) -> pd.DataFrame:
    "Tasks and task-seconds per stage, from the store: 'profiles', 'scaling <s>', 'labels<k>' (each file's `_key`)."
    rows = []
    for f in store.glob("*.parquet"):
        got = pd.read_parquet(f, columns=["_key", "seconds"])
        key = json.loads(got["_key"].iloc[0])
        stage = key.get("labels") or ("profiles" if key["scaling"] == MAIN_SCALING else f"scaling {key['scaling']}")
        rows.append((stage, float(got["seconds"].iloc[0])))
    return pd.DataFrame(rows, columns=["stage", "seconds"]).groupby("stage").seconds.agg(["count", "sum"])


def main():
    global MAIN_SCALING
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("work")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--max-datasets", type=int, default=None)
    ap.add_argument("--only", choices=["profiles", "default"], default=None)
    a = ap.parse_args()
    from clm_nb.profile import DEFAULT_SCALING
    MAIN_SCALING = DEFAULT_SCALING
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=False)
    cli = str(Path(sys.executable).with_name("clm-nb"))
    base = [cli, "leaderboard", a.data_dir, "--n-jobs", str(a.n_jobs)] + (
        ["--max-datasets", str(a.max_datasets)] if a.max_datasets else [])
    print(f"processor: {processor()}; {os.cpu_count()} cores; data {a.data_dir}", flush=True)
    runs = {"profiles": ["--no-variants", "--no-labellings", "--resamples", "0"], "default": []}
    got = {}
    for name, extra in runs.items():
        if a.only and name != a.only:
            continue
        out, store = work / name, work / f"{name}_tasks"
        r = run_tree(base + ["-o", str(out), "--store", str(store)] + extra, work / f"{name}.log")
        st = stage_seconds(store)
        got[name] = (r, st)
        print(f"\n{name}: exit {r['exit']}, wall {r['wall_s']:.0f} s, CPU {r['cpu_s']:.0f} s, "
              f"peak memory {r['peak_rss_gb']:.2f} GB (summed over the process tree)", flush=True)
        print(st.rename(columns={"count": "tasks", "sum": "task-seconds"}).round(1).to_string(), flush=True)
    if len(got) == 2:
        p, d = got["profiles"], got["default"]
        print(f"\ndefault leaderboard / profiles alone: wall {d[0]['wall_s'] / p[0]['wall_s']:.2f}x, "
              f"CPU {d[0]['cpu_s'] / p[0]['cpu_s']:.2f}x; task-seconds of every stage / the profiles' "
              f"{d[1]['sum'].sum() / p[1]['sum'].sum():.2f}x")


if __name__ == "__main__":
    main()
