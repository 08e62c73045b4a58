"""assess at scale (issue 39, part 3): the quadratic measures on stratified samples above a point bound (deterministic,
agreeing with the exact value within a few standard errors, and said in the record), progress on stderr only
(`--quiet` silences it), the plan printed before a long run, and a command line that starts without pandas. The bound
is lowered through the parameter (or the module constant), so the data stay small."""
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.datasets import make_blobs

import clm_nb
import clm_nb.assessment
from clm_nb.between import QUADRATIC_MAX_POINTS, QUADRATIC_SAMPLES, quadratic_measures, sampled_breakdowns
from clm_nb.cli import cli
from clm_nb.text import PROGRESS_ENV, progress_bar, show_progress
from clm_nb.core import check_data
from clm_nb.profile import LEADERBOARD_MEASURES, clm_profile


@pytest.fixture(scope="module")
def blobs():
    "2,400 points in 4 overlapping classes of unequal sizes."
    X, y = make_blobs(n_samples=[1000, 700, 500, 200], centers=[[0, 0], [3, 0], [0, 3], [3, 3]], cluster_std=1.4,
                      random_state=7)
    return X, y


def scores(prof):
    return prof[prof.part == "score"].set_index("measure")


def test_the_bound_and_the_quadratic_measures_are_the_registrys():
    assert QUADRATIC_MAX_POINTS == 20_000 and QUADRATIC_SAMPLES == 5
    assert quadratic_measures(LEADERBOARD_MEASURES) == ["dunn_a", "sc_a"]
    assert all("n^2" in clm_nb.get_measure(m).complexity for m in quadratic_measures(LEADERBOARD_MEASURES))


def test_sampling_is_deterministic_with_random_state(blobs):
    X, y = blobs
    a = clm_profile(X, y, max_points=600, random_state=3)
    b = clm_profile(X, y, max_points=600, random_state=3)
    c = clm_profile(X, y, max_points=600, random_state=4)
    cols = ["value", "se", "weighted", "share_below", "worst"]
    assert scores(a)[cols].equals(scores(b)[cols])
    assert scores(a).at["sc_a", "value"] != scores(c).at["sc_a", "value"]


def test_sampled_values_agree_with_the_exact_ones_within_a_few_standard_errors(blobs):
    X, y = blobs
    exact = scores(clm_profile(X, y, random_state=0))
    for seed in range(3):
        s = scores(clm_profile(X, y, max_points=1200, random_state=seed))
        for m in ("sc_a", "dunn_a"):
            se = s.at[m, "se"]
            assert se > 0
            assert abs(s.at[m, "value"] - exact.at[m, "value"]) <= 4 * se + 2e-3, (seed, m, s.at[m, "value"],
                                                                                    exact.at[m, "value"], se)
        assert s.at["ch_a", "value"] == exact.at["ch_a", "value"]           # the linear measures: every point


def test_the_record_says_sampled(blobs):
    X, y = blobs
    prof = clm_profile(X, y, max_points=600, random_state=0)
    sc = scores(prof)
    assert sc.loc[["dunn_a", "sc_a"], "note"].tolist() == ["computed on 5 stratified samples of 600 points"] * 2
    assert (sc.drop(index=["dunn_a", "sc_a"]).note == "").all()
    pairs = prof[(prof.part == "pair") & (prof.measure == "sc_a")]
    assert sorted(zip(pairs.n_a, pairs.n_b)) == sorted(                   # the classes' full sizes
        [(200, 500), (200, 700), (200, 1000), (500, 700), (500, 1000), (700, 1000)])
    assert scores(clm_profile(X, y, random_state=0)).note.eq("").all()    # below the bound: nothing sampled


def test_sampled_breakdowns_keep_small_classes_whole():
    X, y = make_blobs(n_samples=[3000, 12], centers=[[0, 0], [5, 5]], random_state=0)
    b = sampled_breakdowns(["sc_a"], check_data(X, y), max_points=300, n_samples=3, random_state=0)["sc_a"]
    assert b.score.n_samples == 3 and b.score.sample_size == 300
    assert (b.pairs.n_a.tolist(), b.pairs.n_b.tolist()) == ([12], [3000])


