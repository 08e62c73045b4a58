"""The study runner: executors agree, failures are isolated, and a killed study resumes without recomputing."""
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from clm_nb.runner import Task, demo_task, load_results, run, run_summary, task_seed

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
