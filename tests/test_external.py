"""External indices (11_external): scikit-learn agreement, exact pair counts at n = 10^7, brute-force oracles for the
matching indices and the Centroid Index tie rule, the hand-worked tables, a hypothesis property for every invariance
an external measure claims, declared ranges, and bad input.

issue 41: the new external indices against genieclust 1.3.0 and clusim 0.4 (ARI and AMI under the five random models
of Gates & Ahn 2017), and from-definition oracles where the peer refuses or has no such index."""
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linear_sum_assignment
from sklearn import metrics as skm
from sklearn.datasets import load_iris, load_wine, make_blobs
from sklearn.mixture import GaussianMixture

import clm_nb
from clm_nb import external as E

EXTERNAL = clm_nb.measures("external")
NAMES = EXTERNAL.name.tolist()
SKLEARN = {"ari": skm.adjusted_rand_score, "rand": skm.rand_score, "ami": skm.adjusted_mutual_info_score,
           "nmi": skm.normalized_mutual_info_score, "v_measure": skm.v_measure_score,
           "fowlkes_mallows": skm.fowlkes_mallows_score}


def test_registry_lists_the_issue_measures():
    assert set(NAMES) == {"ari", "rand", "ami", "nmi", "v_measure", "fowlkes_mallows", "jaccard_pairs", "purity",
                          "inverse_purity", "nvd", "criterion_h", "psi", "centroid_index", "centroid_index_relative",
                          "csi",
                          # issue 41 (below)
                          "nca", "npa", "afm", "mi", "vi", "wallace_ab", "wallace_ba", "ecs"}
    directions = dict(zip(EXTERNAL.name, EXTERNAL.direction))
    assert {m for m, d in directions.items() if d == "min"} == {"centroid_index", "centroid_index_relative", "nvd",
                                                                "criterion_h", "vi"}


# ---------------------------------------------------------------- contingency and pair counts

@pytest.mark.parametrize("dense_cells", [E.DENSE_CELLS, 0])
def test_contingency_matches_sklearn_on_both_counting_paths(monkeypatch, dense_cells):
    monkeypatch.setattr(E, "DENSE_CELLS", dense_cells)
    rng = np.random.default_rng(0)
    for n, ka, kb in [(2, 1, 2), (50, 3, 9), (3000, 40, 25), (3000, 2500, 3000)]:
        a, b = rng.integers(0, ka, n), rng.integers(0, kb, n)
        ct = E.contingency(a, b)
        np.testing.assert_array_equal(ct.toarray(), skm.cluster.contingency_matrix(a, b))
        np.testing.assert_array_equal(ct.T.toarray(), ct.toarray().T)
        assert ct.sizes_a.sum() == ct.sizes_b.sum() == ct.n == n


