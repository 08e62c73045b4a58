"""Issue 52, item 5: WCNN and DuNN-OWA against genieclust (the authors' implementation).

    .venv/bin/python benchmarks/bench_nearest.py [--n 5000 20000 100000] [--d 2 10] [--repeat 3]

On `make_blobs(n, centers=5, n_features=d, random_state=0)` this times, after one warm-up call each (numba
compiled, imports done), best of `--repeat`, in wall and CPU seconds of this process:
- `clm_nb.internal.wcnn` and `dunn_owa` with their defaults (M = 25): a k-d tree on coordinates in at most 15
  dimensions (`_neighbours`);
- the streamed pass they used before (`_nearest`, the same values), for the before/after ratio (skipped above
  20,000 points: quadratic);
- genieclust's `cluster_validity.wcnn_index` and `dunnowa_index` on the same data.
It checks that the values agree (WCNN exactly, DuNN-OWA to 1e-12 relative) and prints the processor.
"""
import argparse, json, subprocess, time

import numpy as np


def processor() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "unknown")


def best_of(f, repeat):
    f()
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = f()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, min(walls), min(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[5000, 20000, 100000])
    ap.add_argument("--d", type=int, nargs="+", default=[2, 10])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import genieclust
    from sklearn.datasets import make_blobs
    from clm_nb.core import check_data
    from clm_nb.internal import dunn_owa, wcnn, _nearest          # _nearest: the streamed pass, for the before/after ratio
    print(json.dumps({"processor": processor()}))
    for d in a.d:
        for n in a.n:
            X, y = make_blobs(n, centers=5, n_features=d, random_state=0)
            X = np.ascontiguousarray(X)
            row = {"n": n, "d": d}
            for name, ours, peer in (("wcnn", lambda: wcnn(X, y), lambda: genieclust.cluster_validity.wcnn_index(X, y)),
                                     ("dunn_owa", lambda: dunn_owa(X, y),
                                      lambda: genieclust.cluster_validity.dunnowa_index(X, y))):
                v, w, c = best_of(ours, a.repeat)
                pv, pw, pc = best_of(peer, a.repeat)
                assert v == pv or (name == "dunn_owa" and abs(v - pv) <= 1e-12 * abs(pv)), (name, v, pv)
                row |= {f"{name}_s": round(w, 4), f"{name}_cpu_s": round(c, 4), f"{name}_genieclust_s": round(pw, 4),
                        f"{name}_genieclust_cpu_s": round(pc, 4), f"{name}_speed_vs_genieclust": round(pw / w, 2)}
            if n <= 20000:
                data = check_data(X, y)
                _, w, c = best_of(lambda: _nearest(data, "euclidean", 2**30, M=25).ns.mean(), a.repeat)
                row |= {"streamed_pass_s": round(w, 4), "streamed_pass_cpu_s": round(c, 4)}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
