"""The dataset bundle (clm_nb.bundle, notebook 18_bundle): the reader on a fake bundle and, when present, the shared
one; the embedded default; checksums; faulty files; arguments checked at the door.

issue 38: eight concurrent `bundle add` (forked processes released together by a barrier) keep every row: the lock
makes the result independent of their timing, and a short pause inside each manifest write keeps the race window of
unlocked code wide open."""
import multiprocessing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clm_nb import bundle as datasets   # the bundle writer (replace_file, MANIFEST)
from clm_nb.bundle import (DATA_ENV, EMBEDDED_DATASETS, LIST_COLUMNS, Dataset, add_to_bundle, iter_datasets,
                           list_datasets, load_dataset, resolve_data_dir)

from hostile import TIMEOUT

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    "Every test starts without CLM_NB_DATA, so the developer's environment cannot leak in."
    monkeypatch.delenv(DATA_ENV, raising=False)


def _save(root: Path, collection: str, name: str, **arrays) -> dict:
    "Write one npz of a fake bundle; return its manifest row."
    (root / collection).mkdir(parents=True, exist_ok=True)
    np.savez_compressed(root / collection / f"{name}.npz", **arrays)
    X = arrays["X"]
    labeled = "y" in arrays
    variants = 1 + sum(k.startswith("labels") for k in arrays)
    return dict(collection=collection, name=name, file=f"{collection}/{name}.npz",
                status="included" if labeled else "unlabeled", n=X.shape[0], d=X.shape[1],
                n_classes=len(set(arrays["y"].tolist())) if labeled else None,
                n_noise=0, noise_label=None, label_variants=variants if labeled else 0, source_repo="fake/repo")


@pytest.fixture
def bundle(tmp_path) -> Path:
    "A tiny bundle: int labels, string labels, gagolews-style 0 noise with a variant, barton-style 'noise', unlabeled."
    rng = np.random.default_rng(42)
    rows = [
        _save(tmp_path, "hjn", "ints", X=rng.normal(size=(8, 3)), y=np.array([0, 0, 1, 1, 2, 2, 3, 3])),
        _save(tmp_path, "hjn", "strings", X=rng.normal(size=(6, 2)), y=np.array(["b", "a", "b", "a", "c", "c"])),
        _save(tmp_path, "hjn", "minus_one", X=rng.normal(size=(4, 2)), y=np.array([-1, -1, 1, 1])),
        _save(tmp_path, "gagolews_v1/sipu", "noisy", X=rng.normal(size=(7, 2)), y=np.array([1, 0, 1, 2, 2, 0, 0]),
              labels1=np.array([1, 1, 1, 2, 2, 3, 3]), labels2=np.array([0, 1, 1, 1, 2, 2, 2]),
              description=np.array("a fake gagolews dataset")),
        _save(tmp_path, "barton/artificial", "noisy_str",
              X=np.vstack([rng.normal(size=(5, 2)), [[np.nan, 0.5]]]), y=np.array(["0", "noise", "1", "1", "0", "noise"])),
        _save(tmp_path, "barton/artificial", "ints", X=rng.normal(size=(4, 2)), y=np.array([0, 0, 1, 1])),
        _save(tmp_path, "barton/real-world", "unlabeled", X=rng.normal(size=(5, 4))),
    ]
    rows[3].update(n_noise=3, noise_label="0")
    rows[4].update(n_noise=2, noise_label="noise")
    rows.append(dict(collection="hjn", name="gone", file=None, status="unavailable", n=100, d=None))
    pd.DataFrame(rows).to_csv(tmp_path / "manifest.csv", index=False)
    return tmp_path


# --- where the data come from ---------------------------------------------------------------

def test_resolve_data_dir(bundle, monkeypatch, tmp_path):
    assert resolve_data_dir() is None
    assert resolve_data_dir(bundle) == bundle.resolve()
    assert resolve_data_dir(str(bundle)) == bundle.resolve()
    with pytest.raises(ValueError, match="does_not_exist"):
        resolve_data_dir(tmp_path / "does_not_exist")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="has no manifest.csv"):
        resolve_data_dir(tmp_path / "empty")
    with pytest.raises(ValueError, match="is a file"):
        resolve_data_dir(bundle / "manifest.csv")