def test_contingency_is_sparse_when_the_table_is_huge():
    n = 1_000_000
    i = np.arange(n)
    ct = E.contingency(i // 2, i // 3)                    # 500 000 x 333 334 clusters: 1.7e11 cells if dense
    assert ct.shape == (500_000, 333_334) and ct.nnz == 666_667
    assert E.nvd(ct) == pytest.approx(0.25, abs=1e-6)    # each pair {2k, 2k+1} is split by B one time in three
    # in every run of 6 points, A's middle pair {2k+2, 2k+3} straddles two B clusters and is nobody's best match
    assert E.centroid_index(ct, return_details=True).ci_ba == 166_666


def _exact_pairs(sizes):
    return sum(Fraction(int(s) * (int(s) - 1), 2) for s in sizes)


def test_pair_counts_are_exact_at_ten_million_points():
    n = 10_000_000
    i = np.arange(n, dtype=np.int64)
    a, b = i % 7, (i // 3) % 11
    pc = E.pair_counts(a, b)
    ct = E.contingency(a, b)
    both = _exact_pairs(ct.cells[2])
    same_a, same_b = _exact_pairs(np.bincount(a)), _exact_pairs(np.bincount(b))
    assert pc == E.PairCounts(both, same_a - both, same_b - both, n * (n - 1) // 2 - same_a - same_b + both)
    assert all(type(v) is int for v in (pc.together_both, pc.together_a_only, pc.together_b_only, pc.apart_both))
    assert pc.total == n * (n - 1) // 2 == 49_999_995_000_000
    # the products pair-counting indices form overflow int64 long before n = 10^7; ours stay exact
    assert pc.together_a_only * pc.apart_both > 2**63
    expected = Fraction(pc.together_both, pc.together_both + pc.together_a_only + pc.together_b_only)
    assert E.jaccard_pairs(ct) == float(expected)
    total = pc.total
    ari_exact = (Fraction(pc.together_both) - same_a * same_b / total) / ((same_a + same_b) / 2 - same_a * same_b / total)
    assert E.ari(ct) == pytest.approx(float(ari_exact), abs=1e-12)


def test_pair_counts_agree_with_sklearn_pair_confusion_matrix():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 200))
        a, b = rng.integers(0, rng.integers(1, 8), n), rng.integers(0, rng.integers(1, 8), n)
        (tn, fp), (fn, tp) = skm.cluster.pair_confusion_matrix(a, b)
        pc = E.pair_counts(a, b)
        assert (2 * pc.apart_both, 2 * pc.together_b_only, 2 * pc.together_a_only, 2 * pc.together_both) == (tn, fp, fn, tp)


# ---------------------------------------------------------------- scikit-learn agreement

def _labelings(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    a = rng.integers(0, rng.integers(1, 12), n)
    b = np.where(rng.random(n) < rng.random(), a, rng.integers(0, rng.integers(1, 12), n))
    return a, b


@pytest.mark.parametrize("name", sorted(SKLEARN))
def test_delegates_agree_with_sklearn(name):
    for seed in range(40):
        a, b = _labelings(seed)
        names = np.array([f"c{v}" for v in range(20)])
        got = clm_nb.score(name, pd.Series(names[a]), b)
        assert type(got) is float
        expected = SKLEARN[name](a, b)
        if name == "fowlkes_mallows" and np.unique(a).size == a.size and np.unique(b).size == b.size:
            expected = 1.0          # identical all-singleton partitions score the maximum (scikit-learn gives 0)
        assert got == pytest.approx(expected, abs=1e-12)


IDENTICAL = {"all singletons": np.arange(7), "one cluster": np.zeros(7, int), "ordinary": np.array([0, 0, 1, 1, 1, 2, 2]),
             "strings": np.array(list("aabbbcd")), "with -1": np.array([-1, -1, 1, 1, 1, 1, -1])}


@pytest.mark.parametrize("name", list(clm_nb.measures("external").name))
@pytest.mark.parametrize("case", list(IDENTICAL))
def test_identical_partitions_score_the_best_value(name, case):
    "One convention for every external measure: two identical partitions get its best value, trivial ones included."
    info = clm_nb.get_measure(name)
    best = info.upper if info.direction == "max" else info.lower
    labels = IDENTICAL[case]
    if name == "mi":                  # unnormalised: its best value for A is H(A), the bound it normalises away
        best = E._entropies(E.contingency(labels, labels))[0]
    assert info.func(labels, labels.copy()) == pytest.approx(best, abs=1e-12)
    relabelled = pd.factorize(labels)[0] + 10
    assert info.func(labels, relabelled) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("average", ["arithmetic", "geometric", "min", "max"])
def test_nmi_and_ami_averaging(average):
    for seed in range(10):
        a, b = _labelings(seed)
        assert E.nmi(a, b, average=average) == pytest.approx(
            skm.normalized_mutual_info_score(a, b, average_method=average), abs=1e-12)
        assert E.ami(a, b, average=average) == pytest.approx(
            skm.adjusted_mutual_info_score(a, b, average_method=average), abs=1e-12)


def test_trivial_partitions_follow_documented_values():
    one, single = np.zeros(10, int), np.arange(10)
    assert (E.ari(one, one), E.nmi(one, one), E.ami(one, one)) == (1.0, 1.0, 1.0)
    assert (E.ari(single, single), E.jaccard_pairs(single, single)) == (1.0, 1.0)
    assert E.fowlkes_mallows(single, single) == 1.0          # identical partitions score the maximum (scikit-learn: 0)
    assert E.fowlkes_mallows(one, single) == 0.0
    assert E.purity(one, single) == 1.0 and E.inverse_purity(one, single) == 0.1
    assert E.psi(one, one) == 1.0 and E.centroid_index(one, single) == 9.0
    assert E.nvd(one, single) == pytest.approx((20 - 1 - 10) / 20)


# ---------------------------------------------------------------- hand-worked tables

def test_merge_and_split_example():
    A = ["a1"] * 6 + ["a2"] * 6 + ["a3"] * 8
    B = [1] * 12 + [2] * 4 + [3] * 4
    assert E.centroid_index(A, B, return_details=True).value == 1
    assert (E.nvd(A, B), E.criterion_h(A, B), E.csi(A, B)) == (0.25, 0.5, 0.75)
    assert E.psi(A, B) == pytest.approx(1 / 11, abs=1e-15)


def test_paper_fig1_like_point_level_change_keeps_ci_zero():
    # two clusters, two points moved: set-matching indices see 10 % of the points, CI sees no structural change
    A, B = [0] * 10 + [1] * 10, [0] * 8 + [1] * 12
    assert (E.centroid_index(A, B), E.nvd(A, B), E.criterion_h(A, B)) == (0.0, 0.1, 0.1)
    assert E.psi(A, B) == pytest.approx(2 / 3, abs=1e-15)


def test_table_with_unequal_counts():
    # rows A1..A3, cols B1..B4: [[5,1,2,0],[0,6,0,0],[0,0,1,5]]; B3 is nobody's best match from A
    T = np.array([[5, 1, 2, 0], [0, 6, 0, 0], [0, 0, 1, 5]])
    a = np.repeat(np.repeat(np.arange(3), 4), T.ravel())
    b = np.repeat(np.tile(np.arange(4), 3), T.ravel())
    res = E.centroid_index(a, b, return_details=True)
    assert (res.ci_ab, res.ci_ba, res.value, res.orphans_b) == (1, 0, 1, (2,))
    n = T.sum()
    assert E.nvd(a, b) == pytest.approx((2 * n - (5 + 6 + 5) - (5 + 6 + 2 + 5)) / (2 * n))
    assert E.criterion_h(a, b) == pytest.approx(1 - (5 + 6 + 5) / n)
    assert E.csi(a, b) == pytest.approx(((5 + 6 + 5) / n + (5 + 6 + 2 + 5) / n) / 2)


# ---------------------------------------------------------------- oracles for matching and ties

def _naive_greedy(T):
    cells = sorted((-T[i, j], i, j) for i in range(T.shape[0]) for j in range(T.shape[1]) if T[i, j] > 0)
    used_r, used_c, total = set(), set(), 0
    for v, i, j in cells:
        if i not in used_r and j not in used_c:
            used_r.add(i); used_c.add(j); total -= v
    return total


def test_matching_indices_against_dense_oracles():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 60))
        a = rng.integers(0, rng.integers(1, 8), n)
        b = rng.integers(0, rng.integers(1, 8), n) if rng.random() < 0.5 else (a + rng.integers(0, 2, n)) % 5
        T = skm.cluster.contingency_matrix(a, b)
        ri, ci = linear_sum_assignment(T, maximize=True)
        assert E.criterion_h(a, b) == pytest.approx(1 - T[ri, ci].sum() / n, abs=1e-15)
        assert E.criterion_h(a, b, matching="greedy") == pytest.approx(1 - _naive_greedy(T) / n, abs=1e-15)
        sa, sb = T.sum(1), T.sum(0)
        S = T / np.maximum(sa[:, None], sb[None, :])
        ri, ci = linear_sum_assignment(S, maximize=True)
        m, K = min(T.shape), max(T.shape)
        Ex = np.minimum(np.sort(sa)[::-1][:m], np.sort(sb)[::-1][:m]).sum() / n
        expected = 1.0 if K == 1 else max(0.0, (S[ri, ci].sum() - Ex) / (K - Ex))
        assert E.psi(a, b) == pytest.approx(expected, abs=1e-12)
        simple = 1.0 if K == 1 else max(0.0, (S[ri, ci].sum() - 1) / (K - 1))
        assert E.psi(a, b, simplified=True) == pytest.approx(simple, abs=1e-12)


