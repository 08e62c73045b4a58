"""Common tests over the registry's `metrics` and `sparse` columns (issue 40): every metric a measure claims is
exercised, and agrees with the same data given another way.

- a claimed coordinate metric: the value on coordinates equals the value on `cdist(X, X, metric)` with
  metric='precomputed' (square and condensed) when the measure also claims 'precomputed', to 1e-12;
- `sparse=True`: CSR X equals dense X for every claimed coordinate metric;
- 'gower': a mixed DataFrame with NaN equals `gower(df)` with metric='precomputed';
- an unclaimed metric is refused with a `ValueError` of the measure's own making that names the metric;
- silhouette equals scikit-learn's precomputed path; a broken precomputed matrix gets the documented message;
- `clm-nb measures` shows each measure's metrics and whether it reads sparse X.

The registry is read when the tests run, so a measure that later claims a metric is tested without editing this file.
Small generated data (90 points, 3 classes): the whole file runs in well under a minute once numba's cache is warm.
"""
import inspect
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import sparse
from scipy.spatial.distance import cdist, pdist
from sklearn.datasets import make_blobs

import clm_nb
from clm_nb.catalog import get_measure, measures
from clm_nb.registry import METRIC_NAMES

COORDINATE = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine")
assert set(COORDINATE) | {"precomputed", "gower"} == set(METRIC_NAMES), "a new metric name: add it to these tests"
KINDS = ("internal", "between")                        # the kinds that read X (external and ensemble read labelings)
TOL = 1e-12

# Measures whose claimed 'precomputed' is not compared here with the coordinate path, and why. Each entry is checked
# to still claim 'precomputed' (a stale entry fails), and every other claim is exercised below.
PRECOMPUTED_ELSEWHERE = {
    # DBCV's core distance has the exponent d (the data's dimension); a dissimilarity matrix has no dimension, so
    # the two paths agree only with d given: tests/test_internal.py compares them.
    "dbcv": "tests/test_internal.py",
    # The between-dataset measures draw relabellings and class-pair subsamples: tests/test_between.py
    # compares their precomputed path with the coordinate path for a fixed random_state.
    **{m: "tests/test_between.py" for m in measures("between").name},
}


def blobs(n=90, d=4, seed=0):
    X, y = make_blobs(n_samples=n, n_features=d, centers=3, cluster_std=2.5, random_state=seed)
    return X, y


def call(name, X, y, metric):
    "The measure `name` on (X, y) with `metric`, passing random_state only where the measure takes it."
    f = get_measure(name).func
    kw = {"random_state": 0} if "random_state" in inspect.signature(f).parameters else {}
    return float(f(X, y, metric=metric, **kw))


def same(a, b, tol=TOL):
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= tol * max(1.0, abs(a))


def claims():
    "(name, metric) for every metric every measure that reads X claims."
    return [(m.name, metric) for m in measures(KINDS).itertuples() for metric in m.metrics]


# Refusals known to be missing, (name, metric) -> what happens: marked xfail so that a fix shows as XPASS. Empty:
# cvnn's gaps found by this file were closed by the registry claiming what it reads (issue 40).
KNOWN_GAPS: dict = {}


def refusals():
    "(name, metric) for every metric a measure that reads X does not claim (known gaps marked xfail)."
    return [pytest.param(m.name, metric, marks=pytest.mark.xfail(reason=KNOWN_GAPS[m.name, metric], strict=False))
            if (m.name, metric) in KNOWN_GAPS else (m.name, metric)
            for m in measures(KINDS).itertuples() for metric in METRIC_NAMES if metric not in m.metrics]


def mixed_table(n=90, seed=0):
    "Numeric, categorical and boolean columns with missing values in each kind, and labels that follow the numbers."
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    df = pd.DataFrame({"size": rng.normal(3 * y, 1.0), "weight": rng.gamma(2.0 + y, 1.0),
                       "colour": pd.Categorical(np.array(["red", "green", "blue"])[(y + rng.integers(0, 2, n)) % 3]),
                       "shape": rng.choice(["round", "square"], n),
                       "flag": rng.random(n) < 0.3 + 0.2 * y})
    df = df.astype({"flag": object})
    for col, rows in (("size", [3, 40]), ("colour", [7]), ("shape", [12, 60]), ("flag", [25])):
        df.loc[rows, col] = np.nan
    return df, y


