"""Issue 38, the runner's store, output folders and options (helper "store"): probes of a hostile or careless user, each
a regression test that failed before the fix. The store's checksum covers every byte of a result file; a full or
read-only store or output folder is one line before any work (and a store that fills up during a run stops it at once);
every option of every command is checked before the first expensive step. Real limits, not mocks, where the system
gives them: a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes every write past it fail with EFBIG, exactly as a
full disk does with ENOSPC."""
import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import clm_nb.bundle
import clm_nb.readers
import clm_nb.runner as R
from clm_nb.cli import cli
from studycells import check_cell_error

from clm_nb.runner import Task, demo_task, load_results, read_result, result_path, run, stored_status, task_seed

CODE = Path(clm_nb.bundle.__file__).resolve().parents[1]      # the checkout whose clm_nb is under test
CLM_NB = Path(sys.executable).parent / "clm-nb"


def invoke(*args, env=None):
    "`clm-nb args...` in this process (click's CliRunner), as tests/test_cli.py does."
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="clm-nb", env=env)


def one_line_error(code, stdout, stderr, *fragments):
    "Exit code 1, one line `Error: ...` on stderr with every fragment, no traceback."
    assert code == 1, (code, stdout, stderr)
    assert "Traceback" not in stdout + stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def limited(fsize: int):
    "A preexec_fn: files may grow to `fsize` bytes (then EFBIG, SIGXFSZ ignored), memory 4 GB."
    def set_limits():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # inherited across exec: the spawned workers ignore it too
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    return set_limits


# ------------------------------------------------------------------ item 8: the checksum covers the whole file

@pytest.fixture
def stored(tmp_path):
    "A small stored result: (path, identity, its rows)."
    task = Task({"dataset": "a"}, demo_task, {"n": 10})
    identity = task.identity(task_seed(0, task.key))
    run([task], store=tmp_path, executor="inline", progress=False)
    path = result_path(tmp_path, identity)
    return path, identity, read_result(path, identity)


def test_a_flipped_byte_anywhere_is_detected(stored):
    "Before: 296 of 17,206 flips (footer, metadata, names) went undetected and changed a result."
    path, identity, _ = stored
    whole = path.read_bytes()
    assert len(whole) < 20_000
    missed = []
    fd = os.open(path, os.O_RDWR)                                  # each byte changed in place, then put back
    try:
        for i in range(len(whole)):
            os.pwrite(fd, bytes([whole[i] ^ (0xFF if i % 2 else 0x01)]), i)   # wholly flipped, or its last bit
            if stored_status(path, identity)[0] != "bad":
                missed.append(i)
            os.pwrite(fd, whole[i:i + 1], i)
    finally:
        os.close(fd)
    assert path.read_bytes() == whole and stored_status(path, identity) == ("done", "")
    assert not missed, f"{len(missed)} of {len(whole)} flips undetected, e.g. at {missed[:5]}"


def test_a_renamed_column_is_detected_and_recomputed(stored, tmp_path):
    path, identity, rows = stored
    whole = path.read_bytes()
    path.write_bytes(whole.replace(b"mean", b"mEan"))              # renamed in place, by hand
    assert stored_status(path, identity)[0] == "bad"
    table = pq.read_table(pa.BufferReader(whole))
    pq.write_table(table.rename_columns([("mEan" if c == "mean" else c) for c in table.column_names]), path)
    assert table.schema.metadata[R.DIGEST_META]                      # the rewrite kept the stored checksum: still bad
    assert stored_status(path, identity)[0] == "bad"
    task = Task({"dataset": "a"}, demo_task, {"n": 10})
    assert load_results([task], tmp_path).empty                    # never read as a result
    with pytest.warns(RuntimeWarning, match="could not be trusted"):
        again = run([task], store=tmp_path, executor="inline", progress=False)
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), rows.drop(columns="seconds"))


# ------------------------------------------------------------------ item 9: a full or read-only store

TASK_MODULE = """
import os, numpy as np, pandas as pd
def big(marker_dir, i, random_state=None):
    open(os.path.join(marker_dir, f"started-{i}"), "w").close()
    return pd.DataFrame({"x": np.random.default_rng(i).normal(size=150_000)})   # ~1.2 MB of parquet
"""

STUDY = """
import sys
from clm_nb.runner import Task, run
from clm_big_task import big
if __name__ == "__main__":
    tasks = [Task({"i": i}, big, {"marker_dir": sys.argv[2], "i": i}) for i in range(6)]
    try:
        run(tasks, store=sys.argv[1], executor=sys.argv[3], n_jobs=1, progress=False)
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
        sys.exit(5)
"""


