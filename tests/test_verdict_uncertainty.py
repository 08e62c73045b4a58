"""Verdicts that know their uncertainty (issue 39): adaptive relabellings of a deciding score, borderline verdicts,
one default seed for assess and the leaderboard, sampling intervals and verdict support in assess, its JSON, text,
HTML and command line. Small generated data (and the bundle's glass when it is beside the checkout)."""
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.datasets import load_iris, make_blobs

import clm_nb
from clm_nb.cli import cli
from clm_nb.bundle import list_datasets, load_dataset
from clm_nb.runner import run
from clm_nb.profile import DEFAULT_SEED, clm_profile
from clm_nb.rule import VERDICTS, VerdictRule, profile_row
from clm_nb.tasks import profile_tasks

BUNDLE = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
HAS_BUNDLE = (BUNDLE / "manifest.csv").is_file()
VIEWS = ["ch_btwn", "dbcv_btwn"]
FAST = dict(measures=VIEWS, primary="ch_btwn", ci=None, variants=False)    # the two views only, no intervals


def glass_like(shift=0.745, seed=0):
    "Six 40-point classes in 9-D whose ch_btwn sits just below the cut-off 0.3 (≈ 0.297), density view low."
    return make_blobs(n_samples=[40] * 6, centers=shift * np.eye(6, 9), cluster_std=1.0, random_state=seed)


def same_verdict_or_same_borderline(found):
    "The acceptance rule: one verdict for every seed, or every seed borderline between the same two verdicts."
    verdicts = {a.verdict for a in found}
    pairs = {a.borderline for a in found}
    return len(verdicts) == 1 or (None not in pairs and len(pairs) == 1)


def test_glass_like_verdict_does_not_depend_on_the_seed():
    X, y = glass_like()
    plain = [clm_nb.assess(X, y, random_state=s, max_permutations=20, **FAST) for s in range(20)]
    assert len({a.borderline for a in plain}) > 1               # at 20 relabellings the seed decides the borderline
    found = [clm_nb.assess(X, y, random_state=s, **FAST) for s in range(20)]
    assert same_verdict_or_same_borderline(found), [(a.verdict, a.borderline) for a in found]
    assert {a.verdict for a in found} == {"unreliable"} and {a.borderline for a in found} == {None}
    used = [int(a.scores.at["ch_btwn", "n_permutations"]) for a in found]
    assert max(used) > 20 and all(t in (20, 80, 320, 1280, 2000) for t in used)   # ×4 per round, capped at 100×20
    assert all(a.scores.at["dbcv_btwn", "n_permutations"] == 20 for a in found)   # clearly low: never re-estimated


@pytest.mark.skipif(not HAS_BUNDLE, reason="the dataset bundle ../shared/datasets is not beside the checkout")
def test_bundle_glass_verdict_does_not_depend_on_the_seed():
    ds = load_dataset("glass_identification", BUNDLE, collection="hjn_labeled96")
    found = [clm_nb.assess(ds.X, ds.y, random_state=s, ci=None, variants=False) for s in range(20)]
    assert same_verdict_or_same_borderline(found), [(a.verdict, a.borderline) for a in found]


def test_stays_borderline_at_the_cap():
    X, y = glass_like()
    ch = clm_profile(X, y, measures=VIEWS, primary=None, random_state=0, n_permutations=80)
    cut = float(ch.loc[ch.measure == "ch_btwn", "value"].iloc[0])
    rule = VerdictRule(low=cut)                    # a cut-off at the estimate itself: no number of relabellings clears it
    a = clm_nb.assess(X, y, rule=rule, random_state=0, max_permutations=80, **FAST)
    assert a.borderline == ("doubtful", "unreliable") and a.verdict == "unreliable"      # the more cautious
    assert a.scores.at["ch_btwn", "n_permutations"] == 80                                # the cap was reached
    assert a.reason.startswith("borderline between doubtful and unreliable: ch_btwn ")
    assert f"straddles the cut-off {cut:g} after 80 relabellings per class pair" in a.reason
    assert a.to_dict()["borderline"] == ["doubtful", "unreliable"]
    assert "± is the Monte-Carlo standard error (SE)" in repr(a)
    table = pd.DataFrame([profile_row(clm_profile(X, y, measures=VIEWS, primary=None, random_state=0,
                                                  max_permutations=80, rule=rule))])
    judged = rule.apply(table).iloc[0]             # the leaderboard's path: the same verdict and borderline
    assert (judged.verdict, judged.borderline) == ("unreliable", "doubtful/unreliable")


