"""Time and peak memory of the pair engine's measures against the naive baselines (run by hand; figures go in the
issue note). Every measurement runs in a fresh process, so peak memory (ru_maxrss) is its own; the process's
resident memory just before the timed call (imports, data, compiled kernels) is reported as `base MB`. Times are
the median of three calls in that process (one call when a call takes more than 5 s).

    .venv/bin/python benchmarks/bench_pairs.py aucc        [--n 8000]   # vs roc_auc_score on all pairs, vs pdist
    .venv/bin/python benchmarks/bench_pairs.py dsi         [--n 8000]   # vs pdist/cdist + ks_2samp per cluster
    .venv/bin/python benchmarks/bench_pairs.py silhouette  [--n 40000]  # vs sklearn.metrics.silhouette_score
    .venv/bin/python benchmarks/bench_pairs.py large       [--n 100000 --measures dsi aucc sauprc --max-memory-mb 2048]

Data: n points in d = 10 dimensions, K Gaussian clusters (K = 5 for aucc/dsi, 10 otherwise) whose centres are
drawn with the same spread as the points, so within and between distances overlap as in real data."""
import argparse
import multiprocessing as mp
import resource
import time

import numpy as np


def make_data(n, d=10, k=5, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    return rng.normal(size=(k, d))[y] * 1.5 + rng.normal(size=(n, d)), y


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _child(job, queue):
    name, n, k, kw = job
    X, y = make_data(n, k=k)
    fn = JOBS[name]
    fn(X[:300], y[:300], **kw)                          # compile / warm up outside the timing
    base = _rss_mb()
    times = []
    while True:                                          # median of 3 calls, or 1 call when a call takes > 5 s
        t0 = time.perf_counter()
        value, extra = fn(X, y, **kw)
        times.append(time.perf_counter() - t0)
        if len(times) == 3 or times[0] > 5:
            break
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((float(np.median(times)), peak, base, value, extra + f" (median of {len(times)})"))


def run(name, n, k, **kw):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=((name, n, k, kw), q))
    p.start()
    out = q.get()
    p.join()
    dt, peak, base, value, extra = out
    print(f"{name:<22} n={n:<7} {dt:9.2f} s  peak {peak:8.0f} MB  base {base:6.0f} MB  value {value:.12f} {extra}",
          flush=True)
    return dt


# --- the measured functions: (X, y, **kw) -> (value, extra info) ---
def engine(measure):
    def f(X, y, max_memory_mb=512):
        import clm_nb
        from clm_nb.pairs import summarize
        need = {"aucc": ["ranks"], "sauprc": ["pr", "pr_inverse"], "dsi": ["ks"], "auprc": ["pr"]}.get(measure)
        if need is None:
            return clm_nb.score(measure, X, y), ""
        s = summarize(X, y, need, max_memory=max_memory_mb * 2**20)
        value = {"aucc": lambda: (s.concordant + s.ties / 2) / (s.n_within * s.n_between),
                 "sauprc": lambda: (s.ap + s.ap_inverse) / 2, "auprc": lambda: s.ap,
                 "dsi": lambda: float(np.nanmean(s.ks))}[measure]()
        return value, f"passes={s.passes} collected={s.collected}"
    return f


def pdist_only(X, y):
    from scipy.spatial.distance import pdist
    D = pdist(X)
    return float(D[0]), f"{D.size} distances"


def sklearn_auc(X, y):
    from scipy.spatial.distance import pdist
    from sklearn.metrics import roc_auc_score
    i, j = np.triu_indices(len(y), 1)
    w = y[i] == y[j]
    del i, j
    return roc_auc_score(w, -pdist(X)), "roc_auc_score(pair vector)"


def naive_dsi(X, y):
    from scipy.spatial.distance import cdist, pdist
    from scipy.stats import ks_2samp
    ks = [ks_2samp(pdist(X[y == c]), cdist(X[y == c], X[y != c]).ravel()).statistic for c in np.unique(y)]
    return float(np.mean(ks)), "pdist/cdist + ks_2samp"


def sklearn_silhouette(X, y):
    from sklearn.metrics import silhouette_score
    return silhouette_score(X, y), "sklearn silhouette_score"


JOBS = {"aucc": engine("aucc"), "sauprc": engine("sauprc"), "dsi": engine("dsi"), "auprc": engine("auprc"),
        "silhouette": engine("silhouette"), "pdist": pdist_only, "roc_auc_score": sklearn_auc,
        "naive_dsi": naive_dsi, "sklearn_silhouette": sklearn_silhouette}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["aucc", "dsi", "silhouette", "large"])
    ap.add_argument("--n", type=int)
    ap.add_argument("--k", type=int)
    ap.add_argument("--measures", nargs="+", default=["dsi", "aucc", "sauprc"])
    ap.add_argument("--max-memory-mb", type=int, default=2048)
    a = ap.parse_args()
    if a.what == "aucc":
        n, k = a.n or 8000, a.k or 5
        ours = run("aucc", n, k)
        base = run("roc_auc_score", n, k)
        pd = run("pdist", n, k)
        print(f"AUCC: {base / ours:.1f}x faster than roc_auc_score; {ours / pd:.2f}x the time of pdist")
    elif a.what == "dsi":
        n, k = a.n or 8000, a.k or 5
        ours = run("dsi", n, k)
        base = run("naive_dsi", n, k)
        print(f"DSI: {base / ours:.1f}x faster than pdist/cdist + ks_2samp")
    elif a.what == "silhouette":
        n, k = a.n or 40000, a.k or 10
        ours = run("silhouette", n, k)
        base = run("sklearn_silhouette", n, k)
        print(f"silhouette: {base / ours:.1f}x faster than sklearn")
    else:
        n, k = a.n or 100000, a.k or 10
        for m in a.measures:
            run(m, n, k, max_memory_mb=a.max_memory_mb)


if __name__ == "__main__":
    main()
