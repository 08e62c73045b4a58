"""README.md's quick start runs as written (X, y: iris; labels: a k-means partition)."""
import re
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert text.index("make study") < text.index("## Quick start")      # the two commands first


def test_readme_quick_start_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 3
    X, y = load_iris(return_X_y=True)
    labels = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    ns = {"X": X, "y": y, "labels": labels, "np": np}
    for block in blocks:
        exec(compile(block, str(README), "exec"), ns)
    assert ns["a"].verdict in ("trustworthy", "doubtful", "unreliable")


def test_readme_command_lines_run(tmp_path):
    "Every `clm-nb ...` line of the README's shell blocks runs (on iris written as data.csv with a `class` column)."
    import shlex
    import subprocess
    import sys
    import pandas as pd
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    lines = [ln.split("#")[0].strip() for b in blocks for ln in b.splitlines() if ln.startswith("clm-nb ")]
    assert any(ln.startswith("clm-nb assess") for ln in lines)
    X, y = load_iris(return_X_y=True)
    pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(**{"class": np.array(["s", "v", "g"])[y]}).to_csv(
        tmp_path / "data.csv", index=False)
    exe = str(Path(sys.executable).parent / "clm-nb")
    for line in lines:
        res = subprocess.run([exe, *shlex.split(line)[1:]], cwd=tmp_path, capture_output=True, text=True)
        assert res.returncode == 0 and res.stdout.strip(), (line, res.stderr)


def test_shared_bundle_examples_say_how_to_get_data():
    "A page whose examples use `../shared/datasets` says it is the project's shared bundle and how to make one's own."
    root = README.parent
    for page in [README, *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        if "../shared/datasets" in text:
            assert "shared benchmark bundle" in text and "clm-nb bundle add" in text and "CLM_NB_DATA" in text, page.name
