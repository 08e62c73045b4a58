"""Running a study's first two cells in-process (its parameters cell, then its check cell), as papermill would with
injected parameters: used by tests/test_studies.py."""
import json
from pathlib import Path

import pytest


def check_cell_error(path: Path, **overrides) -> str:
    "Run the study notebook `path`'s parameters cell, the overrides and its check cell; the ValueError's text."
    cells = [c for c in json.loads(Path(path).read_text())["cells"] if c["cell_type"] == "code"]
    assert "parameters" in cells[0]["metadata"].get("tags", []) and "check_params(" in "".join(cells[1]["source"])
    namespace = {}
    exec("".join(cells[0]["source"]), namespace)
    namespace.update(overrides)
    with pytest.raises(ValueError) as err:
        exec("".join(cells[1]["source"]), namespace)
    return str(err.value)