def test_optimal_matching_on_entangled_sparse_blocks():
    # many components with >1 row and column: the per-block Hungarian solutions must add up to the dense optimum
    rng = np.random.default_rng(11)
    a = rng.integers(0, 300, 2000)
    b = a // 2 * 2 + rng.integers(0, 3, 2000)             # blocks of 2 rows x ~4 columns
    T = skm.cluster.contingency_matrix(a, b)
    ri, ci = linear_sum_assignment(T, maximize=True)
    total, rows, cols = E.match_clusters(E.contingency(a, b), E.contingency(a, b).cells[2])
    assert total == T[ri, ci].sum()
    assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)


def test_ci_tie_rule_leaves_the_fewest_orphans():
    rng = np.random.default_rng(5)
    for _ in range(400):
        n = int(rng.integers(2, 25))
        a, b = rng.integers(0, rng.integers(1, 6), n), rng.integers(0, rng.integers(1, 6), n)
        ct = E.contingency(a, b)
        for t in (ct, ct.T):
            rows, cols, counts = t.cells
            J = counts / (t.sizes_a[rows] + t.sizes_b[cols] - counts)
            best = [cols[rows == i][J[rows == i] == J[rows == i].max()] for i in range(t.shape[0])]
            fewest = min(t.shape[1] - len(set(choice)) for choice in itertools.product(*best))
            assert E.orphans((rows, cols, J), t.shape[1]).size == fewest


def test_ci_bounds():
    for seed in range(60):
        a, b = _labelings(seed)
        res = E.centroid_index(a, b, return_details=True)
        assert abs(res.k_a - res.k_b) <= res.value <= max(res.k_a, res.k_b) - 1
        assert 0 <= res.relative < 1


# ---------------------------------------------------------------- the three similarities

def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [0, 10], [100, 0], [100, 10], [110, 0], [110, 10]], float)
    y = np.repeat(np.arange(6), 50)
    return centres[y] + rng.normal(size=(300, 2)), y


def test_prototype_ci_is_invariant_to_similarity_transforms_of_X():
    X, y = _blobs()
    y2 = np.where(y == 5, 4, y); y2[:25] = 7                   # merge two clusters, split one
    ref = E.centroid_index(y, y2, similarity="prototype", X=X, return_details=True)
    assert ref.value == 1
    Q = np.array([[0.6, -0.8], [0.8, 0.6]])
    for Xt in (X * 1e-7, X * 3e5 + 17, X @ Q):
        assert E.centroid_index(y, y2, similarity="prototype", X=Xt) == 1.0
        assert E.csi(y, y2, similarity="prototype", X=Xt) == pytest.approx(E.csi(y, y2, similarity="prototype", X=X))


def test_given_prototypes_need_no_labels_and_match_computed_centroids():
    X, y = _blobs()
    centroids = np.array([X[y == k].mean(0) for k in range(6)])
    shifted = centroids.copy(); shifted[5] = shifted[4] + 0.1           # two prototypes in one blob, none in blob 5
    assert E.centroid_index(similarity="prototype", prototypes_a=centroids, prototypes_b=shifted) == 1.0
    assert E.centroid_index(y, y, similarity="prototype", prototypes_a=centroids, X=X) == 0.0
    with pytest.raises(ValueError, match="dimensions"):
        E.centroid_index(similarity="prototype", prototypes_a=centroids, prototypes_b=centroids[:, :1])