def test_env_var(bundle, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(bundle))
    assert resolve_data_dir() == bundle.resolve()
    assert "noisy" in set(list_datasets().name)
    assert load_dataset("strings").collection == "hjn"
    assert resolve_data_dir(False) is None                    # False forces the embedded default
    assert set(list_datasets(False).name) == set(EMBEDDED_DATASETS)
    monkeypatch.setenv(DATA_ENV, "")                          # empty = unset
    assert resolve_data_dir() is None
    monkeypatch.setenv(DATA_ENV, "/no/such/bundle")
    with pytest.raises(ValueError, match=r"\$CLM_NB_DATA = '/no/such/bundle' does not exist"):
        list_datasets()


# --- listing --------------------------------------------------------------------------------

def test_list_bundle(bundle):
    t = list_datasets(bundle)
    assert list(t.columns) == LIST_COLUMNS and LIST_COLUMNS[-1] == "sha256"
    assert list(zip(t.collection, t.name)) == [
        ("barton/artificial", "ints"), ("barton/artificial", "noisy_str"), ("gagolews_v1/sipu", "noisy"),
        ("hjn", "ints"), ("hjn", "minus_one"), ("hjn", "strings")]
    assert t.n.dtype == np.int64 and t.d.dtype == np.int64
    assert t.set_index("name").loc["noisy", "n_noise"] == 3
    assert (t.file.str.endswith(".npz")).all() and (t.source == "fake/repo").all()
    full = list_datasets(bundle, labeled=False)
    assert "unlabeled" in set(full.name) and "gone" not in set(full.name)
    assert not full.set_index("name").loc["unlabeled", "labeled"]


def test_list_filters(bundle):
    assert set(list_datasets(bundle, collections="barton").collection) == {"barton/artificial"}
    assert set(list_datasets(bundle, collections=["gagolews_v1", "hjn"]).collection) == {"gagolews_v1/sipu", "hjn"}
    assert list(list_datasets(bundle, collections="gagolews_v1/sipu").name) == ["noisy"]
    assert set(list_datasets(bundle, collections="barton/", labeled=False).collection) == {"barton/artificial", "barton/real-world"}
    assert list(list_datasets(bundle, min_n=7).name) == ["noisy", "ints"]
    assert list(list_datasets(bundle, max_n=4).name) == ["ints", "minus_one"]
    assert list(list_datasets(bundle, max_d=2, collections="hjn").name) == ["minus_one", "strings"]
    assert len(list_datasets(bundle, max_datasets=2)) == 2
    assert len(list_datasets(bundle, max_datasets=0)) == 0
    with pytest.raises(ValueError, match=r"match\(es\) no collection; available"):
        list_datasets(bundle, collections="gago")            # prefixes match whole path components only
    with pytest.raises(ValueError, match="max_datasets"):
        list_datasets(bundle, max_datasets=-1)


def test_list_embedded():
    t = list_datasets()
    assert list(t.columns) == LIST_COLUMNS
    assert set(t.name) == set(EMBEDDED_DATASETS)
    assert list(t.name) == sorted(t.name[t.collection == "generated"]) + sorted(t.name[t.collection == "sklearn"])
    assert set(t.expected_clm[t.collection == "generated"]) == {"good", "medium", "bad"}
    assert t.expected_clm[t.collection == "sklearn"].isna().all()       # real data: CLM not known by construction
    assert t.set_index("name").loc["iris", ["n", "d", "n_classes", "n_noise"]].tolist() == [150, 4, 3, 0]
    assert (t.d > 2).any() and set(t[t.collection == "generated"].d) == {2, 10}


def test_manifest_missing_columns(tmp_path):
    pd.DataFrame({"collection": ["a"], "name": ["b"]}).to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['file', 'status', 'n', 'd'\]"):
        list_datasets(tmp_path)


# --- loading --------------------------------------------------------------------------------

def test_load_int_and_string_labels(bundle):
    ds = load_dataset("ints", bundle, collection="hjn")
    assert isinstance(ds, Dataset) and ds.X.dtype == np.float64 and ds.X.shape == (8, 3)
    assert ds.y.tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and (ds.n, ds.d, ds.n_classes, ds.n_noise) == (8, 3, 4, 0)
    s = load_dataset("strings", bundle)
    assert s.y.dtype.kind == "U" and s.y.tolist() == ["b", "a", "b", "a", "c", "c"] and s.n_classes == 3
    assert s.meta["source"] == "fake/repo" and s.meta["file"] == "hjn/strings.npz"
    assert s.meta["provenance"] == {"source_repo": "fake/repo"}     # only the provenance text the manifest gives
    with pytest.raises(Exception):
        s.name = "other"                                      # frozen