def test_assess_and_leaderboard_profile_agree_on_embedded_data():
    catalog = list_datasets(False, labeled=False)
    catalog = catalog[catalog.name == "iris"]
    tasks = profile_tasks(catalog, data_dir=False, noise=None, n_permutations=20)
    with tempfile.TemporaryDirectory() as tmp:
        res = run(tasks, store=tmp, executor="inline", seed=12345, progress=False)   # the runner's seed is not read
    board = res[res.part == "score"].set_index("measure")
    X, y = load_iris(return_X_y=True)
    a = clm_nb.assess(X, y, ci=None, variants=False)
    assert a.scores.value.to_dict() == pytest.approx(board.value.astype(float).to_dict(), abs=0, rel=0)
    assert a.scores.n_permutations.to_dict() == board.n_permutations.astype(int).to_dict()


@pytest.mark.skipif(not HAS_BUNDLE, reason="the dataset bundle ../shared/datasets is not beside the checkout")
def test_assess_and_leaderboard_profile_agree_on_bundle_glass():
    catalog = list_datasets(BUNDLE, collections=["hjn_labeled96"], labeled=False)
    catalog = catalog[catalog.name == "glass_identification"]
    tasks = profile_tasks(catalog, data_dir=BUNDLE, noise="ignore", n_permutations=20)
    with tempfile.TemporaryDirectory() as tmp:
        res = run(tasks, store=tmp, executor="inline", seed=7, progress=False)
    board = res[res.part == "score"].set_index("measure")
    ds = load_dataset("glass_identification", BUNDLE, collection="hjn_labeled96")
    a = clm_nb.assess(ds.X, ds.y, noise="ignore", ci=None, variants=False, random_state=DEFAULT_SEED)
    assert a.scores.value.to_dict() == pytest.approx(board.value.astype(float).to_dict(), abs=0, rel=0)
    row = profile_row(res[res.part == "score"])
    assert VerdictRule().apply(pd.DataFrame([row])).verdict.iloc[0] == a.verdict


def test_intervals_and_verdict_support():
    X, y = glass_like()
    a = clm_nb.assess(X, y, measures=VIEWS, primary="ch_btwn", variants=False, n_resamples=10)
    sc = a.scores
    assert ((sc.low <= sc.value) & (sc.value <= sc.high)).all()
    assert set(a.verdict_support) <= set(VERDICTS) and sum(a.verdict_support.values()) == pytest.approx(1.0)
    assert (a.ci, a.n_resamples) == (0.95, 10)
    assert any(line.startswith("low–high: 95 % intervals from 10 stratified half-samples") for line in a.uncertainty)
    assert "the ± is the relabellings' noise on these points alone" in repr(a)


OLD_KEYS = {"verdict", "reason", "stability", "primary", "score", "score_se", "n", "d", "K", "n_noise", "noise",
            "scaling", "standardize", "n_input", "features", "preparation", "warnings", "variants", "scores",
            "worst_pairs", "hints"}
NEW_KEYS = {"borderline", "verdict_support", "ci", "n_resamples", "max_permutations", "uncertainty"}
OLD_CLI_KEYS = {"schema", "source", "features", "verdict", "reason", "stability", "primary", "score", "score_se", "n",
                "d", "n_classes", "n_noise", "n_input", "noise", "scaling", "standardize", "warnings", "preparation",
                "variants", "scores", "measures", "worst_pairs", "hints"}


def test_json_keeps_every_old_key():
    X, y = load_iris(return_X_y=True)
    d = clm_nb.assess(X, y, variants=False, n_resamples=10).to_dict()
    assert OLD_KEYS | NEW_KEYS <= set(d)
    assert d["verdict"] in VERDICTS[:3]
    json.dumps(d)                                                # plain values only


