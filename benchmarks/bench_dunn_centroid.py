"""Seconds of `dunn` under its centroid options at n = 50,000, d = 2, K = 5 (issue 41; run by hand, figures in
docs/benchmarks.md, "Issue 41").

    .venv/bin/python benchmarks/bench_dunn_centroid.py [--n 50000] [--genieclust]

Each option pair runs in this process after one warm-up call on 500 points (numba compiled, imports done); the time
is the best of `--repeat` calls. With `--genieclust` genieclust's `generalised_dunn_index` (the same index, its
numbering d4/D3) is timed on the same data for comparison."""
import argparse
import json
import time

import numpy as np
from sklearn.datasets import make_blobs

CASES = [("centroid", "centroid"), ("centroid_average", "centroid"), ("centroid", "diameter"), ("single", "diameter")]


def best_of(f, repeat):
    out = []
    for _ in range(repeat):
        t = time.perf_counter(); f(); out.append(time.perf_counter() - t)
    return min(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", nargs="*", default=[f"{b}/{w}" for b, w in CASES])
    ap.add_argument("--genieclust", action="store_true")
    a = ap.parse_args()
    from clm_nb.internal import dunn
    X, y = make_blobs(a.n, centers=5, n_features=2, random_state=0)
    dunn(X[:500], y[:500], between="centroid", within="centroid")
    rows = []
    for case in a.cases:
        b, w = case.split("/")
        dunn(X[:500], y[:500], between=b, within=w)
        rep = 1 if (b, w) == ("single", "diameter") or a.repeat < 1 else a.repeat
        rows.append({"between": b, "within": w, "n": a.n, "seconds": round(best_of(
            lambda: dunn(X, y, between=b, within=w), rep), 4), "value": dunn(X, y, between=b, within=w)})
    if a.genieclust:
        import genieclust
        Xc = np.ascontiguousarray(X)
        rows.append({"genieclust": "generalised_dunn_index(d=4, D=3)", "n": a.n, "seconds": round(best_of(
            lambda: genieclust.cluster_validity.generalised_dunn_index(Xc, y, 4, 3), a.repeat), 4)})
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
