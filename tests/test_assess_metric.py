"""assess(X, y, metric=...) and clm-nb assess --metric (issue 40, item 5): the views each metric has, the points
that are not coordinates (a dissimilarity matrix, a sparse matrix, a mixed table under Gower), and the command line.

The end-to-end tests need the between-dataset measures to read those points (branch i40-between: sc_a and dbcv_btwn
for any metric, ch_btwn for cosine); they are skipped, saying so, while the registry says the measures do not."""
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import sparse
from scipy.spatial.distance import cdist, pdist
from sklearn.datasets import load_iris

import clm_nb
from clm_nb.assessment import metric_measures, metric_views
from clm_nb.cli import cli
from clm_nb.registry import METRIC_NAMES
from clm_nb.catalog import get_measure
from clm_nb.intervals import resample_scores
from clm_nb.rule import VIEWS
from clm_nb.rule import VerdictRule

FAST = dict(n_permutations=5, ci=None, variants=False, max_permutations=5)


def reads(measure: str, metric: str, sparse_x: bool = False) -> bool:
    "Whether the registry says `measure` reads points under `metric` (and sparse X when asked)."
    info = get_measure(measure)
    return metric in info.metrics and (not sparse_x or info.sparse)


def needs(metric: str, *measures, sparse_x: bool = False):
    "Skip unless the registry says these measures read `metric` (they come with the merge of branch i40-between)."
    missing = [m for m in measures if not reads(m, metric, sparse_x)]
    return pytest.mark.skipif(bool(missing), reason=f"{missing} do not read metric={metric!r}"
                              + (" sparse X" if sparse_x else "") + " yet (branch i40-between)")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]


# ---- at the door -----------------------------------------------------------------------------------------------------

def test_bad_metric_is_refused_naming_the_accepted_ones(iris):
    X, y = iris
    with pytest.raises(ValueError) as e:
        clm_nb.assess(X, y, metric="manhatan", **FAST)
    assert "metric='manhatan'" in str(e.value) and all(m in str(e.value) for m in METRIC_NAMES)
    with pytest.raises(ValueError, match="metric"):
        clm_nb.assess(X, y, metric=["cosine"], **FAST)


def test_scaling_needs_coordinates(iris):
    X, y = iris
    with pytest.raises(ValueError, match="scaling='standardize' needs dense coordinates"):
        clm_nb.assess(cdist(X, X), y, metric="precomputed", scaling="standardize", **FAST)
    with pytest.raises(ValueError, match="needs dense coordinates"):
        clm_nb.assess(sparse.csr_matrix(X), y, metric="cosine", scaling="robust", **FAST)


def test_the_views_of_each_metric():
    "Geometry first: a centroid view for euclidean and cosine only; the registry can take away more, never add."
    for metric in METRIC_NAMES:
        kind = metric if metric in ("precomputed", "gower") else "coordinates"
        try:
            rule, text, missing = metric_views(metric, VerdictRule(), kind)
        except ValueError as e:                          # before the merge: the density view's measure refuses
            assert not reads("dbcv_btwn", metric) and "dbcv_btwn does not read" in str(e)
            continue
        views = dict(rule.views)
        if metric in ("euclidean", "cosine") and reads("ch_btwn", metric):
            assert "centroid" in views and not missing
        else:
            assert "centroid" not in views and "centroid" in missing
        assert rule.high == VerdictRule().high and rule.low == VerdictRule().low       # the same cut-offs
        assert text.startswith(f"metric {metric}: the verdict reads the")
    _, text, _ = metric_views("euclidean", VerdictRule())
    assert text == "metric euclidean: the verdict reads the centroid (ch_btwn) and density (dbcv_btwn) views."


def test_measures_that_do_not_read_the_points_are_refused_or_left_out():
    with pytest.raises(ValueError, match=r"\[.ch_a.*do not read a Gower table"):
        metric_measures(["ch_a", "sc_a", "dbcv_btwn"], "sc_a", VerdictRule(), "gower", "gower")
    names, left = metric_measures(None, "sc_a", VerdictRule(), "euclidean", "coordinates")
    assert names == list(clm_nb.profile.LEADERBOARD_MEASURES) and left == ""
    if not reads("sc_a", "gower"):
        with pytest.raises(ValueError, match="primary='sc_a' cannot be computed under metric='gower'"):
            metric_measures(None, "sc_a", VerdictRule(), "gower", "gower")
    else:
        names, left = metric_measures(None, "sc_a", VerdictRule(), "gower", "gower")
        assert "ch_a" not in names and "ch_a" in left and "sc_a" in names


# ---- end to end (with the between-dataset measures of branch i40-between) --------------------------------------------

