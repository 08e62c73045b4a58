"""What a fresh install waits for: `clm-nb warm`, and the first `assess` with and without it (issue 52, item 6).

    .venv/bin/python benchmarks/bench_warm.py [--data ../shared/datasets] [--all]

Each step runs in its own process on an empty numba cache (a fresh NUMBA_CACHE_DIR), as after `pip install`:

1. no warm: the first `assess` (200 blobs, 10 features, 5 classes, defaults) against the second in the same process
   (issue 52's target: first <= 5x warm);
2. `clm-nb warm` (the default: the kernels of assess and the leaderboard), timed; then, in a new process, the number of
   numba compilations (and their seconds) in a first `assess` on coordinates (200 and 25,000 points), a distance
   matrix, sparse coordinates, the cosine metric and a mixed table, and in a leaderboard (`--executor inline`, this
   process) of the graves datasets up to 400 points with the bundle (variants and labellings): all should be 0;
3. with --all, `clm-nb warm --all` timed.

The processor is printed; compare ratios, not seconds, across machines.
"""
import argparse, os, sys, tempfile, time
from pathlib import Path

from bench_assess_scale import processor, run    # this folder: a subprocess on this tree, the processor

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from clm_nb.cli import main; sys.exit(main(sys.argv[1:]))"

FIRST = """
import time, warnings
warnings.filterwarnings("ignore")
from sklearn.datasets import make_blobs
import clm_nb
X, y = make_blobs(n_samples=200, n_features=10, centers=5, cluster_std=2.0, random_state=0)
t = time.perf_counter(); clm_nb.assess(X, y, progress=False); first = time.perf_counter() - t
t = time.perf_counter(); clm_nb.assess(X, y, progress=False); second = time.perf_counter() - t
print(first, second)
"""

AFTER = """
import sys, tempfile, time, warnings
warnings.filterwarnings("ignore")
import numpy as np, pandas as pd
from numba.core import event
from scipy import sparse
from scipy.spatial.distance import pdist, squareform
from sklearn.datasets import make_blobs
import clm_nb
from clm_nb.cli import main
seen, depth = [], [0]
class Count(event.Listener):
    def on_start(self, ev):
        depth[0] += 1
        if depth[0] == 1: seen.append([ev.data["dispatcher"].py_func.__qualname__, time.perf_counter()])
    def on_end(self, ev):
        depth[0] -= 1
        if depth[0] == 0: seen[-1][1] = time.perf_counter() - seen[-1][1]
X, y = make_blobs(n_samples=200, n_features=10, centers=5, cluster_std=2.0, random_state=0)
Xb, yb = make_blobs(n_samples=25_000, n_features=4, centers=5, random_state=1)
mixed = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": np.where(X[:, 2] > 0, "u", "v")})
cases = {"coordinates, 200 points": lambda: clm_nb.assess(X, y, progress=False),
         "coordinates, 25,000 points": lambda: clm_nb.assess(Xb, yb, progress=False),
         "distance matrix": lambda: clm_nb.assess(squareform(pdist(X)), y, metric="precomputed", progress=False),
         "sparse": lambda: clm_nb.assess(sparse.csr_matrix(np.where(X > 1, X, 0.0)), y, progress=False),
         "cosine": lambda: clm_nb.assess(X, y, metric="cosine", progress=False),
         "mixed table": lambda: clm_nb.assess(mixed, y, progress=False),
         "leaderboard (graves, <= 400 points)": lambda: leaderboard()}
def leaderboard():
    try:
        main(["leaderboard", sys.argv[1], "-o", tempfile.mkdtemp(), "--collection", "gagolews_v1/graves", "--max-n", "400",
              "--executor", "inline", "--resamples", "10"])
    except SystemExit as e:                        # click's exit: 0 is success
        if e.code not in (0, None):
            raise RuntimeError(f"clm-nb leaderboard exited with {e.code}")
with event.install_listener("numba:compile", Count()):
    for name, f in cases.items():
        seen.clear(); t = time.perf_counter()
        try:
            f()
        except Exception as e:                      # a refusal is not a compilation: say it and go on
            print(f"{name}: {type(e).__name__}: {str(e)[:120]}")
            continue
        print(f"{name}: {time.perf_counter() - t:.1f} s, {len(seen)} compilations "
              f"({sum(s for _, s in seen):.1f} s){': ' + ', '.join(n for n, _ in seen) if seen else ''}", flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("CLM_NB_DATA", str(ROOT.parent / "shared" / "datasets")))
    ap.add_argument("--all", action="store_true", help="also time `clm-nb warm --all` on an empty cache")
    args = ap.parse_args(argv)
    print(f"processor: {processor()}, {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        first, second = map(float, run(FIRST, env={"NUMBA_CACHE_DIR": cache}).split())
        print(f"no warm: first assess {first:.1f} s, the next {second:.2f} s: {first / second:.0f}x (target <= 5x)",
              flush=True)
    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        run(CLI, "--quiet", "warm", env={"NUMBA_CACHE_DIR": cache})
        print(f"clm-nb warm (assess and the leaderboard): {time.perf_counter() - t:.0f} s", flush=True)
        print(run(AFTER, args.data, env={"NUMBA_CACHE_DIR": cache}), flush=True)
    if args.all:
        with tempfile.TemporaryDirectory() as cache:
            t = time.perf_counter()
            run(CLI, "--quiet", "warm", "--all", env={"NUMBA_CACHE_DIR": cache})
            print(f"clm-nb warm --all: {time.perf_counter() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