@pytest.mark.parametrize("cov_type", ["full", "diag", "spherical", "tied"])
def test_gaussian_mixtures_of_every_covariance_type(cov_type):
    X, y = _blobs()
    gm = GaussianMixture(6, covariance_type=cov_type, random_state=0,
                         means_init=np.array([X[y == k].mean(0) for k in range(6)])).fit(X)
    assert E.centroid_index(similarity="model", models_a=gm, models_b=gm) == 0.0
    assert E.centroid_index(gm.predict(X), y, similarity="model", models_a=gm, X=X) == 0.0
    means, cov = E._gaussians(gm, "test")
    full = cov if cov.ndim == 3 else np.einsum("kd,de->kde", cov, np.eye(2))
    np.testing.assert_allclose(E.bhattacharyya(means, cov, means[::-1], cov[::-1]),
                               E.bhattacharyya(means, full, means[::-1], full[::-1]), atol=1e-12)


def test_bhattacharyya_is_symmetric_zero_on_itself_and_matches_closed_form():
    rng = np.random.default_rng(2)
    m = rng.normal(size=(4, 3))
    L = rng.normal(size=(4, 3, 3))
    C = L @ L.transpose(0, 2, 1) + 0.1 * np.eye(3)
    D = E.bhattacharyya(m, C, m, C)
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(D), 0, atol=1e-12)
    # identical covariances: D_B is a Mahalanobis distance / 8
    Cs = np.broadcast_to(C[0], (4, 3, 3))
    delta = m[0] - m[1]
    assert E.bhattacharyya(m, Cs, m, Cs)[0, 1] == pytest.approx(delta @ np.linalg.solve(C[0], delta) / 8, rel=1e-12)


def test_model_from_partition_handles_singletons_and_flat_clusters():
    X = np.array([[0.0, 0], [0, 0], [0, 0], [5, 5], [9, 1]])
    y = [0, 0, 0, 1, 2]                                         # a zero-variance cluster and two singletons
    for cov in ("diag", "full"):
        assert E.centroid_index(y, y, similarity="model", X=X, covariance=cov) == 0.0
    with pytest.raises(ValueError, match="covariance='spherical'"):
        E.centroid_index(y, y, similarity="model", X=X, covariance="spherical")


# ---------------------------------------------------------------- invariances (hypothesis)

