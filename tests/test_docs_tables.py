"""The docs take what the registry knows from the registry (issue 50): the generated regions of README.md and docs/*.md
(`<!-- begin: NAME -->` ... `<!-- end: NAME -->`, written by tools/docs_tables.py from `clm_nb.catalog`) are current,
the guide has its table and counts there, and no page types a count of measures by hand."""
import re
import sys
from pathlib import Path

import clm_nb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from docs_tables import REGION, pages, refreshed  # noqa: E402

# Counts of measures that are records of a run, not of the registry (a benchmark's or a study's measures, a paper's).
RECORDS = {("benchmarks.md", "27 measures"), ("studies.md", "28 indices"), ("studies.md", "12 indices")}
COUNT = re.compile(r"\b\d[\d,]* (?:[a-z-]+ )?(?:measures|indices)\b", re.I)


def test_generated_regions_are_current():
    stale = []
    for page in pages():
        _, changed = refreshed(page.read_text(encoding="utf-8"))
        stale += [f"{page.name}: {name}" for name in changed]
    assert not stale, f"out of date: {stale}; run python tools/docs_tables.py"


def test_the_guide_takes_its_table_and_counts_from_the_registry():
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    regions = {m.group(2): m.group(3) for m in REGION.finditer(text)}
    assert {"measure-counts", "measure-table"} <= set(regions)
    table = regions["measure-table"]
    for name in clm_nb.measures().name:                  # every registered measure is in the guide's table
        assert f"[{name}](measures.md#{name})" in table, name
    assert regions["measure-counts"].startswith(f"{len(clm_nb.measures())} measures: ")


def test_no_page_types_a_count_of_measures():
    "Outside the generated regions, a number of measures is a record of a run (`RECORDS`), never the registry's."
    typed = []
    for page in pages():
        text = REGION.sub("", page.read_text(encoding="utf-8"))
        typed += [(page.name, m.group(0)) for m in COUNT.finditer(text) if (page.name, m.group(0)) not in RECORDS]
    assert not typed, (f"{typed}: a count of the registry's measures goes in a generated region (tools/docs_tables.py);"
                       " a record of a run's measures goes in RECORDS")