@pytest.fixture
def iris_csv(tmp_path):
    iris = load_iris(as_frame=True)
    path = tmp_path / "iris.csv"
    iris.data.assign(species=np.array(iris.target_names)[iris.target]).to_csv(path, index=False)
    return path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="clm-nb")


def test_cli_json_has_the_new_keys(iris_csv):
    r = invoke("assess", iris_csv, "-l", "species", "--json", "--no-variants", "--resamples", "10", "--ci", "0.9")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["schema"] == "clm-nb.assess/1" and OLD_CLI_KEYS | NEW_KEYS <= set(out)
    assert (out["ci"], out["n_resamples"], out["max_permutations"]) == (0.9, 10, 2000)
    assert {"low", "high", "n_permutations"} <= set(out["measures"][0])
    off = json.loads(invoke("assess", iris_csv, "-l", "species", "--json", "--no-variants", "--ci", "none").output)
    assert (off["ci"], off["verdict_support"], off["n_resamples"]) == (None, None, 0)
    assert off["scores"] == out["scores"]                          # the seed default: the same scores


@pytest.mark.parametrize("args, said", [(["--ci", "95"], "looks like a percentage"),
                                        (["--ci", "1.5"], "--ci"), (["--ci", "abc"], "--ci 'abc' is not a level"),
                                        (["--resamples", "9"], "--resamples=9"), (["--seed", "-1"], "--seed=-1"),
                                        (["--max-permutations", "5"], "max_permutations=5 is below"),
                                        (["--max-permutations", "20000"], "max_permutations=20000")])
def test_cli_refuses_bad_options(iris_csv, args, said):
    r = invoke("assess", iris_csv, "-l", "species", *args)
    assert r.exit_code == 1 and said in r.output and "Traceback" not in r.output, r.output


@pytest.mark.parametrize("kwargs, said", [({"ci": 95}, "looks like a percentage"), ({"ci": 0}, "assess: ci=0"),
                                          ({"n_resamples": 9}, "assess: n_resamples=9"),
                                          ({"max_permutations": 1}, "max_permutations=1"),
                                          ({"max_permutations": 10}, "max_permutations=10 is below")])
def test_assess_refuses_bad_options(kwargs, said):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=None) as e:
        clm_nb.assess(X, y, **kwargs)
    assert said in str(e.value)


def test_leaderboard_cli_checks_the_seed(tmp_path):
    r = invoke("leaderboard", "-o", tmp_path / "site", "--seed", "-2")
    assert r.exit_code == 1 and "--seed=-2" in r.output, r.output


def test_browser_shows_the_borderline_sentence(tmp_path):
    from browser import fragment_page
    X, y = glass_like()
    a = clm_nb.assess(X, y, random_state=0, max_permutations=20, **FAST)     # no re-estimation: borderline
    assert a.borderline == ("doubtful", "unreliable")
    with fragment_page(a._repr_html_(), tmp_path) as page:
        box = page.locator(".clm-borderline")
        assert box.is_visible()
        assert "Borderline between doubtful and unreliable" in box.inner_text()
        body = page.locator(".clm-assessment").inner_text()
        assert "straddles the cut-off 0.3" in body and "± is the Monte-Carlo standard error" in body


def test_the_ranking_score_is_printed_with_its_interval():
    from sklearn.datasets import load_iris
    import clm_nb
    X, y = load_iris(return_X_y=True)
    a = clm_nb.assess(X, y, variants=False, n_resamples=10, progress=False)
    low, high = a.scores.at[a.primary, "low"], a.scores.at[a.primary, "high"]
    assert f"{a.primary} = {a.score:.3f} (95 % interval {low:.3f}–{high:.3f})" in a.text()
    assert "interval" not in clm_nb.assess(X, y, variants=False, ci=None, progress=False).text().split("\n")[2]