COORDINATE_CLAIMS = [c for c in claims() if c[1] in COORDINATE]
GOWER_CLAIMS = [n for n, m in claims() if m == "gower"]
PRECOMPUTED_CLAIMS = [n for n, m in claims() if m == "precomputed"]


@pytest.mark.parametrize("name,metric", COORDINATE_CLAIMS)
def test_coordinates_equal_precomputed(name, metric):
    X, y = blobs()
    on_coordinates = call(name, X, y, metric)
    info = get_measure(name)
    if "precomputed" not in info.metrics or name in PRECOMPUTED_ELSEWHERE:
        assert np.isfinite(on_coordinates) or np.isnan(on_coordinates)
        return
    square = call(name, cdist(X, X, metric), y, "precomputed")
    condensed = call(name, pdist(X, metric), y, "precomputed")
    assert same(on_coordinates, square), (name, metric, on_coordinates, square)
    assert same(on_coordinates, condensed), (name, metric, on_coordinates, condensed)


@pytest.mark.parametrize("name,metric", [(n, m) for n, m in claims() if m in COORDINATE and get_measure(n).sparse])
def test_sparse_equals_dense(name, metric):
    X, y = blobs()
    X = np.where(np.abs(X) < 3.0, 0.0, X)                 # about half the entries zero: a real sparse pattern
    X[np.abs(X).sum(axis=1) == 0, 0] = 1.0                # no all-zero row (its cosine distance is undefined)
    dense, csr = call(name, X, y, metric), call(name, sparse.csr_matrix(X), y, metric)
    assert same(dense, csr), (name, metric, dense, csr)


def test_sparse_flag_matches_behaviour():
    "A measure that does not claim sparse X refuses it with a ValueError (a densified copy would be silent)."
    X, y = blobs()
    for m in measures(KINDS).itertuples():
        if not m.sparse and "euclidean" in m.metrics:
            with pytest.raises(ValueError) as e:
                call(m.name, sparse.csr_matrix(X), y, "euclidean")
            assert type(e.value) is ValueError and "sparse" in str(e.value).lower(), (m.name, str(e.value))


@pytest.mark.parametrize("name", GOWER_CLAIMS)
def test_gower_table_equals_gower_matrix(name):
    df, y = mixed_table()
    on_table = call(name, df, y, "gower")
    if "precomputed" in get_measure(name).metrics and name not in PRECOMPUTED_ELSEWHERE:
        on_matrix = call(name, clm_nb.gower.gower(df), y, "precomputed")
        assert same(on_table, on_matrix), (name, on_table, on_matrix)


def refusal(name, metric) -> ValueError:
    "The error `name` raises for `metric` on data of that kind (a matrix, a table, or coordinates)."
    X, y = blobs()
    data = {"precomputed": cdist(X, X), "gower": pd.DataFrame(X, columns=list("abcd"))}.get(metric, X)
    with pytest.raises(ValueError) as e:
        call(name, data, y, metric)
    return e.value


@pytest.mark.parametrize("name,metric", refusals())
def test_unclaimed_metric_refused_with_reason(name, metric):
    err = refusal(name, metric)
    msg = str(err)
    assert type(err) is ValueError, f"{name}, metric={metric!r}: {type(err).__name__} (not the measure's own " \
                                        f"refusal): {msg[:200]}"
    assert metric in msg, f"{name}, metric={metric!r}: the refusal does not name the metric: {msg[:200]}"


# Measures defined on pair distances or densities, not on centroids: a refusal must not say "centroids" (issue 40
# found sc_a and dbcv_btwn refusing cosine "because they are defined with Euclidean centroids").
NOT_CENTROID = {"dunn_a": "pairwise", "sc_a": "pairwise", "dbcv_btwn": "density-based"}


def pairwise_refusals():
    return [(n, m) for n in NOT_CENTROID for m in METRIC_NAMES if m not in get_measure(n).metrics]


@pytest.mark.parametrize("name,metric", pairwise_refusals())
def test_refusal_of_a_pairwise_measure_does_not_blame_centroids(name, metric):
    err = refusal(name, metric)
    assert "centroid" not in str(err), f"{name} is {NOT_CENTROID[name]}, the refusal says: {err}"