def run_study(tmp_path, fsize, executor="local"):
    (tmp_path / "clm_big_task.py").write_text(TASK_MODULE)
    (tmp_path / "study.py").write_text(STUDY)
    markers, store = tmp_path / "markers", tmp_path / "store"
    markers.mkdir()
    env = dict(os.environ, PYTHONPATH=f"{CODE}{os.pathsep}{tmp_path}")
    done = subprocess.run([sys.executable, str(tmp_path / "study.py"), str(store), str(markers), executor],
                          capture_output=True, text=True, timeout=300, env=env, preexec_fn=limited(fsize), cwd=tmp_path)
    return done, len(list(markers.iterdir())), store


def test_a_full_store_fails_before_any_task(tmp_path):
    "Files limited to 16 KiB: the store's probe fails, one line naming the store, and no task has started."
    done, started, store = run_study(tmp_path, 16 << 10)
    assert done.returncode == 5, (done.stdout, done.stderr[-3000:])
    line = done.stdout.strip()
    assert line.startswith("UnwritableFolder: ") and line.count("\n") == 0, line
    assert f"run: the task store {store}" in line and "ulimit -f" in line, line
    assert started == 0


@pytest.mark.parametrize("executor", ["local", "inline"])
def test_a_store_that_fills_up_during_the_run_stops_it_at_once(tmp_path, executor):
    "The probe fits (256 KiB), a result (~1.2 MB) does not: the first refused write ends the run, no task after it."
    done, started, store = run_study(tmp_path, 256 << 10, executor)
    assert done.returncode == 5, (done.stdout, done.stderr[-3000:])
    line = done.stdout.strip()
    assert line.startswith("UnwritableFolder: ") and line.count("\n") == 0, line
    assert "cannot be written (File too large)" in line, line
    assert started == 1, f"{started} tasks ran: the run went on after the store refused a result"
    assert not list(store.glob("*.parquet")) and not list(store.glob("*.tmp*"))   # no failure recorded, no debris


def test_the_command_line_refuses_a_full_output_folder_in_seconds(tmp_path):
    "clm-nb leaderboard with files limited to 16 KiB: one line, exit 1, no traceback, nothing profiled."
    out, store = tmp_path / "site", tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if k != "CLM_NB_DEBUG"} | {"CLM_NB_DATA": ""}
    done = subprocess.run([str(CLM_NB), "leaderboard", "-o", str(out), "--store", str(store), "--collection",
                           "generated", "--max-datasets", "1", "--executor", "inline", "--no-variants"],
                          capture_output=True, text=True, timeout=300, env=env, preexec_fn=limited(16 << 10))
    one_line_error(done.returncode, done.stdout, done.stderr, f"leaderboard: the site folder (-o) {out}",
                   "a file-size limit (ulimit -f)")
    assert not store.exists()


def read_only(folder: Path) -> tuple[list[str], str]:
    """A command prefix under which `folder` is read-only, and the reason the system gives: for a user, the folder
    chmod 0555 (no prefix); for root, whom permissions do not stop, a read-only bind mount of it in a private mount
    namespace of the command alone (unshare -m), invisible to every other process. Skips when neither works here."""
    folder.chmod(0o555)
    probe = subprocess.run(["sh", "-c", f"touch '{folder}/p'"], capture_output=True)
    if probe.returncode != 0:
        return [], "Permission denied"
    (folder / "p").unlink()
    folder.chmod(0o755)
    wrap = ["unshare", "-m", "sh", "-c", f"mount --bind '{folder}' '{folder}' && mount -o remount,ro,bind '{folder}' "
            '&& exec "$0" "$@"']
    if subprocess.run([*wrap, "sh", "-c", f"! touch '{folder}/p'"], capture_output=True).returncode != 0:
        pytest.skip("root here, and no private read-only mount (unshare -m) either: a read-only folder cannot be made")
    return wrap, "Read-only file system"


