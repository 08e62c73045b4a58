"""Level and power of the label-repair split gate (`clm_nb.repair.multimodal_classes`, issue 53 item 3).

    python benchmarks/bench_split_level.py [DATASETS]     # default 400

Level: datasets of three classes, each one unimodal cloud (a Gaussian under a random linear map, or a uniform box),
60 points each, d in 2..5; any suggested split is false. Holm over the three classes should keep the share of datasets
with a false split at or below alpha = 0.05. Also integer counts (Poisson(3) features), which the gate must leave
untested. Power: two Gaussian blobs `sep` standard deviations apart under one label (120 points, d = 3). Prints one
line per case with the rate and its binomial standard error.
"""
import sys
import time

import numpy as np

from clm_nb.repair import multimodal_classes


def rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.3f} (se {np.sqrt(max(p * (1 - p), 1e-12) / n):.3f}, {hits}/{n})"


def main(n: int = 400) -> None:
    rng = np.random.default_rng(2026)
    t0 = time.perf_counter()
    false = {"gaussian": 0, "uniform": 0, "poisson": 0}
    for s in range(n):
        d = int(rng.integers(2, 6))
        gauss = [rng.normal(size=(60, d)) @ rng.normal(size=(d, d)) + 10 * c for c in range(3)]
        unif = [rng.uniform(size=(60, d)) + 3 * c for c in range(3)]
        pois = [rng.poisson(3, size=(60, d)).astype(float) + 30 * c for c in range(3)]
        y = np.repeat([0, 1, 2], 60)
        for name, parts in (("gaussian", gauss), ("uniform", unif), ("poisson", pois)):
            false[name] += bool(multimodal_classes(np.vstack(parts), y, random_state=s).multimodal.any())
    for name, hits in false.items():
        print(f"level, {name:8s} classes: datasets with a false split {rate(hits, n)}")
    for sep in (3, 4, 5, 6):
        found = 0
        for s in range(n // 4):
            X = np.vstack([rng.normal(size=(60, 3)), rng.normal(size=(60, 3)) + [sep, 0, 0], rng.normal(size=(60, 3)) + [0, 30, 0]])
            t = multimodal_classes(X, np.repeat([0, 0, 1], 60), random_state=s).set_index("class")
            found += bool(t.at[0, "multimodal"])
        print(f"power, two blobs {sep} sd apart: found {rate(found, n // 4)}")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
