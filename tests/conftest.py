import os
from pathlib import Path

import pytest

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
