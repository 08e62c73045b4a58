"""The verdict rule is one table (`clm_nb.rule.RULE_ROWS`, issue 50): a rule whose table differs by one row gives its
verdict and reason wherever a verdict is said (`assess`'s text, the leaderboard's row) and the report's statement of
the rule says the changed row; nothing else re-tests the cut-offs."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from clm_nb.assessment import assess
from clm_nb.bundle import add_to_bundle, list_datasets
from clm_nb.leaderboard import leaderboard
from clm_nb.rule import RULE_ROWS, VerdictRule, rule_table
from clm_nb.runner import run
from clm_nb.tasks import profile_tasks

MEASURES = ["ch_btwn", "dbcv_btwn"]
SAID = "a high view alone is not enough under this rule"
SENTENCE = "Doubtful, not trustworthy: a view's band is high (this rule trusts no dataset)."


class OneRowChanged(VerdictRule):
    "The default rule but for one row of its table: the row that said trustworthy says doubtful, in its own words."
    rows = tuple(replace(w, verdict="doubtful", reason=lambda x, rule: f"{SAID}: {x.each_view}",
                         sentence=lambda rule: SENTENCE) if w.verdict == "trustworthy" else w for w in RULE_ROWS)


@pytest.fixture(scope="module")
def blobs():
    "Three well-separated classes of 30 points: trustworthy under the default rule."
    y = np.repeat([0, 1, 2], 30)
    return np.random.default_rng(0).normal(size=(90, 2)) + 8 * y[:, None], y


def test_the_changed_row_is_the_only_change():
    assert sum(a != b for a, b in zip(RULE_ROWS, OneRowChanged.rows)) == 1
    default, changed = rule_table(VerdictRule()), rule_table(OneRowChanged())
    assert (default.verdict != changed.verdict).sum() == 1 and (default.when == changed.when).all()
    described = VerdictRule().describe()
    assert OneRowChanged().describe() == [SENTENCE if s.startswith("Trustworthy:") else s for s in described]


def test_assess_says_the_changed_rows_verdict_and_reason(blobs):
    options = dict(measures=MEASURES, primary="ch_btwn", variants=False, ci=None, n_permutations=5, random_state=0,
                   verdict_by="rule")                # the rule under test gives the verdict
    default, changed = assess(*blobs, **options), assess(*blobs, rule=OneRowChanged(), **options)
    assert default.verdict == "trustworthy" and "carried it" in default.reason
    assert changed.verdict == "doubtful" and changed.reason.startswith(f"{SAID}: centroid view ch_btwn")
    assert "CLM assessment: DOUBTFUL" in changed.text() and SAID in changed.text()
    assert changed.judgeable


def test_the_leaderboard_row_says_the_changed_rows_verdict_and_reason(blobs, tmp_path):
    add_to_bundle(*blobs, tmp_path, "c", "blobs")
    catalog = list_datasets(tmp_path, labeled=False)
    tasks = profile_tasks(catalog, data_dir=tmp_path, measures=MEASURES, primary="ch_btwn", n_permutations=5)
    results = run(tasks, store=tmp_path / "tasks", executor="inline", progress=False)
    boards = [leaderboard(results, catalog, data_dir=tmp_path, measures=MEASURES, primary="ch_btwn", rule=rule,
                          verdict_by="rule")
              for rule in (VerdictRule(), OneRowChanged())]
    default, changed = (b.table.set_index("dataset").loc["blobs"] for b in boards)
    assert default.verdict == "trustworthy" and changed.verdict == "doubtful"
    assert changed.reason.startswith(f"{SAID}: centroid view ch_btwn") and SAID not in default.reason
    assert boards[1].verdict_counts["trustworthy"] == 0 and SENTENCE in boards[1].rule.describe()
    pd.testing.assert_series_equal(default[MEASURES], changed[MEASURES])   # the scores are not the rule's
