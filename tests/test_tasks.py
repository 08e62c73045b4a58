"""The study tasks (clm_nb.tasks, notebook 25_tasks).

issue 39: the resampling draws are part of a profile task's key (the test took the rank-interval leaderboard as a
fixture it did not read; it runs without it)."""
import pytest

from clm_nb.bundle import list_datasets
from clm_nb.tasks import profile_tasks


# ---- issue 39: the resampling draws are part of a profile task's key.

def test_draws_are_part_of_the_task_key():
    catalog = list_datasets(False, labeled=False)
    off, on = profile_tasks(catalog, data_dir=False), profile_tasks(catalog, data_dir=False, n_resamples=10)
    assert "n_resamples" not in off[0].key and on[0].key["n_resamples"] == 10
    with pytest.raises(ValueError, match="at least 10"):
        profile_tasks(catalog, data_dir=False, n_resamples=3)
