"""Time and peak memory of the pair engine's measures against the naive baselines (run by hand; figures go in the
issue note). Every measurement runs in a fresh process, so peak memory (ru_maxrss) is its own; the process's
resident memory just before the timed call (imports, data, compiled kernels) is reported as `base MB`. Times are
the median of three calls in that process (one call when a call takes more than 5 s).

    .venv/bin/python benchmarks/bench_pairs.py aucc        [--n 8000]   # vs roc_auc_score on all pairs, vs pdist
    .venv/bin/python benchmarks/bench_pairs.py dsi         [--n 8000]   # vs pdist/cdist + ks_2samp per cluster
    .venv/bin/python benchmarks/bench_pairs.py silhouette  [--n 40000]  # vs sklearn.metrics.silhouette_score
    .venv/bin/python benchmarks/bench_pairs.py large       [--n 100000 --measures dsi aucc sauprc --max-memory-mb 2048]
    .venv/bin/python benchmarks/bench_pairs.py target      [--n 100000 --measures aucc auprc auiprc sauprc
                                                            --tolerance 1e-6 --max-memory-mb 0]

`target` is issue 23's acceptance data, `make_blobs(n, centers=10, n_features=10, random_state=0, cluster_std=4)`:
for each measure it prints the exact computation (time, peak RSS, passes over the pairs, value) at the default
memory budget (`--max-memory-mb 0`: `clm_nb.pairs.auto_max_memory()`, half the available memory) and the fast mode
(`clm_nb.curves.bounded_score` with `--tolerance`: time, peak RSS, passes, value, certified bound, and the true error
against the exact value), each call in a fresh process, with the load average before it (the figures are only
comparable on an idle machine).

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


def blobs(n, seed=0):
    from sklearn.datasets import make_blobs
    return make_blobs(n, centers=10, n_features=10, random_state=seed, cluster_std=4)


def _target_child(job, queue):
    measure, n, tolerance, max_memory_mb = job
    from clm_nb.curves import bounded_score
    X, y = blobs(n)
    mm = None if max_memory_mb == 0 else max_memory_mb * 2**20
    bounded_score(X[:300], y[:300], measure, tolerance=0.0 if tolerance is None else tolerance)   # compile
    t0 = time.perf_counter()
    if tolerance is None:                                 # the exact path, as the registered measures run it
        from clm_nb.curves import CURVE_MEASURES
        from clm_nb.pairs import summarize
        s = summarize(X, y, CURVE_MEASURES[measure], max_memory=mm)
        value = {"aucc": (s.concordant + s.ties / 2) / (s.n_within * s.n_between), "auprc": s.ap,
                 "auiprc": s.ap_inverse, "sauprc": (s.ap + s.ap_inverse) / 2}[measure]
        value, bound, passes = value, 0.0, s.passes
    else:
        b = bounded_score(X, y, measure, tolerance=tolerance, max_memory=mm)
        value, bound, passes = b.value, b.bound, b.passes
    dt = time.perf_counter() - t0
    queue.put((dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, value, bound, passes))


def target(measures, n, tolerance, max_memory_mb):
    ctx = mp.get_context("spawn")
    for m in measures:
        out = {}
        for tol in (None, tolerance):
            with open("/proc/loadavg") as f:
                load = " ".join(f.read().split()[:3])
            q = ctx.Queue()
            p = ctx.Process(target=_target_child, args=((m, n, tol, max_memory_mb), q))
            p.start()
            out[tol] = q.get()
            p.join()
            dt, peak, value, bound, passes = out[tol]
            mode = "exact" if tol is None else f"fast tol={tol:g}"
            err = f"  true error {abs(value - out[None][2]):.2e}" if tol is not None else ""
            print(f"{m:7s} {mode:16s} n={n} {dt:8.1f} s  peak {peak:7.0f} MB  passes {passes:2d}  value {value:.12f}"
                  f"  bound {bound:.2e}{err}  (load {load})", flush=True)


JOBS = {"aucc": engine("aucc"), "sauprc": engine("sauprc"), "dsi": engine("dsi"), "auprc": engine("auprc"),
        "silhouette": engine("silhouette"), "pdist": pdist_only, "roc_auc_score": sklearn_auc,
        "naive_dsi": naive_dsi, "sklearn_silhouette": sklearn_silhouette}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["aucc", "dsi", "silhouette", "large", "target"])
    ap.add_argument("--n", type=int)
    ap.add_argument("--k", type=int)
    ap.add_argument("--measures", nargs="+", default=["dsi", "aucc", "sauprc"])
    ap.add_argument("--max-memory-mb", type=int, default=None, help="0: the default budget (auto)")
    ap.add_argument("--tolerance", type=float, default=1e-6)
    a = ap.parse_args()
    if a.what == "target":
        target(a.measures if a.measures != ["dsi", "aucc", "sauprc"] else ["aucc", "auprc", "auiprc", "sauprc"],
               a.n or 100000, a.tolerance, a.max_memory_mb or 0)
        return
    if a.max_memory_mb is None:
        a.max_memory_mb = 2048
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
