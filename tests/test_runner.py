"""The study runner: executors agree, failures are isolated, a killed study resumes without recomputing, workers share
the cores instead of oversubscribing them, and long tasks start first.

issue 38: the store's checksum covers every byte of a result file; a full or read-only store fails in one line before
any task, and a store that fills up during a run stops it at once.

issue 37: study parameters typed on the command line, checked by `check_params` (a bool takes every usual spelling)."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import clm_nb.runner as R
from clm_nb.runner import (THREAD_VARIABLES, Task, demo_task, load_results, read_result, result_path, run, run_summary,
                           stored_status, task_seed, thread_report, worker_threads)

from hostile import CLM_NB, CODE, limited, one_line_error

ROOT = Path(__file__).resolve().parents[1]


def grid(n_tasks=8, sleep=0.0, fail=()):
    return [Task({"dataset": f"d{i % 4}", "trial": i}, demo_task, {"n": 40, "sleep": sleep, "fail": i in fail})
            for i in range(n_tasks)]


def comparable(df):
    return df.drop(columns=["seconds"]).sort_values("_key").reset_index(drop=True)


def test_seeds_depend_on_study_seed_and_key_only():
    assert task_seed(0, {"a": 1, "b": "x"}) == task_seed(0, {"b": "x", "a": 1})
    assert task_seed(0, {"a": 1}) != task_seed(1, {"a": 1}) != task_seed(0, {"a": 2})


def test_process_pool_equals_in_process(tmp_path):
    serial = run(grid(), store=tmp_path / "serial", n_jobs=1, progress=False)
    pooled = run(grid(), store=tmp_path / "pool", n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(comparable(serial), comparable(pooled))
    assert len(list((tmp_path / "pool").glob("*.parquet"))) == 8


def test_dask_local_cluster_equals_local(tmp_path):
    pytest.importorskip("distributed")
    local = run(grid(), store=tmp_path / "local", n_jobs=1, progress=False)
    dask = run(grid(), store=tmp_path / "dask", executor="dask", n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(comparable(local), comparable(dask))


def test_failures_are_recorded_and_do_not_stop_the_study(tmp_path):
    res = run(grid(fail=(1, 6)), store=tmp_path, n_jobs=2, progress=False)
    assert len(res) == 8
    failed = res[res.error != ""]
    assert sorted(failed.trial) == [1, 6] and failed.error.str.contains("asked to fail").all()
    assert res.loc[res.error == "", "mean"].notna().all()
    summary = run_summary(res)
    assert summary.failed.sum() == 2 and summary.tasks.sum() == 8


KILLABLE = """
import sys
from clm_nb.runner import Task, demo_task, run
tasks = [Task({"dataset": f"d{i % 4}", "trial": i}, demo_task, {"n": 40, "sleep": 0.4, "fail": False}) for i in range(12)]
run(tasks, store=sys.argv[1], n_jobs=1, progress=False)
"""


def test_kill_and_resume(tmp_path):
    store = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-c", KILLABLE, str(store)], cwd=ROOT)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(store.glob("*.parquet"))) < 4:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    done = {p.name: p.stat().st_mtime_ns for p in store.glob("*.parquet")}
    assert 4 <= len(done) < 12, "the study should have been killed part-way"
    tasks = grid(12, sleep=0.4)
    resumed = run(tasks, store=store, n_jobs=2, progress=False)
    assert {p: store.joinpath(p).stat().st_mtime_ns for p in done} == done          # finished tasks not recomputed
    assert len(list(store.glob("*.parquet"))) == 12 and not list(store.glob("*.tmp*"))
    fresh = run(grid(12), store=tmp_path / "fresh", n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(comparable(resumed), comparable(fresh))
    pd.testing.assert_frame_equal(load_results(tasks, store), resumed)


def test_bad_calls(tmp_path):
    with pytest.raises(ValueError, match="unique"):
        run(grid() + grid()[:1], store=tmp_path)
    with pytest.raises(ValueError, match="executor='ray'"):
        run(grid(), store=tmp_path, executor="ray")
    with pytest.raises(ValueError, match="Task"):
        run([lambda: 1], store=tmp_path)


# ---------------------------------------------------------------- threads per worker, longest first

def limits(report):
    return report[["openmp_threads", "blas_threads", "numba_threads", "omp_env"]].drop_duplicates().values.tolist()


def probes(n=2):
    return [Task({"probe": i}, thread_report) for i in range(n)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_local_workers_share_the_cores_and_the_study_keeps_its_limits(tmp_path, n_jobs):
    from threadpoolctl import threadpool_info
    before = (threadpool_info(), {v: os.environ.get(v) for v in THREAD_VARIABLES})
    res = run(probes(n_jobs), store=tmp_path, n_jobs=n_jobs, progress=False)
    t = worker_threads(n_jobs)
    assert (res.error == "").all() and limits(res) == [[t, t, t, str(t)]]
    assert os.getpid() not in set(res.pid)
    assert (threadpool_info(), {v: os.environ.get(v) for v in THREAD_VARIABLES}) == before


def test_dask_local_cluster_workers_share_the_cores_and_the_study_gets_its_environment_back(tmp_path):
    pytest.importorskip("distributed")
    before = {v: os.environ.get(v) for v in THREAD_VARIABLES}
    res = run(probes(), store=tmp_path, executor="dask", n_jobs=2, progress=False)
    t = worker_threads(2)
    assert (res.error == "").all() and limits(res) == [[t, t, t, str(t)]]
    assert {v: os.environ.get(v) for v in THREAD_VARIABLES} == before        # the nanny's variables are undone


def execution_order(store, tasks):
    "The tasks' key values in the order their result files were written."
    ids = {t.key["trial"]: t.identity(task_seed(0, t.key)) for t in tasks}
    return sorted(ids, key=lambda k: result_path(store, ids[k]).stat().st_mtime_ns)


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_tasks_run_longest_first_unknown_costs_first(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("distributed")
    costs = [1.0, None, 30.0, 5.0, 30.0, 2.0]
    tasks = [Task({"trial": i}, demo_task, {"n": 10, "sleep": 0.05}, cost=c) for i, c in enumerate(costs)]
    res = run(tasks, store=tmp_path, executor=executor, n_jobs=1, progress=False)
    assert execution_order(tmp_path, tasks) == [1, 2, 4, 3, 5, 0]
    assert res.trial.tolist() == list(range(6))                                # results stay in task order


def test_quiet_switch_silences_the_tasks_bar(tmp_path, monkeypatch, capfd):
    """Issue 49: `CLM_NB_PROGRESS=0` (what `clm-nb --quiet` sets) is the one switch of every bar: the runner's `tasks:`
    bar went on writing to a log file even with it, since the runner's default (and the CLI) asked for a bar."""
    monkeypatch.setenv("CLM_NB_PROGRESS", "0")
    run(grid(2), store=tmp_path / "a", executor="inline", progress=True)
    run(grid(2), store=tmp_path / "b", executor="inline")
    monkeypatch.delenv("CLM_NB_PROGRESS")
    run(grid(2), store=tmp_path / "c", executor="inline")           # stderr is no terminal: no bar by default either
    err = capfd.readouterr().err
    assert "tasks" not in err, err


