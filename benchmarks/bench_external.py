"""Time and peak memory of the external indices (run by hand; figures go in the issue note).

    .venv/bin/python benchmarks/bench_external.py [--n 10000000] [--k 100]

Cases:
  * table: the contingency table of two labelings of n points with k clusters each (dense counting), and of two
    labelings with ~n/2 and ~n/3 clusters (the hashing path: a dense table would have ~n²/6 cells);
  * every registered external index on a prebuilt table (n points, k clusters), and the sklearn-delegated ones
    from the labels as a user calls them;
  * the Centroid Index with partition, prototype (centroids from X, d = 2) and model (diagonal Gaussians) similarity;
  * optimal and greedy matching (Criterion H) on the huge sparse table.
Peak memory is the process's max RSS (resource.getrusage), reported after each case."""
import argparse
import resource
import time

import numpy as np

import clm_nb
from clm_nb import external as E


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label, f, *args, **kw):
    t0 = time.perf_counter()
    out = f(*args, **kw)
    print(f"{label:<58s} {time.perf_counter() - t0:8.2f} s   peak RSS {peak_mb():7.0f} MB", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args()
    n, k = args.n, args.k
    rng = np.random.default_rng(0)
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, k, n))           # a clustering that is 80 % right
    ct = timed(f"contingency n={n:,} k={k} (dense counting)", E.contingency, a, b)
    for name in clm_nb.measures("external").name:
        timed(f"  {name} on the prebuilt table", clm_nb.score, name, ct)
    for name in ["ari", "nmi", "ami"]:
        timed(f"  {name} from the labels (sklearn)", clm_nb.score, name, a, b)
    X = rng.normal(size=(n, 2)) + a[:, None] * 3.0
    timed("centroid_index similarity='prototype' (centroids of X)", E.centroid_index, a, b, similarity="prototype", X=X)
    timed("centroid_index similarity='model' (diagonal Gaussians)", E.centroid_index, a, b, similarity="model", X=X)
    del X
    i = np.arange(n)
    big = timed(f"contingency n={n:,}, {n // 2:,} x {n // 3:,} clusters (hashing)", E.contingency, i // 2, i // 3)
    timed("  pair_counts (exact Python integers)", E.pair_counts, big)
    timed("  nvd", E.nvd, big)
    timed("  centroid_index (partition)", E.centroid_index, big)
    timed("  criterion_h matching='greedy'", E.criterion_h, big, matching="greedy")
    timed("  criterion_h matching='optimal' (every block entangled)", E.criterion_h, big)


if __name__ == "__main__":
    main()
