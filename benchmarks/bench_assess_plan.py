"""Issue 52, item 4: what `assess` announces before a long run against the time it then takes.

    .venv/bin/python benchmarks/bench_assess_plan.py [SHAPE ...]      # SHAPE = n_d_K, e.g. 60000_9_7 (blobs)

Above `QUADRATIC_MAX_POINTS` points, with progress bars on, `assess` prints "about N s on 2 cores" on stderr
(`clm_nb.assessment._say_plan`). For each shape (default: five blob shapes from 25,000 to 100,000 points, 2 to 30
features, 3 to 20 classes) this runs `assess` with its defaults once, after a warm-up call (numba's kernels loaded),
and prints the announced and the measured wall time, their ratio (target: within a factor 1.5), and where the time
went: the data's own profile, the other preparations (`_variants_table`) and the half-samples (`_sampling`).
The processor is printed; compare ratios, not seconds, across machines.
"""
import contextlib, io, re, subprocess, sys, time, warnings

import numpy as np

SHAPES = ("30000_10_5", "60000_9_7", "25000_2_20", "100000_4_3", "40000_30_10")


def processor() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "unknown")


def main(shapes):
    warnings.filterwarnings("ignore")
    import clm_nb
    import clm_nb.assessment as A
    from sklearn.datasets import make_blobs
    parts = {}

    def timed(name, f):
        def g(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                parts[name] = parts.get(name, 0.0) + time.perf_counter() - t
        return g

    A._sampling, A._variants_table = timed("half-samples", A._sampling), timed("variants", A._variants_table)
    X, y = make_blobs(3000, 5, centers=4, random_state=0)
    clm_nb.assess(X, y, progress=False)                                       # warm-up
    for shape in shapes:
        n, d, k = map(int, shape.split("_"))
        X, y = make_blobs(n, d, centers=k, cluster_std=2.0, random_state=0)
        parts.clear()
        err = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stderr(err):
            clm_nb.assess(X, y, progress=True)
        wall = time.perf_counter() - t
        said = re.search(r"about ([\d.]+) (s|min)", err.getvalue())
        est = float(said.group(1)) * (60 if said.group(2) == "min" else 1) if said else float("nan")
        own = wall - sum(parts.values())
        print(f"{n:>7,} x {d:>2}, K = {k:>2}: announced {est:5.0f} s, measured {wall:6.1f} s (measured / announced "
              f"{wall / est:4.2f}); the data's profile {own:.1f} s, other preparations {parts.get('variants', 0):.1f} s,"
              f" half-samples {parts.get('half-samples', 0):.1f} s", flush=True)
    print(f"processor: {processor()}")


if __name__ == "__main__":
    main(sys.argv[1:] or SHAPES)
