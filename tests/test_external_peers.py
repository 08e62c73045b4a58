"""Issue 41's external indices (11_external) against the installed peers: genieclust 1.3.0 (NCA, pivoted accuracy,
adjusted Fowlkes–Mallows, mutual information) and clusim 0.4 (variation of information, element-centric similarity,
ARI and AMI under the five random models of Gates & Ahn 2017), plus from-definition oracles where the peer refuses
(genieclust's accuracies on non-square tables) or has no such index (Wallace), degenerate cases and bad input."""
import itertools
import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine, make_blobs
from scipy.optimize import linear_sum_assignment

import clm_nb
from clm_nb import external as E

gc = pytest.importorskip("genieclust.compare_partitions")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    csim = pytest.importorskip("clusim.sim")
    from clusim.clustering import Clustering

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


# ---------------------------------------------------------------- genieclust

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


# ---------------------------------------------------------------- clusim

@pytest.mark.parametrize("case", PAIRS, ids=[p[0] for p in PAIRS])
def test_clusim_vi_and_element_centric(case):
    _, a, b = case
    ca, cb = _clu(a), _clu(b)
    assert E.vi(a, b, base=2) == pytest.approx(csim.vi(ca, cb), abs=1e-12)               # clusim: bits
    assert E.vi(a, b) == pytest.approx(csim.vi(ca, cb) * math.log(2), abs=1e-12)        # ours: nats by default
    assert E.vi(a, b, normalize="entropy") == pytest.approx(1 - csim.vi(ca, cb, norm_type="entropy"), abs=1e-12)
    assert E.mi(a, b, base=2) == pytest.approx(csim.mi(ca, cb), abs=1e-12)


def test_element_centric_matches_clusim_for_any_alpha():
    rng = np.random.default_rng(3)
    for _ in range(12):
        n = int(rng.integers(5, 60))
        a, b = rng.integers(0, int(rng.integers(1, 6)), n), rng.integers(0, int(rng.integers(1, 8)), n)
        ours = E.ecs(a, b)
        for alpha in (0.9, 0.5, 0.99):                   # the flat-partition value does not depend on alpha
            assert ours == pytest.approx(csim.element_sim(_clu(a), _clu(b), alpha=alpha), abs=1e-12)


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


def test_ari_on_the_data_sets_under_random_models():
    for _, a, b in PAIRS:                              # clusim's expected MI (mpmath) takes ~40 s at n = 150: ARI only
        ca, cb = _clu(a), _clu(b)
        for model in MODELS:
            assert E.ari(a, b, random_model=model) == pytest.approx(csim.adjrand_index(cb, ca, random_model=model),
                                                                    abs=1e-11)


def test_two_sided_models_are_symmetric_one_sided_are_not():
    a, b = _model_pairs()[0]
    for model in ("num", "all"):
        assert E.ari(a, b, random_model=model) == pytest.approx(E.ari(b, a, random_model=model), abs=1e-14)
        assert E.ami(a, b, random_model=model) == pytest.approx(E.ami(b, a, random_model=model), abs=1e-12)
    for model in ("num1", "all1"):
        assert abs(E.ari(a, b, random_model=model) - E.ari(b, a, random_model=model)) > 1e-6


def test_default_random_model_keeps_todays_values():
    from sklearn import metrics as skm
    for _, a, b in PAIRS:
        assert E.ari(a, b) == E.ari(a, b, random_model="perm") == skm.adjusted_rand_score(a, b)
        assert E.ami(a, b) == E.ami(a, b, random_model="perm") == skm.adjusted_mutual_info_score(a, b)


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


# ---------------------------------------------------------------- Wallace: from the definition

def _wallace_oracle(a, b):
    together_a = together_b = both = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        sa, sb = a[i] == a[j], b[i] == b[j]
        together_a += sa; together_b += sb; both += sa and sb
    return (both / together_a if together_a else 1.0), (both / together_b if together_b else 1.0)


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


# ---------------------------------------------------------------- degenerate cases, labels, noise, bad input

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


def test_any_hashable_labels_and_a_contingency():
    a = np.array(["x", "x", "y", "y", "z", "z", "z"], dtype=object)
    b = [(1, 2), (1, 2), "none", "q", "q", "q", 3.5]
    codes_a, codes_b = np.unique(a, return_inverse=True)[1], [0, 0, 1, 2, 2, 2, 3]
    ct = E.contingency(a, b)
    for name in NEW:
        f = clm_nb.get_measure(name).func
        assert f(a, b) == pytest.approx(f(codes_a, codes_b), abs=1e-15) == pytest.approx(f(ct), abs=1e-15)
        assert type(f(a, b)) is float


def test_noise_policy_is_the_shared_one():
    a = np.array([0, 0, 0, 1, 1, 1, -1, -1])
    b = np.array([5, 5, 6, 6, 6, 6, 6, -1])
    for name in NEW:
        f = clm_nb.get_measure(name).func
        assert f(a, b, noise="ignore") == pytest.approx(f(a[:6], b[:6]), abs=1e-15)
    assert E.ari(a, b, noise="ignore", random_model="all") == E.ari(a[:6], b[:6], random_model="all")


def test_registry_metadata_of_the_new_measures():
    info = {n: clm_nb.get_measure(n) for n in NEW}
    assert all(i.kind == "external" for i in info.values())
    assert {n for n, i in info.items() if i.direction == "min"} == {"vi"}
    assert {n for n, i in info.items() if "symmetry" not in i.invariances} == {"nca", "wallace_ab", "wallace_ba"}


BAD = [
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


@pytest.mark.parametrize("call, message", BAD)
def test_bad_input_names_the_problem(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
