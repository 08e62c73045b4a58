"""`clm_nb.repair` (issue 53, item 3): the split test holds its level and agrees with R's diptest, the evidence of each
kind of change is found where it is planted and not where it is absent, the changes do not depend on how the labels
are spelled or the rows ordered, a repair reads back from the bundle, and bad input is refused.

Level of the split gate: every class of a dataset is one Gaussian (or uniform) cloud, so any suggested split is a
false one. Holm over the classes keeps the family-wise error at alpha = 0.05; over 40 datasets the binomial sd of an
observed rate of 0.05 is 0.034, and we accept at most 4 false splits (0.10, about 0.05 + 1.5 sd; the full figure, on 400
datasets, is benchmarks/bench_split_level.py's). Power: two blobs six sds apart filed under one label are found in at
least 27 of 30 datasets.
"""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from pathlib import Path
from scipy import sparse
from scipy.stats import expon, norm
from sklearn.datasets import make_blobs

from clm_nb.bundle import add_labelling, add_to_bundle, load_dataset
from clm_nb.readers import read_labeled_table
from clm_nb.repair import (broken_pairs, dip_split_test, holm, merge_classes, multimodal_classes,
                           neighbour_disagreements, suggest_repairs)

DATA = Path(__file__).parent / "data"
FAST = dict(n_resamples=10, progress=False)


def _golden_samples():
    "The samples of tests/data/make_dip_golden.R, rebuilt from the same formulas."
    q = lambda m: norm.ppf(np.arange(1, m + 1) / (m + 1))
    return {"normal": q(99), "bimodal": np.r_[q(50) - 3, q(50) + 3], "close": np.r_[q(60) - 1.2, q(60) + 1.2],
            "uniform": np.arange(1, 41) / 41, "skewed": expon.ppf(np.arange(1, 81) / 81),
            "three": np.r_[q(30) - 5, q(30), q(30) + 5]}


def test_dip_agrees_with_r():
    "The dip and its p-value, as the split test computes them (the diptest package), equal R's diptest::dip.test."
    import diptest
    golden = pd.read_csv(DATA / "dip_golden.csv").set_index("sample")
    for name, x in _golden_samples().items():
        dip, p = diptest.diptest(x)
        assert len(x) == golden.at[name, "n"]
        assert dip == pytest.approx(golden.at[name, "dip"], rel=1e-9, abs=1e-12)
        assert p == pytest.approx(golden.at[name, "p_value"], abs=1e-6)


def test_split_gate_holds_its_level():
    "No class is multi-modal: the share of datasets with a (false) split stays within the family-wise level."
    rng = np.random.default_rng(0)
    false = 0
    for s in range(40):
        d = int(rng.integers(2, 6))
        parts = [rng.normal(size=(60, d)) @ rng.normal(size=(d, d)) + 10 * c if s % 2 else rng.uniform(size=(60, d)) + 3 * c
                 for c in range(3)]
        t = multimodal_classes(np.vstack(parts), np.repeat([0, 1, 2], 60), random_state=s)
        false += bool(t.multimodal.any())
    assert false <= 4


def test_split_gate_finds_two_modes():
    "Two blobs six sds apart under one label: found in at least 27 of 30 datasets, and only that class."
    found = 0
    for s in range(30):
        X, y = make_blobs(240, centers=[[0, 0, 0], [6, 0, 0], [0, 20, 0]], random_state=s)
        y = np.where(y == 1, 0, y)
        t = multimodal_classes(X, y, random_state=s).set_index("class")
        found += bool(t.at[0, "multimodal"])
        assert not t.at[2, "multimodal"]
    assert found >= 27


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_disagreements_do_not_depend_on_spelling_or_order(seed):
    "Renaming the classes (bijectively) and shuffling the rows flags the same points with the same suggestions."
    rng = np.random.default_rng(seed)
    X, y = make_blobs(90, centers=3, cluster_std=2.5, random_state=seed)
    X = X + rng.normal(scale=1e-9, size=X.shape)                    # no exact distance ties
    names = np.array(["c", "a", "b"])
    perm = rng.permutation(90)
    a = neighbour_disagreements(X, y)
    b = neighbour_disagreements(X[perm], names[y][perm])
    mapped = {(int(r.position), names[r.label], names[r.suggested]) for r in a.itertuples()}
    assert mapped == {(int(perm[r.position]), r.label, r.suggested) for r in b.itertuples()}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)),
                                                                      max_size=4))
