"""DISCOTEC speed and memory (run by hand; figures go in the issue note).

    .venv/bin/python benchmarks/bench_consensus.py [--small-n 6000] [--small-T 20] [--big-n 100000] [--big-T 50]

1. n = 6,000, T = 20 k-means partitions (k = 2..11, two seeds each) of 8 Gaussian blobs: every divergence with
   clm_nb.discotec against an n x n numpy implementation of the definition (the consensus matrix and one
   connectivity matrix at a time, as dense as the paper's reference but without its (T, n, n) tensor).
2. n = 100,000, T = 50: k-means with k = 2..20 (two seeds), agglomerative (Ward on 2,000 k-means micro-clusters,
   k = 2..8) and DBSCAN at five radii, on 10 Gaussian blobs in 2-D: every divergence and both baselines.
Peak memory: the process's max RSS after each step (the n x n baseline runs last, so it does not hide the rest)."""
import argparse
import resource
import time

import numpy as np
from sklearn.cluster import DBSCAN, AgglomerativeClustering, KMeans
from sklearn.datasets import make_blobs

from clm_nb.consensus import DIVERGENCES, aari, anmi, discotec, ensemble


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label, f, *args, **kw):
    t0 = time.perf_counter()
    out = f(*args, **kw)
    dt = time.perf_counter() - t0
    print(f"{label:<52s} {dt:8.2f} s   peak RSS {peak_mb():7.0f} MB", flush=True)
    return out, dt


def dense_discotec(P: np.ndarray, divergence: str) -> np.ndarray:
    "The definition with n x n numpy arrays: C, then each A^t."
    T, n = P.shape
    C = np.zeros((n, n))
    for p in P:
        C += p[:, None] == p[None, :]
    C /= T
    mu = C.mean()
    out = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for p in P:
            A = p[:, None] == p[None, :]
            if divergence == "binary":
                D = (C >= mu) != A
            elif divergence == "tv":
                D = np.abs(A - C)
            elif divergence == "kl":
                D = np.nan_to_num(np.where(A, -np.log(C), -np.log1p(-C)))
            else:
                D = np.where(A, 1 - np.sqrt(C), 1 - np.sqrt(1 - C))
            out.append(D.mean())
    return np.array(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small-n", type=int, default=6000)
    ap.add_argument("--small-T", type=int, default=20)
    ap.add_argument("--big-n", type=int, default=100_000)
    ap.add_argument("--big-T", type=int, default=50)
    args = ap.parse_args()

    discotec(np.array([[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1]]))       # compile the numba kernel outside the timings
    # 1. small
    X, _ = make_blobs(args.small_n, centers=8, random_state=0)
    ks = [2 + i % 10 for i in range(args.small_T)]
    P = np.array([KMeans(k, n_init=1, random_state=s).fit_predict(X) for s, k in enumerate(ks)])
    print(f"== n = {args.small_n}, T = {args.small_T}: {ensemble(P).m} distinct label vectors")
    ours = {d: timed(f"clm_nb.discotec {d}", discotec, P, divergence=d) for d in DIVERGENCES}
    for d in DIVERGENCES:
        ref, dt = timed(f"n x n numpy {d}", dense_discotec, P, d)
        print(f"   speed-up {dt / ours[d][1]:7.1f}x, max |diff| {np.max(np.abs(ref - ours[d][0])):.1e}")
    # 2. big
    X, _ = make_blobs(args.big_n, centers=10, cluster_std=1.5, random_state=1)
    parts = []
    for k in range(2, 21):
        for s in range(2):
            parts.append(KMeans(k, n_init=1, random_state=s).fit_predict(X))
    micro = KMeans(2000, n_init=1, random_state=0).fit(X)
    for k in range(2, 9):
        parts.append(AgglomerativeClustering(k, linkage="ward").fit_predict(micro.cluster_centers_)[micro.labels_])
    for eps in np.linspace(0.15, 0.5, 5):
        parts.append(DBSCAN(eps=eps, min_samples=10).fit_predict(X))
    P = np.array(parts[: args.big_T])
    print(f"== n = {args.big_n}, T = {P.shape[0]}: partitions built")
    E, _ = timed("validate and merge identical label vectors", ensemble, P)
    print(f"   {E.m} distinct label vectors")
    for d in DIVERGENCES:
        timed(f"clm_nb.discotec {d}", discotec, E, divergence=d)
    timed("aari (T(T-1)/2 ARIs)", aari, E)
    timed("anmi (T(T-1)/2 NMIs)", anmi, E)


if __name__ == "__main__":
    main()
