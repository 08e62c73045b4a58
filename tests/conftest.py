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