def test_gagolews_zero_noise(bundle):
    ds = load_dataset("noisy", bundle)
    assert ds.collection == "gagolews_v1/sipu" and ds.description == "a fake gagolews dataset"
    assert ds.y.tolist() == [1, -1, 1, 2, 2, -1, -1] and ds.n_noise == 3 and ds.n_classes == 2
    assert ds.meta["noise_marker"] == "0" and ds.meta["n_noise"] == 3
    assert ds.check(noise="ignore").n == 4


def test_barton_string_noise(bundle):
    ds = load_dataset("barton/artificial/noisy_str", bundle)
    assert ds.y.dtype == object and ds.y.tolist() == ["0", -1, "1", "1", "0", -1]
    assert (ds.n_noise, ds.n_classes) == (2, 2)
    assert load_dataset("ints", bundle, collection="barton").y.tolist() == [0, 0, 1, 1]   # 0 is a class in barton


def test_genuine_minus_one_is_renamed(bundle):
    ds = load_dataset("minus_one", bundle)
    assert ds.y.tolist() == [2, 2, 1, 1] and ds.n_noise == 0 and ds.meta["renamed_labels"] == {-1: 2}


def test_label_variants(bundle):
    assert load_dataset("noisy", bundle, labels="labels1").y.tolist() == [1, 1, 1, 2, 2, 3, 3]
    v2 = load_dataset("noisy", bundle, labels="labels2")        # gagolews 0 = noise in variants too
    assert v2.y.tolist() == [-1, 1, 1, 1, 2, 2, 2] and v2.meta["labels"] == "labels2"
    assert load_dataset("noisy", bundle, labels="labels0").meta["labels"] == "y"
    with pytest.raises(ValueError, match=r"no label variant 'labels3'; available: \['y', 'labels1', 'labels2'\]"):
        load_dataset("noisy", bundle, labels="labels3")


def test_load_errors(bundle):
    with pytest.raises(ValueError, match=r"ambiguous: \['hjn/ints', 'barton/artificial/ints'\]"):
        load_dataset("ints", bundle)
    with pytest.raises(ValueError, match="it exists in"):
        load_dataset("ints", bundle, collection="gagolews_v1")
    with pytest.raises(ValueError, match="no reference labels"):
        load_dataset("unlabeled", bundle)
    with pytest.raises(ValueError, match="not stored"):
        load_dataset("gone", bundle)
    with pytest.raises(ValueError, match=r"Did you mean \['strings'\]"):
        load_dataset("strngs", bundle)
    (bundle / "hjn" / "strings.npz").unlink()
    with pytest.raises(ValueError, match=r"hjn/strings: the manifest lists 'hjn/strings.npz', but .* does not exist"):
        load_dataset("strings", bundle)


def test_nan_rows(bundle):
    ds = load_dataset("noisy_str", bundle)
    assert np.isnan(ds.X).sum() == 1
    with pytest.raises(ValueError, match="NaN"):
        ds.check()
    dropped = load_dataset("noisy_str", bundle, drop_nan_rows=True)
    assert dropped.n == 5 and dropped.y.tolist() == ["0", -1, "1", "1", "0"]
    assert dropped.meta["n_nan_rows_dropped"] == 1 and dropped.meta["n_noise"] == 1


