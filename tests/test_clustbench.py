"""clustbench interop (issue 41) on the shared bundle: every reference labelling read, a CLM verdict per labelling in
the leaderboard (looked at in Chromium), clustbench's scoring rule against clustbench's own `get_score`, and a results
folder that round-trips through clustbench's own reader and writer.

Small datasets only (x2, x3, zigzag, compound: at most 399 points), ten relabellings per class pair: about half a minute.
"""
import gzip

import clustbench
import genieclust
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import AgglomerativeClustering, KMeans

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright
from clm_nb.clustbench import clustbench_labels, read_results, score_references, score_results, write_results
from clm_nb.bundle import reference_labellings
from clm_nb.bundle import list_datasets, load_dataset
from clm_nb.report import build_report
from clm_nb.runner import run
from clm_nb.leaderboard import leaderboard
from clm_nb.tasks import profile_tasks

MULTI = [("gagolews_v1/wut", "x2"), ("gagolews_v1/wut", "x3"), ("gagolews_v1/graves", "zigzag"),
         ("gagolews_v1/sipu", "compound")]


@pytest.fixture(scope="module")
def catalog(shared_data_dir):
    t = list_datasets(shared_data_dir, labeled=False)
    keep = pd.MultiIndex.from_frame(t[["collection", "name"]]).isin(MULTI)
    return t[keep].reset_index(drop=True)


@pytest.fixture(scope="module")
def board(shared_data_dir, catalog, tmp_path_factory):
    "The leaderboard of the four datasets with a verdict for each of their reference labellings."
    store = tmp_path_factory.mktemp("tasks")
    go = dict(store=store, n_jobs=1, progress=False)
    results = run(profile_tasks(catalog, data_dir=shared_data_dir, n_permutations=10), **go)
    labellings = {lab: run(profile_tasks(catalog, data_dir=shared_data_dir, n_permutations=10, labels=lab), **go)
                  for lab in ("labels1", "labels2", "labels3", "labels4")}
    return leaderboard(results, catalog, data_dir=shared_data_dir, labellings=labellings)


def test_every_reference_labelling_is_read(shared_data_dir):
    ds = load_dataset("compound", shared_data_dir, collection="gagolews_v1/sipu")
    refs = ds.labellings()
    assert list(refs) == ["y", "labels1", "labels2", "labels3", "labels4"]
    assert refs["y"] is ds.y or np.array_equal(refs["y"], ds.y)
    raw = np.load(shared_data_dir / "gagolews_v1/sipu/compound.npz")
    for k, v in refs.items():                                     # noise 0 in the file is -1 here, the rest as given
        assert np.array_equal(np.where(raw[k] == 0, -1, raw[k]), v)
    other = load_dataset("compound", shared_data_dir, collection="gagolews_v1/sipu", labels="labels2")
    assert np.array_equal(other.y, refs["labels2"]) and list(other.labellings()) == list(refs)


def test_one_verdict_per_labelling(board, catalog):
    t = board.table.set_index("dataset")
    variants = catalog.set_index("name")["label_variants"]
    for _, name in MULTI:
        n_labellings = len([c for c in t.columns if c.startswith("verdict_labels") and t.at[name, c]])
        assert n_labellings == int(variants[name]) - 1, name
        said = t.at[name, "labellings"].split(" · ")
        assert said[0] == f"y: {t.at[name, 'verdict']}" and len(said) == n_labellings + 1
    assert t.at["x2", "verdict_labels2"] == ""                     # x2 has two labellings, not three
    assert np.isnan(t.at["x2", "score_labels2"]) and not np.isnan(t.at["x2", "score_labels1"])
    assert t.at["compound", "verdict_labels4"] in ("trustworthy", "doubtful", "unreliable")


def test_a_labelling_is_judged_like_y(shared_data_dir, catalog, board, tmp_path):
    "The verdict of labels1 equals the main verdict of a leaderboard built on labels1 alone."
    results = run(profile_tasks(catalog, data_dir=shared_data_dir, n_permutations=10, labels="labels1"),
                  store=tmp_path, n_jobs=1, progress=False)
    alone = leaderboard(results.drop(columns=["labels"]), catalog, data_dir=shared_data_dir).table.set_index("dataset")
    t = board.table.set_index("dataset")
    for _, name in MULTI:
        assert t.at[name, "verdict_labels1"] == alone.at[name, "verdict"], name


@pytest.mark.parametrize("measure, theirs", [("ari", genieclust.compare_partitions.adjusted_rand_score),
                                             ("fowlkes_mallows", genieclust.compare_partitions.fm_score)])