def test_euclidean_records_the_metric_and_its_views(iris):
    X, y = iris
    a = clm_nb.assess(X, y, **FAST)
    assert a.metric == "euclidean" and [tuple(v) for v in a.views] == list(VIEWS) and a.views_missing == {}
    d = a.to_dict()
    assert d["metric"] == "euclidean" and d["views"] == [{"view": "centroid", "measure": "ch_btwn"},
                                                          {"view": "density", "measure": "dbcv_btwn"}]
    assert ", metric euclidean;" in a.text().splitlines()[0] and "  views: metric euclidean" in a.text()
    assert "metric euclidean" in a._repr_html_() and "clm-views" in a._repr_html_()


@pytest.fixture(scope="module")
def blobs():
    "Three Gaussian classes with no two points alike (iris has duplicates: see the test's docstring)."
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=[60, 50, 40], centers=[[0, 0, 0], [3, 0, 0], [0, 4, 1]], random_state=1)
    return X, np.array(["a", "b", "c"], dtype=object)[y]


@needs("precomputed", "sc_a", "dbcv_btwn")
def test_precomputed_equals_euclidean_on_the_measures_both_have(blobs):
    """cdist(X) under 'precomputed' (dim = X's dimension) gives the coordinates' sc_a and dbcv_btwn and the verdict of
    the density view alone. Points that tie on every distance key (iris' duplicates) may take another canonical order
    in dbcv_btwn's relabellings (clm_nb.between), hence data without duplicates here."""
    X, y = blobs
    e = clm_nb.assess(X, y, rule=VerdictRule(views=(("density", "dbcv_btwn"),)), **FAST)
    p = clm_nb.assess(cdist(X, X), y, metric="precomputed", dim=X.shape[1], **FAST)
    assert p.metric == "precomputed" and [tuple(v) for v in p.views] == [("density", "dbcv_btwn")]
    assert "centroid" in p.views_missing and "no coordinates to average" in p.views_missing["centroid"]
    assert "no centroid view" in p.text() and p.to_dict()["views_missing"]
    both = [m for m in p.scores.index if m in e.scores.index]
    assert set(both) == {"sc_a", "dbcv_btwn"}
    np.testing.assert_allclose(p.scores.loc[both, "value"], e.scores.loc[both, "value"], rtol=0, atol=1e-12)
    assert (p.verdict, p.reason) == (e.verdict, e.reason) and p.score == pytest.approx(e.score, abs=1e-12)
    c = clm_nb.assess(pdist(X), y, metric="precomputed", dim=3, **FAST)            # condensed: the same
    np.testing.assert_allclose(c.scores.loc[both, "value"], p.scores.loc[both, "value"], rtol=0, atol=1e-12)


@needs("precomputed", "sc_a")
def test_half_samples_of_a_matrix_are_index_subsets(iris):
    X, y = iris
    kw = dict(measures=["sc_a"], n_resamples=10, n_permutations=5, random_state=3)
    e = resample_scores(X, y, **kw)
    p = resample_scores(cdist(X, X), y, metric="precomputed", **kw)
    np.testing.assert_allclose(p.draws["sc_a"], e.draws["sc_a"], rtol=0, atol=1e-12)
    assert p.interval("sc_a") == pytest.approx(e.interval("sc_a"), abs=1e-12)


@needs("precomputed", "sc_a", "dbcv_btwn")
def test_precomputed_with_intervals(iris):
    X, y = iris
    a = clm_nb.assess(cdist(X, X), y, metric="precomputed", dim=4, n_permutations=5, max_permutations=5, ci=0.9,
                      n_resamples=10, variants=True)
    assert a.variants is None and a.stability == "not checked"           # no scaling variants for a matrix
    assert np.isfinite(a.scores.at["sc_a", "low"]) and a.verdict_support


@needs("gower", "sc_a", "dbcv_btwn")
def test_gower_on_a_mixed_table_with_missing_values(iris):
    X, y = iris
    df = pd.DataFrame(X, columns=list("abcd")).assign(big=np.where(X[:, 2] > 4, "yes", "no"))
    df.loc[[3, 60], "c"] = np.nan
    a = clm_nb.assess(df, y, metric="gower", dim=5, **FAST)
    assert a.metric == "gower" and "centroid" not in dict(a.views) and a.d == 5
    assert "ch_a" not in a.scores.index and "Not computed under metric='gower'" in a.views_note
    assert np.isfinite(a.scores.at["sc_a", "value"])


@needs("cosine", "sc_a", "dbcv_btwn", "ch_btwn")
def test_cosine_has_the_spherical_centroid_view(iris):
    X, y = iris
    a = clm_nb.assess(X, y, metric="cosine", **FAST)
    assert [tuple(v) for v in a.views] == list(VIEWS) and "spherical: on L2-normalised rows" in a.views_note


