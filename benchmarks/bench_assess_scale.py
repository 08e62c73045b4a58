"""assess at n = 10^4 and 10^6 (make_blobs, d = 10, K = 5, default options), first-call and --help times (by hand).

    .venv/bin/python benchmarks/bench_assess_scale.py [assess|startup|all] [--before /work/main]

assess: each size in its own subprocess (numba warmed there first on 500 points, so compile time is not counted):
wall time of `clm_nb.assess(X, y)` with the defaults and with ci=None, peak resident memory (ru_maxrss), the ratio of the two times (issue 39's target:
<= 20), and the processor. startup: the first `clm_nb.aucc` and `clm_nb.dbcv` call in a fresh NUMBA_CACHE_DIR (cold
cache), the same after `clm-nb warm` where the tree has that command (`bench_warm.py` counts what a first `assess`
and leaderboard still compile after it), and `clm-nb --help`, for this checkout and, with
--before, another checkout (its code on PYTHONPATH, the same interpreter).
"""
import os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSESS = """
import resource, sys, time
from sklearn.datasets import make_blobs
import clm_nb
n = int(sys.argv[1])
opts = {} if sys.argv[2] == "defaults" else {"ci": None}       # ci=None: no sampling intervals (the fast path)
Xw, yw = make_blobs(n_samples=500, n_features=10, centers=5, random_state=1)
clm_nb.assess(Xw, yw, progress=False)                     # numba's kernels compiled or loaded: not timed
X, y = make_blobs(n_samples=n, n_features=10, centers=5, random_state=0)
t = time.perf_counter()
a = clm_nb.assess(X, y, progress=False, **opts)
wall = time.perf_counter() - t
print(wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, a.verdict, sep="\\t")
"""
FIRST = """
import sys, time
import numpy as np
rng = np.random.default_rng(0); X = rng.normal(size=(300, 4)); y = rng.integers(0, 3, 300)
import clm_nb
f = getattr(clm_nb, sys.argv[1])
t = time.perf_counter(); f(X, y); print(time.perf_counter() - t)
"""


def run(code, *args, tree=ROOT, env=None):
    e = dict(os.environ, PYTHONPATH=str(tree), **(env or {}))
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=e,
                         cwd=tree)                 # python -c puts the working folder first on sys.path: the tree's
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return out.stdout.strip()


def processor() -> str:
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
        return next(l.split(":", 1)[1].strip() for l in lines if l.startswith("Model name"))
    except (OSError, StopIteration):
        return "unknown"


def assess_scale():
    print(f"processor: {processor()}, {os.cpu_count()} cores")
    for opts in ("defaults", "ci=None"):
        times = {}
        for n in (10_000, 1_000_000):
            wall, rss, verdict = run(ASSESS, n, opts).split("\t")
            times[n] = float(wall)
            print(f"assess ({opts}) n = {n:>9,}: {float(wall):7.1f} s, peak resident memory {float(rss):7.0f} MiB "
                  f"({verdict})", flush=True)
        print(f"ratio 10^6 / 10^4 ({opts}): {times[1_000_000] / times[10_000]:.1f} (target <= 20; 100x the points)")


def startup(trees):
    for label, tree in trees:
        for what in ("aucc", "dbcv"):
            with tempfile.TemporaryDirectory() as cache:
                env = {"NUMBA_CACHE_DIR": cache}
                cold = float(run(FIRST, what, tree=tree, env=env))
                second = float(run(FIRST, what, tree=tree, env=env))
            print(f"{label}: first {what} call, cold cache {cold:.1f} s, in the next process {second:.2f} s", flush=True)
        cli = Path(tree) / "clm_nb" / "cli"                       # a package since issue 50; one file before
        if (cli / "warm.py").exists() or '@cli.command("warm")' in (cli.with_suffix(".py").read_text()
                                                                     if cli.with_suffix(".py").exists() else ""):
            with tempfile.TemporaryDirectory() as cache:
                env = {"NUMBA_CACHE_DIR": cache}
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", "from clm_nb.cli import main; main(['--quiet', 'warm'])"],
                               capture_output=True, env=dict(os.environ, PYTHONPATH=str(tree), **env), cwd=tree)
                warming = time.perf_counter() - t
                after = {what: float(run(FIRST, what, tree=tree, env=env)) for what in ("aucc", "dbcv")}
            print(f"{label}: `clm-nb warm` in a fresh cache {warming:.0f} s; then the first aucc call {after['aucc']:.2f} s, "
                  f"the first dbcv call {after['dbcv']:.2f} s", flush=True)
        help_times = []
        for _ in range(7):
            t = time.perf_counter()
            run("from clm_nb.cli import main; main(['--help'])", tree=tree)
            help_times.append(time.perf_counter() - t)
        print(f"{label}: clm-nb --help best {min(help_times):.2f} s, median {statistics.median(help_times):.2f} s "
              "(7 fresh processes)", flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "all"
    trees = [("after", ROOT)]
    if "--before" in sys.argv:
        trees.insert(0, ("before", Path(sys.argv[sys.argv.index("--before") + 1]).resolve()))
    if what in ("assess", "all"):
        assess_scale()
    if what in ("startup", "all"):
        startup(trees)