def test_score_equals_clustbench(shared_data_dir, measure, theirs):
    "The best over the reference labellings, noise left out: clustbench.get_score's number on every dataset."
    for coll, name in MULTI:
        ds = load_dataset(name, shared_data_dir, collection=coll)
        results = {k: AgglomerativeClustering(k, linkage="single").fit_predict(ds.X) + 1 for k in range(2, 8)}
        refs = [np.where(v == -1, 0, v) for v in ds.labellings().values()]
        mine = score_references(ds, results, measure=measure)
        assert mine.best == pytest.approx(clustbench.get_score(refs, results, metric=theirs, warn_if_missing=False),
                                          abs=1e-12)
        each = clustbench.get_score(refs, results, metric=theirs, compute_max=False, warn_if_missing=False)
        np.testing.assert_allclose(mine.scores.to_numpy(), each, atol=1e-12)


def test_results_folder_round_trips(shared_data_dir, tmp_path):
    "Our writer -> clustbench's reader, clustbench's writer -> our reader, and scores of the folder against the bundle."
    rows = []
    for coll, name in MULTI:
        ds = load_dataset(name, shared_data_dir, collection=coll)
        for k in (2, 3, 4, 5, 6):
            rows.append(dict(method_group="Mine", method="kmeans", battery=coll.split("/")[-1], dataset=name,
                             labels=KMeans(k, n_init=2, random_state=0).fit_predict(ds.X)))
    rows = pd.DataFrame(rows)
    write_results(tmp_path, rows)
    for r in rows.itertuples():
        k = int(r.labels.max()) + 1
        theirs = clustbench.load_results("Mine", r.battery, r.dataset, k, path=str(tmp_path))
        assert np.array_equal(theirs["kmeans"][k], clustbench_labels(r.labels))
    # clustbench's writer, our reader
    ds = load_dataset("x2", shared_data_dir, collection="gagolews_v1/wut")
    other = {"single": AgglomerativeClustering(3, linkage="single").fit_predict(ds.X) + 1,
             "ward": AgglomerativeClustering(3).fit_predict(ds.X) + 1}
    (tmp_path / "Theirs" / "wut").mkdir(parents=True)
    clustbench.save_results(str(tmp_path / "Theirs" / "wut" / "x2.result3.gz"), other)
    back = read_results(tmp_path, method_group="Theirs").set_index("method")
    assert set(back.index) == {"single", "ward"} and (back.k == 3).all()
    assert all(np.array_equal(back.labels[m], other[m]) for m in other)
    # and the whole folder scored against the bundle, with clustbench's rule
    scores = score_results(read_results(tmp_path), shared_data_dir, measure="ari")
    assert len(scores) == len(MULTI) + 2 and (scores.problem == "").all()
    row = scores[(scores.method == "ward")].iloc[0]
    refs = [np.where(v == -1, 0, v) for v in ds.labellings().values()]
    assert row.score == pytest.approx(clustbench.get_score(refs, {3: other["ward"]},
                                                           metric=genieclust.compare_partitions.adjusted_rand_score,
                                                           warn_if_missing=False), abs=1e-12)


def test_a_results_folder_that_breaks_the_format_is_refused(tmp_path):
    p = tmp_path / "G" / "wut" / "x2.result3.gz"
    p.parent.mkdir(parents=True)
    p.write_bytes(gzip.compress(b"a\n1\n2\n2\n"))
    with pytest.raises(ValueError, match="not K = 3"):
        read_results(tmp_path)
    p.write_bytes(gzip.compress(b"a\n1\n2\n-3\n"))
    with pytest.raises(ValueError, match="label '-3' on row 4"):
        read_results(tmp_path)


def test_unknown_dataset_is_a_recorded_problem(shared_data_dir):
    rows = pd.DataFrame([dict(method_group="G", method="m", battery="wut", dataset="no_such", k=2, n=3,
                              labels=np.array([1, 2, 2]))])
    out = score_results(rows, shared_data_dir, measure="ari")
    assert np.isnan(out.score.iloc[0]) and "no_such" in out.problem.iloc[0]


def test_bad_input():
    with pytest.raises(ValueError, match="is not an external measure"):
        score_references([[1, 1, 2]], [1, 2, 2], measure="silhouette")
    with pytest.raises(ValueError, match="differ in length"):
        reference_labellings({"a": [1, 2], "b": [1, 2, 3]})
    with pytest.raises(ValueError, match="labellings is"):
        leaderboard(pd.DataFrame(), pd.DataFrame(), labellings={"y": pd.DataFrame()})


