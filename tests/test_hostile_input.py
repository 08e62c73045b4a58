"""Hostile and careless input to the readers and the bundle writer (issue 38, notebooks 18_bundle and 32_cli).

Each test reproduces one probe of the issue. The probes that could allocate gigabytes or block forever on the code
before the fix (the bombs, /dev/zero, a FIFO, the huge label) run in a subprocess bounded in address space
(RLIMIT_AS, 2 GiB) and in time, one after the other in one process, so the file pays one import. The eight concurrent
`bundle add` run as eight forked processes released together by a barrier; the lock makes the result independent
of their timing, and a short pause inside each manifest write keeps the race window of unlocked code wide open."""
import gzip
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import textwrap
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from clm_nb import bundle as datasets   # the bundle (its writer, replace_file, MANIFEST)
from clm_nb.cli import cli
from clm_nb.bundle import add_to_bundle, list_datasets, load_dataset
from clm_nb.readers import read_labeled_file, read_labeled_table

LIMIT = 2 << 30                                   # RLIMIT_AS of the bounded probes
TIMEOUT = 60                                      # seconds; the fixed code answers each probe in about one import


def invoke(*args):
    "`clm-nb args...` in this process (click's CliRunner)."
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="clm-nb")


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _npy_claiming(shape, descr="<f8", data=b"") -> bytes:
    "An .npy header claiming `shape` of `descr`, followed by `data` only."
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _npy(a) -> bytes:
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(a), allow_pickle=False)
    return buf.getvalue()


# ---------------------------------------------------------------- bounded probes (bombs, devices, pipes, labels)

BOUND = 256 << 20                                 # the probes' read bound: well inside LIMIT with every import loaded

PROBE = f"""
import sys, json
BOUND = {BOUND}
from clm_nb.readers import read_labeled_table
for path in sys.argv[1:]:
    try:
        feats, y = read_labeled_table(path, None if path.endswith(".npz") else "class", max_bytes=BOUND)
        answer = {{"ok": True, "n": len(y)}}
    except Exception as e:
        answer = {{"ok": False, "error": f"{{type(e).__name__}}: {{e}}"}}
    print(json.dumps({{"probe": path.rsplit("/", 1)[-1], **answer}}), flush=True)
"""


@pytest.fixture(scope="module")
def bounded_probes(tmp_path_factory):
    """{probe: the JSON answer of `read_labeled_table` on that hostile file, or None} from one subprocess bounded by
    RLIMIT_AS 2 GiB and a timeout. The probes run in turn, each answer printed as it comes, the FIFO last: code that
    blocks on it, or dies on another, leaves the probes after it unanswered (None), never the test run hanging."""
    t = tmp_path_factory.mktemp("bounded")
    with zipfile.ZipFile(t / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as zf:        # X's header claims 8 GB
        zf.writestr("X.npy", _npy_claiming((10**9, 1), data=b"\0" * 8_000_000))
        zf.writestr("y.npy", _npy(np.zeros(3)))
    with zipfile.ZipFile(t / "widelabel.npz", "w", zipfile.ZIP_DEFLATED) as zf:   # labels 10 M characters wide
        zf.writestr("X.npy", _npy(np.zeros((3, 1))))
        zf.writestr("y.npy", _npy_claiming((3,), descr="<U10000000", data=b"\0" * 1000))
    chunk = gzip.compress(b"0,0\n" * (16 << 20), compresslevel=1)              # 64 MiB of text, compressed
    (t / "bomb.csv.gz").write_bytes(chunk * 48)                               # concatenated members: 3 GiB
    (t / "zero.csv").symlink_to("/dev/zero")
    os.mkfifo(t / "pipe.csv")
    rows = ["x,class"] + [f"{i % 7},{'ab'[i % 2]}" for i in range(200)]
    rows[5] = "0.5," + "L" * (1 << 20)                                          # one 1 MiB label in a 1 MB CSV
    (t / "huge_label.csv").write_text("\n".join(rows) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(datasets.__file__).parents[1])}
    names = ["bomb.npz", "widelabel.npz", "huge_label.csv", "bomb.csv.gz", "zero.csv", "pipe.csv"]
    p = subprocess.Popen([sys.executable, "-c", PROBE, *[str(t / n) for n in names]], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=_limit, env=env)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    answers = {n: None for n in names}
    answers.update({a["probe"]: a for a in map(json.loads, out.splitlines())})
    answers["stderr"] = err[-2000:]
    return answers


def _refused(probes, name, *fragments):
    answer = probes[name]
    assert answer is not None, (name, "no answer: the probe blocked, or an earlier one killed the process",
                                probes["stderr"])
    assert answer["ok"] is False, answer
    for f in fragments:
        assert f in answer["error"], (f, answer["error"])


