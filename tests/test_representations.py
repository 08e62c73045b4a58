"""`clm_nb.representations` (issue 53, item 1): the paired differences are honest, the comparison says what the data
say, bad input is refused, and a user's CSV of real data gives the expected answer.

Coverage of the paired interval: a population of three overlapping Gaussian classes in 2-D (sizes 30/50/70, as
tests/test_intervals.py); representation A is the points, representation B the same points with one pure-noise
feature appended (so B scores lower, and the two share every point's position). Over S datasets the target is the
mean difference E[v_A - v_B] at this size (its own error, sd/sqrt(S), is a tenth of the half-width). With S = 60, a
95 % interval's coverage has binomial sd 0.028; we accept >= 0.84 (4 sd below 0.95) and an se within a factor 1.6 of
the observed sd of the difference.
"""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_blobs

import clm_nb
from clm_nb.intervals import resample_scores
from clm_nb.readers import read_labeled_table
from clm_nb.representations import (ROUNDING, compare_representations, score_difference,
                                    standard_representations, subspace_search)

S, B = 60, 20
MEANS = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
Y = np.repeat([0, 1, 2], [30, 50, 70])
FAST = dict(n_resamples=10, progress=False)


@pytest.fixture(scope="module")
def differences():
    rows = []
    for s in range(S):
        rng = np.random.default_rng([5, s])
        X = MEANS[Y] + rng.standard_normal((Y.size, 2))
        Xb = np.hstack([X, 1.5 * rng.standard_normal((Y.size, 1))])
        ra, rb = (resample_scores(Z, Y, measures=["sc_a", "ch_a"], n_resamples=B, random_state=s) for Z in (X, Xb))
        for m in ("sc_a", "ch_a"):
            va, vb, da, db = ra.table.at[m, "value"], rb.table.at[m, "value"], ra.draws[m], rb.draws[m]
            p, u = score_difference(da, db, va, vb), score_difference(da, db, va, vb, paired=False)
            rows.append(dict(measure=m, difference=p.difference, se=p.se, low=p.low, high=p.high, se_unpaired=u.se))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("measure", ["sc_a", "ch_a"])
def test_the_paired_interval_covers_the_population_difference(differences, measure):
    g = differences[differences.measure == measure]
    target = g.difference.mean()
    coverage = ((g.low <= target) & (target <= g.high)).mean()
    assert 0.84 <= coverage <= 1.0, (measure, coverage)
    assert 1 / 1.6 <= g.se.mean() / g.difference.std() <= 1.6, (measure, g.se.mean(), g.difference.std())


@pytest.mark.parametrize("measure", ["sc_a", "ch_a"])
def test_pairing_removes_the_shared_uncertainty(differences, measure):
    "The unpaired se adds the two representations' variances and ignores their covariance: it is too wide here."
    g = differences[differences.measure == measure]
    assert (g.se < g.se_unpaired).mean() > 0.9
    assert g.se_unpaired.mean() / g.difference.std() > 1.6          # the unpaired interval over-covers


_draws = st.lists(st.floats(-1, 1, allow_nan=False), min_size=12, max_size=40)


@settings(max_examples=50, deadline=None)
@given(_draws, st.floats(-1, 1), st.floats(-1, 1), st.floats(-5, 5))
def test_score_difference_is_antisymmetric_and_shift_free(a, va, vb, shift):
    a = np.array(a)
    b = np.roll(a, 1) * 0.5
    ab, ba = score_difference(a, b, va, vb), score_difference(b, a, vb, va)
    assert ab.difference == -ba.difference and ab.se == ba.se
    assert np.isclose(ab.low, -ba.high) and np.isclose(ab.high, -ba.low)
    moved = score_difference(a + shift, b + shift, va + shift, vb + shift)
    assert np.isclose(moved.difference, ab.difference, atol=1e-12) and np.isclose(moved.se, ab.se, atol=1e-9)


def test_bad_draws_and_options_are_refused():
    a = np.zeros(20)
    with pytest.raises(ValueError, match="1-D arrays"):
        score_difference(np.zeros((2, 10)), a, 0.1, 0.2)
    with pytest.raises(ValueError, match="bound"):
        score_difference(a, a, 0.1, 0.2, bound=0)
    with pytest.raises(ValueError, match="ci"):
        score_difference(a, a, 0.1, 0.2, ci=0)
    assert score_difference(a, a[:5], 0.1, 0.2, paired=False).note.startswith("no interval")


