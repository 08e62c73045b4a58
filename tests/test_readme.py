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