def test_standardize(bundle, tmp_path):
    ds = load_dataset("ints", bundle, collection="hjn", standardize=True)
    np.testing.assert_allclose(ds.X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(ds.X.std(axis=0), 1, atol=1e-12)
    assert ds.meta["standardized"]
    root = tmp_path / "const"
    row = _save(root, "c", "const", X=np.column_stack([np.arange(5.0), np.full(5, 0.1), [1, np.nan, 2, 3, 4]]),
                y=np.array([0, 0, 1, 1, 1]))
    pd.DataFrame([row]).to_csv(root / "manifest.csv", index=False)
    Z = load_dataset("const", root, standardize=True).X
    assert (Z[:, 1] == 0).all()                               # constant column: 0, not NaN
    assert np.isnan(Z[1, 2]) and np.isfinite(np.delete(Z[:, 2], 1)).all()
    Z2 = load_dataset("const", root, standardize=True, drop_nan_rows=True).X
    assert Z2.shape == (4, 3) and np.isfinite(Z2).all()


def test_load_embedded():
    ds = load_dataset("wine")
    assert (ds.collection, ds.n, ds.d, ds.n_classes) == ("sklearn", 178, 13, 3)
    assert ds.meta["expected_clm"] is None and ds.meta["expected_clm_note"] and ds.description
    b = load_dataset("blobs_shuffled50")
    assert b.meta["expected_clm"] == "bad" and b.meta["params"]["shuffle_fraction"] == 0.5
    assert load_dataset("blobs_match").meta["expected_clm"] == "good"
    assert load_dataset("blobs_match_10d").d == 10
    with pytest.raises(ValueError, match="available: \\['y'\\]"):
        load_dataset("iris", labels="labels1")


def test_embedded_is_fast_and_copied():
    import time
    t0 = time.perf_counter()
    sets = list(iter_datasets())
    assert time.perf_counter() - t0 < 2.0 and len(sets) == len(EMBEDDED_DATASETS)
    sets[0].X[:] = np.nan
    assert np.isfinite(load_dataset(sets[0].name).X).all()


# --- iterating ------------------------------------------------------------------------------

def test_iter_datasets(bundle):
    got = [(d.collection, d.name) for d in iter_datasets(bundle, collections="hjn")]
    assert got == [("hjn", "ints"), ("hjn", "minus_one"), ("hjn", "strings")]
    assert [d.name for d in iter_datasets(bundle, labels="labels2")] == ["noisy"]
    assert all(np.isfinite(d.X).all() for d in iter_datasets(bundle, drop_nan_rows=True, standardize=True))
    assert len(list(iter_datasets(bundle, max_datasets=2))) == 2
    with pytest.raises(ValueError, match="not a label variant"):
        iter_datasets(bundle, labels="target")                # checked at call time, not at first next()


# --- the generator --------------------------------------------------------------------------


# --- the real shared bundle (skipped when absent) -----------------------------------------

needs_shared = pytest.mark.skipif(not (SHARED / "manifest.csv").is_file(), reason=f"shared bundle not at {SHARED}")


@needs_shared
def test_shared_bundle_listing():
    assert len(list_datasets(SHARED, collections="hjn_labeled96")) == 92
    t = list_datasets(SHARED, labeled=False)
    assert len(t) == 455 and t.labeled.sum() == 449
    assert set(list_datasets(SHARED, collections="gagolews_v1").collection) >= {"gagolews_v1/sipu", "gagolews_v1/wut"}
    prov = load_dataset("s1", SHARED, collection="gagolews_v1/sipu").meta["provenance"]
    assert prov["source_repo"] == "gagolews/clustering-data-v1" and len(prov["source_commit"]) == 40
    assert "AGPL" in prov["license_attribution"] and "s1" in prov["original_path"]


@needs_shared
@pytest.mark.parametrize("name, collection", [("chameleon_t4_8k", "gagolews_v1"), ("zigzag_noisy", "gagolews_v1"),
                                              ("cure-t2-4k", "barton")])
def test_shared_bundle_noise(name, collection):
    manifest = pd.read_csv(SHARED / "manifest.csv", dtype={"noise_label": str})
    row = manifest[(manifest.name == name) & manifest.collection.str.startswith(collection)].iloc[0]
    ds = load_dataset(name, SHARED, collection=collection)
    assert row.n_noise > 0 and ds.n_noise == row.n_noise
    raw = np.load(SHARED / row.file)["y"]
    marker = raw.dtype.type(row.noise_label)                 # 0 (gagolews) or 'noise' (barton), in the file's dtype
    np.testing.assert_array_equal(ds.noise, raw == marker)   # exactly the marked points became -1 ...
    np.testing.assert_array_equal(ds.y[~ds.noise], raw[~ds.noise])   # ... and every other label is unchanged
    assert ds.check(noise="ignore").n == ds.n - row.n_noise


# ---------------------------------------------------------------- fault injection: the reader trusts no file
# Every malformed file or manifest row is a ValueError that names the dataset and the file, found before any large
# allocation; iter_datasets(on_error="record") yields a DatasetError in a bad dataset's place and goes on.
import hashlib
import io
import json
import os
import subprocess
import sys
import time
import zipfile

from clm_nb.bundle import ON_ERROR, DatasetError
from clm_nb.readers import array_digest, file_digest


def _npy(a, allow_pickle=False) -> bytes:
    "The .npy bytes of an array."
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(a), allow_pickle=allow_pickle)
    return buf.getvalue()


def _npy_claiming(shape, descr="<f8", data=b"") -> bytes:
    "A hand-made .npy member: a header claiming `shape`, followed by `data` only (nothing of that size is ever built)."
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _write_members(path: Path, members: dict) -> None:
    "An npz archive holding the given .npy member bytes (names without .npy)."
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name + ".npy", data)