@needs("cosine", "sc_a", "dbcv_btwn", sparse_x=True)
def test_sparse_cosine_equals_dense_cosine(iris):
    X, y = iris
    d = clm_nb.assess(X, y, metric="cosine", **FAST)
    s = clm_nb.assess(sparse.csr_matrix(X), y, metric="cosine", **FAST)
    both = [m for m in s.scores.index if m in d.scores.index]
    np.testing.assert_allclose(s.scores.loc[both, "value"], d.scores.loc[both, "value"], rtol=0, atol=1e-12)


# ---- the command line ------------------------------------------------------------------------------------------------

def test_cli_rejects_an_unknown_metric(iris, tmp_path):
    X, y = iris
    pd.DataFrame(X, columns=list("abcd")).assign(species=y).to_csv(tmp_path / "iris.csv", index=False)
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "iris.csv"), "-l", "species", "--metric", "l7"])
    assert r.exit_code == 2 and "'l7' is not one of" in r.output and "gower" in r.output


def test_cli_metric_on_a_csv_writes_the_json_keys(iris, tmp_path):
    X, y = iris
    pd.DataFrame(X, columns=list("abcd")).assign(species=y).to_csv(tmp_path / "iris.csv", index=False)
    args = ["assess", str(tmp_path / "iris.csv"), "-l", "species", "--permutations", "5", "--max-permutations", "5",
            "--ci", "none", "--no-variants", "--json"]
    r = CliRunner().invoke(cli, args + ["--metric", "euclidean"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["metric"] == "euclidean" and [v["view"] for v in d["views"]] == ["centroid", "density"]
    assert d["views_missing"] == {} and d["views_note"].startswith("metric euclidean")


@needs("gower", "sc_a", "dbcv_btwn")
def test_cli_gower_reads_the_table_as_it_is(iris, tmp_path):
    X, y = iris
    df = pd.DataFrame(X, columns=list("abcd")).assign(big=np.where(X[:, 2] > 4, "yes", "no"), species=y)
    df.loc[[3, 60], "c"] = np.nan
    df.to_csv(tmp_path / "mixed.csv", index=False)
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "mixed.csv"), "-l", "species", "--metric", "gower", "--dim", "5",
                                 "--permutations", "5", "--max-permutations", "5", "--ci", "none", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["metric"] == "gower" and "centroid" in d["views_missing"] and d["d"] == 5
    assert any("kept 2 missing value(s)" in s["detail"] for s in d["preparation"])


@needs("precomputed", "sc_a", "dbcv_btwn")
def test_cli_precomputed_reads_an_npy_matrix(iris, tmp_path):
    X, y = iris
    np.save(tmp_path / "D.npy", cdist(X, X)); np.save(tmp_path / "y.npy", y.astype(str))
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "D.npy"), "--labels", str(tmp_path / "y.npy"),
                                 "--metric", "precomputed", "--dim", "4", "--permutations", "5", "--max-permutations", "5",
                                 "--ci", "none"])
    assert r.exit_code == 0, r.output
    assert "metric precomputed" in r.stdout and "dissimilarities" in r.stdout and "no centroid view" in r.stdout


def test_cli_precomputed_without_labels_says_what_to_give(iris, tmp_path):
    X, _ = iris
    np.save(tmp_path / "D.npy", cdist(X, X))
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "D.npy"), "--metric", "precomputed"])
    assert r.exit_code == 1 and "--labels" in r.output


def test_dim_is_checked_at_the_door(iris):
    X, y = iris
    from clm_nb.profile import clm_profile
    for bad in (0, 1.5, "4", True):
        with pytest.raises(ValueError, match="dim"):
            clm_nb.assess(X, y, dim=bad, **FAST)
        with pytest.raises(ValueError, match="dim"):
            clm_profile(X, y, dim=bad)


def test_cli_precomputed_refuses_column_options(iris, tmp_path):
    X, y = iris
    np.save(tmp_path / "D.npy", cdist(X, X)); np.save(tmp_path / "y.npy", y.astype(str))
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "D.npy"), "--labels", str(tmp_path / "y.npy"),
                                 "--metric", "precomputed", "--drop-col", "x0"])
    assert r.exit_code == 1 and "has no columns" in r.output


@needs("precomputed", "dbcv_btwn")
def test_browser_shows_the_views_line_of_a_precomputed_assessment(blobs, tmp_path):
    "The assessment's HTML under metric='precomputed', opened in Chromium: the views line says which view is missing."
    from browser import fragment_page
    X, y = blobs
    a = clm_nb.assess(cdist(X, X), y, metric="precomputed", dim=3, **FAST)
    with fragment_page(a._repr_html_(), tmp_path) as page:
        views = page.locator(".clm-views")
        assert views.is_visible()
        text = views.inner_text()
        assert text.startswith("Views: metric precomputed") and "density (dbcv_btwn) view" in text
        assert "no centroid view (ch_btwn): dissimilarities have no coordinates to average" in text
        assert "metric precomputed" in page.locator(".clm-assessment").inner_text()