def test_a_rotation_and_a_translation_tie_with_the_original():
    "The measures are invariant: the three score alike to rounding, and rounding is never a lead."
    X, y = make_blobs(150, 4, centers=3, cluster_std=2.5, random_state=1)
    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)))
    c = compare_representations({"raw": X, "rotated": X @ Q, "moved": X + 1000.0}, y, **FAST)
    assert (c.differences.difference.abs() <= ROUNDING).all() and not c.differences.decided.any()
    assert any("do not tell apart" in s for s in c.conclusion)
    assert c.conclusion[-1] == "The verdict is trustworthy under every representation."


def test_noise_features_lose_and_the_lead_is_real():
    X, y = make_blobs(200, 2, centers=4, random_state=3)
    noisy = np.hstack([X, 4 * np.random.default_rng(1).standard_normal((200, 8))])
    c = compare_representations({"noisy": noisy, "clean": X}, y, **FAST)
    assert c.leader == "clean" and list(c.table.index) == ["clean", "noisy"]
    row = c.differences.iloc[0]
    assert row.a == "clean" and row.decided and row.low > 0 and row.paired
    assert "is real" in c.conclusion[1]


def test_the_answer_does_not_depend_on_the_order_of_the_dict():
    X, y = make_blobs(120, 3, centers=3, cluster_std=2.0, random_state=4)
    reps = {"raw": X, "half": X * [1, 1, 0.2], "noisy": np.hstack([X, np.random.default_rng(2).normal(size=(120, 2))])}
    one = compare_representations(reps, y, **FAST)
    two = compare_representations(dict(reversed(list(reps.items()))), y, **FAST)
    pd.testing.assert_frame_equal(one.table, two.table)
    pd.testing.assert_frame_equal(one.differences, two.differences)


def test_rows_dropped_under_one_representation_make_the_differences_unpaired():
    X, y = make_blobs(120, 3, centers=3, random_state=5)
    holed = X.copy()
    holed[:4, 0] = np.nan
    c = compare_representations({"full": X, "holed": holed}, y, missing="drop", **FAST)
    assert not c.paired and not c.differences.paired.any()
    assert c.differences.note.iloc[0].startswith("unpaired")
    assert "unpaired" in c.conclusion[-1]
    assert c.assessments["holed"].n == 116 and list(c.assessments["holed"].rows[:2]) == [4, 5]


def test_bad_input_is_refused_with_the_fix():
    X, y = make_blobs(60, 2, centers=2, random_state=0)
    with pytest.raises(ValueError, match="at least two representations"):
        compare_representations({"raw": X}, y)
    with pytest.raises(ValueError, match="has 59 rows but y has 60 labels"):
        compare_representations({"raw": X, "cut": X[1:]}, y)
    with pytest.raises(ValueError, match="fitted_with_labels names 'lda'"):
        compare_representations({"raw": X, "b": X}, y, fitted_with_labels="lda")
    with pytest.raises(ValueError, match="ci=None"):
        compare_representations({"raw": X, "b": X}, y, ci=None)
    with pytest.raises(ValueError, match="random_state"):
        compare_representations({"raw": X, "b": X}, y, random_state=np.random.default_rng(0))
    with pytest.raises(ValueError, match="representation 'b': "):
        compare_representations({"raw": X, "b": np.full_like(X, np.nan)}, y, progress=False)
    with pytest.raises(ValueError, match="cost O\\(n\\^2\\)"):
        standard_representations(np.zeros((10_001, 2)), which=("pca", "isomap"))


def test_the_face_and_the_json():
    X, y = make_blobs(90, 2, centers=3, random_state=6)
    c = clm_nb.compare_representations({"raw": X, "scaled": X * [1, 30]}, y, **FAST)
    d = json.loads(json.dumps(c.to_dict()))
    assert d["leader"] == c.leader and len(d["table"]) == 2 and len(d["differences"]) == 1
    assert set(d["table"][0]) >= {"representation", "value", "value_low", "value_high", "verdict", "expected"}
    assert c.text().splitlines()[0].startswith("Which representation makes the labels cluster? Ranked by sc_a")