@st.composite
def two_labelings(draw):
    n = draw(st.integers(2, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.integers(0, draw(st.integers(1, 6)), n)
    if draw(st.booleans()):
        b = rng.integers(0, draw(st.integers(1, 6)), n)
    else:                                                        # a perturbed copy: ties and near-identity
        b = np.where(rng.random(n) < draw(st.floats(0, 1)), a, rng.integers(0, 6, n))
    return a, b, rng


def _relabel(a, b, rng):
    names_a = np.array([f"x{v}" for v in rng.permutation(50)[:6]])
    return names_a[a], rng.permutation(6)[b] * 10 - 7


def _permutation(a, b, rng):
    p = rng.permutation(a.size)
    return a[p], b[p]


def _symmetry(a, b, rng):
    return b, a


TRANSFORMS = {"relabel": _relabel, "permutation": _permutation, "symmetry": _symmetry}
CLAIMS = [(name, inv) for name, invs in zip(EXTERNAL.name, EXTERNAL.invariances) for inv in invs]


def test_every_external_claim_is_tested():
    assert {inv for _, inv in CLAIMS} <= set(TRANSFORMS)


@pytest.mark.parametrize("name, invariance", CLAIMS, ids=[f"{m}-{i}" for m, i in CLAIMS])
@settings(max_examples=60, deadline=None)
@given(data=two_labelings())
def test_claimed_invariance(name, invariance, data):
    a, b, rng = data
    before = clm_nb.score(name, a, b)
    after = clm_nb.score(name, *TRANSFORMS[invariance](a, b, rng))
    assert after == pytest.approx(before, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(data=two_labelings())
def test_values_within_declared_range_and_identity(name, data):
    a, b, _ = data
    info = clm_nb.get_measure(name)
    v = clm_nb.score(name, a, b)
    assert type(v) is float and info.lower - 1e-12 <= v <= info.upper + 1e-12
    best = clm_nb.score(name, a, a)
    if info.direction == "min":
        assert best == 0.0
    elif name == "mi":
        assert best == pytest.approx(E._entropies(E.contingency(a, a))[0], abs=1e-12)
    elif name not in ("ami", "ari", "fowlkes_mallows") or np.unique(a).size not in (1, a.size):
        assert best == pytest.approx(1.0, abs=1e-12), (name, best)


@settings(max_examples=60, deadline=None)
@given(data=two_labelings())
def test_purity_swaps_into_inverse_purity_and_nvd_relation(data):
    a, b, _ = data
    assert E.purity(a, b) == E.inverse_purity(b, a)
    assert E.nvd(a, b) == pytest.approx(1 - (E.purity(a, b) + E.inverse_purity(a, b)) / 2, abs=1e-15)
    assert E.criterion_h(a, b, matching="greedy") >= E.criterion_h(a, b) - 1e-15


# ---------------------------------------------------------------- noise and bad input

def test_noise_policies():
    a = np.array([0, 0, 1, 1, -1, -1])
    b = np.array([5, 5, 6, -1, 6, 6])
    assert E.contingency(a, b, noise="ignore").n == 3                # any labeling's noise drops the point
    assert E.contingency(a, b, noise="singletons").shape == (4, 3)      # two noise points in A, one in B
    assert E.contingency(a, b).shape == (3, 3)                      # default: -1 is an ordinary label
    assert E.ari(a, b, noise="ignore") == 1.0


BAD = [
    (lambda: E.ari([0, 1, 1], [0, 1]), "labels_a has 3 entries but labels_b has 2"),
    (lambda: E.ari([0], [0]), "at least 2"),
    (lambda: E.nvd([0, np.nan, 1], [0, 1, 1]), "missing value"),
    (lambda: E.psi([[0, 1], [1, 0]], [0, 1]), "1-D"),
    (lambda: E.ari([0, 1, 1], [0, 1, 1], noise="drop"), "noise policy"),
    (lambda: E.ari([-1, -1, 1], [0, -1, -1], noise="ignore"), "noise='ignore'"),
    (lambda: E.nmi([0, 1], [0, 1], average="harmonic"), "average='harmonic'"),
    (lambda: E.criterion_h([0, 1], [0, 1], matching="hungarian"), "matching='hungarian'"),
    (lambda: E.centroid_index([0, 1], [0, 1], similarity="nearest"), "similarity='nearest'"),
    (lambda: E.centroid_index([0, 1], [0, 1], similarity="prototype"), "X is required"),
    (lambda: E.centroid_index([0, 1], [0, 1], similarity="prototype", X=[[0.0], [np.nan]]), "NaN"),
    (lambda: E.centroid_index([0, 1], [0, 1], similarity="model", X=[[0.0], [1.0]], models_a=(np.zeros((2, 1)), -np.ones((2, 1)))),
     "non-positive variance"),
    (lambda: E.centroid_index(similarity="model", models_a=object(), models_b=object()), "GaussianMixture"),
    (lambda: E.csi(["a", "b"], [0, 1], similarity="prototype", prototypes_a=np.zeros((2, 1)), X=np.zeros((2, 1))),
     "integer indices"),
    (lambda: E.centroid_index([0, 1], [0, 1], models_a=(np.zeros((2, 1)), np.ones((2, 1)))), "only read with"),
    (lambda: E.contingency(E.contingency([0, 1], [0, 1]), [0, 1]), "already a Contingency"),
]


@pytest.mark.parametrize("call, fragment", BAD, ids=range(len(BAD)))
def test_bad_input_raises_clear_value_error(call, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        call()


# ---- issue 41: the new external indices against genieclust 1.3.0 and clusim 0.4 (ARI and AMI under the five ...

try:                                    # the peers (the dev extra): the tests below are skipped without them
    import genieclust.compare_partitions as gc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import clusim.sim as csim
        from clusim.clustering import Clustering
except ImportError:
    gc = csim = Clustering = None
PEERS = pytest.mark.skipif(gc is None, reason="genieclust or clusim not installed: pip install -e '.[dev]'")


NEW = ("nca", "npa", "afm", "mi", "vi", "wallace_ab", "wallace_ba", "ecs")


MODELS = ("perm", "num", "num1", "all", "all1")


def _kmeans_like(X, y, k, seed):
    "A cheap clustering of X to compare with y: nearest of k random data points."
    rng = np.random.default_rng(seed)
    C = X[rng.choice(len(X), k, replace=False)]
    return np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)


def _pairs():
    "Label pairs (reference, clustering): iris, wine, blobs with a few seeds, unequal sizes, strings."
    out = []
    for name, (X, y) in {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)}.items():
        out.append((name, y, _kmeans_like(X, y, 3, 0)))
    for seed in (0, 1, 2):
        X, y = make_blobs(300, centers=4, cluster_std=2.5, random_state=seed)
        out.append((f"blobs{seed}", y, _kmeans_like(X, y, 4, seed)))
    sizes = np.repeat([0, 1, 2, 3], [5, 20, 60, 115])                     # unequal sizes
    rng = np.random.default_rng(4)
    out.append(("unequal", sizes, np.where(rng.random(200) < 0.7, sizes, rng.integers(0, 4, 200))))
    return out


PAIRS = _pairs()


def _square(a, b):
    "genieclust 1.3.0 compares only labelings with the same number of clusters, given as codes 0..K-1."
    a, b = np.unique(a, return_inverse=True)[1], np.unique(b, return_inverse=True)[1]
    return a, b, a.max() == b.max()


def _clu(labels):
    return Clustering().from_membership_list([int(v) for v in labels])


@PEERS
@pytest.mark.parametrize("case", PAIRS, ids=[p[0] for p in PAIRS])
def test_genieclust_indices(case):
    _, a, b = case
    a, b, square = _square(a, b)
    assert square
    for ours, theirs in [(E.nca, gc.normalized_clustering_accuracy), (E.npa, gc.normalized_pivoted_accuracy),
                         (E.afm, gc.adjusted_fm_score), (E.mi, gc.mi_score)]:
        assert ours(a, b) == pytest.approx(theirs(a, b), abs=1e-12), ours.__name__
    # NCA's asymmetry is genieclust's: the reference first
    assert E.nca(b, a) == pytest.approx(gc.normalized_clustering_accuracy(b, a), abs=1e-12)


@PEERS
def test_nca_asymmetry_and_random_square_tables():
    rng = np.random.default_rng(0)
    asym = 0
    for _ in range(200):
        k = int(rng.integers(2, 7)); n = int(rng.integers(k, 60))
        a, b = rng.integers(0, k, n), rng.integers(0, k, n)
        a[:k] = b[:k] = np.arange(k)
        assert E.nca(a, b) == pytest.approx(gc.normalized_clustering_accuracy(a, b), abs=1e-12)
        assert E.npa(a, b) == pytest.approx(gc.normalized_pivoted_accuracy(a, b), abs=1e-12)
        asym += abs(E.nca(a, b) - E.nca(b, a)) > 1e-9
    assert asym > 100


def _nca_oracle(T):
    "The paper's NCA on a K x L table: columns padded with zeros to at least K; each reference row matched once."
    K, L = T.shape
    S = np.zeros((K, max(K, L)))
    S[:, :L] = T / T.sum(1, keepdims=True)
    r, c = linear_sum_assignment(S, maximize=True)
    return (S[r, c].sum() - 1) / (K - 1)


@PEERS
def test_accuracies_on_non_square_tables_against_the_definition():
    rng = np.random.default_rng(1)
    for _ in range(200):
        ka, kb = int(rng.integers(2, 7)), int(rng.integers(1, 9))
        n = int(rng.integers(max(ka, kb), 80))
        a, b = rng.integers(0, ka, n), rng.integers(0, kb, n)
        a[:ka], b[:kb] = np.arange(ka), np.arange(kb)
        T = E.contingency(a, b).toarray()
        assert E.nca(a, b) == pytest.approx(_nca_oracle(T), abs=1e-12)
        K = max(T.shape)
        P = np.zeros((K, K)); P[:T.shape[0], :T.shape[1]] = T
        r, c = linear_sum_assignment(P, maximize=True)
        assert E.npa(a, b) == pytest.approx((P[r, c].sum() / n - 1 / K) / (1 - 1 / K), abs=1e-12)
        assert -1 - 1e-12 <= E.nca(a, b) <= 1 + 1e-12
    with pytest.raises(RuntimeError):                   # the peer refuses what the oracle covers
        gc.normalized_clustering_accuracy(np.r_[0, 0, 1, 1], np.r_[0, 1, 2, 2])


@PEERS
def test_afm_and_mi_on_non_square_tables_against_the_definition():
    rng = np.random.default_rng(2)
    for _ in range(100):
        n = int(rng.integers(4, 80))
        a, b = rng.integers(0, int(rng.integers(2, 6)), n), rng.integers(0, int(rng.integers(2, 8)), n)
        T = E.contingency(a, b).toarray().astype(float)
        pairs = lambda x: float((x * (x - 1) / 2).sum())
        t, p, q, N = pairs(T), pairs(T.sum(1)), pairs(T.sum(0)), n * (n - 1) / 2
        if p * q > 0 and not (E.contingency(a, b).nnz == T.shape[0] == T.shape[1]):
            e = math.sqrt(p * q) / N
            assert E.afm(a, b) == pytest.approx((t / math.sqrt(p * q) - e) / (1 - e), abs=1e-12)
        P = T / n
        nz = P > 0
        expected = float((P[nz] * np.log(P[nz] / np.outer(P.sum(1), P.sum(0))[nz])).sum())
        assert E.mi(a, b) == pytest.approx(expected, abs=1e-12)
        assert E.mi(a, b, base=2) == pytest.approx(expected / math.log(2), abs=1e-12)


@PEERS
@pytest.mark.parametrize("case", PAIRS, ids=[p[0] for p in PAIRS])
def test_clusim_vi_and_element_centric(case):
    _, a, b = case
    ca, cb = _clu(a), _clu(b)
    assert E.vi(a, b, base=2) == pytest.approx(csim.vi(ca, cb), abs=1e-12)               # clusim: bits
    assert E.vi(a, b) == pytest.approx(csim.vi(ca, cb) * math.log(2), abs=1e-12)        # ours: nats by default
    assert E.vi(a, b, normalize="entropy") == pytest.approx(1 - csim.vi(ca, cb, norm_type="entropy"), abs=1e-12)
    assert E.mi(a, b, base=2) == pytest.approx(csim.mi(ca, cb), abs=1e-12)


@PEERS
def test_element_centric_matches_clusim_for_any_alpha():
    rng = np.random.default_rng(3)
    for _ in range(12):
        n = int(rng.integers(5, 60))
        a, b = rng.integers(0, int(rng.integers(1, 6)), n), rng.integers(0, int(rng.integers(1, 8)), n)
        ours = E.ecs(a, b)
        for alpha in (0.9, 0.5, 0.99):                   # the flat-partition value does not depend on alpha
            assert ours == pytest.approx(csim.element_sim(_clu(a), _clu(b), alpha=alpha), abs=1e-12)


@PEERS
def test_element_centric_on_the_data_sets():
    for _, a, b in PAIRS[:3]:
        assert E.ecs(a, b) == pytest.approx(csim.element_sim(_clu(a), _clu(b)), abs=1e-12)


def _model_pairs():
    rng = np.random.default_rng(5)
    out = [(np.repeat([0, 1, 2], [6, 6, 8]), np.tile(np.arange(5), 4))]      # K_a != K_b
    for _ in range(3):
        n = int(rng.integers(8, 25))
        a = rng.integers(0, int(rng.integers(2, 5)), n)
        b = np.where(rng.random(n) < 0.5, a, rng.integers(0, int(rng.integers(2, 6)), n))
        out.append((a, b))
    return out


@PEERS
@pytest.mark.parametrize("model", MODELS)
def test_ari_and_ami_under_every_random_model_match_clusim(model):
    for a, b in _model_pairs():
        # clusim's *second* clustering is the fixed one in one-sided models; ours is A, the first
        ca, cb = _clu(a), _clu(b)
        assert E.ari(a, b, random_model=model) == pytest.approx(csim.adjrand_index(cb, ca, random_model=model),
                                                                abs=1e-11)
        assert E.ami(a, b, random_model=model) == pytest.approx(csim.adj_mi(cb, ca, random_model=model), abs=1e-11)
    a, b = _model_pairs()[0]
    for average, norm in (("geometric", "sqrt"), ("min", "min"), ("max", "max")):
        assert E.ami(a, b, average=average, random_model=model) == pytest.approx(
            csim.adj_mi(_clu(b), _clu(a), random_model=model, norm_type=norm), abs=1e-11)


@PEERS
def test_ami_uniform_models_identical_partitions_jump_documented():
    """Issue 49: under the uniform random models AMI gives identical partitions 1 by the convention, while the formula
    (clusim's value) gives less, and one moved point falls to the formula: the discontinuity is documented in
    `ami`'s docstring, and both sides of it are checked."""
    a = np.repeat([0, 1, 2], 8)
    b = a.copy()
    b[0] = 1
    assert E.ami(a, a, random_model="all") == 1.0
    assert csim.adj_mi(_clu(a), _clu(a), random_model="all") == pytest.approx(-0.0411, abs=1e-3)    # the formula
    assert E.ami(a, b, random_model="all") == pytest.approx(csim.adj_mi(_clu(b), _clu(a), random_model="all"),
                                                            abs=1e-11)
    assert E.ami(a, b, random_model="all") == pytest.approx(-0.107, abs=1e-3)
    doc = " ".join(E.ami.__doc__.split())
    assert "discontinuity" in doc and "1 -> -0.107" in doc


@PEERS
def test_ari_on_the_data_sets_under_random_models():
    for _, a, b in PAIRS:                              # clusim's expected MI (mpmath) takes ~40 s at n = 150: ARI only
        ca, cb = _clu(a), _clu(b)
        for model in MODELS:
            assert E.ari(a, b, random_model=model) == pytest.approx(csim.adjrand_index(cb, ca, random_model=model),
                                                                    abs=1e-11)


@PEERS
def test_two_sided_models_are_symmetric_one_sided_are_not():
    a, b = _model_pairs()[0]
    for model in ("num", "all"):
        assert E.ari(a, b, random_model=model) == pytest.approx(E.ari(b, a, random_model=model), abs=1e-14)
        assert E.ami(a, b, random_model=model) == pytest.approx(E.ami(b, a, random_model=model), abs=1e-12)
    for model in ("num1", "all1"):
        assert abs(E.ari(a, b, random_model=model) - E.ari(b, a, random_model=model)) > 1e-6


@PEERS
def test_default_random_model_keeps_todays_values():
    from sklearn import metrics as skm
    for _, a, b in PAIRS:
        assert E.ari(a, b) == E.ari(a, b, random_model="perm") == skm.adjusted_rand_score(a, b)
        assert E.ami(a, b) == E.ami(a, b, random_model="perm") == skm.adjusted_mutual_info_score(a, b)


@PEERS
def test_random_models_stay_finite_at_large_n():
    n = 100_000
    i = np.arange(n)
    a, b = i % 7, (i // 3) % 5
    values = {model: E.ari(a, b, random_model=model) for model in MODELS}
    assert all(math.isfinite(v) for v in values.values()), values
    # 'num' against exact integers: S(n, K) by inclusion-exclusion, 5 powers of 10^5 digits' worth
    from math import comb, factorial
    s2 = lambda m, k: sum((-1) ** j * comb(k, j) * (k - j) ** m for j in range(k + 1)) // factorial(k)
    pc = E.pair_counts(a, b)
    q_a, q_b = s2(n - 1, 7) / s2(n, 7), s2(n - 1, 5) / s2(n, 5)          # int / int: one correct rounding
    e = q_a * q_b + (1 - q_a) * (1 - q_b)
    r = (pc.together_both + pc.apart_both) / pc.total
    assert values["num"] == pytest.approx((r - e) / (1 - e), rel=1e-9)
    # under 'all' a random partition of 10^5 points has ~10^4 clusters, so coarse labelings sit far below chance
    assert values["all"] < -100
    # Bell numbers of 10^5 have ~364,000 digits; their ratio is the chance two points share a cluster
    q = E._pair_chance(n, np.bincount(b), "all")
    assert 0 < q < 1e-3
    # under 'all' cluster sizes concentrate near ln n, so the expected MI is a small sum even at n = 10^5
    v = E.ami(a, b, random_model="all")
    assert math.isfinite(v)
    with pytest.raises(ValueError, match="allowed"):                  # under 'num' the sum is too long: refused
        E.ami(a, b, random_model="num")


@PEERS
def test_stirling_and_bell_helpers_against_exact_integers():
    from math import comb, factorial
    s2 = lambda m, k: sum((-1) ** j * comb(k, j) * (k - j) ** m for j in range(k + 1)) // factorial(k)
    for n, K in [(10, 3), (30, 5), (60, 2), (200, 7)]:
        prev, cur = E._log_stirling_scaled(n, K)
        assert cur[n] + n * math.log(K) == pytest.approx(math.log(s2(n, K)), rel=1e-12)
        assert prev[n - 3] + (n - 3) * math.log(K - 1) == pytest.approx(math.log(s2(n - 3, K - 1)), rel=1e-12)
    bell = [1]
    row = [1]
    for _ in range(300):                                   # Bell triangle, exact
        nxt = [row[-1]]
        for v in row:
            nxt.append(nxt[-1] + v)
        row = nxt
        bell.append(row[0])
    ms = np.array([0, 1, 5, 50, 300])
    np.testing.assert_allclose(E._log_bell(ms), [math.log(bell[m]) for m in ms], rtol=1e-13)


def _wallace_oracle(a, b):
    together_a = together_b = both = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        sa, sb = a[i] == a[j], b[i] == b[j]
        together_a += sa; together_b += sb; both += sa and sb
    return (both / together_a if together_a else 1.0), (both / together_b if together_b else 1.0)


@PEERS
def test_wallace_against_pair_loops():
    rng = np.random.default_rng(6)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        a, b = rng.integers(0, int(rng.integers(1, 6)), n), rng.integers(0, int(rng.integers(1, 12)), n)
        wab, wba = _wallace_oracle(a, b)
        assert E.wallace_ab(a, b) == pytest.approx(wab, abs=1e-15)
        assert E.wallace_ba(a, b) == pytest.approx(wba, abs=1e-15)
        if wab * wba > 0 and len(set(a)) < n and len(set(b)) < n:
            assert math.sqrt(wab * wba) == pytest.approx(E.fowlkes_mallows(a, b), abs=1e-12)


@PEERS
def test_degenerate_partitions_return_documented_values():
    one, single = np.zeros(8, int), np.arange(8)
    assert [E.nca(one, one), E.nca(one, single), E.nca(single, single)] == [1.0, 0.0, 1.0]
    assert E.nca(single, one) == pytest.approx((1 - 1) / 7)       # every reference cluster recovered by one
    assert [E.npa(one, one), E.npa(single, single)] == [1.0, 1.0]
    assert [E.afm(one, one), E.afm(single, single), E.afm(single, one)] == [1.0, 1.0, 0.0]
    assert [E.mi(one, one), E.vi(one, one), E.vi(single, single)] == [0.0, 0.0, 0.0]
    assert E.vi(one, single) == pytest.approx(math.log(8))
    assert E.vi(one, single, normalize="log_n") == pytest.approx(1.0)
    assert E.vi(one, single, normalize="entropy") == pytest.approx(0.5)
    assert [E.wallace_ab(single, one), E.wallace_ba(one, single), E.wallace_ab(one, single)] == [1.0, 1.0, 0.0]
    assert [E.ecs(one, one), E.ecs(single, single)] == [1.0, 1.0]
    assert E.ecs(one, single) == pytest.approx(1 / 8)
    for model in MODELS:
        for x in (one, single):
            assert E.ari(x, x, random_model=model) == 1.0 and E.ami(x, x, random_model=model) == 1.0


@PEERS
def test_any_hashable_labels_and_a_contingency():
    a = np.array(["x", "x", "y", "y", "z", "z", "z"], dtype=object)
    b = [(1, 2), (1, 2), "none", "q", "q", "q", 3.5]
    codes_a, codes_b = np.unique(a, return_inverse=True)[1], [0, 0, 1, 2, 2, 2, 3]
    ct = E.contingency(a, b)
    for name in NEW:
        f = clm_nb.get_measure(name).func
        assert f(a, b) == pytest.approx(f(codes_a, codes_b), abs=1e-15) == pytest.approx(f(ct), abs=1e-15)
        assert type(f(a, b)) is float


@PEERS
def test_noise_policy_is_the_shared_one():
    a = np.array([0, 0, 0, 1, 1, 1, -1, -1])
    b = np.array([5, 5, 6, 6, 6, 6, 6, -1])
    for name in NEW:
        f = clm_nb.get_measure(name).func
        assert f(a, b, noise="ignore") == pytest.approx(f(a[:6], b[:6]), abs=1e-15)
    assert E.ari(a, b, noise="ignore", random_model="all") == E.ari(a[:6], b[:6], random_model="all")


@PEERS
def test_registry_metadata_of_the_new_measures():
    info = {n: clm_nb.get_measure(n) for n in NEW}
    assert all(i.kind == "external" for i in info.values())
    assert {n for n, i in info.items() if i.direction == "min"} == {"vi"}
    assert {n for n, i in info.items() if "symmetry" not in i.invariances} == {"nca", "wallace_ab", "wallace_ba"}


BAD_PEERS = [
    (lambda: E.ari([0, 1, 1], [0, 1, 0], random_model="hyper"), "random_model='hyper'"),
    (lambda: E.ami([0, 1, 1], [0, 1, 0], random_model="perm1"), "random_model='perm1'"),
    (lambda: E.vi([0, 1, 1], [0, 1, 0], normalize="max"), "normalize='max'"),
    (lambda: E.vi([0, 1, 1], [0, 1, 0], base=0.5), "base"),
    (lambda: E.mi([0, 1, 1], [0, 1, 0], base=1), "base=1"),
    (lambda: E.nca([0, np.nan, 1], [0, 1, 1]), "missing value"),
    (lambda: E.ecs([0], [0]), "at least 2"),
    (lambda: E.wallace_ab([0, 1, 1], [0, 1]), "labels_a has 3 entries but labels_b has 2"),
    (lambda: E.npa(E.contingency([0, 1], [0, 1]), [0, 1]), "already a Contingency"),
    (lambda: E.ari(np.arange(100_000) % 7, np.arange(100_000) % 3000, random_model="num"), "3,000: 300,000,000 steps"),
]


@PEERS
@pytest.mark.parametrize("call, message", BAD_PEERS)
def test_bad_input_names_the_problem(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
