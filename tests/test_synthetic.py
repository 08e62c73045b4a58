"""The generators (clm_nb.synthetic, notebook 17_synthetic): CLM blobs, the scenarios, imbalanced blobs, two Gaussians,
HANDL-style data and synthetic partitions; deterministic, shaped as promised, bad input refused."""
import numpy as np
import pytest

from clm_nb.external import ari as _ari
from clm_nb.synthetic import (hub_ensemble, imitate_partition, make_clm_blobs, make_handl, make_imbalanced_blobs,
                              make_two_gaussians, partition_ensemble, subsample_dataset)


@pytest.mark.parametrize("scenario", ["match", "shuffled", "split", "merged"])
def test_generator_deterministic(scenario):
    a = make_clm_blobs(scenario, random_state=7)
    b = make_clm_blobs(scenario, random_state=7)
    c = make_clm_blobs(scenario, random_state=8)
    np.testing.assert_array_equal(a[0], b[0]); np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    assert a[0].shape == (600, 2) and a[0].dtype == np.float64 and a[1].dtype.kind == "i"
    g1 = make_clm_blobs(scenario, random_state=np.random.default_rng(3))
    g2 = make_clm_blobs(scenario, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(g1[0], g2[0])


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.2, 0.5, 1.0])
def test_shuffle_fraction(fraction):
    X, y, clusters = make_clm_blobs("shuffled", shuffle_fraction=fraction, n_samples=500, n_clusters=5,
                                    random_state=1, return_clusters=True)
    assert int((y != clusters).sum()) == round(fraction * 500)
    assert set(np.unique(y)) <= set(range(5))


def test_scenarios_structure():
    from sklearn.metrics import adjusted_rand_score as ari
    X, y, c = make_clm_blobs("match", n_clusters=3, n_features=5, random_state=2, return_clusters=True)
    assert X.shape == (600, 5) and (y == c).all()
    X, y, c = make_clm_blobs("split", random_state=2, return_clusters=True)
    assert len(np.unique(y)) == len(np.unique(c)) + 1
    assert len(np.unique(y[c == 0])) == 2 and all(len(np.unique(y[c == k])) == 1 for k in (1, 2, 3))
    X, y, c = make_clm_blobs("merged", random_state=2, return_clusters=True)
    assert len(np.unique(y)) == len(np.unique(c)) - 1 and len(np.unique(y[np.isin(c, [0, 1])])) == 1
    # centres are separated: the nearest-centre assignment recovers the generating clusters
    X, y, c = make_clm_blobs("match", random_state=5, return_clusters=True)
    centres = np.array([X[c == k].mean(axis=0) for k in range(4)])
    nearest = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    assert ari(c, nearest) > 0.99


def test_generator_errors():
    with pytest.raises(ValueError, match="scenario='random' is unknown"):
        make_clm_blobs("random")
    with pytest.raises(ValueError, match="n_clusters >= 3"):
        make_clm_blobs("merged", n_clusters=2)
    with pytest.raises(ValueError, match="n_samples=5 is too small"):
        make_clm_blobs(n_samples=5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        make_clm_blobs("shuffled", shuffle_fraction=-0.1)
    with pytest.raises(ValueError, match="must both be > 0"):
        make_clm_blobs(cluster_std=0)


@pytest.mark.parametrize("k", [2, 5, 12, 22])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.9])
def test_imbalanced_blobs_sizes_and_non_overlap(k, p):
    X, y, info = make_imbalanced_blobs(k, p, random_state=k, return_params=True)
    sizes = np.bincount(y)
    assert X.shape == (500, 2) and sizes.sum() == 500 and len(sizes) == k
    if p == 0:
        assert sizes.max() - sizes.min() <= 1
    else:
        assert sizes[0] == round(p * 500) and np.ptp(sizes[1:]) <= 1
    c, s = info["centres"], info["sigmas"]
    iu = np.triu_indices(k, 1)
    assert (np.linalg.norm(c[:, None] - c[None], axis=-1)[iu] > 3 * (s[:, None] + s[None])[iu]).all()
    assert ((c >= 0) & (c <= 500)).all() and (s ** 2 <= 50).all() and (s ** 2 >= 2).all()


def test_two_gaussians_parameters_and_subsampling():
    X, y, p = make_two_gaussians(10_000, n_features=100, proportion=0.3, distance=5.0, std_a=[1.0, 0.5],
                                 std_b=[2.0, 1.5], angle_a=0.0, angle_b=1.0, random_state=2, return_params=True)
    assert X.shape == (10_000, 100) and (y == 0).sum() == 3000
    assert X[y == 1, 0].mean() == pytest.approx(5.0, abs=0.1) and X[y == 0, :2].std(axis=0) == pytest.approx([1.0, 0.5], rel=0.05)
    assert X[y == 0, 2:].var() == pytest.approx(0.25, rel=0.05) and X[y == 1, 2:].var() == pytest.approx(2.25, rel=0.05)
    Xs, ys = subsample_dataset(X, y, 777, 10, random_state=0)
    assert Xs.shape == (777, 10) and abs((ys == 0).mean() - 0.3) < 1 / 777
    np.testing.assert_array_equal(make_two_gaussians(50, n_features=3, random_state=9)[0],
                                  make_two_gaussians(50, n_features=3, random_state=9)[0])
    with pytest.raises(ValueError, match="proportion"):
        make_two_gaussians(100, proportion=1.5)


@pytest.mark.parametrize("d, k", [(2, 4), (2, 40), (20, 10), (20, 20)])
def test_handl_style_sizes_and_separation(d, k):
    X, y, info = make_handl(d, k, random_state=1, return_params=True)
    sizes = np.bincount(y)
    lo, hi = (50, 500) if k <= 10 else (10, 100)
    assert X.shape[1] == d and len(sizes) == k and ((sizes >= lo) & (sizes <= hi)).all()
    c, s = info["centres"], info["sigmas"]
    iu = np.triu_indices(k, 1)
    assert (np.linalg.norm(c[:, None] - c[None], axis=-1)[iu] > 3 * (s[:, None] + s[None])[iu]).all()


def test_synthetic_partitions():
    truth = np.repeat(np.arange(10), 20)
    for rho in (0.0, 0.5, 1.0):
        member = imitate_partition(truth, rho, random_state=0)
        assert abs((member == truth).mean() - rho) < 0.1 and set(member) <= set(range(10))
    P = partition_ensemble(truth, 30, 0.9, random_state=0)
    aris = [_ari(truth, p) for p in P]
    assert P.shape == (30, 200) and max(aris) > 0.6 and min(aris) < 0.1
    good = hub_ensemble(truth, 40, 0.0, random_state=0)
    poor = hub_ensemble(truth, 40, 1.0, random_state=0)
    assert np.mean([_ari(truth, p) for p in good]) > np.mean([_ari(truth, p) for p in poor])
    with pytest.raises(ValueError, match="alpha"):
        hub_ensemble(truth, 5, 1.5)
