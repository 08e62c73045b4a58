"""`which_index` (clm_nb.advice, notebook 29_advice): which internal index to believe on a labelled dataset, its
refusals at the door, and its answer on real data.

issue 39: `which_index` refuses bad options at the door and says which indices it could not judge.

issue 39: `which_index` on iris read back from a CSV, and its options refused before any work."""
import numpy as np
import pytest

from clm_nb.advice import which_index


# ---- issue 39: `which_index` refuses bad options at the door and says which indices it could not judge.

def _rounded_blobs():
    """60 points of three well-separated classes (20 per class: enough to judge), rounded: coinciding points make some
    indices infinite as k nears n."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(60, centers=[[0, 0], [8, 0], [4, 7]], cluster_std=0.6, random_state=1)
    return np.round(X), y


def test_which_index_refuses_empty_measures_and_bad_ks_at_the_door():
    """Issue 49: `measures=[]` and `ks=[0, ...]` gave library errors from deep inside; they are refused before any
    work, naming the option and the fix."""
    from clm_nb.advice import which_index
    X, y = _rounded_blobs()
    with pytest.raises(ValueError, match="measures is empty"):
        which_index(X, y, measures=[])
    with pytest.raises(ValueError, match=r"ks=0 must be an integer in \[2, 59\]"):
        which_index(X, y, ks=[0, 2, 3])
    with pytest.raises(ValueError, match="ks=60"):
        which_index(X, y, ks=[2, 60])
    with pytest.raises(ValueError, match="not internal indices"):
        which_index(X, y, measures=["ari"])


def test_which_index_says_which_indices_it_could_not_judge():
    """Issue 49: with ks up to n - 1, indices that are infinite on some partitions had r = NaN silently, and the reason
    still claimed a lead "over every other index". Each is listed as not judged, with the partitions and the advice
    to rank, and the lead is claimed over the indices judged only."""
    from clm_nb.advice import which_index
    X, y = _rounded_blobs()
    ks = [2, 3, 4, 30, 58, 59]
    choice = which_index(X, y, ks=ks, n_boot=200)
    assert set(choice.not_judged) == {"calinski_harabasz", "davies_bouldin", "dunn"}, choice.not_judged
    assert all("infinite on" in why and "spearman" in why for why in choice.not_judged.values())
    assert "over every other index" not in choice.reason and "could not be judged" in choice.reason
    assert (choice.believe, choice.leader) == ("silhouette", "silhouette") and "every other index judged" in choice.reason
    assert "not judged: infinite on" in repr(choice)
    ranked = which_index(X, y, ks=ks, n_boot=200, method="spearman")      # ranks weigh an infinite score
    assert ranked.not_judged == {} and ranked.table.r.notna().all()


def test_which_index_names_no_index_when_the_lead_is_not_clear():
    """Issue 49: an overlapping interval is no clear lead. On standardised wine (k = 2..8) calinski_harabasz ranks
    first but silhouette's interval overlaps its own: a tie, in rank order, and both pick k-means at k = 3."""
    from sklearn.datasets import load_wine
    from clm_nb.advice import which_index
    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    choice = which_index(X, y, ks=range(2, 9), random_state=0)
    assert choice.believe is None and choice.leader == "calinski_harabasz"
    assert choice.tied == list(choice.table.index[:len(choice.tied)]) and "silhouette" in choice.tied
    assert "pick kmeans k=3" in choice.reason


def test_which_index_does_not_recommend_a_weak_leader():
    """Issue 49: "believe calinski_harabasz" at r = 0.435 with a pick of ARI 0.27 (thyroid). A clear leader whose
    correlation is weak (iris, k = 2..6: r = 0.38) is the leader, not a recommendation."""
    from sklearn.datasets import load_iris
    from clm_nb.advice import which_index
    X, y = load_iris(return_X_y=True)
    choice = which_index(X, y, measures=["calinski_harabasz"], ks=range(2, 7), n_boot=200)
    assert choice.table.r.iloc[0] < 0.5
    assert choice.believe is None and "agrees only weakly" in choice.reason, choice.reason
    assert choice.leader == "calinski_harabasz"


# ---- issue 39: `which_index` on iris read back from a CSV, and its options refused before any work.

def test_which_index_on_iris_read_back_from_csv(tmp_path):
    "Real data as a user has it (a CSV): the labels are trustworthy, and the answer follows the stated rule."
    from sklearn.datasets import load_iris
    from clm_nb.readers import read_labeled_table
    load_iris(as_frame=True).frame.to_csv(tmp_path / "iris.csv", index=False)
    X, y = read_labeled_table(tmp_path / "iris.csv", "target")
    choice = which_index(X, y, ks=range(2, 7), n_boot=300, random_state=0)
    assert choice.verdict == "trustworthy" and len(choice.pool) == 25
    best = choice.table.index[0]
    separated = (choice.differences.low > 0).all() and choice.table.low[best] > 0
    assert choice.believe == (best if separated else None)
    assert (choice.tied == []) == (choice.believe is not None or not choice.table.low[best] > 0)
    assert set(choice.table.columns) >= {"r", "low", "high", "pick", "pick_k", "pick_ari"}
    assert repr(choice).startswith("IndexChoice: believe ")


def test_which_index_refuses_bad_options_before_work():
    X, y = np.zeros((10, 2)), np.repeat([0, 1], 5)
    with pytest.raises(ValueError, match="ci=0.95"):
        which_index(X, y, ci=95)
    with pytest.raises(ValueError, match="pearson"):
        which_index(X, y, method="cosine")
