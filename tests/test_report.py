"""The CLM report (clm_nb.report) in a real browser: built on the embedded default, opened from file:// in headless
Chromium through Playwright. Skipped, saying why, when Chromium or Playwright is missing; `.ci/run` installs both."""
import re
import shutil
from pathlib import Path

import pytest

from clm_nb.datasets import list_datasets
from clm_nb.report import build_report
from clm_nb.runner import run
from clm_nb.verdict import DEFAULT_PRIMARY, leaderboard, profile_tasks

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags that let Debian's Chromium run headless here: no sandbox as root, and no background connections to Google's
# hosts (the network is closed, so each would be refused and logged).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:                                              # pragma: no cover - the dev extra installs it
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not found: install Debian's chromium (apt-get install chromium) "
                                                "to run the browser tests; .ci/run installs it"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright not installed: pip install -e '.[dev]'"),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory, monkeypatch_module):
    "The report of the embedded default (ten datasets), built once for the module."
    monkeypatch_module.delenv("CLM_NB_DATA", raising=False)
    tmp = tmp_path_factory.mktemp("report")
    catalog = list_datasets(False, labeled=False)
    results = run(profile_tasks(catalog, data_dir=False, n_permutations=10), store=tmp / "tasks", n_jobs=1, progress=False)
    board = leaderboard(results, catalog, data_dir=False)
    index = build_report(board, tmp / "site", view_points=300, progress=False)
    return index, board


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def browser():
    "Headless Chromium; Playwright gives every launch a new, empty profile."
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    "A fresh page that records console errors and uncaught exceptions in `page.problems`."
    p = browser.new_page(viewport={"width": 1400, "height": 1000})
    p.problems = []
    p.on("console", lambda m: p.problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    p.on("pageerror", lambda e: p.problems.append(f"page error: {e}"))
    p.on("requestfailed", lambda r: p.problems.append(f"request failed: {r.url}"))
    yield p
    p.close()


def _column(page, label: str) -> int:
    "Index of the leaderboard column whose header reads `label`."
    heads = page.locator("#board thead th").all_inner_texts()
    return [h.replace("▲", "").replace("▼", "").strip() for h in heads].index(label)


def _values(page, col: int) -> list[str]:
    return page.eval_on_selector_all(f"#board tbody tr:not([hidden]) td:nth-child({col + 1})",
                                     "cells => cells.map(c => c.getAttribute('data-v'))")


def test_leaderboard_rows_sorting_and_filters(report, page):
    index, board = report
    page.goto(index.as_uri())
    assert page.locator("#board tbody tr").count() == len(board.table) == 10
    assert page.locator("#shown").inner_text() == "10"
    # initially ordered by CH_btwn: rank 1..10
    assert [float(v) for v in _values(page, _column(page, "#"))] == list(range(1, 11))
    # numbers sort numerically, largest first on the first click, then the other way
    n = _column(page, "n")
    page.locator("#board thead th").nth(n).locator("button").click()
    assert page.locator("#board thead th").nth(n).get_attribute("aria-sort") == "descending"
    desc = [float(v) for v in _values(page, n)]
    assert desc == sorted(desc, reverse=True) and desc[0] == 1797            # digits: numeric, not text, order
    page.locator("#board thead th").nth(n).locator("button").click()
    assert [float(v) for v in _values(page, n)] == sorted(desc)
    # text columns sort alphabetically
    name = _column(page, "dataset")
    page.locator("#board thead th").nth(name).locator("button").click()
    names = _values(page, name)
    assert names == sorted(names) and names[0] == "blobs_match"
    # the verdict sorts by its traffic-light order, the views' weighted means numerically
    verdict = _column(page, "verdict")
    page.locator("#board thead th").nth(verdict).locator("button").click()
    order = [float(v) for v in _values(page, verdict)]
    assert order == sorted(order)
    weighted = _column(page, "dbcv_btwn weighted")
    page.locator("#board thead th").nth(weighted).locator("button").click()
    w = [float(v) for v in _values(page, weighted) if v is not None]
    assert w == sorted(w, reverse=True) and len(w) == len(board.table)
    # filters: by name, by collection, by verdict; the count follows
    page.fill("#q", "blobs")
    assert page.locator("#board tbody tr:not([hidden])").count() == 6 and page.locator("#shown").inner_text() == "6"
    page.fill("#q", "")
    page.select_option("#collection", "sklearn")
    assert sorted(_values(page, name)) == ["breast_cancer", "digits", "iris", "wine"]
    page.select_option("#collection", "")
    page.select_option("#verdict", "trustworthy")
    expected = int((board.table.verdict == "trustworthy").sum())
    assert page.locator("#board tbody tr:not([hidden])").count() == expected > 0
    page.select_option("#verdict", "")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)
    assert (ARTIFACTS / "leaderboard.png").stat().st_size > 10_000
    assert page.problems == []