@pytest.mark.parametrize("_", [0], ids=["chromium"])
@pytest.mark.skipif(CHROMIUM is None or sync_playwright is None, reason="Chromium or Playwright missing")
def test_the_report_shows_every_labelling(board, tmp_path, _):
    index = build_report(board, tmp_path / "site", view_points=100, progress=False)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = b.new_page(viewport={"width": 1400, "height": 900})
            page.goto(index.as_uri())
            heads = [h.replace("▲", "").replace("▼", "").strip() for h in page.locator("#board thead th").all_inner_texts()]
            col = heads.index("labellings")
            row = page.locator("#board tbody tr", has_text="compound")
            badges = row.locator(f"td:nth-child({col + 1}) .badge").all_inner_texts()
            assert len(badges) == 5 and badges[0].startswith("y: ") and badges[4].startswith("labels4: ")
            row.locator("a", has_text="compound").click()
            text = page.locator("p.labellings").inner_text()
            assert "Reference labellings" in text and "labels4:" in text
            assert page.locator("p.variants").count() == 0 or "labels" not in page.locator("p.variants").inner_text()
        finally:
            b.close()


def test_scores_against_trusted_labellings_only(shared_data_dir, board):
    "score_results(labellings=trusted_labellings(board)): the maximum over the references the verdict trusts."
    from clm_nb.clustbench import trusted_labellings
    trusted = trusted_labellings(board, ("trustworthy", "doubtful"))
    assert set(trusted.labels) <= {"y", "labels1", "labels2", "labels3", "labels4"}
    ds = load_dataset("compound", shared_data_dir, collection="gagolews_v1/sipu")
    rows = pd.DataFrame([dict(method_group="G", method="km", battery="sipu", dataset="compound", k=k, n=ds.n,
                              labels=KMeans(k, n_init=2, random_state=0).fit_predict(ds.X) + 1) for k in (4, 5, 6)])
    every = score_results(rows, shared_data_dir, measure="ari").iloc[0]
    some = score_results(rows, shared_data_dir, measure="ari", labellings=trusted).iloc[0]
    mine = trusted[trusted.dataset == "compound"].labels.tolist()
    admitted = [every[f"score_{k}"] for k in mine]
    assert some.score == (max(admitted) if admitted else some.score) and some.n_scored <= every.n_scored
    assert all(f"score_{k}" not in some or np.isnan(some[f"score_{k}"]) for k in set(ds.labellings()) - set(mine))


def test_assess_every_labelling_of_a_real_csv(tmp_path):
    """Palmer penguins saved as CSV (as a user would), three readings of the same birds (species, island, sex): one
    verdict each, each the verdict `assess` gives that labelling alone, and the HTML view in Chromium."""
    import palmerpenguins
    from browser import fragment_page
    from clm_nb.assessment import assess, assess_labellings
    palmerpenguins.load_penguins().to_csv(tmp_path / "penguins.csv", index=False)
    t = pd.read_csv(tmp_path / "penguins.csv")
    readings = {c: t[c].to_numpy() for c in ("species", "island", "sex")}
    X = t.drop(columns=list(readings))
    opts = dict(missing="drop", variants=False, n_resamples=10)
    la = assess_labellings(X, readings, **opts)
    assert list(la.table.index) == ["species", "island", "sex"]
    assert la.table.at["sex", "n"] < la.table.at["species", "n"]          # the rows without a sex are dropped
    alone = assess(X, readings["island"], **opts)
    assert la["island"].verdict == alone.verdict and la.table.at["island", "sc_a"] == alone.score
    with fragment_page(la._repr_html_(), tmp_path) as page:
        badges = page.locator(".clm-labellings > table .clm-verdict").all_inner_texts()
        assert badges == list(la.table.verdict)
        assert page.locator("details.clm-labelling").count() == 3
        page.locator("details.clm-labelling summary").first.click()
        assert page.locator("details.clm-labelling").first.locator(".clm-assessment").is_visible()


def test_default_score_is_nca_as_clustbench(shared_data_dir):
    "Without a measure, the score is NCA and equals clustbench.get_score's default (genieclust's NCA) on every dataset."
    for coll, name in MULTI:
        ds = load_dataset(name, shared_data_dir, collection=coll)
        results = {k: KMeans(k, n_init=2, random_state=0).fit_predict(ds.X) + 1 for k in range(2, 8)}
        refs = [np.where(v == -1, 0, v) for v in ds.labellings().values()]
        mine = score_references(ds, results)
        assert mine.measure == "nca"
        assert mine.best == pytest.approx(clustbench.get_score(refs, results, warn_if_missing=False), abs=1e-12)


# ---- issue 49: the results files lose nothing, are written atomically, and are read within a bound --------------
def _rows(method, labels, dataset="blobs"):
    return pd.DataFrame([dict(method_group="G", method=method, battery="toy", dataset=dataset, labels=labels)])


Y = np.repeat([0, 1, 2], 10)