def test_npz_bomb_is_refused_from_its_header(bounded_probes):
    "A .npz of a few MB whose X header claims 8 GB: refused from the header, nothing allocated."
    _refused(bounded_probes, "bomb.npz", "its headers claim 8,000,000,024 bytes", "--max-bytes")


def test_npz_labels_wider_than_the_label_bound_are_refused_from_the_header(bounded_probes):
    _refused(bounded_probes, "widelabel.npz", "10,000,000 characters wide")


def test_gzip_bomb_stops_at_the_bound(bounded_probes):
    """3 GiB of text in a 3 MB .csv.gz: refused at the bound (256 MiB here, so that the bound, not the 2 GiB address
    space, decides wherever the test runs), with a message (not IndexError/MemoryError)."""
    _refused(bounded_probes, "bomb.csv.gz", f"decompresses to more than {BOUND:,} bytes", "--max-bytes")


def test_dev_zero_named_csv_is_refused(bounded_probes):
    _refused(bounded_probes, "zero.csv", "is a device, not a regular file")


def test_fifo_named_csv_does_not_block(bounded_probes):
    _refused(bounded_probes, "pipe.csv", "is a named pipe (FIFO), not a regular file")


def test_huge_label_is_refused_without_the_memory(bounded_probes):
    "A 1 MiB label in a 1 MB CSV drove memory to 4.5 GB; it is refused, with its row."
    _refused(bounded_probes, "huge_label.csv", "a label of 1,048,576 characters (first at row 4")


# ---------------------------------------------------------------- wrong labels, silently