def test_assess_records_the_sampling(blobs, monkeypatch):
    X, y = blobs
    monkeypatch.setattr(clm_nb.assessment, "QUADRATIC_MAX_POINTS", 800)
    a = clm_nb.assess(X, y, variants=False, progress=False)
    assert a.scores.at["sc_a", "note"] == "computed on 5 stratified samples of 800 points"
    assert a.scores.at["sc_a", "se"] > 0
    assert a.to_dict()["scores"][-1]["note"].startswith("computed on 5 stratified samples")


def test_progress_goes_to_stderr_and_is_refused_when_malformed(capsys):
    import time
    for i in progress_bar(range(2), "counting"):      # the bar shows after 2 s: a first step longer than that
        time.sleep(2.1 if i == 0 else 0)
        print(i)
    out = capsys.readouterr()
    assert out.out == "0\n1\n"
    assert "counting" in out.err and "2/2" in out.err
    assert progress_bar([1], False) == [1]
    with pytest.raises(ValueError, match="progress=2"):
        show_progress(2)
    with pytest.raises(ValueError, match="progress="):
        clm_nb.assess(np.zeros((6, 2)), [0, 0, 0, 1, 1, 1], progress=5)


def test_cli_json_stays_parseable_and_quiet_silences_stderr(blobs, tmp_path, monkeypatch):
    import pandas as pd
    X, y = blobs
    path = tmp_path / "blobs.csv"
    pd.DataFrame(X, columns=["a", "b"]).assign(label=y).to_csv(path, index=False)
    monkeypatch.setattr(clm_nb.assessment, "QUADRATIC_MAX_POINTS", 800)
    run = lambda *opts: CliRunner().invoke(cli, [*opts, "assess", str(path), "-l", "label", "--no-variants", "--json"],
                                           prog_name="clm-nb", env={PROGRESS_ENV: "1"})   # bars forced on
    loud, quiet = run(), run("--quiet")
    assert loud.exit_code == 0 and quiet.exit_code == 0, (loud.output, quiet.output)
    for r in (loud, quiet):
        out = json.loads(r.stdout)                                        # stdout: the JSON alone
        sc = {m["measure"]: m for m in out["measures"]}
        assert sc["sc_a"]["note"] == "computed on 5 stratified samples of 800 points"
    assert "assess: 2,400 points, 4 classes: dunn_a and sc_a on 5 stratified samples of 800 points" in loud.stderr
    assert quiet.stderr == ""


def test_help_starts_without_pandas():
    code = ("import sys\nfrom clm_nb.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('pandas', 'scipy', 'numba', 'sklearn') if m in sys.modules], file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: clm-nb" in r.stdout
    assert r.stderr.strip() == "[]", r.stderr


def test_top_level_api_still_works():
    code = ("import sys, clm_nb\nloaded = 'clm_nb.between' in sys.modules\nfrom clm_nb import assess, sc_a, measures\n"
            "print(loaded, callable(assess), len(measures()) == len(clm_nb.__all__) - 8, sc_a is clm_nb.sc_a)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "True", "True", "True"], r.stdout + r.stderr


def test_variants_above_the_bound_are_profiled_on_a_sample(monkeypatch):
    "Above QUADRATIC_MAX_POINTS the other preparations run on one stratified sample, and the table says how many points."
    import clm_nb.assessment as assessment
    from sklearn.datasets import make_blobs
    monkeypatch.setattr(assessment, "QUADRATIC_MAX_POINTS", 300)
    X, y = make_blobs(1200, n_features=3, centers=3, random_state=0)
    a = assessment.assess(X * [1, 10, 100], y, ci=None, progress=False)
    v = a.variants
    assert v.loc["none", "points"] == 1200
    assert (v.drop(index="none")["points"] == 300).all() and len(v) >= 3
    assert all("points" in row for row in a.to_dict()["variants"])
