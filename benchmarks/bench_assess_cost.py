"""Issue 52's targets as ratios measured in one run: what `assess` costs against its own measures.

    .venv/bin/python benchmarks/bench_assess_cost.py [--data ../shared/datasets] [--big] [--repeat 3]

Every case runs in this process after one warm-up call of the same shape (numba's kernels compiled or loaded, so
compile time is not counted; `bench_assess_scale.py startup` measures that), best of --repeat, CPU seconds of the
process (`time.process_time`: all its threads, so load from elsewhere matters less) and wall seconds:

- glass (214 points, 9 features, 6 classes; barton/real-world in the bundle): `assess` with defaults, one profile
  (`ci=None, variants=False`), and scikit-learn's `silhouette_score` (targets: assess <= 3x one profile, <= 400x
  silhouette);
- blobs of 200 and 10,000 points (10 features, 5 classes), and 1,000,000 with --big: defaults against one profile
  (target <= 3x);
- airports-like blobs, 3,000 points in 2 features, 5 and 52 classes: one profile and the defaults (once) each
  (target: 52 classes <= 10x 5 classes).

The processor is printed with the figures; compare ratios, not seconds, across machines.
"""
import argparse, os, platform, subprocess, time, warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def timed(f, repeat: int) -> tuple[float, float]:
    "(CPU seconds, wall seconds) of the fastest of `repeat` calls of f()."
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        f()
        best = min(best, (time.process_time() - c, time.perf_counter() - w))
    return best


def processor() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def blobs(n: int, d: int, k: int, seed: int = 0):
    from sklearn.datasets import make_blobs
    return make_blobs(n_samples=n, n_features=d, centers=k, cluster_std=2.0, random_state=seed)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("CLM_NB_DATA", str(ROOT.parent / "shared" / "datasets")))
    ap.add_argument("--big", action="store_true", help="also n = 10^6 (minutes)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import clm_nb
    from sklearn.metrics import silhouette_score
    defaults = lambda X, y: clm_nb.assess(X, y, progress=False)
    profile = lambda X, y: clm_nb.assess(X, y, ci=None, variants=False, progress=False)
    rows = []

    def case(name, X, y, others=(), repeat=args.repeat):
        defaults(X, y)                                            # warm-up: kernels of this shape
        d = timed(lambda: defaults(X, y), repeat)
        p = timed(lambda: profile(X, y), repeat)
        line = (f"{name:34s} defaults {d[0]:8.2f} s CPU ({d[1]:7.2f} wall)  one profile {p[0]:7.3f} s CPU "
                f"({p[1]:6.3f} wall)  ratio {d[0] / p[0]:6.1f}x")
        for label, f in others:
            o = timed(f, max(repeat, 5))
            line += f"  {label} {o[0] * 1e3:.1f} ms: assess = {d[0] / o[0]:,.0f}x"
        print(line, flush=True)
        rows.append((name, d, p))

    glass = Path(args.data) / "barton" / "real-world" / "glass.npz"
    if glass.exists():
        from clm_nb.bundle import load_dataset
        ds = load_dataset("glass", args.data, collection="barton/real-world")
        X, y = np.asarray(ds.X, float), np.asarray(ds.y)
        case("glass (214 x 9, K = 6)", X, y, others=[("silhouette_score", lambda: silhouette_score(X, y))])
    else:
        print(f"glass: not found under {args.data} (give --data)")
    for n in (200, 10_000) + ((1_000_000,) if args.big else ()):
        X, y = blobs(n, 10, 5)
        case(f"blobs {n:,} x 10, K = 5", X, y, repeat=args.repeat if n <= 10_000 else 1)
    times = {}
    for k in (5, 52):
        X, y = blobs(3000, 2, k, seed=1)
        defaults(X, y)
        times[k] = timed(lambda: profile(X, y), args.repeat), timed(lambda: defaults(X, y), 1)
        (pc, pw), (dc, dw) = times[k]
        print(f"blobs 3,000 x 2, K = {k:2d}: one profile {pc:7.2f} s CPU ({pw:6.2f} wall)  defaults {dc:7.2f} s CPU "
              f"({dw:6.2f} wall)", flush=True)
    print(f"52 classes / 5 classes: one profile {times[52][0][0] / times[5][0][0]:.1f}x CPU, defaults "
          f"{times[52][1][0] / times[5][1][0]:.1f}x CPU (target <= 10x)")
    print(f"processor: {processor()}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