def test_silhouette_equals_sklearn_precomputed():
    from sklearn.metrics import silhouette_score
    X, y = blobs()
    for metric in ("euclidean", "cityblock", "cosine"):
        D = cdist(X, X, metric)
        assert same(clm_nb.silhouette(D, y, metric="precomputed"), silhouette_score(D, y, metric="precomputed"))


def test_memmap_read_only_equals_array(tmp_path):
    X, y = blobs()
    D = cdist(X, X)
    np.save(tmp_path / "D.npy", D)
    M = np.load(tmp_path / "D.npy", mmap_mode="r")
    for name in ("silhouette", "aucc", "dunn"):
        assert call(name, M, y, "precomputed") == call(name, D, y, "precomputed")


BROKEN = {
    "asymmetric": (lambda D: D + np.triu(np.full_like(D, 0.5), 1), "not symmetric"),
    "negative": (lambda D: np.where(np.eye(len(D), k=1, dtype=bool), -1.0, D), "negative"),
    "NaN": (lambda D: np.where(np.eye(len(D), k=2, dtype=bool) | np.eye(len(D), k=-2, dtype=bool), np.nan, D),
            "NaN or infinite"),
    "non-square": (lambda D: D[:, :-1], "square"),
    "non-zero diagonal": (lambda D: D + np.eye(len(D)), "diagonal"),
    "not a condensed length": (lambda D: pdist(np.ones((5, 2)))[:-1], "condensed"),
}


@pytest.mark.parametrize("case", BROKEN)
@pytest.mark.parametrize("name", PRECOMPUTED_CLAIMS)
def test_broken_precomputed_matrix(name, case):
    X, y = blobs()
    breaks, words = BROKEN[case]
    with pytest.raises(ValueError, match=words):
        call(name, breaks(cdist(X, X)), y, "precomputed")


def test_every_claim_exercised():
    """Each claimed metric is a case of the tests above: a coordinate metric of `test_coordinates_equal_precomputed`,
    'gower' of `test_gower_table_equals_gower_matrix`, 'precomputed' compared there with a claimed coordinate metric
    (or with Gower's table), else listed in `PRECOMPUTED_ELSEWHERE` with the file that tests it."""
    names = set(measures(KINDS).name)
    stale = [n for n in PRECOMPUTED_ELSEWHERE if n not in names]
    assert not stale, f"exclusions of measures that are not registered: {stale}"
    compared = {n for n, _ in COORDINATE_CLAIMS} | set(GOWER_CLAIMS)
    covered = set(COORDINATE_CLAIMS) | {(n, "gower") for n in GOWER_CLAIMS} | \
        {(n, "precomputed") for n in PRECOMPUTED_CLAIMS if n in compared or n in PRECOMPUTED_ELSEWHERE}
    missing = [c for c in claims() if c not in covered]
    assert not missing, f"claimed but not exercised: {missing}"


def cli(*args):
    from clm_nb.cli import cli as group
    return CliRunner().invoke(group, list(args), prog_name="clm-nb")


def shown_metrics(text):
    "The table's metrics cell back to names: 'all', 'all but a,b', 'a,b' or '-'."
    if text == "-": return ()
    if text.startswith("all"):
        left = text[len("all but "):].split(",") if text.startswith("all but ") else []
        return tuple(m for m in METRIC_NAMES if m not in left)
    return tuple(text.split(","))


def test_cli_measures_shows_metrics():
    out = cli("measures")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    head = lines[0]
    assert head.split()[:7] == ["name", "kind", "better", "range", "metrics", "sparse", "summary"], head
    table = measures()
    for m in table.itertuples():
        line = next(l for l in lines if l.split()[0] == m.name)
        metrics, flag = line[head.index("metrics"):].split()[0], line[head.index("sparse"):].split()[0]
        assert shown_metrics(metrics) == m.metrics, (m.name, metrics)
        assert flag == (("yes" if m.sparse else "no") if m.metrics else "-"), (m.name, flag)
    assert lines[-1] == "(metrics: all = " + ", ".join(METRIC_NAMES) + ")"
    rows = json.loads(cli("measures", "--json").output)
    assert {r["name"]: (tuple(r["metrics"]), r["sparse"]) for r in rows} == \
        {m.name: (m.metrics, m.sparse) for m in table.itertuples()}