def test_write_results_merges_methods(tmp_path):
    """Issue 49: writing method B after method A into the same dataset.resultK.gz keeps A (it left only B)."""
    write_results(tmp_path, _rows("A", Y))
    write_results(tmp_path, _rows("B", Y[::-1]))
    back = read_results(tmp_path)
    assert back.method.tolist() == ["A", "B"]
    write_results(tmp_path, _rows("A", np.roll(Y, 1)))            # a method written again replaces its column
    back = read_results(tmp_path).set_index("method")
    assert back.labels["A"].tolist() == clustbench_labels(np.roll(Y, 1)).tolist()
    with pytest.raises(ValueError, match="holds clusterings of 30 points"):
        write_results(tmp_path, _rows("C", np.repeat([0, 1, 2], [7, 7, 6])))


def test_write_results_is_atomic(tmp_path, monkeypatch):
    """Issue 49: a write that dies half-way (as under kill -9) leaves the previous file whole, not a fragment."""
    from pathlib import Path
    write_results(tmp_path, _rows("A", Y))
    path = tmp_path / "G" / "toy" / "blobs.result3.gz"
    before = path.read_bytes()
    real = Path.write_bytes

    def dies_half_way(self, data):
        real(self, data[:len(data) // 2])
        raise KeyboardInterrupt("killed mid-write")
    monkeypatch.setattr(Path, "write_bytes", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        write_results(tmp_path, _rows("B", Y))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["blobs.result3.gz"]     # no temporary file left
    assert read_results(tmp_path).method.tolist() == ["A"]


def test_write_results_refuses_what_read_results_refuses(tmp_path):
    """Issue 49: names read back as one ('a' and 'a.1'), an empty name and an empty clustering are refused at write."""
    write_results(tmp_path, _rows("a", Y))
    with pytest.raises(ValueError, match="would be read back as one"):
        write_results(tmp_path, _rows("a.1", Y))
    with pytest.raises(ValueError, match="name is empty"):
        write_results(tmp_path, _rows("", Y))
    with pytest.raises(ValueError, match="non-empty 1-D"):
        write_results(tmp_path, _rows("b", np.array([], dtype=int)))
    assert read_results(tmp_path).method.tolist() == ["a"]          # nothing else written


def test_read_results_names_a_label_beyond_int64_and_bounds_the_size(tmp_path):
    """Issue 49: a label beyond int64 names the file, method and row (was a bare OverflowError); a small gzip that
    expands past max_bytes is refused without being held."""
    folder = tmp_path / "G" / "toy"
    folder.mkdir(parents=True)
    (folder / "d.result2.gz").write_bytes(gzip.compress(b"m\n1\n2\n99999999999999999999\n"))
    with pytest.raises(ValueError, match=r"d.result2.gz: method 'm' has the label '99999999999999999999' on row 4"):
        read_results(tmp_path)
    (folder / "d.result2.gz").write_bytes(gzip.compress(b"m\n" + b"1\n2\n" * 100_000))
    with pytest.raises(ValueError, match="decompresses to more than 10,000 bytes"):
        read_results(tmp_path, max_bytes=10_000)
    assert len(read_results(tmp_path)) == 1                         # within the default bound


def test_read_results_says_what_it_skipped(tmp_path):
    """Issue 49: FIFOs, folders and symbolic link loops named like results files were skipped silently."""
    import os
    folder = tmp_path / "G" / "toy"
    folder.mkdir(parents=True)
    (folder / "a.result2.gz").mkdir()
    os.mkfifo(folder / "b.result2.gz")
    (folder / "c.result2.gz").symlink_to("c.result2.gz")
    with pytest.warns(UserWarning, match="skipped 3 entries") as w:
        assert len(read_results(tmp_path)) == 0
    text = str(w[0].message)
    assert "a folder" in text and "named pipe" in text and "symbolic link loop" in text


def test_score_results_refuses_a_missing_bundle(tmp_path):
    """Issue 49: a data_dir that is no bundle stops at once (it gave every score NaN and exit code 0)."""
    results = read_results(write_results(tmp_path, _rows("A", Y))[0].parents[2])
    with pytest.raises(ValueError, match="does not exist"):
        score_results(results, tmp_path / "nodir")


def test_reference_names_that_are_one_name_and_generators():
    """Issue 49: the keys 1 and '1' collapsed silently; a generator gave 'shape ()'."""
    with pytest.raises(ValueError, match="two references are named '1'"):
        reference_labellings({1: [0, 1, 1], "1": [1, 1, 0]})
    assert list(reference_labellings(r for r in ([0, 1, 1], [1, 1, 0]))) == ["labels0", "labels1"]
    with pytest.raises(ValueError, match="references is a set"):
        reference_labellings({0, 1})