GOOD = {"X": _npy(np.arange(12.0).reshape(6, 2)), "y": _npy(np.array([0, 0, 1, 1, 2, 2]))}


def _good_bytes(tmp: Path) -> bytes:
    _write_members(tmp / "_good.npz", GOOD)
    return (tmp / "_good.npz").read_bytes()


def _corrupt_stream(tmp: Path) -> bytes:
    "A good archive with bytes flipped inside X's compressed stream (CRC / zlib failure when read)."
    rng = np.random.default_rng(0)
    _write_members(tmp / "_rand.npz", {**GOOD, "X": _npy(rng.normal(size=(6, 2)))})
    raw = bytearray((tmp / "_rand.npz").read_bytes())
    start = raw.index(b"X.npy") + len(b"X.npy")
    for k in range(60, 90):
        raw[start + k] ^= 0x5A
    return bytes(raw)


# name -> (writer(root, outside, tmp) returning the manifest `file` cell, manifest overrides, fragment of the error)
FAULTS = {
    "truncated": (lambda r, o, t: _raw(r, "truncated", _good_bytes(t)[:120]), {}, "is not a readable .npz archive"),
    "empty": (lambda r, o, t: _raw(r, "empty", b""), {}, "is empty (0 bytes)"),
    "not_zip": (lambda r, o, t: _raw(r, "not_zip", b"X,y\n1,2\n"), {}, "is not a readable .npz archive"),
    "missing_x": (lambda r, o, t: _npz(r, "missing_x", y=GOOD["y"]), {}, "has no array 'X'"),
    "missing_y": (lambda r, o, t: _npz(r, "missing_y", X=GOOD["X"]), {}, "has no reference labels"),
    "object_y": (lambda r, o, t: _npz(r, "object_y", X=GOOD["X"], y=_npy(np.array([0, 0, 1, 1, 2, "b"], dtype=object), True)),
                 {}, "array 'y' has dtype object"),
    "complex_x": (lambda r, o, t: _npz(r, "complex_x", X=_npy(np.zeros((6, 2), complex)), y=GOOD["y"]), {}, "dtype complex128"),
    "x_1d": (lambda r, o, t: _npz(r, "x_1d", X=_npy(np.zeros(12)), y=GOOD["y"]), {}, "has 1 dimension(s)"),
    "x_vs_manifest": (lambda r, o, t: _npz(r, "x_vs_manifest", X=_npy(np.zeros((6, 3))), y=GOOD["y"]), {},
                      "has shape (6, 3) in its header, but the manifest says (n, d) = (6, 2)"),
    "labels_length": (lambda r, o, t: _npz(r, "labels_length", X=GOOD["X"], y=_npy(np.zeros(5, int))), {},
                      "array 'y' has shape (5,) in its header, but the manifest says n = 6"),
    "huge_header": (lambda r, o, t: _npz(r, "huge_header", X=_npy_claiming((10**12, 2), data=b"\0" * 96), y=GOOD["y"]), {},
                    "has shape (1000000000000, 2) in its header"),
    "huge_agreeing": (lambda r, o, t: _npz(r, "huge_agreeing", X=_npy_claiming((10**12, 2), data=b"\0" * 96),
                                           y=_npy_claiming((10**12,), "<i8", b"\0" * 48)),
                      {"n": 10**12}, "stores 96 bytes of data, but its header (shape (1000000000000, 2)"),
    "big_agreeing": (lambda r, o, t: _npz(r, "big_agreeing", X=_npy_claiming((10**8, 2), data=b"\0" * 96),
                                          y=_npy_claiming((10**8,), "<i8", b"\0" * 48)),
                     {"n": 10**8}, "stores 96 bytes of data, but its header (shape (100000000, 2)"),
    "short_member": (lambda r, o, t: _npz(r, "short_member", X=_npy_claiming((6, 2), data=b"\0" * 50), y=GOOD["y"]), {},
                     "stores 50 bytes of data"),
    "corrupt_stream": (lambda r, o, t: _raw(r, "corrupt_stream", _corrupt_stream(t)), {}, ""),
    "dotdot": (lambda r, o, t: "../outside/secret.npz", {}, "resolves to"),
    "absolute": (lambda r, o, t: str(o / "secret.npz"), {}, "is an absolute path"),
    "symlink_out": (lambda r, o, t: _symlink(r, "symlink_out", o / "secret.npz"), {}, "outside the bundle"),
    "empty_cell": (lambda r, o, t: None, {}, "the manifest's 'file' cell is empty"),
    "missing_file": (lambda r, o, t: "f/missing_file.npz", {}, "does not exist"),
    "a_directory": (lambda r, o, t: (r / "f" / "a_directory.npz").mkdir() or "f/a_directory.npz", {}, "is not a regular file"),
}
GOOD_NAMES = ("aa_good", "mm_good", "zz_good")