def test_a_read_only_store_or_site_folder_fails_before_any_task(tmp_path):
    "A read-only folder, really (chmod for a user, a read-only mount for root): one line, no task, no traceback."
    store = tmp_path / "store"
    store.mkdir()
    (tmp_path / "clm_big_task.py").write_text(TASK_MODULE)
    (tmp_path / "study.py").write_text(STUDY)
    (tmp_path / "markers").mkdir()
    prefix, why = read_only(store)
    try:
        env = dict(os.environ, PYTHONPATH=f"{CODE}{os.pathsep}{tmp_path}")
        done = subprocess.run([*prefix, sys.executable, str(tmp_path / "study.py"), str(store), str(tmp_path / "markers"),
                               "local"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        assert done.returncode == 5, (done.stdout, done.stderr[-3000:])
        line = done.stdout.strip()
        assert line.startswith(f"UnwritableFolder: run: the task store {store} cannot be written ({why}); "), line
        assert line.endswith(", or choose another folder.") and "\n" not in line, line
        assert not list((tmp_path / "markers").iterdir())
        env = {k: v for k, v in os.environ.items() if k != "CLM_NB_DEBUG"} | {"CLM_NB_DATA": ""}
        done = subprocess.run([*prefix, str(CLM_NB), "leaderboard", "-o", str(store / "site"), "--collection",
                               "generated"], capture_output=True, text=True, timeout=300, env=env)
        one_line_error(done.returncode, done.stdout, done.stderr, f"the site folder (-o) {store / 'site'}", why)
        store.chmod(0o755)                                         # a finished store can be read where it is read-only
        study = [sys.executable, str(tmp_path / "study.py"), str(store), str(tmp_path / "markers"), "inline"]
        env = dict(os.environ, PYTHONPATH=f"{CODE}{os.pathsep}{tmp_path}")
        assert subprocess.run(study, capture_output=True, env=env, cwd=tmp_path, timeout=300).returncode == 0
        prefix, why = read_only(store)
        done = subprocess.run([*prefix, *study], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    finally:
        store.chmod(0o755)


def test_check_writable_names_the_folder_and_the_fix(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(R.UnwritableFolder, match="a file of that name is in the way: give a folder"):
        R.check_writable(tmp_path / "file", "the site folder")
    with pytest.raises(ValueError, match="a file is in the way on that path"):   # also a ValueError: one CLI line
        R.check_writable(tmp_path / "file" / "sub")
    assert R.check_writable(tmp_path / "new" / "deep").is_dir() and not list((tmp_path / "new" / "deep").iterdir())


# ------------------------------------------------------------------ item 6: -o NEW with --store ELSEWHERE

def test_leaderboard_creates_its_site_folder_when_the_store_is_elsewhere(tmp_path):
    "Before: everything profiled, then 'Cannot save file into a non-existent directory'."
    out = tmp_path / "new" / "site"
    r = invoke("leaderboard", "-o", out, "--store", tmp_path / "elsewhere", "--collection", "generated",
               "--max-datasets", "1", "--executor", "inline", "--n-jobs", "1", "--view-points", "50",
               "--permutations", "4", "--no-variants", env={"CLM_NB_DATA": ""})
    assert r.exit_code == 0, r.stderr
    assert (out / "index.html").is_file() and (out / "errors.csv").is_file()
    assert list((tmp_path / "elsewhere").glob("*.parquet")) and not (out / "tasks").exists()


# ------------------------------------------------------------------ every option before any work

@pytest.fixture
def no_work(monkeypatch):
    "Reading a data file or listing a bundle counts as work: it raises if an option check lets a command get there."
    calls = []
    def refuse(*a, **k):
        calls.append(a)
        raise AssertionError("the work started")
    monkeypatch.setattr(clm_nb.readers, "read_labeled_table", refuse)
    monkeypatch.setattr(clm_nb.bundle, "list_datasets", refuse)
    monkeypatch.setattr("clm_nb.cli.study.run_study", refuse)
    return calls


@pytest.mark.parametrize("args, fragment", [
    (["--view-points", "5"], "--view-points=5 must be"),
    (["--permutations", "1000000000"], "n_permutations=1000000000 must be an integer in [2, 10000]"),
    (["--permutations", "1"], "n_permutations=1 must be"),
    (["--n-jobs", "0"], "--n-jobs=0 must be"),
    (["--seed", "-1"], "--seed=-1 must be"),
    (["--max-n", "0"], "--max-n=0 must be"),
    (["--max-datasets", "0"], "--max-datasets=0 must be"),
    (["--docs-url", " "], "--docs-url is empty"),
])
def test_leaderboard_refuses_a_bad_option_before_listing_the_bundle(tmp_path, no_work, args, fragment):
    r = invoke("leaderboard", "-o", tmp_path / "site", *args, env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == [] and not (tmp_path / "site").exists()


def test_leaderboard_refuses_an_unusable_folder_before_listing_the_bundle(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("leaderboard", "-o", tmp_path / "file" / "site", env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, "the site folder (-o)", "a file is in the way")
    r = invoke("leaderboard", "-o", tmp_path / "site", "--store", tmp_path / "file" / "s", env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, "the task store (--store)", "a file is in the way")
    assert no_work == []


@pytest.mark.parametrize("args, fragment", [
    (["--permutations", "1000000000"], "in [2, 10000]"),
    (["--permutations", "1"], "n_permutations=1 must be"),
    (["--seed", "-1"], "--seed=-1 must be"),
    (["--worst", "-1"], "--worst=-1 must be"),
    (["--min-class-size", "0"], "--min-class-size=0 must be"),
    (["--ordinal", "size"], "--ordinal 'size': write COLUMN=LEVEL1"),
])
def test_assess_refuses_a_bad_option_before_reading_the_file(tmp_path, no_work, args, fragment):
    r = invoke("assess", tmp_path / "data.csv", "-l", "y", *args)
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == []


@pytest.mark.parametrize("args, fragment", [
    (["silhouette", "--tolerance", "1e-3"], "--tolerance applies to the curve measures"),
    (["aucc", "--tolerance", "-1"], "--tolerance=-1.0 must be"),
    (["silhouette", "--pred-col", "km"], "drop --pred-col"),
    (["ari"], "name the second one's column with --pred-col"),
    (["aari"], "is an ensemble measure"),
    (["silhouette", "--seed", "-1"], "--seed=-1 must be"),
    (["silhouette", "--min-class-size", "0"], "--min-class-size=0 must be"),
])
def test_score_refuses_a_bad_option_before_reading_the_file(tmp_path, no_work, args, fragment):
    r = invoke("score", args[0], tmp_path / "data.csv", "-l", "y", *args[1:])
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == []


def test_bundle_add_refuses_an_unusable_bundle_folder_before_reading_the_file(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("bundle", "add", tmp_path / "data.csv", "-l", "y", "-c", "mine", "--data-dir", tmp_path / "file" / "bundle")
    one_line_error(r.exit_code, r.stdout, r.stderr, "bundle add: the bundle folder", "in the way")
    assert no_work == []


def test_study_refuses_an_unusable_results_folder_before_starting_the_kernel(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("study", "leaderboard", "-o", tmp_path / "file" / "out")
    one_line_error(r.exit_code, r.stdout, r.stderr, "study leaderboard: the results folder", "in the way")
    assert no_work == []


def test_the_python_api_bounds_the_relabellings_at_its_door(monkeypatch):
    "A billion relabellings refused at the door of assess, clm_profile and profile_tasks (the work is a trap here)."
    import clm_nb.assessment, clm_nb.profile, clm_nb.tasks
    def refuse(*a, **k):
        raise AssertionError("the work started")
    monkeypatch.setattr(clm_nb.assessment, "prepare", refuse)
    monkeypatch.setattr(clm_nb.profile, "pair_breakdown", refuse)
    monkeypatch.setattr(clm_nb.tasks, "pair_breakdown", refuse)
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.repeat([0, 1], 10)
    empty = pd.DataFrame(columns=["collection", "name", "n", "n_classes", "labeled"])
    for call in (lambda: clm_nb.assessment.assess(X, y, n_permutations=10 ** 9),
                 lambda: clm_nb.profile.clm_profile(X, y, n_permutations=10 ** 9),
                 lambda: clm_nb.tasks.profile_tasks(empty, n_permutations=10 ** 9)):
        with pytest.raises(ValueError, match=r"in \[2, 10000\]"):
            call()


# ------------------------------------------------------------------ the studies' parameters and folders

def study_error(study: str, **overrides) -> str:
    "The error of study `study`'s parameter check with `overrides` (`studycells.check_cell_error`)."
    return check_cell_error(CODE / "nbs" / "studies" / f"{study}.ipynb", **overrides)


STUDIES = ("clm_evidence", "cluster_level", "cvi_evaluation", "dataset_ranking", "discotec", "imbalance", "leaderboard",
           "scaling")


def test_every_study_refuses_an_unusable_out_dir_in_its_parameter_check(tmp_path):
    (tmp_path / "file").write_text("x")
    for study in STUDIES:
        error = study_error(study, out_dir=str(tmp_path / "file" / "out"))
        assert "out_dir" in error and "a file is in the way" in error, (study, error)


def test_the_leaderboard_study_bounds_its_options_before_any_work(tmp_path):
    "Before: view_points=5 failed in build_report after all the profiling; n_permutations was unbounded."
    out = tmp_path / "out"
    assert "[2, 10000]" in study_error("leaderboard", out_dir=str(out), n_permutations=10 ** 9)
    assert "view_points=5" in study_error("leaderboard", out_dir=str(out), view_points=5)
    assert "[2, 10000]" in study_error("clm_evidence", out_dir=str(out), n_permutations=10 ** 9)
    assert not out.exists()
