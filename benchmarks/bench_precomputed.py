"""A precomputed 20,000 x 20,000 float64 dissimilarity matrix (3.2 GB) as a memmap: silhouette, AUCC and DBCV (by hand).

    .venv/bin/python benchmarks/bench_precomputed.py [--n 20000] [--dir /tmp] [--keep]

The matrix is cdist (Euclidean) of make_blobs(n, n_features=10, centers=5, random_state=0), written to a .npy file
in blocks of rows (never the whole matrix in memory). Each measurement runs in a fresh subprocess:
- the coordinate path, `silhouette(X, y)`, `aucc(X, y)` and `dbcv(X, y)`: the baseline of the ratio;
- the precomputed path, `silhouette(D, y, metric='precomputed')`, `curves.aucc(...)` and `dbcv(..., dim=10)` on
  `np.load(path, mmap_mode='r')` (read only: the engine drops the pages it has read from the resident set);
- the same with the kernels' release switched off (`core.MEMMAP_RESIDENT` = 2**62) and on a copy-on-write memmap
  (`mmap_mode='c'`, which is not released): the resident memory the release saves.
Each subprocess times the first call (numba compiles or loads the kernels for that array type) and then a second,
steady-state call, and reports peak resident memory (VmHWM) and the peaks of RssAnon and RssFile (sampled by a
thread every 20 ms). The values of the two paths are compared exactly.
"""
import argparse, os, subprocess, sys, time
from pathlib import Path

import numpy as np

from bench_assess_scale import processor     # the processor's name, as lscpu gives it (run from the root)

ROOT = Path(__file__).resolve().parents[1]


def data(n):
    from sklearn.datasets import make_blobs
    return make_blobs(n_samples=n, n_features=10, centers=5, random_state=0)


def write_matrix(path, n, rows=500):
    "cdist of the data, written to a .npy file one block of `rows` rows at a time."
    from scipy.spatial.distance import cdist
    X, _ = data(n)
    with open(path, "wb") as f:
        np.lib.format.write_array_header_2_0(f, {"descr": "<f8", "fortran_order": False, "shape": (n, n)})
        for a in range(0, n, rows):
            cdist(X[a:a + rows], X).tofile(f)


CHILD = """
import json, math, sys, threading, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from bench_precomputed import data
import clm_nb, clm_nb.curves, clm_nb.pairs, clm_nb.core
n, measure, path, how = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

def status():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            out[k] = int(v.split()[0]) * 1024
    return out

peaks = {"RssAnon": 0, "RssFile": 0}
stop = threading.Event()
def sample():
    while not stop.wait(0.02):
        s = status()
        for k in peaks: peaks[k] = max(peaks[k], s[k])
X, y = data(n)
if how == "coordinates":
    D, kw = X, {}
else:
    D, kw = np.load(path, mmap_mode="c" if how == "copy-on-write" else "r"), {"metric": "precomputed"}
    if measure == "dbcv":                            # the coordinates' exponent, so the two paths compare
        kw["dim"] = X.shape[1]
    if how == "unreleased":                          # the kernels' release off: only the releases between passes remain
        clm_nb.core.MEMMAP_RESIDENT = 2 ** 62
f = {"silhouette": clm_nb.silhouette, "aucc": clm_nb.curves.aucc, "dbcv": clm_nb.dbcv}[measure]
base = status()
threading.Thread(target=sample, daemon=True).start()
res = {"base": base["VmRSS"]}
def measured(call, run):
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM back to the current resident set
    for k in peaks: peaks[k] = 0
    t, c = time.perf_counter(), time.process_time()
    v = run()
    res[call] = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "value": float(v),
                 "hwm": status()["VmHWM"], **dict(peaks)}
for call in ("first", "steady"):
    measured(call, lambda: f(D, y, **kw))
if how != "coordinates":                             # the door's check of the matrix alone (one read of it)
    measured("check", lambda: clm_nb.core.check_data(D, y, metric="precomputed").n)
stop.set()
print(json.dumps(res))
"""

COMPILE = """
import sys, time
import numpy as np
from scipy.spatial.distance import cdist
import clm_nb, clm_nb.curves
rng = np.random.default_rng(0); X = rng.normal(size=(300, 4)); y = rng.integers(0, 3, 300)
np.save(sys.argv[2], cdist(X, X))
D = np.load(sys.argv[2], mmap_mode="r")
f = {"silhouette": clm_nb.silhouette, "aucc": clm_nb.curves.aucc, "dbcv": clm_nb.dbcv}[sys.argv[1]]
t = time.perf_counter(); f(D, y, metric="precomputed"); first = time.perf_counter() - t
t = time.perf_counter(); f(D, y, metric="precomputed"); print(first, time.perf_counter() - t)
"""


def run(code, *args, env=None):
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=e,
                         cwd=ROOT, timeout=3600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return out.stdout.strip().splitlines()[-1]


def mib(b): return f"{b / 2 ** 20:,.0f}"


def main():
    import json, tempfile
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--dir", default="/tmp")
    p.add_argument("--keep", action="store_true", help="keep the .npy file (and reuse one of the right size)")
    p.add_argument("--measures", nargs="+", default=["silhouette", "aucc", "dbcv"], choices=["silhouette", "aucc", "dbcv"])
    p.add_argument("--hows", nargs="+", default=["coordinates", "released", "unreleased", "copy-on-write"])
    a = p.parse_args()
    print(f"processor: {processor()}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    started = time.time()
    path = Path(a.dir) / f"clm_nb_precomputed_{a.n}.npy"
    size = 8 * a.n * a.n
    if not (path.exists() and path.stat().st_size >= size):
        t = time.perf_counter()
        write_matrix(path, a.n)
        print(f"matrix {a.n:,} x {a.n:,} float64 ({size / 1e9:.1f} GB) written in {time.perf_counter() - t:.0f} s")
    try:
        print("| measure | input | first call (s) | steady (s) | steady CPU (s) | the door's check alone (s) | "
              "ratio to coordinates, wall / CPU | peak RSS, first / steady call (MiB) | steady: peak RssFile (MiB) | value |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for measure in a.measures:
            base = cpu = ref = None
            for how in a.hows:
                r = json.loads(run(CHILD, Path(__file__).parent, a.n, measure, path, how))
                s = r["steady"]
                if how == "coordinates":
                    base, cpu, ref = s["wall"], s["cpu"], s["value"]
                ratio = f"{s['wall'] / base:.2f} / {s['cpu'] / cpu:.2f}" if base else ""
                same = "" if how == "coordinates" or ref is None else (
                    " (= coordinates)" if s["value"] == ref else f" (differs by {abs(s['value'] - ref):.1e})")
                check = f"{r['check']['wall']:.2f}" if "check" in r else ""
                print(f"| {measure} | {how} | {r['first']['wall']:.2f} | {s['wall']:.2f} | {s['cpu']:.2f} | {check} | {ratio} | "
                      f"{mib(r['first']['hwm'])} / {mib(s['hwm'])} (imports {mib(r['base'])}) | {mib(s['RssFile'])} "
                      f"| {s['value']!r}{same} |", flush=True)
        for measure in a.measures:
            with tempfile.TemporaryDirectory() as cache:
                first, second = map(float, run(COMPILE, measure, Path(cache) / "D.npy",
                                               env={"NUMBA_CACHE_DIR": cache}).split())
            print(f"{measure}, read-only memmap of 300 points, empty numba cache: first call {first:.1f} s, "
                  f"second {second:.3f} s", flush=True)
        print(f"{time.time() - started:.0f} s in all; load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if not a.keep:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
