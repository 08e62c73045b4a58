"""`clm_nb.assessment` (notebook 17_assessment): assess_labellings' inputs (issue 49)."""
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

from clm_nb.assessment import assess, assess_labellings
from clm_nb.datasets import Dataset

X, Y = load_iris(return_X_y=True)
FAST = dict(variants=False, ci=None, n_permutations=5)


def test_a_bundle_datasets_noise_is_left_out_as_the_leaderboard_does():
    """Issue 49: a bundle Dataset's noise (-1) was scored as a class by assess_labellings, while the leaderboard leaves
    it out (noise='ignore'); an explicit noise= still wins."""
    y = Y.copy()
    y[::10] = -1                                                   # 15 noise points
    ds = Dataset("iris_noisy", "test", X, y)
    la = assess_labellings(ds.X, ds, **FAST)
    a = la[next(iter(la.table.index))]
    assert a.noise == "ignore" and a.n_noise == 15 and a.K == 3
    assert a.verdict == assess(X, y, noise="ignore", **FAST).verdict
    assert la[next(iter(la.table.index))].K == 3
    kept = assess_labellings(ds.X, ds, noise=None, **FAST)
    assert kept[next(iter(kept.table.index))].K == 4             # asked for: -1 is a class


def test_labelling_names_that_are_one_name_are_refused():
    """Issue 49: the keys 1 and '1' collapsed silently into one labelling."""
    with pytest.raises(ValueError, match="two references are named '1'"):
        assess_labellings(X, {1: Y, "1": Y[::-1]}, **FAST)
    with pytest.raises(ValueError, match="two references are named '1'"):
        assess_labellings(X, pd.DataFrame({1: Y, "1": Y[::-1]}), **FAST)


def test_a_generator_of_labellings_is_read():
    """Issue 49: a generator was refused as 'shape ()'; it is read as the list it stands for."""
    la = assess_labellings(X, (v for v in (Y, np.where(Y == 0, 0, 1))), **FAST)
    assert list(la.table.index) == ["labels0", "labels1"]