def test_merging_only_joins(y, pairs):
    "A merge changes only points of the merged classes, keeps points of one class together, and names an existing class."
    y = np.array(y)
    m = merge_classes(y, pairs)
    touched = {c for p in pairs for c in p}
    assert all(m[i] == y[i] for i in range(len(y)) if y[i] not in touched)
    for c in set(y):
        assert len(set(m[y == c])) == 1
    assert set(m) <= set(y)


def test_holm_matches_statsmodels_definition():
    "Holm's adjusted p-values of a known example (Holm 1979's step-down, as statsmodels' multipletests gives them)."
    np.testing.assert_allclose(holm([0.01, 0.02, 0.03, 0.04, 0.05]), [0.05, 0.08, 0.09, 0.09, 0.09])
    np.testing.assert_allclose(holm([0.5, 0.001]), [0.5, 0.002])


def test_broken_pair_is_merged_and_gains():
    "A class cut at random into two labels is found as a broken pair; merging them raises the CLM by a decided margin."
    X, y = make_blobs(300, centers=[[0, 0], [10, 0], [0, 10]], random_state=1)
    y2 = np.where((y == 2) & (np.arange(300) % 2 == 0), 3, y)
    r = suggest_repairs(X, y2, kinds="merge", **FAST)
    assert {frozenset(p) for p in zip(r.merges.class_a, r.merges.class_b)} == {frozenset((2, 3))}
    assert r.table.loc["merge 1", "decided"] and r.table.loc["merge 1", "gain"] > 0
    assert len(set(r.labels("merge 1"))) == 3 and set(r.labels("merge 1")) < {0, 1, 2, 3}


def test_noise_and_rare_classes_are_left_as_they_are():
    "Under noise='ignore' the -1 points keep -1 in every change; a rare class set aside keeps its label."
    X, y = make_blobs(300, centers=[[0, 0], [8, 0], [0, 8], [8, 8]], random_state=0)
    y2 = np.where(y == 3, 0, y)
    y2[:10] = -1
    y2[10:13] = 7                                                  # a class of 3 points: set aside as rare
    r = suggest_repairs(X, y2, noise="ignore", **FAST)
    assert "split 1" in r.changes
    for c in r.changes:
        lab = r.labels(c)
        assert (lab[:10] == -1).all() and (lab[10:13] == 7).all()


def test_text_labels_and_json():
    "Text labels: a split names its new class '<label>.2'; the JSON is plain."
    X, y = make_blobs(300, centers=[[0, 0], [8, 0], [0, 8]], random_state=2)
    names = np.array(["setosa", "other", "setosa"])[y]
    r = suggest_repairs(X, names, kinds=("split",), **FAST)
    assert set(r.labels("split 1")) == {"setosa", "setosa.2", "other"}
    d = json.loads(json.dumps(r.to_dict()))
    assert [row["change"] for row in d["table"]] == ["as given", "split 1"]


def test_bad_input():
    X, y = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match="kinds"):
        suggest_repairs(X, y, kinds=())
    with pytest.raises(ValueError, match="coordinates"):
        suggest_repairs(sparse.csr_matrix(X), y)
    with pytest.raises(ValueError, match="max_changes"):
        suggest_repairs(X, y, max_changes=0)
    with pytest.raises(ValueError, match="alpha"):
        suggest_repairs(X, y, alpha=0)
    with pytest.raises(ValueError, match="n_neighbors"):
        neighbour_disagreements(X, y, n_neighbors=0)
    with pytest.raises(ValueError, match="broken_pairs"):
        broken_pairs(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError):
        dip_split_test(np.ones((3, 2)))


