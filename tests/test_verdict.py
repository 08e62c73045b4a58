"""Tests of clm_nb.verdict's leaderboard part: profile tasks and the leaderboard table (the verdict rule has its own
tests in test_verdict_uncertainty.py)."""
from pathlib import Path

import numpy as np
import pandas as pd

from clm_nb.bundle import add_to_bundle, list_datasets
from clm_nb.runner import run, run_errors
from clm_nb.tasks import labelling_tasks, profile_tasks
from clm_nb.leaderboard import leaderboard

MEASURES = ["ch_btwn", "dbcv_btwn"]


def test_a_broken_labelling_is_that_labellings_problem(tmp_path):
    """Issue 49: one broken labelsK (149 labels for 150 points), the only dataset with that many labellings, failed
    its task and aborted `clm-nb leaderboard` ("no dataset could be profiled"); it is a recorded problem instead."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 2)) + 5 * y[:, None]
    add_to_bundle(X, y, tmp_path, "c", "good")
    np.savez_compressed(tmp_path / "c" / "broken.npz", X=X, y=y, labels1=y[::-1].copy(), labels2=y[:59])
    manifest = pd.read_csv(tmp_path / "manifest.csv", dtype=str, keep_default_na=False)
    row = manifest.iloc[0].to_dict() | dict(name="broken", file="c/broken.npz", label_variants="3")
    pd.concat([manifest, pd.DataFrame([row])]).to_csv(tmp_path / "manifest.csv", index=False)
    catalog = list_datasets(tmp_path, labeled=False)
    options = dict(data_dir=tmp_path, measures=MEASURES, primary="ch_btwn", n_permutations=2)
    store = tmp_path / "tasks"
    results = run(profile_tasks(catalog, **options), store=store, executor="inline", progress=False)
    planned = labelling_tasks(catalog, **options)
    assert [len(planned[k]) for k in ("labels1", "labels2")] == [1, 1]
    labellings = {k: run(v, store=store, executor="inline", progress=False) for k, v in planned.items()}
    assert run_errors(labellings["labels2"]).empty                        # a result, not a failed task
    board = leaderboard(results, catalog, data_dir=tmp_path, measures=MEASURES, primary="ch_btwn",
                        labellings=labellings)
    t = board.table.set_index("dataset")
    assert t.at["good", "verdict"] in ("trustworthy", "doubtful", "unreliable")          # the others go on
    assert t.at["broken", "verdict_labels2"] == "not scored" and "labels2" in t.at["broken", "problem"]
    problems = labellings["labels2"].problem.dropna()
    assert problems.str.contains("reference labelling labels2 cannot be read").all() and len(problems) == 2
