"""A read-only memmapped dissimilarity matrix stays mostly out of the resident set while the measures read it (issue 40).

The kernels release the file's pages every so many rows (`core.page_plan`, `pairs.page_out`). Here the budget
`core.MEMMAP_RESIDENT` is lowered to 16 MiB and a 128 MB matrix (4,000 points, labels in random order, so its rows
are read in random order) is measured: the process's file-backed resident memory (RssFile, sampled every
millisecond) grows by under a third of the file at its peak (20 MiB measured for each measure), and with the release
switched off by most of it (106-122 MiB: so the test can fail). The values are the same either way. Linux only: the
figures come from /proc.
"""
import os
import sys
import threading

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs

import clm_nb
from clm_nb import core

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self")

N = 4000
MiB = 2 ** 20


def _rss_file():
    for line in open("/proc/self/status"):
        if line.startswith("RssFile:"):
            return int(line.split()[1]) * 1024
    raise KeyError("RssFile")


def _peak_growth(call):
    """(value, bytes the file-backed resident set grew by at its peak) of call(): sampled every millisecond by a
    thread (the kernels release the GIL), so anonymous memory (AUCC's collected distances) does not count."""
    base, peak, stop = _rss_file(), [0], threading.Event()

    def sample():
        while not stop.wait(0.001):
            peak[0] = max(peak[0], _rss_file())
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        value = call()
    finally:
        stop.set()
        t.join()
    return value, max(peak[0], _rss_file()) - base


def _write_distances(path, X) -> None:
    "The Euclidean distance matrix of X written block by block as an .npy file (never whole in memory)."
    n = len(X)
    with open(path, "wb") as f:
        np.lib.format.write_array_header_2_0(f, {"descr": "<f8", "fortran_order": False, "shape": (n, n)})
        for a in range(0, n, 500):
            cdist(X[a:a + 500], X).tofile(f)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    X, _ = make_blobs(N, n_features=5, centers=4, random_state=0)
    y = np.random.default_rng(0).integers(0, 4, N)                   # random order and overlapping: many passes
    path = tmp_path_factory.mktemp("memmap") / "D.npy"
    _write_distances(path, X)
    D = np.load(path, mmap_mode="r")
    if core.page_plan(D, 2).size == 0:
        pytest.skip("no page plan on this platform")
    yield D, y, os.path.getsize(path)
    del D


MEASURES = {"silhouette": lambda D, y: clm_nb.silhouette(D, y, metric="precomputed"),
            "aucc": lambda D, y: clm_nb.curves.aucc(D, y, metric="precomputed"),
            "dbcv": lambda D, y: clm_nb.dbcv(D, y, metric="precomputed", dim=5)}


@pytest.mark.parametrize("name", MEASURES)
def test_resident_memory_stays_bounded(matrix, name, monkeypatch):
    D, y, size = matrix
    f = MEASURES[name]
    f(D, y)                                               # kernels loaded, tables allocated once
    monkeypatch.setattr(core, "MEMMAP_RESIDENT", 2 ** 62)
    core.release_pages(D)                                 # start from nothing resident (the first call may keep some)
    unreleased, grew_unreleased = _peak_growth(lambda: f(D, y))
    core.release_pages(D)
    monkeypatch.setattr(core, "MEMMAP_RESIDENT", 16 * MiB)
    released, grew = _peak_growth(lambda: f(D, y))
    assert released == unreleased
    assert grew < size / 3, f"{name}: resident set grew by {grew / MiB:.0f} MiB of a {size / MiB:.0f} MiB matrix"
    assert grew_unreleased > size * 0.6, f"{name}: the unreleased run grew by only {grew_unreleased / MiB:.0f} MiB"


# --- issue 49: layouts and dtypes that would be copied ------------------------------------------------------------

def _small_memmap(tmp_path, order="C", dtype=np.float64):
    X, y = make_blobs(60, n_features=3, centers=3, random_state=0)
    D = np.asarray(cdist(X, X), dtype=dtype, order=order)
    np.save(tmp_path / "D.npy", D)
    return np.load(tmp_path / "D.npy", mmap_mode="r"), y


def test_fortran_order_memmap_is_read_in_place(tmp_path, recwarn):
    """Issue 49: a float64 matrix saved in Fortran order was copied to RAM silently (the changelog says a memmap is
    never copied); symmetric, its transpose is the same matrix in C order, read in place with its pages released."""
    D, y = _small_memmap(tmp_path, order="F")
    assert D.flags.f_contiguous and not D.flags.c_contiguous
    checked = core.check_dissimilarity(D)
    assert np.shares_memory(checked.values, D) and core.page_plan(checked.values, 2).size == 4
    assert not [w for w in recwarn if "copied" in str(w.message)]
    C = np.ascontiguousarray(D)                                        # the same matrix in C order, in memory
    assert clm_nb.silhouette(D, y, metric="precomputed") == pytest.approx(clm_nb.silhouette(C, y, metric="precomputed"))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_a_memmap_that_must_be_copied_says_so(tmp_path, dtype):
    """Issue 49: an int32 (or float32) memmap was copied to RAM as float64 without a word; the copy is said, with its
    size and the fix."""
    D, y = _small_memmap(tmp_path, dtype=dtype)
    with pytest.warns(UserWarning, match=rf"memmapped matrix is {np.dtype(dtype)}, so it is copied into memory as "
                                         r"float64 .*Save it as float64"):
        clm_nb.silhouette(D, y, metric="precomputed")


@pytest.mark.parametrize("name", ["dcsi", "disco"])
def test_memmapped_matrix_is_paged_through(name, tmp_path, monkeypatch):
    """Issue 49: dcsi and disco kept the whole memmapped matrix resident. With the budget `MEMMAP_RESIDENT` at 2 MiB
    the file-backed resident set grows by well under half of a 32 MB matrix (as above for the other measures); without
    the release it grows by most of it. The values are the same either way."""
    from clm_nb.density import dcsi, disco
    n = 2000
    X, _ = make_blobs(n, n_features=4, centers=3, random_state=0)
    y = np.random.default_rng(0).integers(0, 3, n)                  # rows of each class spread over the whole file
    path = tmp_path / "D.npy"
    _write_distances(path, X)
    D = np.load(path, mmap_mode="r")
    if core.page_plan(D, 2).size == 0:
        pytest.skip("no page plan on this platform")
    f = {"dcsi": lambda: dcsi(D, y, metric="precomputed"), "disco": lambda: disco(D, y, metric="precomputed")}[name]
    f()                                                              # kernels compiled
    core.release_pages(D)
    monkeypatch.setattr(core, "MEMMAP_RESIDENT", 2 ** 62)
    unreleased, grew_unreleased = _peak_growth(f)
    core.release_pages(D)
    monkeypatch.setattr(core, "MEMMAP_RESIDENT", 2 * 2 ** 20)
    released, grew = _peak_growth(f)
    size = path.stat().st_size
    assert released == unreleased
    assert grew < size / 2, f"{name}: resident set grew by {grew / 2**20:.0f} MiB of {size / 2**20:.0f} MiB"
    assert grew_unreleased > size * 0.6
