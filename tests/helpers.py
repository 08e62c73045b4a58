"""Helpers several test files share: what the registry says a measure reads (issue 40's metric tests in test_assessment,
test_cli and test_intervals), the forms of one dissimilarity matrix (test_internal, test_cvi), and the assessment's JSON
keys added by issue 39 (test_assessment, test_cli)."""
import numpy as np
import pytest
from scipy.spatial.distance import squareform

from clm_nb.catalog import get_measure


# ---- issue 40: `assess(X, y, metric=...)` and `clm-nb assess --metric`: the views each metric has, and points ...

def reads(measure: str, metric: str, sparse_x: bool = False) -> bool:
    "Whether the registry says `measure` reads points under `metric` (and sparse X when asked)."
    info = get_measure(measure)
    return metric in info.metrics and (not sparse_x or info.sparse)


def needs(metric: str, *measures, sparse_x: bool = False):
    "Skip unless the registry says these measures read `metric` (they come with the merge of branch i40-between)."
    missing = [m for m in measures if not reads(m, metric, sparse_x)]
    return pytest.mark.skipif(bool(missing), reason=f"{missing} do not read metric={metric!r}"
                              + (" sparse X" if sparse_x else "") + " yet (branch i40-between)")


# ---- issue 40: DBCV and CVNN beyond Euclidean coordinates (a precomputed, condensed or memmapped matrix, sparse ...

COORDINATE = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine")


def blobs(n=150, d=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.normal(size=(3, d))[y] * 3 + rng.normal(size=(n, d)) + 5, y


def forms(D, tmp_path):
    "The same dissimilarities as a square matrix, a condensed vector and a read-only memmap of each."
    C = squareform(D, checks=False)
    np.save(tmp_path / "D.npy", D)
    np.save(tmp_path / "C.npy", C)
    return {"square": D, "condensed": C, "memmap": np.load(tmp_path / "D.npy", mmap_mode="r"),
            "condensed memmap": np.load(tmp_path / "C.npy", mmap_mode="r")}


# ---- issue 39 (and 49): verdicts that know their uncertainty: adaptive relabellings of a deciding score, ...

NEW_KEYS = {"borderline", "verdict_support", "ci", "n_resamples", "max_permutations", "uncertainty"}
