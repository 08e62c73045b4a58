"""Fixtures several test files share. The package's modules are imported inside the fixtures, so collecting the tests
loads no more of `clm_nb` than the test files themselves do (tests/test_api.py checks what `import clm_nb` loads)."""
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hostile import hostile_data

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_data_dir():
    "The shared benchmark bundle beside the checkout, or skip."
    if not (SHARED_DATA / "manifest.csv").exists():
        pytest.skip("../shared/datasets is not beside this checkout")
    return SHARED_DATA


@pytest.fixture(scope="session")
def quick_study():
    """`quick_study(name)` -> the output folder of study `name` run with the small parameters of
    docs/studies_quick.json on the embedded default. The run is the one the docs site shows (tools/build_docs.py
    caches it in _docs_build/studies/ by study, parameters and code), so the smoke tests and `make docs` share it."""
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    from build_docs import code_key, quick_params, run_study
    params, key, done = quick_params(), code_key(), {}

    def get(name: str) -> Path:
        if name not in done:
            done[name] = run_study(name, params[name], key)[1].parent / "out"
        return done[name]
    return get


@pytest.fixture(scope="session")
def iris():
    "Iris with the species' names as labels (test_assessment, test_cli, test_intervals: issue 40's metric tests)."
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]


@pytest.fixture(scope="session")
def big_blobs():
    "2,400 points in 4 overlapping classes of unequal sizes (test_profile, test_assessment, test_cli: issue 39's scale)."
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=[1000, 700, 500, 200], centers=[[0, 0], [3, 0], [0, 3], [3, 3]], cluster_std=1.4,
                      random_state=7)
    return X, y


# ---- issue 38: a label, a column or a dataset name a hostile user chose (tests/hostile.py), in every output

@pytest.fixture(scope="session")
def assessed():
    "`assess` of the hostile labels (test_assessment, test_report)."
    import clm_nb
    X, y = hostile_data()
    return clm_nb.assess(X, y, n_permutations=5, variants=False)


@pytest.fixture(scope="session")
def hostile_csv(tmp_path_factory):
    "A user's CSV whose labels and one column name are hostile."
    X, y = hostile_data()
    path = tmp_path_factory.mktemp("csv") / "hostile.csv"
    pd.DataFrame({"a": X[:, 0], "b\x1b[1m\u202e": X[:, 1], "class": y}).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def gallery_html(hostile_csv, tmp_path_factory):
    "The gallery's section of the hostile CSV (tools/gallery.py), rendered as MyST would: raw HTML on, dollarmath."
    import gallery
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    spec = gallery.Spec(name="hostile", title="Hostile", source="test", licence="none", write="", label="class",
                        options={"n_permutations": 5, "variants": False})
    record = gallery.assess_one(spec, hostile_csv)
    md = "\n".join(gallery.section(spec, record))
    md = md.split("````{raw} html")[0]                 # the assessment's own HTML: tested above, not Markdown
    body = MarkdownIt("commonmark", {"html": True}).enable("table").use(dollarmath_plugin).render(md)
    path = tmp_path_factory.mktemp("gallery") / "gallery.html"
    path.write_text(f"<!doctype html><meta charset=utf-8><body>{body}</body>", encoding="utf-8")
    return path


# ---- the embedded default's profiles, read by test_report (the report) and the rank intervals (issue 39)

@pytest.fixture(scope="session")
def embedded_profiles(tmp_path_factory):
    """(catalog, results) of the profile tasks of the embedded default (ten datasets): 10 relabellings per class pair
    and 10 half-sample draws per dataset. The draws are rows of their own (part 'draw'), added after each profile, so
    the results without them are what the tasks give without `n_resamples`: test_report's report reads those, the
    rank-interval leaderboard all of them. One run for the whole session: the task store is in the folder pytest-xdist's
    workers share, under a lock, so the first worker computes it and the other reads it from the store."""
    import fcntl
    from clm_nb.bundle import list_datasets
    from clm_nb.runner import run
    from clm_nb.tasks import profile_tasks
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    catalog = list_datasets(False, labeled=False)
    with open(root / "embedded_profiles.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = run(profile_tasks(catalog, data_dir=False, n_permutations=10, n_resamples=10),
                      store=root / "embedded_profiles", n_jobs=1, progress=False)
    return catalog, results


@pytest.fixture(scope="session")
def rank_board(embedded_profiles, tmp_path_factory):
    "The embedded default's leaderboard with 10 draws per dataset (test_leaderboard, test_report)."
    from clm_nb.leaderboard import leaderboard
    catalog, results = embedded_profiles
    return leaderboard(results, catalog, data_dir=False), catalog, results, tmp_path_factory.mktemp("ranks")
