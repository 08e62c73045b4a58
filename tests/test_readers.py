"""The file readers (clm_nb.readers, notebook 15_readers): a user's CSV, parquet or npz file read within bounds, with
one-line errors that say how to fix the file.

issue 38: hostile and careless input files, each test one probe of the issue. The probes that could allocate gigabytes
or block forever on the code before the fix (the bombs, /dev/zero, a FIFO, the huge label) run in a subprocess bounded
in address space (RLIMIT_AS, 2 GiB) and in time, one after the other in one process, so the file pays one import. The
same files through the command line are in test_cli.py, the concurrent `bundle add` in test_bundle.py.

file and array digests; the advice for a header-less saved index (issue 49)."""
import gzip
import json
import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from clm_nb import bundle as datasets   # the checkout under test (PYTHONPATH)
from clm_nb.readers import array_digest, file_digest, read_labeled_file, read_labeled_table

from hostile import TIMEOUT

LIMIT = 2 << 30                                   # RLIMIT_AS of the bounded probes


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

def test_classes_named_na_none_null_nan_are_classes(tmp_path):
    "Only an empty cell is a missing label; `NA`, `None`, `null`, `nan` are class names."
    names = ["NA", "None", "null", "nan"]
    (tmp_path / "na.csv").write_text("x,class\n" + "".join(f"{i},{names[i % 4]}\n" for i in range(40)))
    _, y, _ = read_labeled_file(tmp_path / "na.csv", "class")
    assert sorted(set(y.tolist())) == sorted(names)
    (tmp_path / "empty.csv").write_text("x,class\n1,a\n2,\n3,b\n")
    with pytest.raises(ValueError, match=r"1 label\(s\) are missing \(an empty cell or a null; first at row 1\)"):
        read_labeled_file(tmp_path / "empty.csv", "class")


# ---------------------------------------------------------------- options silently ignored, misleading messages


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


# ---- file and array digests; the advice for a header-less saved index (issue 49).

def test_array_digest():
    X = np.arange(6.0).reshape(3, 2)
    assert array_digest(X, [0, 1, 1]) == array_digest(X.copy(), np.array([0, 1, 1]))
    assert array_digest(X) == array_digest(np.asfortranarray(X))
    assert len({array_digest(X), array_digest(X.reshape(2, 3)), array_digest(X.astype(np.float32)), array_digest(X, X),
                array_digest(X.T), array_digest()}) == 6
    y = np.array(["a", -1, "b"], dtype=object)
    assert array_digest(y) == array_digest(np.array(["a", -1, "b"], dtype=object)) != array_digest(y.astype(str))
    with pytest.raises(ValueError, match="file_digest: .*does not exist"):
        file_digest("/no/such/file.npz")


def test_header_less_index_advice_names_pandas_and_r(tmp_path):
    "Issue 49 (item 9): a header-less saved index may come from R's write.csv as well as from pandas."
    from clm_nb.readers import read_labeled_table
    path = tmp_path / "r.csv"
    path.write_text('"","w","y"\n"1",0.5,"a"\n"2",0.1,"b"\n"3",0.7,"a"\n')
    with pytest.raises(ValueError, match=r"pandas: to_csv\(..., index=False\); R: write.csv\(..., row.names = FALSE\)"):
        read_labeled_table(path, "y")
