"""Smoke runs of the study notebooks with tiny parameters (papermill), into a temporary folder."""
import json
from pathlib import Path

import pandas as pd
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "nbs" / "studies" / "dataset_ranking.ipynb"


def _run(tmp_path, **params):
    out = tmp_path / "out"
    pm.execute_notebook(str(STUDY), str(tmp_path / "executed.ipynb"), parameters=dict(out_dir=str(out), **params),
                        progress_bar=False, kernel_name="python3", cwd=str(ROOT))
    return out


def test_dataset_ranking_embedded_default(tmp_path, monkeypatch):
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = _run(tmp_path, max_datasets=3, measures=["silhouette", "davies_bouldin", "calinski_harabasz"])
    table = pd.read_csv(out / "dataset_ranking.csv", index_col=0)
    assert len(table) == 3
    assert {"silhouette", "silhouette_rank", "mean_rank"} <= set(table.columns)
    assert table.mean_rank.is_monotonic_increasing
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == 3 and summary["problems"] == 0
    for stem in ["rank_heatmap", "rank_agreement", "ranking_silhouette"]:
        assert (out / "charts" / f"{stem}.svg").read_text().lstrip().startswith("<svg")
        assert (out / "charts" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"


def test_dataset_ranking_on_shared_bundle(tmp_path, shared_data_dir):
    out = _run(tmp_path, data_dir=str(shared_data_dir), collections="gagolews_v1/fcps", max_datasets=2,
               measures=["silhouette", "dunn"])
    long = pd.read_csv(out / "scores_long.csv")
    assert set(long.collection) == {"gagolews_v1/fcps"} and long.dataset.nunique() == 2
    assert long.value.notna().all()