def test_too_few_points_to_judge_is_said_with_the_figures():
    """Issue 49 (item 5): a handful of points got a verdict in the same voice as 3,000 (msleep on 15 points:
    'UNRELIABLE'). Below 20 points per class the verdict is 'too few points', with the figures, and says so everywhere."""
    X, y = make_blobs(n_samples=[5, 5, 5], centers=[[0, 0], [0.3, 0], [0, 0.3]], random_state=0)
    a = clm_nb.assess(X, y, n_resamples=10, variants=False)
    assert a.verdict == "too few points" and not a.judgeable and a.borderline is None
    assert a.reason.startswith("too few points to judge: 15 points in 3 classes, 5.0 per class (below 20 per class")
    assert "the views alone would say " in a.reason
    assert a.text().startswith("CLM assessment: TOO FEW POINTS  (15 points")
    assert any(s.startswith("the views' 95 % intervals on these points: ch_btwn ") for s in a.uncertainty)
    d = a.to_dict()
    assert d["verdict"] == "too few points" and d["judgeable"] is False
    assert "too few points" in a._repr_html_()
    big = clm_nb.assess(*make_blobs(n_samples=[20, 20, 20], centers=[[0, 0], [9, 0], [0, 9]], random_state=0),
                        ci=None, variants=False)
    assert big.judgeable and big.verdict == "trustworthy"                  # 20 per class: judged


def test_too_few_points_through_the_command_line(tmp_path):
    "Issue 49 (item 5): the JSON says it (verdict and `judgeable`), and --fail-on treats it as worse than unreliable."
    X, y = make_blobs(n_samples=[5, 5, 5], centers=[[0, 0], [9, 0], [0, 9]], random_state=0)
    f = tmp_path / "few.csv"
    pd.DataFrame(X, columns=["a", "b"]).assign(label=y).to_csv(f, index=False)
    r = CliRunner().invoke(cli, ["assess", str(f), "-l", "label", "--json", "--ci", "none", "--no-variants",
                                 "--fail-on", "unreliable"])
    out = json.loads(r.output)
    assert (out["verdict"], out["judgeable"], r.exit_code) == ("too few points", False, 3)


def test_p_much_greater_than_n_cannot_judge():
    """Issue 49 (item 6): with far more dimensions than points per class pair the distances concentrate and both views
    read near 0 although k-means recovers the classes; the verdict says the views cannot judge, not 'unreliable'."""
    rng = np.random.default_rng(0)
    K, per, d = 4, 25, 2000
    y = np.repeat(np.arange(K), per)
    mu = np.zeros((K, d))
    mu[:, :K] = np.sqrt(d / 8) * np.eye(K)                      # the separation grows with d: k-means stays perfect
    X = mu[y] + rng.normal(size=(K * per, d))
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_mutual_info_score
    assert adjusted_mutual_info_score(y, KMeans(K, n_init=5, random_state=0).fit_predict(X)) > 0.95
    a = clm_nb.assess(X, y, ci=None, variants=False)
    assert a.verdict == "cannot judge" and not a.judgeable
    assert a.reason.startswith("cannot judge: more dimensions (2,000) than points per class pair (50) and the "
                               "distances concentrate")
    assert "the views alone would say unreliable" in a.reason          # what the rule used to answer


def test_announced_time_counts_the_half_samples_and_the_variants():
    """Issue 49 (item 9): 'about 26 s' was announced for shuttle (58,000 points) that took 66 s of CPU: only the data's
    own profile was counted. The estimate adds the variants' and the 50 half-samples' profiles; measured on a
    shuttle-shaped dataset (58,000 points, 9 features, 7 classes, 3 preparations) the whole assess took 57 s of CPU."""
    import contextlib
    import io
    from types import SimpleNamespace
    from clm_nb.assessment import _say_plan
    from clm_nb.profile import LEADERBOARD_MEASURES
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        _say_plan(SimpleNamespace(n=58_000, d=9, K=7), list(LEADERBOARD_MEASURES),
                  SimpleNamespace(columns_warned=[], features=["a"]), "none", [], True, 50)
    said = err.getvalue()
    seconds = float(said.split("about ")[1].split(" s")[0])
    assert 57 / 1.5 <= seconds <= 57 * 1.5, said
    assert "50 half-samples of 10,000 points" in said