def test_accept_writes_the_next_variant(tmp_path):
    "An accepted repair is the bundle's next label variant; the same labelling twice is refused; y stays as stored."
    X, y = make_blobs(200, centers=[[0, 0], [8, 0], [0, 8]], random_state=3)
    y2 = np.where(y == 2, 0, y)
    add_to_bundle(X, y2, tmp_path, "mine", "two_modes")
    ds = load_dataset("mine/two_modes", tmp_path)
    r = suggest_repairs(ds.X, ds.y, kinds="split", **FAST)
    assert r.accept("split 1", tmp_path, "two_modes") == "labels1"
    with pytest.raises(ValueError, match="already stored as 'y'"):
        add_labelling(tmp_path, "mine/two_modes", ds.y, description="again")       # nothing new: refused
    with pytest.raises(ValueError, match="already stored as 'labels1'"):
        r.accept("split 1", tmp_path, "two_modes")
    assert (load_dataset("mine/two_modes", tmp_path).y == y2).all()
    assert (load_dataset("mine/two_modes", tmp_path, labels="labels1").y == r.labels("split 1").astype(int)).all()


def test_split_label_avoids_a_class_set_aside():
    "The new class of a split never takes the label of a rare class the preparation set aside (review, high)."
    X, y = make_blobs(300, centers=[[0, 0], [8, 0], [0, 8]], random_state=0)
    y = np.where(y == 2, 0, y)
    y[:3] = 2                                                  # a class of 3 points: set aside, kept as given
    r = suggest_repairs(X, y, kinds="split", **FAST)
    lab = r.labels("split 1")
    assert (lab[:3] == 2).all() and (lab[3:] != 2).all()
    assert pd.Series(lab).value_counts().tolist()[-1] == 3


def test_merge_renames_the_class_on_rows_left_out():
    "A merge renames the class on every input row, also those missing='drop' left out (review, medium)."
    X, y = make_blobs(300, centers=[[0, 0], [0.1, 0], [9, 9]], random_state=0)
    X[:3, 0] = np.nan
    r = suggest_repairs(X, np.array(["a", "b", "c"])[y], kinds="merge", missing="drop", **FAST)
    assert len(set(r.labels("merge 1"))) == 2


def test_labels_that_print_alike_are_refused():
    X, y = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match="print alike"):
        suggest_repairs(X, np.array([1 if v else "1" for v in y], dtype=object), **FAST)


def test_few_points_and_ties():
    "Eleven points with ten neighbours asked for work; integer counts give no split (their projections tie)."
    X, y = make_blobs(11, centers=2, random_state=0)
    assert len(neighbour_disagreements(X, y, n_neighbors=10).columns) == 5
    rng = np.random.default_rng(0)
    counts = np.vstack([rng.poisson(3, size=(200, 2)), rng.poisson(3, size=(200, 2)) + 30]).astype(float)
    t = multimodal_classes(counts, np.repeat([0, 1], 200), random_state=0)
    assert not t.multimodal.any() and t.note.str.startswith("tied values").all()


def test_cli_noise_alone_marks_minus_one(tmp_path):
    "clm-nb repair --noise ignore without --noise-label: -1 is noise, and no change touches it (review, medium)."
    from click.testing import CliRunner
    from clm_nb.cli import cli
    X, y = make_blobs(200, centers=[[0, 0], [8, 0]], random_state=0)
    y[:7] = -1
    pd.DataFrame(X, columns=["u", "v"]).assign(cls=y).to_csv(tmp_path / "d.csv", index=False)
    r = CliRunner().invoke(cli, ["repair", str(tmp_path / "d.csv"), "-l", "cls", "--noise", "ignore", "--resamples", "10",
                                 "--json"], prog_name="clm-nb")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["table"][0]["K"] == 2 and all(row["label"] != -1 for row in out["relabels"])


def test_preparation_and_split_evidence_are_reported():
    """What the preparation did reaches the user (a saved row index dropped), and a split names the feature its parts
    differ in most (a newcomer's trial: a split that followed a year column)."""
    X, y = make_blobs(300, centers=[[0, 0], [6, 6], [0, 6]], random_state=0)
    y = np.where(y == 1, 0, y)
    df = pd.DataFrame({"rownames": np.arange(1, 301), "u": X[:, 0], "v": X[:, 1]})
    r = suggest_repairs(df, y, kinds="split", **FAST)
    assert any("rownames" in s.text() for s in r.preparation)
    assert "differ most in" in r.changes["split 1"].evidence
    assert r.to_dict()["preparation"] and "scaling none" in r.text()
    assert list(r.table.columns[:5]) == ["kind", "what", "points", "verdict", "borderline"]