def _raw(root: Path, name: str, data: bytes) -> str:
    (root / "f").mkdir(parents=True, exist_ok=True)
    (root / "f" / f"{name}.npz").write_bytes(data)
    return f"f/{name}.npz"


def _npz(root: Path, name: str, **members) -> str:
    _write_members(root / "f" / f"{name}.npz", members)
    return f"f/{name}.npz"


def _symlink(root: Path, name: str, target: Path) -> str:
    (root / "f").mkdir(parents=True, exist_ok=True)
    (root / "f" / f"{name}.npz").symlink_to(target)
    return f"f/{name}.npz"


@pytest.fixture
def faulty(tmp_path) -> Path:
    "A bundle (collection 'f') holding three good datasets and one dataset per fault, all claiming n=6, d=2 unless stated."
    root, outside = tmp_path / "bundle", tmp_path / "outside"
    (root / "f").mkdir(parents=True)
    _write_members(outside / "secret.npz", GOOD)              # a perfectly valid file, but outside the bundle
    rows = []
    for name in GOOD_NAMES:
        rows.append(dict(collection="f", name=name, file=_npz(root, name, **GOOD), status="included", n=6, d=2))
    for name, (write, overrides, _) in FAULTS.items():
        rows.append({**dict(collection="f", name=name, file=write(root, outside, tmp_path), status="included", n=6, d=2), **overrides})
    pd.DataFrame(rows).to_csv(root / "manifest.csv", index=False)
    return root


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_is_a_valueerror_naming_the_file(faulty, name):
    manifest = pd.read_csv(faulty / "manifest.csv").set_index("name")
    cell = manifest.loc[name, "file"]
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as info:
        load_dataset(name, faulty, collection="f")
    assert time.perf_counter() - t0 < 2.0                     # no 16 TB allocation attempted, no long read
    msg = str(info.value)
    assert msg.startswith(f"f/{name}: ") and FAULTS[name][2] in msg, msg
    if isinstance(cell, str):                                  # the file is named: as written in the manifest, or resolved
        assert cell in msg or str((faulty / cell).resolve()) in msg, msg


def test_fault_exceptions_are_chained(faulty):
    with pytest.raises(ValueError) as info:
        load_dataset("truncated", faulty, collection="f")
    assert isinstance(info.value.__cause__, zipfile.BadZipFile)
    with pytest.raises(ValueError) as info:
        load_dataset("corrupt_stream", faulty, collection="f")
    assert info.value.__cause__ is not None                   # zlib.error or BadZipFile (CRC), chained


