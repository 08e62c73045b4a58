"""Time and peak memory of DBCV (run by hand; the figures go in nbs/06_internal.ipynb, "Speed and memory").

    .venv/bin/python benchmarks/bench_dbcv.py [--n 50000] [--cases blobs huge value]

Each case runs in a fresh process, so that its peak resident memory (ru_maxrss) is its own; the process first
compiles the kernels on a small input (serial and parallel variants), then times one call. Reported: seconds, the
peak of Python allocations during the call (tracemalloc: numpy arrays included), and the process's peak resident
set (ru_maxrss, which includes the interpreter, numpy, numba and the imports of clm_nb) next to its value before the
call. The target of issue 20: at most 500 MB at n = 50,000 (an n x n float64 matrix would be 20 GB).

Cases: `blobs` (10 Gaussian blobs in 2-D, n points), `huge` (one cluster of n - 5,000 points and five of 1,000),
`value` (`dbcv_value` on m = 1,000 points in two groups, with a precomputed distance matrix, d = 2 and d = 1,617;
best of 20 calls)."""
import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np


def _data(case: str, n: int):
    rng = np.random.default_rng(0)
    if case == "blobs":
        from sklearn.datasets import make_blobs
        return make_blobs(n, centers=10, n_features=2, random_state=0)
    big = n - 5_000
    X = np.r_[rng.normal(size=(big, 2)) * 3, rng.normal(size=(5_000, 2)) + np.repeat(rng.uniform(-30, 30, (5, 2)), 1_000, 0)]
    return X, np.r_[np.zeros(big, int), np.repeat(np.arange(1, 6), 1_000)]


def run_case(case: str, n: int) -> dict:
    import clm_nb
    rng = np.random.default_rng(1)
    warm = rng.normal(size=(3_000, 2))
    clm_nb.dbcv(warm[:300], np.repeat([0, 1], 150))                  # serial kernels
    clm_nb.dbcv(warm, np.r_[np.zeros(2_900, int), np.ones(100, int)])  # parallel kernels (over 4e6 pairs)
    if case == "value":
        from scipy.spatial.distance import cdist
        out = {"case": case, "n": 1_000}
        for d in (2, 1_617):
            X = rng.normal(size=(1_000, d))
            g = np.repeat([0, 1], 500).astype(np.int64)
            X[g == 1] += 1
            D = cdist(X, X)
            clm_nb.internal.dbcv_value(X, g, distances=D)
            times = []
            for _ in range(20):
                t0 = time.perf_counter()
                clm_nb.internal.dbcv_value(X, g, distances=D)
                times.append(time.perf_counter() - t0)
            out[f"ms_d{d}"] = 1e3 * min(times)
        return out
    X, y = _data(case, n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    t0 = time.perf_counter()
    value = clm_nb.dbcv(X, y)
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": case, "n": n, "value": value, "seconds": seconds, "traced_mb": traced, "rss_before_mb": before,
            "rss_peak_mb": peak}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--cases", nargs="+", default=["blobs", "huge", "value"])
    ap.add_argument("--one", help=argparse.SUPPRESS)              # internal: run one case in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one, args.n)))
        return
    print(f"{'case':<8} {'n':>7} {'DBCV':>8} {'seconds':>8} {'traced MB':>10} {'RSS before':>11} {'RSS peak':>9}")
    for case in args.cases:
        res = subprocess.run([sys.executable, __file__, "--one", case, "--n", str(args.n)], capture_output=True,
                             text=True, check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        if case == "value":
            print(f"dbcv_value, m = 1,000 with a distance matrix: {r['ms_d2']:.1f} ms (d = 2), "
                  f"{r['ms_d1617']:.1f} ms (d = 1,617), best of 20")
            continue
        print(f"{case:<8} {r['n']:>7} {r['value']:>8.4f} {r['seconds']:>8.1f} {r['traced_mb']:>10.1f} "
              f"{r['rss_before_mb']:>11.0f} {r['rss_peak_mb']:>9.0f}", flush=True)


if __name__ == "__main__":
    main()
