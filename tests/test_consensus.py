"""DISCOTEC (12_consensus): equal to the n × n definition (every divergence, constraints, noise), invariances,
baselines against scikit-learn, and bad input."""
import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

import clm_nb
from clm_nb import consensus as CO


def brute(P, divergence="binary", ml=(), cl=(), weight=1.0):
    "The paper's definition with a (T, n, n) connectivity tensor."
    P = np.asarray(P)
    T, n = P.shape
    A = (P[:, :, None] == P[:, None, :]).astype(float)
    C = A.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        D = {"binary": lambda: np.abs((C >= C.mean()).astype(float) - A),
             "tv": lambda: np.abs(A - C),
             "kl": lambda: np.where(A == 1, -np.log(C), -np.log1p(-C)),
             "hellinger": lambda: np.where(A == 1, 1 - np.sqrt(C), 1 - np.sqrt(1 - C))}[divergence]()
    D = np.nan_to_num(D)
    S = np.array([math.fsum(D[t].ravel()) for t in range(T)]) / n**2    # exactly rounded: numpy's mean over 2 axes drifts ~1e-12
    if len(ml) + len(cl):
        R = np.array([sum(A[t, a, b] == 0 for a, b in ml) + sum(A[t, a, b] == 1 for a, b in cl) for t in range(T)])
        S = S + weight * R / (len(ml) + len(cl))
    return S