MEMORY_GUARD = r"""
import json, resource, sys
from clm_nb.bundle import load_dataset
vm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
out = {}
for name in sys.argv[2:]:
    try:
        load_dataset(name, sys.argv[1], collection="f"); out[name] = "loaded"
    except ValueError as e:
        out[name] = "ValueError"
    except MemoryError:
        out[name] = "MemoryError"
print(json.dumps(out))
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux /proc to measure the address space")
def test_headers_checked_before_allocation(faulty):
    "Under an address-space limit of 512 MiB above the interpreter's, headers claiming 1.6 GB and 16 TB are refused, not allocated."
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", MEMORY_GUARD, str(faulty), "huge_header", "huge_agreeing", "big_agreeing", "aa_good"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"huge_header": "ValueError", "huge_agreeing": "ValueError",
                                                                "big_agreeing": "ValueError", "aa_good": "loaded"}


def test_listing_survives_bad_files(faulty):
    t = list_datasets(faulty)
    assert len(t) == len(FAULTS) + len(GOOD_NAMES)
    sha = t.set_index("name").sha256
    for name in ("dotdot", "absolute", "symlink_out", "empty_cell", "missing_file", "a_directory"):
        assert sha[name] is None                               # unreachable file: no fingerprint, loading says why
    assert sha["empty"] == hashlib.sha256(b"").hexdigest()     # reachable but malformed: its bytes' fingerprint


def test_iter_record_yields_every_dataset_in_catalog_order(faulty):
    names = sorted([*FAULTS, *GOOD_NAMES])
    got = list(iter_datasets(faulty, on_error="record"))
    assert [(d.collection, d.name) for d in got] == [("f", n) for n in names]
    for item in got:
        if item.name in GOOD_NAMES:
            assert isinstance(item, Dataset) and item.y.tolist() == [0, 0, 1, 1, 2, 2]
        else:
            assert isinstance(item, DatasetError) and item.error.startswith(f"f/{item.name}: ") and FAULTS[item.name][2] in item.error
            assert repr(item).startswith(f"DatasetError('f/{item.name}': ")
    with pytest.raises(ValueError, match=f"^f/{names[0]}: "):   # the default still stops at the first bad dataset
        list(iter_datasets(faulty))
    assert [d.name for d in iter_datasets(faulty, on_error="record", max_datasets=2)] == names[:2]


def test_dataset_error_record():
    e = DatasetError("hjn", "x", "boom")
    assert (e.collection, e.name, e.error) == ("hjn", "x", "boom") and repr(e) == "DatasetError('hjn/x': boom)"
    with pytest.raises(Exception):
        e.error = "other"                                      # frozen
    assert ON_ERROR == ("raise", "record")


def test_bundle_root_behind_a_symlink(faulty, tmp_path):
    (tmp_path / "via").symlink_to(faulty)
    assert load_dataset("aa_good", tmp_path / "via", collection="f").n == 6
    with pytest.raises(ValueError, match="outside the bundle"):
        load_dataset("symlink_out", tmp_path / "via", collection="f")


@pytest.mark.parametrize("cell, overrides, message", [
    ("f/x.npz", {"n": "many"}, r"row 1 \(f/x\): n='many' is not a non-negative integer"),
    ("f/x.npz", {"d": -2}, r"row 1 \(f/x\): d=-2 is not a non-negative integer"),
    ("f/x.npz", {"name": None}, r"row 1: empty 'name'"),
])
def test_manifest_rows_are_checked(tmp_path, cell, overrides, message):
    pd.DataFrame([{**dict(collection="f", name="x", file=cell, status="included", n=6, d=2), **overrides}]).to_csv(
        tmp_path / "manifest.csv", index=False)
    with pytest.raises(ValueError, match=message):
        list_datasets(tmp_path)


def test_manifest_duplicate_rows(tmp_path):
    row = dict(collection="f", name="x", file="f/x.npz", status="included", n=6, d=2)
    pd.DataFrame([row, row]).to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(ValueError, match="row 2: f/x is stored twice"):
        iter_datasets(tmp_path)


# --- the content fingerprint -------------------------------------------------------------------

def test_sha256_column_and_meta(bundle):
    t1, t2 = list_datasets(bundle, labeled=False), list_datasets(bundle, labeled=False)
    assert t1.sha256.tolist() == t2.sha256.tolist() and t1.sha256.str.fullmatch("[0-9a-f]{64}").all()
    for row in t1.itertuples():
        assert row.sha256 == hashlib.sha256((bundle / row.file).read_bytes()).hexdigest() == file_digest(bundle / row.file)
    sha = t1.set_index(["collection", "name"]).sha256
    for opts in ({}, {"labels": "labels2"}, {"standardize": True, "drop_nan_rows": True}):
        ds = load_dataset("noisy", bundle, **opts)
        assert ds.meta["sha256"] == sha[("gagolews_v1/sipu", "noisy")]      # the file's digest, whatever the load options
    assert [d.meta["sha256"] for d in iter_datasets(bundle)] == list_datasets(bundle).sha256.tolist()


def test_sha256_changes_with_the_bytes(bundle):
    before = list_datasets(bundle).set_index("name").sha256
    path = bundle / "hjn" / "strings.npz"
    new = bundle / "hjn" / "_new.npz"
    np.savez_compressed(new, X=np.zeros((6, 2)), y=np.array(["b", "a", "b", "a", "c", "c"]))
    os.replace(new, path)                                      # a replaced file (as a copy or an update does it)
    after = list_datasets(bundle).set_index("name").sha256
    assert after["strings"] != before["strings"] and after["strings"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (after.drop("strings") == before.drop("strings")).all()
    assert load_dataset("strings", bundle).meta["sha256"] == after["strings"]
    with open(path, "ab") as f:                                # appended in place: size changes, so does the digest
        f.write(b"\0")
    assert file_digest(path) == hashlib.sha256(path.read_bytes()).hexdigest() != after["strings"]


def test_sha256_embedded():
    from sklearn.datasets import load_iris
    iris = load_iris()
    expected = array_digest(iris.data.astype(np.float64), iris.target.astype(np.int64))
    assert list_datasets().set_index("name").loc["iris", "sha256"] == expected
    assert load_dataset("iris", standardize=True).meta["sha256"] == expected             # of the raw arrays
    assert len(set(list_datasets().sha256)) == len(EMBEDDED_DATASETS)


# --- arguments checked at the door ---------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda b: list_datasets(b, max_n=-1), "max_n=-1 must be a non-negative integer"),
    (lambda b: list_datasets(b, min_n=2.5), "min_n=2.5 must be a non-negative integer"),
    (lambda b: list_datasets(b, max_d=True), "max_d=True must be a non-negative integer"),
    (lambda b: list_datasets(b, max_datasets="3"), "max_datasets='3' must be a non-negative integer"),
    (lambda b: list_datasets(b, labeled=1), "labeled=1 must be True or False"),
    (lambda b: list_datasets(b, collections=["hjn", None]), "must be a collection name"),
    (lambda b: list_datasets(True), "data_dir=True must be a folder path"),
    (lambda b: load_dataset("ints", b, collection="hjn", standardize=None), "standardize=None must be True or False"),
    (lambda b: load_dataset("ints", b, collection="hjn", drop_nan_rows="no"), "drop_nan_rows='no' must be True or False"),
    (lambda b: load_dataset("ints", b, collection="hjn", labels=0), "labels=0 is not a label variant name"),
    (lambda b: load_dataset("", b), "name='' must be a non-empty string"),
    (lambda b: load_dataset("ints", b, collection=3), "collection=3 must be a non-empty string or None"),
    (lambda b: iter_datasets(b, on_error="skip"), r"on_error='skip' must be one of \('raise', 'record'\)"),
    (lambda b: iter_datasets(b, on_error=None), "on_error=None must be one of"),
    (lambda b: iter_datasets(b, min_n=-3), "min_n=-3 must be a non-negative integer"),
    (lambda b: iter_datasets(b, max_datasets=1.0), "max_datasets=1.0 must be a non-negative integer"),
    (lambda b: iter_datasets(b, labels=["y"]), r"labels=\['y'\] is not a label variant name"),
    (lambda b: iter_datasets(b, standardize="True"), "standardize='True' must be True or False"),
])
def test_arguments_checked_at_the_door(bundle, call, message):
    with pytest.raises(ValueError, match=message):
        call(bundle)


# ---- issue 38: eight concurrent `bundle add` (forked processes released together by a barrier) keep every row: ...

def _add_one(root: str, i: int, barrier) -> None:
    "One of the concurrent adds (a forked process): wait for the others, then add dataset d{i}."
    original = datasets.replace_file

    def slow_replace(path, write):                # widen the read-then-write window of the manifest
        if Path(path).name == datasets.MANIFEST:
            time.sleep(0.1)
        return original(path, write)
    datasets.replace_file = slow_replace
    try:
        barrier.wait(timeout=30)
        rng = np.random.default_rng(i)
        add_to_bundle(rng.normal(size=(20, 2)), np.repeat(["a", "b"], 10), root, "mine", f"d{i}")
    except Exception as e:                        # the message goes to the parent through the exit code and a file
        Path(root).parent.joinpath(f"error{i}.txt").write_text(f"{type(e).__name__}: {e}")
        os._exit(1)
    os._exit(0)


def _concurrent_adds(root: Path) -> list:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(8)
    procs = [ctx.Process(target=_add_one, args=(str(root), i, barrier)) for i in range(8)]
    for p in procs: p.start()
    for p in procs: p.join(timeout=TIMEOUT)
    errors = [f.read_text() for f in sorted(root.parent.glob("error*.txt"))]
    return [p.exitcode for p in procs], errors


@pytest.mark.parametrize("existing", [False, True], ids=["new_folder", "existing_bundle"])
def test_eight_concurrent_bundle_adds_keep_every_row(tmp_path, existing):
    "Eight adds at once kept 3 of 8 rows (into a new folder, 4 of 8 failed with a misleading error)."
    root = tmp_path / "bundle"
    if existing:
        add_to_bundle(np.eye(4), [0, 0, 1, 1], root, "old", "first")
    codes, errors = _concurrent_adds(root)
    assert codes == [0] * 8, (codes, errors)
    names = set(list_datasets(root)["name"])
    assert names == {f"d{i}" for i in range(8)} | ({"first"} if existing else set()), names
    assert all(load_dataset(f"mine/d{i}", root).n == 20 for i in range(8))
    assert not list(root.rglob("*.tmp*")), list(root.rglob("*.tmp*"))