# ---- issue 38: the store's checksum covers every byte of a result file; a full or read-only store fails in one ...

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


# ---- issue 37: study parameters typed on the command line, checked by `check_params` (a bool takes every usual ...

@pytest.mark.parametrize("typed, want", [("true", True), ("TRUE", True), ("Yes", True), ("on", True), ("1", True),
                                         (1, True), (True, True), ("false", False), ("No", False), ("OFF", False),
                                         ("0", False), (0, False), (np.bool_(False), False)])
def test_study_flag_accepts_what_people_type(typed, want):
    from clm_nb.runner import Param, check_params
    values = {"standardize": typed}
    check_params(values, {"standardize": Param("bool")})
    assert values["standardize"] is want                      # a Python bool, written back into the study's globals


@pytest.mark.parametrize("typed", ["maybe", "", "none", 2, 0.5, None, [True]])
def test_study_flag_refuses_anything_else_in_one_line(typed):
    from clm_nb.runner import Param, check_params
    with pytest.raises(ValueError) as e:
        check_params({"standardize": typed}, {"standardize": Param("bool")})
    assert "\n" not in str(e.value) and "standardize" in str(e.value) and "-p standardize true" in str(e.value)


def test_optional_study_flag_takes_none_as_typed():
    from clm_nb.runner import Param, check_params
    for typed in (None, "None", "none", "null"):
        values = {"standardize": typed}
        check_params(values, {"standardize": Param("bool", optional=True)})
        assert values["standardize"] is None


def test_papermill_true_reaches_the_study_as_a_bool(tmp_path):
    "The whole path: `papermill ... -p flag true` runs a study whose first cell checks its parameters; `maybe` stops it."
    import subprocess
    import sys
    import nbformat
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("flag: bool = False", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("from clm_nb.runner import Param, check_params\n"
                                          "check_params(globals(), {'flag': Param('bool')})\nassert flag is True")]
    nbformat.write(nb, tmp_path / "study.ipynb")
    run = lambda value: subprocess.run([sys.executable, "-m", "papermill", str(tmp_path / "study.ipynb"),
                                        str(tmp_path / "out.ipynb"), "-p", "flag", value, "--no-progress-bar"],
                                       capture_output=True, text=True)
    ok = run("true")
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = run("maybe")
    assert bad.returncode != 0
    assert "ValueError: study: flag='maybe' is not a yes/no value; type -p flag true or -p flag false" in bad.stderr
