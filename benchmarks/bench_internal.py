"""Time and peak memory of the classic internal indices as n grows (run by hand; figures go in the issue note).

    .venv/bin/python benchmarks/bench_internal.py [--sizes 1000 5000 20000] [--d 16] [--k 10]

Peak memory is what numpy allocates during the call (tracemalloc), to show that the pair-based indices stay
O(n * block) instead of O(n^2): a full float64 distance matrix would need 8 n^2 bytes."""
import argparse
import time
import tracemalloc

import numpy as np

import clm_nb

NAMES = ["calinski_harabasz", "davies_bouldin", "xie_beni", "i_index", "dunn", "silhouette"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--max-memory-mb", type=int, default=256)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'measure':<18} {'n':>7} {'seconds':>9} {'peak MB':>9} {'n^2 matrix MB':>14}")
    for n in args.sizes:
        y = rng.integers(0, args.k, n)
        X = rng.normal(size=(args.k, args.d))[y] * 3 + rng.normal(size=(n, args.d))
        data = clm_nb.core.check_data(X, y)
        for name in NAMES:
            kw = {"max_memory": args.max_memory_mb * 2**20} if name in ("dunn", "silhouette") else {}
            tracemalloc.start()
            t0 = time.perf_counter()
            clm_nb.score(name, X, y, **kw)
            dt = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            print(f"{name:<18} {n:>7} {dt:>9.3f} {peak:>9.1f} {8 * n * n / 2**20:>14.1f}", flush=True)


if __name__ == "__main__":
    main()