def _svg_sizes(page) -> list[tuple[float, float]]:
    return page.eval_on_selector_all("figure > svg", "s => s.map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])")


def test_pages_show_their_charts(report, page):
    index, board = report
    page.goto(index.as_uri())
    page.click("text=digits")                                  # the row's link opens the dataset page
    page.wait_for_load_state("load")                           # the whole page, not only its first figures
    assert page.url.endswith("/datasets/sklearn__digits.html")
    sizes = _svg_sizes(page)
    assert len(sizes) == 4 and all(w > 100 and h > 50 for w, h in sizes)     # 2-D view, one heatmap per view, scores
    figures = page.locator("figure")
    assert figures.nth(0).locator("g.mark-symbol.role-mark path").count() == 300   # the 2-D view's points
    for i, view in ((1, "Centroid view"), (2, "Density view")):                    # 10 classes: 90 off-diagonal cells
        assert figures.nth(i).locator("g.mark-rect.role-mark path").count() == 90
        assert figures.nth(i).locator("figcaption").inner_text().startswith(view)
    assert "Provenance" in page.content() and "sklearn.datasets.load_digits()" in page.content()
    page.screenshot(path=str(ARTIFACTS / "dataset_digits.png"), full_page=True)
    page.click("text=Overview")
    page.wait_for_load_state("load")
    assert page.url.endswith("/overview.html")
    sizes = _svg_sizes(page)
    assert len(sizes) >= 3 and all(w > 100 and h > 30 for w, h in sizes)
    assert re.search(rf"{DEFAULT_PRIMARY}.*primary", page.inner_text("main"))
    assert "dbcv_btwn (density view)" in page.inner_text("main")
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)
    assert page.problems == []


def test_assessment_html_renders_offline(page, tmp_path):
    "`Assessment._repr_html_` (what JupyterLab shows) as a page: the verdict badge, both tables and the hints render."
    from sklearn.datasets import load_iris
    import clm_nb
    X, y = load_iris(return_X_y=True)
    a = clm_nb.assess(X, y, n_permutations=4)
    path = tmp_path / "assessment.html"
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{a._repr_html_()}</body></html>")
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    text = page.inner_text("body")
    assert "CLM assessment" in text and a.verdict in text and "Worst class pairs" in text
    assert page.locator("table").count() == 2 and page.locator("table tbody tr").count() == len(a.scores) + len(a.worst_pairs)
    page.screenshot(path=str(ARTIFACTS / "assessment.png"), full_page=True)
    assert page.problems == []


def test_page_styles_reach_the_browser_unescaped(report, page):
    "The stylesheet is inlined verbatim: quotes in font names and the sort arrows' escapes survive templating."
    index, _ = report
    html = Path(index).read_text()
    style = html[html.index("<style>"):html.index("</style>")]
    assert "&#34;" not in style and '"Segoe UI"' in style and r'content:" \25B2"' in style
    page.goto(Path(index).resolve().as_uri())
    assert "Segoe UI" in page.evaluate("getComputedStyle(document.body).fontFamily")
    page.click("th button")
    arrow = page.evaluate("getComputedStyle(document.querySelector('th[aria-sort] button'), '::after').content")
    assert arrow.strip('"').strip() in ("\u25b2", "\u25bc"), arrow