def test_duplicated_header_is_refused(tmp_path):
    "`class,b,c,d,class`: pandas made the first `class` (a feature) the labels and the real labels `class.1`."
    rng = np.random.default_rng(0)
    rows = ["class,b,c,d,class"] + [f"{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.3f},"
                                    f"{'pq'[i % 2]}" for i in range(40)]
    (tmp_path / "dup.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"the header gives the same name to several columns: 'class' \(columns 1, 5\)"):
        read_labeled_table(tmp_path / "dup.csv", "class")
    r = invoke("assess", tmp_path / "dup.csv", "-l", "class")
    assert r.exit_code == 1 and "give every column its own name" in r.output, r.output


def test_label_codes_are_not_merged_by_number_parsing(tmp_path):
    "`01` and `1`, `1.10` and `1.1` are four classes; read as numbers on request, with a warning naming them."
    labels = ["01", "1", "1.10", "1.1"] * 10
    (tmp_path / "codes.csv").write_text("x,class\n" + "".join(f"{i / 2},{c}\n" for i, c in enumerate(labels)))  # not 0..n-1: no saved index
    _, y, _ = read_labeled_file(tmp_path / "codes.csv", "class")
    assert sorted(set(y.tolist())) == ["01", "1", "1.1", "1.10"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, y, _ = read_labeled_file(tmp_path / "codes.csv", "class", numeric_labels=True)
    assert sorted(set(y.tolist())) == [1.0, 1.1]
    assert len(caught) == 1 and "'01' and '1' -> 1.0" in str(caught[0].message) \
        and "'1.10' and '1.1' -> 1.1" in str(caught[0].message), [str(w.message) for w in caught]
    r = invoke("score", "silhouette", tmp_path / "codes.csv", "-l", "class")
    assert r.exit_code == 0 and "4 classes" in r.output, r.output


def test_classes_named_na_none_null_nan_are_classes(tmp_path):
    "Only an empty cell is a missing label; `NA`, `None`, `null`, `nan` are class names."
    names = ["NA", "None", "null", "nan"]
    (tmp_path / "na.csv").write_text("x,class\n" + "".join(f"{i},{names[i % 4]}\n" for i in range(40)))
    _, y, _ = read_labeled_file(tmp_path / "na.csv", "class")
    assert sorted(set(y.tolist())) == sorted(names)
    (tmp_path / "empty.csv").write_text("x,class\n1,a\n2,\n3,b\n")
    with pytest.raises(ValueError, match=r"1 label\(s\) are missing \(an empty cell or a null; first at row 1\)"):
        read_labeled_file(tmp_path / "empty.csv", "class")


# ---------------------------------------------------------------- the bundle writer

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


def test_bundle_manifest_is_spreadsheet_safe(tmp_path):
    "`--description \"=cmd...\"` went into manifest.csv as a formula; it is stored defused and read back as given."
    (tmp_path / "d.csv").write_text("x,y,class\n" + "".join(f"{i},{i % 3},{'pq'[i % 2]}\n" for i in range(20)))
    desc = "=cmd|' /C calc'!A0"
    r = invoke("bundle", "add", tmp_path / "d.csv", "-l", "class", "-c", "mine", "--data-dir", tmp_path / "b",
               "--description", desc)
    assert r.exit_code == 0, r.output
    cells = pd.read_csv(tmp_path / "b" / "manifest.csv", dtype=str, keep_default_na=False).to_numpy().ravel()
    assert not [c for c in cells if c.startswith(("=", "+", "@"))], cells
    assert load_dataset("mine/d", tmp_path / "b").meta["provenance"]["notes"] == desc


# ---------------------------------------------------------------- options silently ignored, misleading messages

def test_sep_and_drop_col_are_refused_for_npz(tmp_path):
    np.savez(tmp_path / "a.npz", X=np.random.default_rng(0).normal(size=(20, 2)), y=np.repeat([0, 1], 10))
    r = invoke("score", "silhouette", tmp_path / "a.npz", "--sep", ";")
    assert r.exit_code == 1 and "apply to CSV and TSV files only" in r.output, r.output
    r = invoke("score", "silhouette", tmp_path / "a.npz", "--drop-col", "x0")
    assert r.exit_code == 1 and "--drop-col" in r.output and "have no names" in r.output, r.output


def test_latin1_file_gets_the_encoding_hint(tmp_path):
    words = ["caf\xe9", "th\xe9"]
    rows = ["a,b,cl\xe4ss"] + [f"{i},{i % 5},{words[i % 2]}" for i in range(30)]
    (tmp_path / "lat.csv").write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    r = invoke("score", "silhouette", tmp_path / "lat.csv", "-l", "cl\xe4ss")
    assert r.exit_code == 1 and "--encoding latin-1" in r.output, r.output
    r = invoke("score", "silhouette", tmp_path / "lat.csv", "-l", "cl\xe4ss", "--encoding", "latin-1")
    assert r.exit_code == 0 and "2 classes" in r.output, r.output


def test_thousands_separators_get_the_hint(tmp_path):
    rows = ["a,b,class"] + [f'"{1000 + 7919 * i:,}",{i % 5},{"pq"[i % 2]}' for i in range(30)]
    (tmp_path / "thou.csv").write_text("\n".join(rows) + "\n")
    r = invoke("score", "silhouette", tmp_path / "thou.csv", "-l", "class")
    assert r.exit_code == 1 and "thousands separators" in r.output and "--thousands ','" in r.output, r.output
    X, _, _ = read_labeled_file(tmp_path / "thou.csv", "class", thousands=",")
    assert X[1, 0] == 8919.0


def test_non_zip_npz_is_not_called_pickled(tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"this is not a zip file at all")
    with pytest.raises(ValueError) as e:
        read_labeled_table(tmp_path / "bad.npz")
    assert "not a readable .npz archive" in str(e.value) and "pickle" not in str(e.value), str(e.value)


def test_decimal_parquet_is_read_as_numbers(tmp_path):
    import decimal
    import pyarrow as pa
    import pyarrow.parquet as pq
    values = [decimal.Decimal(f"{i}.25") for i in range(10)]
    pq.write_table(pa.table({"a": pa.array(values, pa.decimal128(6, 2)), "class": ["p", "q"] * 5}),
                   tmp_path / "dec.parquet")
    X, y, names = read_labeled_file(tmp_path / "dec.parquet", "class")
    assert X.dtype == np.float64 and X[:, 0].tolist() == [i + 0.25 for i in range(10)]


def test_zst_without_zstandard_says_how(tmp_path):
    "`.zst` was advertised; without the zstandard package the message gives both ways out."
    try:
        import zstandard  # noqa: F401
        pytest.skip("zstandard is installed here")
    except ImportError:
        pass
    (tmp_path / "d.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd\x00")
    with pytest.raises(ValueError, match=r"pip install zstandard, or decompress it first \(zstd -d d.csv.zst\)"):
        read_labeled_table(tmp_path / "d.csv.zst", "class")
    assert "(also .gz/.bz2/.xz/.zip/.zst)" not in invoke("--help").output


def test_every_table_kind_is_read_within_max_bytes(tmp_path):
    "The read bound holds for a plain CSV (its size), a parquet file (its row groups' declared size) and the CLI."
    df = pd.DataFrame({"a": np.repeat(np.arange(100.0), 200), "class": ["p", "q"] * 10000})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet", compression="zstd", use_dictionary=False)   # ~2 KB holding ~260 KB
    with pytest.raises(ValueError, match="bytes, more than the bound of 1,000; if the file is genuinely that large"):
        read_labeled_table(tmp_path / "t.csv", "class", max_bytes=1000)
    with pytest.raises(ValueError, match="its row groups decompress to 2[0-9,]+ bytes, more than the bound of 100,000"):
        read_labeled_table(tmp_path / "t.parquet", "class", max_bytes=100_000)
    assert len(read_labeled_table(tmp_path / "t.parquet", "class")[1]) == 20000
    r = invoke("score", "silhouette", tmp_path / "t.csv", "-l", "class", "--max-bytes", "1000")
    assert r.exit_code == 1 and "more than the bound of 1,000" in r.output, r.output
