"""The study runner: executors agree, failures are isolated, a killed study resumes without recomputing, workers share
the cores instead of oversubscribing them, and long tasks start first."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from clm_nb.runner import (THREAD_VARIABLES, Task, demo_task, load_results, result_path, run, run_summary, task_seed,
                           thread_report, worker_threads)

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