def test_penguins_saved_as_a_user_saves_them(tmp_path):
    """Real data from an installable package, through a CSV: the penguins' body mass (grams) dominates the raw
    distances, so standardizing lets bill and flipper lengths separate the three species."""
    palmerpenguins = pytest.importorskip("palmerpenguins")
    path = tmp_path / "penguins.csv"
    palmerpenguins.load_penguins().to_csv(path, index=False)
    X, y = read_labeled_table(path, "species")
    num = X[["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]].dropna()
    y = y[num.index]
    reps = standard_representations(num, which=("raw", "standardized", "pca"))
    c = compare_representations(reps, y, **FAST)
    assert c.leader in ("standardized", "pca") and c.table.index[-1] == "raw"
    assert c.differences.query("b == 'raw'").decided.all()


def test_a_mixed_table_under_gower_beside_coordinates():
    "Any metric `assess` reads: a mixed table under Gower is paired with coordinates, and the extrapolation is said."
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    mixed = pd.DataFrame({"sl": X[:, 0], "pw": X[:, 3], "kind": np.where(X[:, 1] > 3, "wide", "narrow")})
    c = compare_representations({"table": mixed, "petals": X[:, 2:]}, y, metrics={"table": "gower"}, **FAST)
    assert c.paired and c.table.at["table", "metric"] == "gower" and c.leader == "petals"
    assert "'table' is read under another metric than Euclidean coordinates" in c.conclusion[-1]


def test_the_subspace_search_finds_the_informative_feature_and_it_holds_out():
    "One feature separates three classes, five are noise three times wider: the weight and a held-out gain go to it."
    X, y = make_blobs(240, 1, centers=3, random_state=0)
    X = np.hstack([X, 3 * np.random.default_rng(1).normal(size=(240, 5))])
    r = subspace_search(X, y, n_trials=40, n_resamples=10, progress=False)
    assert r.weights.idxmax() == "x0" and (r.weights.drop("x0") < 0.5).all()
    assert r.search_weighted >= r.search_equal and r.gain.low > 0 and "the gain holds" in r.conclusion[1]
    assert r.held_out.paired and set(r.held_out.table.index) == {"weighted", "equal"}


def test_the_subspace_search_is_seeded():
    X, y = make_blobs(120, 3, centers=3, cluster_std=3.0, random_state=2)
    one, two = (subspace_search(X, y, n_trials=15, n_resamples=10, random_state=4, progress=False) for _ in range(2))
    pd.testing.assert_series_equal(one.weights, two.weights)
    assert one.gain == two.gain


def test_a_coordinate_that_separates_the_classes_is_read_not_filtered_as_a_leak():
    """Review of issue 53: `assess` leaves a column that alone separates the classes out of its verdict; a representation
    is compared as given, so the same points rotated (the classes then on no single axis) tie with the original."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 40)
    X = np.column_stack([y * 4.0 + rng.normal(size=120), rng.normal(size=(120, 3))])
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    c = compare_representations({"axis": X, "rotated": X @ Q}, y, **FAST)
    assert set(c.table.d) == {4} and not c.differences.decided.any(), c.text()
    assert all(a.left_out == [] for a in c.assessments.values())


def test_a_distance_matrix_beside_scaled_coordinates_and_a_score_it_lacks():
    "scaling reaches coordinates only; a representation `by` cannot score is named, not silently dropped."
    from scipy.spatial.distance import cdist
    X, y = make_blobs(90, 3, centers=3, random_state=8)
    c = compare_representations({"a": X, "b": cdist(X, X)}, y, metrics={"b": "precomputed"}, scaling="standardize",
                                by="ch_a", **FAST)
    assert c.leader == "a" and np.isnan(c.table.at["b", "value"])
    assert any(s.startswith("'b' could not be ranked: ch_a has no value there") for s in c.conclusion), c.conclusion
    with pytest.raises(ValueError, match="name the measure that ranks"):
        compare_representations({"a": X, "b": X}, y, primary="mean(ch_btwn,dbcv_btwn)")


def test_only_the_pairs_that_lost_rows_are_unpaired():
    "Newcomer's trial: one representation with missing values must not unpair the pairs that scored the same rows."
    X, y = make_blobs(120, 3, centers=3, random_state=5)
    holed = X.copy()
    holed[:4, 0] = np.nan
    c = compare_representations({"full": X, "scaled": 2 * X, "holed": holed}, y, missing="drop", **FAST)
    d = c.differences.set_index(["a", "b"]).paired
    both = {frozenset(k): v for k, v in d.items()}
    assert both[frozenset({"full", "scaled"})] and not both[frozenset({"full", "holed"})] and not c.paired
    assert c.difference("full", "scaled").se == 0.0 and type(c.difference("full", "scaled").se) is float
    assert "index" not in c.to_dict()["differences"][0]
