"""The CLM profile (clm_nb.profile, notebook 20_profile).

issue 39, part 3: the quadratic measures on stratified samples above a point bound (deterministic, agreeing with the
exact value within a few standard errors, and said in the record). The bound is lowered through the parameter (or the
module constant), so the data stay small. `assess` and the command line at scale are in test_assessment.py and
test_cli.py.

issue 38: the Python API bounds the relabellings at its door."""
import numpy as np
import pandas as pd
import pytest

from clm_nb.profile import clm_profile


def scores(prof):
    return prof[prof.part == "score"].set_index("measure")


def test_sampling_is_deterministic_with_random_state(big_blobs):
    X, y = big_blobs
    a = clm_profile(X, y, max_points=600, random_state=3)
    b = clm_profile(X, y, max_points=600, random_state=3)
    c = clm_profile(X, y, max_points=600, random_state=4)
    cols = ["value", "se", "weighted", "share_below", "worst"]
    assert scores(a)[cols].equals(scores(b)[cols])
    assert scores(a).at["sc_a", "value"] != scores(c).at["sc_a", "value"]


def test_sampled_values_agree_with_the_exact_ones_within_a_few_standard_errors(big_blobs):
    X, y = big_blobs
    exact = scores(clm_profile(X, y, random_state=0))
    for seed in range(3):
        s = scores(clm_profile(X, y, max_points=1200, random_state=seed))
        for m in ("sc_a", "dunn_a"):
            se = s.at[m, "se"]
            assert se > 0
            assert abs(s.at[m, "value"] - exact.at[m, "value"]) <= 4 * se + 2e-3, (seed, m, s.at[m, "value"],
                                                                                    exact.at[m, "value"], se)
        assert s.at["ch_a", "value"] == exact.at["ch_a", "value"]           # the linear measures: every point


def test_the_record_says_sampled(big_blobs):
    X, y = big_blobs
    prof = clm_profile(X, y, max_points=600, random_state=0)
    sc = scores(prof)
    assert sc.loc[["dunn_a", "sc_a"], "note"].tolist() == ["computed on 5 stratified samples of 600 points"] * 2
    assert (sc.drop(index=["dunn_a", "sc_a"]).note == "").all()
    pairs = prof[(prof.part == "pair") & (prof.measure == "sc_a")]
    assert sorted(zip(pairs.n_a, pairs.n_b)) == sorted(                   # the classes' full sizes
        [(200, 500), (200, 700), (200, 1000), (500, 700), (500, 1000), (700, 1000)])
    assert scores(clm_profile(X, y, random_state=0)).note.eq("").all()    # below the bound: nothing sampled


# ---- issue 38: the Python API bounds the relabellings at its door.

def test_the_python_api_bounds_the_relabellings_at_its_door(monkeypatch):
    "A billion relabellings refused at the door of assess, clm_profile and profile_tasks (the work is a trap here)."
    import clm_nb.assessment, clm_nb.profile, clm_nb.tasks
    def refuse(*a, **k):
        raise AssertionError("the work started")
    monkeypatch.setattr(clm_nb.assessment, "prepare", refuse)
    monkeypatch.setattr(clm_nb.profile, "pair_breakdown", refuse)
    monkeypatch.setattr(clm_nb.tasks, "pair_breakdown", refuse)
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.repeat([0, 1], 10)
    empty = pd.DataFrame(columns=["collection", "name", "n", "n_classes", "labeled"])
    for call in (lambda: clm_nb.assessment.assess(X, y, n_permutations=10 ** 9),
                 lambda: clm_nb.profile.clm_profile(X, y, n_permutations=10 ** 9),
                 lambda: clm_nb.tasks.profile_tasks(empty, n_permutations=10 ** 9)):
        with pytest.raises(ValueError, match=r"in \[2, 10000\]"):
            call()
