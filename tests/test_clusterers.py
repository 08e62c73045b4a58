"""Clustering techniques (23_clusterers): every registered technique runs on tiny data, seeds reproduce, limits and
bad input are refused, the TPE search improves on the default and is seeded, pools and classifier proxies."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

import clm_nb
from clm_nb import clusterers as CL

X, Y = make_blobs(120, centers=[[0, 0], [8, 0], [0, 8]], random_state=0)


@pytest.mark.parametrize("name", sorted(CL.TECHNIQUES))
def test_every_technique_runs_and_is_seeded(name):
    a = CL.cluster(name, X, random_state=3)
    b = CL.cluster(name, X, random_state=3)
    assert a.shape == (120,) and np.array_equal(a, b)
    assert len(set(a.tolist()) - {-1}) >= 1


@pytest.mark.parametrize("name", ["kmeans", "gmm", "single", "dbscan", "hdbscan", "xmeans"])
def test_search_improves_or_matches_default_and_is_seeded(name):
    default = clm_nb.ari(Y, CL.cluster(name, X, random_state=0))
    res = CL.search(name, X, Y, n_trials=10, random_state=1)
    assert res.best_score >= default - 1e-12 or res.best_score > 0.9
    assert res.best_score == pytest.approx(clm_nb.ari(Y, res.best_labels))
    again = CL.search(name, X, Y, n_trials=10, random_state=1)
    assert again.trials.score.tolist() == pytest.approx(res.trials.score.tolist(), nan_ok=True)
    assert {"trial", "score", "seconds", "error", "clusters_found"} <= set(res.trials.columns)


def test_search_with_a_minimised_measure_minimises_it():
    res = CL.search("kmeans", X, Y, measure="nvd", n_trials=10, random_state=0)
    assert res.best_score == pytest.approx(res.trials.score.min())


def test_limits_and_bad_input():
    big = np.random.default_rng(0).normal(size=(20_001, 2))
    with pytest.raises(ValueError, match="limit of 20000"):
        CL.cluster("average", big)
    with pytest.raises(ValueError, match="no clustering technique"):
        CL.cluster("kmeens", X)
    with pytest.raises(ValueError, match="NaN"):
        CL.cluster("kmeans", np.r_[X, [[np.nan, 0]]])
    with pytest.raises(ValueError, match="external measure"):
        CL.search("kmeans", X, Y, measure="silhouette")


def test_pools():
    p3 = CL.partition_pool(X, "paper003", random_state=0)
    assert {m[0] for m in p3} == {"kmeans", "single", "average", "complete", "ward"}
    assert all(len(set(m[2].tolist()) - {-1}) >= 2 for m in p3)
    p4 = CL.partition_pool(X, "paper004", ks=[3], random_state=0)
    assert [m[0] for m in p4] == ["kmeans", "ward", "spectral", "birch", "gmm"]
    p2 = CL.partition_pool(X, "paper002", ks=[2, 3], seeds=2, n_eps=5, random_state=0)
    assert sum(m[0] == "kmeans" for m in p2) == 4 and any(m[0] == "dbscan" for m in p2)


def test_xmeans_finds_the_number_of_clusters():
    X6, _ = make_blobs(600, centers=[[0, 0], [10, 0], [0, 10], [10, 10], [20, 0], [20, 10]], random_state=1)
    assert len(set(CL.XMeans(2, 20, random_state=0).fit_predict(X6))) == 6


def test_classifier_proxies():
    out = CL.classifier_proxies(X, Y, classifiers=("knn", "lda"), n_trials=2, random_state=0)
    assert set(out) == {"knn", "lda", "ensemble"} and out["ensemble"] == max(out["knn"], out["lda"]) > 0.9
    with pytest.raises(ValueError, match="fewer than cv"):
        CL.classifier_proxies(X[:12], [0] * 8 + [1] * 4, n_trials=1)


@pytest.mark.parametrize("linkage", ["single", "average", "complete", "ward"])
@pytest.mark.parametrize("seed", [0, 1])
def test_cutting_one_merge_tree_equals_scikit_learn_for_every_k(linkage, seed):
    from sklearn.cluster import AgglomerativeClustering
    rng = np.random.default_rng(seed)
    Z = np.round(rng.normal(size=(90, 3)), 1)                    # rounding makes duplicate points and tied merges
    Z = np.vstack([Z, Z[:10]])
    g = CL.Geometry(Z)
    for k in (1, 2, 3, 5, 17, 60, 100):
        ours = g.cut(linkage, k)
        theirs = AgglomerativeClustering(k, linkage=linkage).fit_predict(Z)
        assert len(set(ours.tolist())) == k
        assert clm_nb.ari(theirs, ours) == pytest.approx(1.0)
    assert list(g._trees) == [linkage]                           # one tree served every k


def test_a_search_builds_the_shared_geometry_once(monkeypatch):
    calls = []
    original = CL.Geometry.distances
    monkeypatch.setattr(CL.Geometry, "distances", lambda self: calls.append(1) or original(self))
    res = CL.search("kmedoids", X, Y, n_trials=6, random_state=0)
    assert len(res.trials) == 6 and len(calls) == 6              # asked every trial ...
    g = CL.Geometry(X)
    assert g.distances() is g.distances()                        # ... computed once


def test_ground_truth_task_subsamples_large_data_stratified():
    Xb, yb = make_blobs(900, centers=[[0, 0], [8, 0], [0, 8]], random_state=1)
    yb = np.where(np.arange(900) < 100, 3, yb)                   # a small class keeps its share
    full = CL.ground_truth_task(Xb, yb, "kmeans", n_trials=4, random_state=0)
    part = CL.ground_truth_task(Xb, yb, "kmeans", n_trials=4, max_points=300, random_state=0)
    assert full["points"] == 900 and part["points"] == 300
    assert part["ari"] == pytest.approx(full["ari"], abs=0.1)
    assert CL.ground_truth_task(Xb, yb, "kmeans", n_trials=4, max_points=900, random_state=0) == full


def _xmeans_before_issue23(X, k_max, seed):
    "The X-means of this project before issue 23 (one scikit-learn KMeans call per split), kept as the reference."
    from sklearn import cluster as skc
    def bic(P, labels, centres):
        return CL.xmeans_bic(np.bincount(labels, minlength=len(centres)), ((P - centres[labels]) ** 2).sum(), P.shape[1])
    rng = np.random.default_rng(seed)
    draw = lambda: int(rng.integers(2**31))
    centres = skc.KMeans(2, n_init=3, random_state=draw()).fit(X).cluster_centers_
    while centres.shape[0] < k_max:
        labels = skc.KMeans(centres.shape[0], init=centres, n_init=1).fit(X).labels_
        new = []
        for j in range(centres.shape[0]):
            pts = X[labels == j]
            if len(pts) < 4:
                new.append(pts.mean(0) if len(pts) else centres[j]); continue
            two = skc.KMeans(2, n_init=2, random_state=draw()).fit(pts)
            if (bic(pts, two.labels_, two.cluster_centers_) > bic(pts, np.zeros(len(pts), int), pts.mean(0)[None])
                    and len(new) + 2 + (centres.shape[0] - j - 1) <= k_max):
                new.extend(two.cluster_centers_)
            else:
                new.append(pts.mean(0))
        if len(new) == centres.shape[0]:
            break
        centres = np.array(new)
    return skc.KMeans(centres.shape[0], init=centres, n_init=1).fit(X).labels_


@pytest.mark.parametrize("k", [3, 5, 8])
@pytest.mark.parametrize("seed", [0, 1])
def test_xmeans_finds_the_same_clusters_as_before_on_separated_data(k, seed):
    centres = np.random.default_rng(seed).uniform(-60, 60, size=(k, 4))
    Xk, yk = make_blobs(80 * k, centers=centres, random_state=seed)
    new = CL.XMeans(2, 20, random_state=seed).fit_predict(Xk)
    old = _xmeans_before_issue23(Xk, 20, seed)
    assert clm_nb.ari(new, old) == pytest.approx(1.0) and clm_nb.ari(yk, new) == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["iris", "wine", "digits"])
def test_xmeans_reaches_the_same_quality_as_before_on_real_data(name):
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler
    d = getattr(datasets, f"load_{name}")()
    Xr = StandardScaler().fit_transform(d.data)[:600]
    yr = d.target[:600]
    new = [clm_nb.ari(yr, CL.XMeans(2, 15, random_state=s).fit_predict(Xr)) for s in range(4)]
    old = [clm_nb.ari(yr, _xmeans_before_issue23(Xr, 15, s)) for s in range(4)]
    assert abs(np.mean(new) - np.mean(old)) <= 0.1, (new, old)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 5))
def test_two_means_all_returns_lloyd_fixed_points(seed, k, d):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 12, size=k)
    Xs = np.round(rng.normal(size=(sizes.sum(), d)), 1)                 # rounded: ties and duplicates happen
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    centres, got, parent_ss, child_ss = CL.two_means_all(Xs, starts, rng.random((k, 2, 2)))
    for j in range(k):
        P = Xs[starts[j]:starts[j + 1]]
        assert parent_ss[j] == pytest.approx(((P - P.mean(0)) ** 2).sum() if len(P) else 0.0, abs=1e-9)
        if got[j].min() == 0:                                             # no split: every point identical, or empty
            assert child_ss[j] == np.inf
            continue
        dist = ((P[:, None, :] - centres[j][None]) ** 2).sum(-1)
        side = dist.argmin(1)
        assert child_ss[j] == pytest.approx(dist.min(1).sum(), abs=1e-9) and child_ss[j] <= parent_ss[j] + 1e-9
        assert sorted(np.bincount(side, minlength=2)) == sorted(got[j]) or np.isclose(dist[:, 0], dist[:, 1]).any()
        for c in (0, 1):                                                  # each centre is the mean of its side
            if (side == c).any() and not np.isclose(dist[:, 0], dist[:, 1]).any():
                assert np.allclose(centres[j][c], P[side == c].mean(0))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_cv_accuracy_stops_only_trials_that_cannot_beat_the_bar(seed, bar):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.naive_bayes import GaussianNB
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 10)
    Xr = rng.normal(size=(30, 2)) + y[:, None] * rng.uniform(0, 2)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(Xr, y))
    full = cross_val_score(GaussianNB(), Xr, y, cv=splits).mean()
    got = CL.cv_accuracy(GaussianNB(), [CL.Fold(Xr, y, tr, te) for tr, te in splits], beat=bar)
    assert (got is None and full < bar) or got == pytest.approx(full, abs=1e-15)


def test_classifier_proxies_best_value_is_a_full_cross_validation():
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    Xr, yr = make_blobs(150, centers=3, cluster_std=4, random_state=2)
    out = CL.classifier_proxies(Xr, yr, classifiers=("knn",), n_trials=8, random_state=0)
    seed = int(np.random.default_rng(0).integers(2**31))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    knn = lambda k: make_pipeline(StandardScaler(), CL._classifier("knn", _Fixed(k), seed)[1])
    every_k = [cross_val_score(knn(k), Xr, yr, cv=folds).mean() for k in range(1, 51)]
    assert min(abs(out["knn"] - v) for v in every_k) < 1e-12 and out["knn"] <= max(every_k)


class _Fixed:
    "A stand-in for an optuna trial that suggests one fixed integer."
    def __init__(self, v): self.v = v
    def suggest_int(self, name, lo, hi, log=False): return self.v
    def suggest_float(self, name, lo, hi, log=False): return float(self.v)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 60), st.integers(2, 120), st.integers(2, 4), st.floats(0.0, 1.0))
def test_shrinkage_lda_is_scikit_learns_lsqr_lda(seed, n, d, K, lam):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    rng = np.random.default_rng(seed)
    y = np.r_[np.arange(K), rng.integers(0, K, n - K)]                  # every class present
    Xr = rng.normal(size=(n, d)) + y[:, None] * rng.uniform(0, 1)
    T = rng.normal(size=(200, d))
    ours = CL.ShrinkageLDA(lam).fit(Xr, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=lam).fit(Xr, y)
    ours_scores = T @ ours.coef_.T + ours.intercept_
    ref_scores = ref.decision_function(T)
    if K == 2:
        ours_scores = ours_scores[:, 1] - ours_scores[:, 0]
    assert np.allclose(ours_scores, ref_scores, rtol=1e-6, atol=1e-6 * np.abs(ref_scores).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_svm_proxy_on_precomputed_kernels_is_libsvms_rbf_svm(seed, monkeypatch):
    Xr, yr = make_blobs(200, centers=3, n_features=30, cluster_std=6, random_state=seed)
    fast = CL.classifier_proxies(Xr, yr, classifiers=("svm",), n_trials=6, random_state=seed)
    monkeypatch.setattr(CL, "KERNEL_MAX_TRAIN", 0)                 # every fold too large: libsvm computes the kernel
    assert CL._classifier("svm", _Fixed(1), 0, n_train=160)[0] == "standardized"
    assert CL.classifier_proxies(Xr, yr, classifiers=("svm",), n_trials=6, random_state=seed) == fast


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(10, 40), st.floats(-3, 0))
def test_logistic_regression_in_the_span_of_the_training_rows_is_the_same_model(seed, n, log_c):
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    Xr = rng.normal(size=(n, 3 * n)) + y[:, None] * rng.uniform(0, 1)   # wide: the span view has n_train coordinates
    fold = CL.Fold(Xr, y, np.arange(n // 5, n), np.arange(n // 5))
    (A, B), (S, T) = fold.view("standardized"), fold.view("span")
    assert S.shape[1] == len(fold.train) < A.shape[1]
    full = LogisticRegression(C=10**log_c, max_iter=5000, tol=1e-10).fit(A, fold.y_train)
    span = LogisticRegression(C=10**log_c, max_iter=5000, tol=1e-10).fit(S, fold.y_train)
    assert np.allclose(span.decision_function(T), full.decision_function(B), atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.tuples(st.integers(1, 40), st.sampled_from([1, 2, 3, 5, 8, 20, 32, None])),
                                        min_size=1, max_size=8), st.sampled_from([64 * 2**20, 8 * 20 * 3 * 60]))
def test_forest_accuracy_reuses_only_the_same_trees(seed, trials, budget):
    "Any order of trials, with room for all trees or for about 60 (then fresh fits): each is the fresh forest's accuracy."
    from unittest.mock import patch
    from sklearn.ensemble import RandomForestClassifier
    Xr, yr = make_blobs(90, centers=3, n_features=4, cluster_std=3, random_state=seed)
    fold = CL.Fold(Xr, yr, np.arange(20, 90), np.arange(20))
    with patch.object(CL, "FOREST_CACHE_BYTES", budget):
        for m, depth in trials:
            model = RandomForestClassifier(m, max_depth=depth, random_state=seed % 97, n_jobs=1)
            fresh = model.fit(Xr[20:], yr[20:]).score(Xr[:20], yr[:20])
            again = RandomForestClassifier(m, max_depth=depth, random_state=seed % 97, n_jobs=1)
            assert CL.forest_accuracy(again, fold) == fresh
    assert 8 * 20 * 3 * fold.forest_trees <= budget