def pool(seed, n=None, T=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(2, 60))
    T = T or int(rng.integers(3, 9))
    truth = rng.integers(0, rng.integers(1, 6), n)
    P = []
    for _ in range(T):
        kind = rng.integers(3)
        if kind == 0:
            P.append(np.where(rng.random(n) < rng.random(), truth, rng.integers(0, 5, n)))
        elif kind == 1:
            P.append(rng.integers(0, rng.integers(1, 10), n))
        else:
            P.append(truth // 2)
    return np.array(P), truth, rng


@pytest.mark.parametrize("divergence", CO.DIVERGENCES)
def test_equals_definition_on_random_pools(divergence):
    for seed in range(40):
        P, _, _ = pool(seed)
        np.testing.assert_allclose(CO.discotec(P, divergence=divergence), brute(P, divergence), rtol=0, atol=1e-12)


@pytest.mark.parametrize("divergence", CO.DIVERGENCES)
def test_equals_definition_at_n_500_with_constraints_and_noise(divergence):
    P, truth, rng = pool(7, n=500, T=12)
    P[3, rng.choice(500, 40, replace=False)] = -1                       # DBSCAN-style noise in two members
    P[8, rng.choice(500, 15, replace=False)] = -1
    ml = [tuple(p) for p in rng.choice(500, (30, 2)) if p[0] != p[1]]
    cl = [tuple(p) for p in rng.choice(500, (20, 2)) if p[0] != p[1]]
    got = CO.discotec(P, divergence=divergence, must_link=ml, cannot_link=cl, constraint_weight=0.7)
    np.testing.assert_allclose(got, brute(P, divergence, ml, cl, 0.7), rtol=0, atol=1e-12)
    singles = P.copy()
    for t in range(P.shape[0]):
        idx = np.flatnonzero(P[t] == -1)
        singles[t, idx] = 1000 + np.arange(idx.size)
    np.testing.assert_allclose(CO.discotec(P, divergence=divergence, noise="singletons"), brute(singles, divergence),
                               rtol=0, atol=1e-12)
    keep = ~(P == -1).any(axis=0)
    np.testing.assert_allclose(CO.discotec(P, divergence=divergence, noise="ignore"), brute(P[:, keep], divergence),
                               rtol=0, atol=1e-12)


def test_partial_labels_equal_their_implied_pairs():
    P, truth, rng = pool(3, n=200, T=6)
    for n_known in (0, 1, 2, 5, 30):
        lp = np.full(200, -1)
        known = rng.choice(200, n_known, replace=False)
        lp[known] = truth[known]
        pairs = list(combinations(sorted(known), 2))
        ml = [(a, b) for a, b in pairs if truth[a] == truth[b]]
        cl = [(a, b) for a, b in pairs if truth[a] != truth[b]]
        np.testing.assert_allclose(CO.discotec(P, labels_partial=lp, divergence="kl"), brute(P, "kl", ml, cl),
                                   rtol=0, atol=1e-12)


def test_constraints_on_dropped_points_are_dropped():
    P, _, _ = pool(4, n=50, T=5)
    P[0, 3] = -1
    keep = np.ones(50, bool); keep[3] = False
    got = CO.discotec(P, noise="ignore", must_link=[(3, 4), (5, 6)], cannot_link=[(7, 8)])
    new = np.cumsum(keep) - 1
    want = brute(P[:, keep], "binary", [(new[5], new[6])], [(new[7], new[8])])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_merging_identical_label_vectors():
    P = np.array([[0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1], [5, 5, 7, 7, 7, 8]])
    E = CO.ensemble(P)
    assert (E.m, sorted(E.weights.tolist())) == (4, [1, 1, 2, 2])
    H, Ht = E.histograms()
    assert H.sum() == 6 * 5 and (Ht.sum(axis=1) == E.sum_sq_sizes() - 6).all()


def test_scores_follow_partition_order_and_ranking_helper():
    P, _, rng = pool(5, n=80, T=7)
    order = rng.permutation(7)
    for d in CO.DIVERGENCES:
        np.testing.assert_allclose(CO.discotec(P[order], divergence=d), CO.discotec(P, divergence=d)[order], atol=1e-15)
    table = CO.discotec_ranking(P, names=[f"m{i}" for i in range(7)])
    assert table["rank"].is_monotonic_increasing and table.score.is_monotonic_increasing
    assert table["rank"].iloc[0] == 1
    with pytest.raises(ValueError, match="3 names for 7 partitions"):
        CO.discotec_ranking(P, names=["a", "b", "c"])


def test_baselines_against_sklearn():
    P, _, _ = pool(6, n=150, T=6)
    P = np.r_[P, np.zeros((1, 150), int), np.arange(150)[None], P[:1] * 0 + 7]     # one cluster, singletons, a twin
    T = P.shape[0]
    for t in range(T):
        others = [l for l in range(T) if l != t]
        assert CO.aari(P)[t] == pytest.approx(np.mean([adjusted_rand_score(P[t], P[l]) for l in others]), abs=1e-12)
        assert CO.anmi(P)[t] == pytest.approx(np.mean([normalized_mutual_info_score(P[t], P[l]) for l in others]),
                                               abs=1e-12)


def test_all_identical_members_score_zero():
    p = np.repeat([0, 1, 2], 10)
    for d in CO.DIVERGENCES:
        assert (CO.discotec([p, p, p], divergence=d) == 0).all()


def test_registry_entries():
    info = clm_nb.get_measure("discotec")
    assert (info.kind, info.direction) == ("ensemble", "min")
    assert {clm_nb.get_measure(m).direction for m in ("aari", "anmi")} == {"max"}
    assert clm_nb.discotec is CO.discotec


# ---------------------------------------------------------------- invariances claimed in the registry

@st.composite
def pools(draw):
    P, truth, rng = pool(draw(st.integers(0, 2**32 - 1)))
    return P, rng


def _relabel(P, rng):
    out = P.astype(object)
    for t in range(P.shape[0]):
        out[t] = np.array([f"c{v}" for v in rng.permutation(20)])[P[t]] if P.min() >= 0 else out[t]
    return np.array([list(r) for r in out], dtype=object)


def _permutation(P, rng):
    return P[:, rng.permutation(P.shape[1])]


TRANSFORMS = {"relabel": _relabel, "permutation": _permutation}
ENSEMBLE = clm_nb.measures("ensemble")
CLAIMS = [(m, inv) for m, invs in zip(ENSEMBLE.name, ENSEMBLE.invariances) for inv in invs]


def test_every_ensemble_claim_is_tested():
    assert {inv for _, inv in CLAIMS} <= set(TRANSFORMS)


@pytest.mark.parametrize("name, invariance", CLAIMS, ids=[f"{m}-{i}" for m, i in CLAIMS])
@settings(max_examples=40, deadline=None)
@given(data=pools())
def test_claimed_invariance(name, invariance, data):
    P, rng = data
    before = clm_nb.score(name, P)
    after = clm_nb.score(name, TRANSFORMS[invariance](P, rng))
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- bad input

P0 = np.array([[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1]])
BAD = [
    (lambda: CO.discotec(P0[:2]), "at least T = 3"),
    (lambda: CO.discotec(P0, divergence="js"), "divergence='js'"),
    (lambda: CO.discotec(P0, constraint_weight=-1), "constraint_weight"),
    (lambda: CO.discotec(P0, must_link=[(1, 1)]), "with itself"),
    (lambda: CO.discotec(P0, cannot_link=[(0, 9)]), "outside"),
    (lambda: CO.discotec(P0, must_link=[0, 1]), r"\(p, 2\)"),
    (lambda: CO.discotec([P0[0], P0[1], P0[2][:-1]]), "entries"),
    (lambda: CO.discotec(P0, labels_partial=[0, 1]), "one entry per point"),
    (lambda: CO.discotec([[0, np.nan, 1], [0, 0, 1], [1, 1, 0]]), "missing"),
    (lambda: CO.discotec(P0, noise="drop"), "noise policy"),
    (lambda: CO.aari(P0[:1]), "at least T = 3"),
]


@pytest.mark.parametrize("call, fragment", BAD, ids=range(len(BAD)))
def test_bad_input(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()
