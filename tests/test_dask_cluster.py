"""Scale-out on a real Dask cluster: a scheduler and two workers started as separate processes on loopback (`dask
scheduler`, `dask worker`), as a user starts them on their machines. The study's tasks run there through
`clm_nb.runner.run(..., executor="dask", dask_address=...)` and give the same values as the local executor; the
cluster's processes are stopped by process group whatever the test's outcome."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from clm_nb.bundle import load_dataset
from clm_nb.runner import Task, demo_task, run, thread_report, worker_threads
from clm_nb.tasks import ground_truth_tasks

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 90          # seconds for the scheduler file and both workers to appear (a loaded CI machine)


def _start(args, log):
    "A `python -m dask ...` process in a session (and process group) of its own, its output in `log`."
    with open(log, "w") as out:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(proc, timeout=5.0):
    "SIGTERM to the process's group (the nanny and its worker process too), SIGKILL after `timeout`; wait until empty."
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.time() + wait
        while time.time() < deadline:
            proc.poll()                                   # reap the group leader, so the group can empty
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
    proc.poll()


def _group_alive(pgid) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """The address of a scheduler with two one-thread workers, all separate processes, shared by this module's tests
    (starting them is most of the time); stopped by process group in a finally."""
    pytest.importorskip("distributed", reason="the Dask executor needs the `distributed` package")
    from distributed import Client
    tmp_path = tmp_path_factory.mktemp("dask_cluster")
    sched_file = tmp_path / "scheduler.json"
    procs = []
    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(sched_file)], tmp_path / "scheduler.log"))
        for i in range(2):
            procs.append(_start(["worker", "--scheduler-file", str(sched_file), "--nthreads", "1", "--nworkers", "1",
                                 "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "60",
                                 "--local-directory", str(tmp_path / f"worker{i}")], tmp_path / f"worker{i}.log"))
        deadline = time.time() + START_TIMEOUT
        while not sched_file.exists() and time.time() < deadline:
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()[-2000:]
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        with Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
        yield address, procs
    finally:
        for p in reversed(procs):                       # the workers first, then the scheduler
            _stop(p)
        left = [p.pid for p in procs if _group_alive(p.pid)]
        assert not left, f"the cluster's process groups {left} are still alive"


def comparable(df):
    return df.drop(columns=["seconds", "pid"], errors="ignore").sort_values("_key").reset_index(drop=True)


def test_an_external_dask_cluster_gives_the_local_results(dask_cluster, tmp_path):
    address, procs = dask_cluster
    iris = load_dataset("iris")
    tasks = ground_truth_tasks([iris], techniques=["kmeans", "single"], n_trials=2)
    tasks += [Task({"collection": "demo", "dataset": f"d{i}"}, demo_task, {"n": 50}) for i in range(4)]
    remote = run(tasks, store=tmp_path / "dask", executor="dask", dask_address=address, progress=False)
    local = run(tasks, store=tmp_path / "local", n_jobs=2, progress=False)
    assert (remote.error == "").all(), remote.error.tolist()
    pd.testing.assert_frame_equal(comparable(remote), comparable(local))
    assert all(p.poll() is None for p in procs)                               # the cluster outlives the run


def test_tasks_on_an_external_cluster_share_the_hosts_cores(dask_cluster, tmp_path):
    address, procs = dask_cluster
    probes = [Task({"probe": i}, thread_report) for i in range(4)]
    res = run(probes, store=tmp_path, executor="dask", dask_address=address, progress=False)
    t = worker_threads(2)                                                     # two one-thread workers on this host
    assert (res.error == "").all(), res.error.tolist()
    assert res[["openmp_threads", "blas_threads", "numba_threads", "omp_env"]].drop_duplicates().values.tolist() == [
        [t, t, t, str(t)]]
    assert os.getpid() not in set(res.pid)
