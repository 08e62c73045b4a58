"""The CLM report (clm_nb.report) in a real browser: built on the embedded default, opened from file:// in headless
Chromium through Playwright. Skipped, saying why, when Chromium or Playwright is missing; `.ci/run` installs both."""
import dataclasses
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from clm_nb.datasets import list_datasets
from clm_nb.report import build_report
from clm_nb.runner import run
from clm_nb.verdict import DEFAULT_PRIMARY, leaderboard, profile_tasks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from check_links import broken_links, hrefs  # noqa: E402

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = NEEDS_BROWSER


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
def docs_site(report, tmp_path_factory):
    "The same leaderboard built the way `make docs` builds it: into <docs>/leaderboard/ with docs_url='..'."
    _, board = report
    board = dataclasses.replace(board, table=board.table.iloc[:3])         # three pages are enough, and cheap
    docs = tmp_path_factory.mktemp("docs")
    build_report(board, docs / "leaderboard", view_points=10, docs_url="..", progress=False)
    return docs, board


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
    assert page.locator("table").count() == 3                     # the verdict under each preparation, scores, pairs
    assert page.locator("table tbody tr").count() == len(a.variants) + len(a.scores) + len(a.worst_pairs)
    assert "stable" in text and "The verdict under each preparation" in text
    page.click("summary:has-text('Preparation')")                # the record: iris's one repeated row
    assert "repeat an earlier row" in page.inner_text("body")
    page.click("text=What the measures are")                      # the summaries, their formulas typeset as MathML
    assert page.locator("details dl math").count() >= 5 and "$" not in page.inner_text("body")
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


def _header(page, label: str):
    return page.locator("#board thead th").nth(_column(page, label))


def test_whole_header_cell_sorts_with_arrow_and_keyboard(report, page):
    "A click anywhere in the header cell sorts (not only on its label); the arrow shows the direction; keys sort too."
    index, _ = report
    page.goto(index.as_uri())
    th = _header(page, "n")
    box, label = th.bounding_box(), th.locator("button").bounding_box()
    page.mouse.click(box["x"] + 2, box["y"] + box["height"] - 2)                  # a corner, outside the label
    assert not (label["x"] <= box["x"] + 2 <= label["x"] + label["width"])
    assert th.get_attribute("aria-sort") == "descending"
    desc = [float(v) for v in _values(page, _column(page, "n"))]
    assert desc == sorted(desc, reverse=True)
    arrow = lambda: page.evaluate("h => getComputedStyle(h.querySelector('button'), '::after').content", th.element_handle())
    assert "\u25bc" in arrow()
    th.click(position={"x": 3, "y": 3})
    assert th.get_attribute("aria-sort") == "ascending" and "\u25b2" in arrow()
    assert "\u2195" in page.evaluate("h => getComputedStyle(h.querySelector('button'), '::after').content",
                                      _header(page, "d").element_handle())   # unsorted columns: a faint two-way arrow
    # keyboard: the button inside the header is focusable, Enter and Space sort
    d = _header(page, "d")
    d.locator("button").focus()
    page.keyboard.press("Enter")
    assert d.get_attribute("aria-sort") == "descending" and th.get_attribute("aria-sort") is None
    page.keyboard.press("Space")
    assert d.get_attribute("aria-sort") == "ascending"
    page.keyboard.press("Shift+Tab")                                              # focus moves along the headers
    assert page.evaluate("document.activeElement.textContent") == "n"
    assert page.problems == []


def test_verdict_stays_visible_on_a_phone(report, browser):
    "At 390 px the page does not scroll sideways; the table does, under the pinned dataset and verdict columns."
    index, _ = report
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.goto(index.as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    first = page.locator("#board tbody tr").first
    verdict, name = first.locator("td").nth(_column(page, "verdict")), first.locator("td").nth(_column(page, "dataset"))

    def inside(loc):
        b = loc.bounding_box()
        return b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 390 and b["width"] > 20

    assert inside(verdict) and inside(name)
    scroller = page.locator(".scroll")
    assert page.evaluate("e => e.scrollWidth > e.clientWidth", scroller.element_handle())   # the table is wider
    page.evaluate("e => { e.scrollLeft = e.scrollWidth; }", scroller.element_handle())
    page.wait_for_timeout(50)
    assert inside(verdict) and inside(name)
    vb, nb = verdict.bounding_box(), name.bounding_box()
    assert vb["x"] >= nb["x"] + nb["width"] - 1                                  # verdict right of the name, no overlap
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard_phone.png"))
    page.close()


def test_formulas_render_as_mathml(report, page):
    "Measure summaries on the overview and the dataset pages are typeset MathML, with no raw LaTeX left."
    index, _ = report
    page.goto((index.parent / "overview.html").as_uri())
    row = page.locator("#measure-ch_a")
    assert row.locator("math mfrac").count() >= 1
    num, den = (row.locator("math mfrac").first.locator(":scope > *").nth(i).bounding_box() for i in (0, 1))
    assert num["y"] + num["height"] <= den["y"] + 1 and num["width"] > 5     # stacked: typeset, not inline text
    text = page.inner_text("main")
    assert "$" not in text and "\\frac" not in text and "e^{" not in text
    page.screenshot(path=str(ARTIFACTS / "overview_measures.png"), full_page=True)
    page.goto((index.parent / "datasets" / "sklearn__iris.html").as_uri())
    page.click("text=What the measures are")
    assert page.locator("details dl math").count() >= 5 and "$" not in page.inner_text("main")
    assert page.problems == []


def test_links_resolve_without_docs(report):
    "Without docs_url every href stays inside the site and resolves to a file and id; no notebook paths."
    index, board = report
    site = index.parent
    assert broken_links(site) == []
    for page in site.rglob("*.html"):
        assert not any(h.endswith(".ipynb") or ".ipynb#" in h or h.startswith(("http:", "https:", "mailto:"))
                       for h in hrefs(page)), page.name                        # no notebook paths, nothing external
    iris = hrefs(site / "datasets" / "sklearn__iris.html")
    assert {f"../overview.html#measure-{m}" for m in board.measures} <= set(iris)


def test_links_point_at_the_docs_site(docs_site):
    "With docs_url='..' every dataset page links each measure it shows to the docs' measure reference."
    docs, board = docs_site
    site = docs / "leaderboard"
    pages = sorted((site / "datasets").glob("*.html"))
    assert len(pages) == int(board.table.labeled.sum()) > 0
    for page in pages:
        links = set(hrefs(page))
        assert {f"../../measures.html#{m}" for m in board.measures} <= links, page.name
        assert "../../index.html" in links                                     # the docs' home, in the header
    overview = hrefs(site / "overview.html")
    assert {f"../measures.html#{m}" for m in board.measures} <= set(overview)
    assert {"../verdict.html", "../studies/dataset_ranking.html", "../between.html"} <= set(overview)
    assert not any(".ipynb" in h for h in overview)
    # the links that stay inside the report still resolve; the others all lead into the docs folder above it
    assert broken_links(site, outside_ok=True) == []
    for page in site.rglob("*.html"):
        for href in hrefs(page):
            if urlsplit(href).scheme == "data":
                continue
            target = (page.parent / urlsplit(href).path).resolve()
            assert docs.resolve() in target.parents, (page.name, href)


def test_quiet_switch_silences_the_pages_bar(tmp_path, monkeypatch, capfd):
    """Issue 49: `CLM_NB_PROGRESS=0` (what `clm-nb --quiet` sets) silences the report's `pages:` bar, which went on
    writing to a log file with it (the leaderboard command asked for the bar)."""
    monkeypatch.delenv("CLM_NB_DATA", raising=False)
    monkeypatch.setenv("CLM_NB_PROGRESS", "0")
    catalog = list_datasets(False, labeled=False, max_datasets=1)
    results = run(profile_tasks(catalog, data_dir=False, n_permutations=5), store=tmp_path / "tasks", n_jobs=1)
    build_report(leaderboard(results, catalog, data_dir=False), tmp_path / "site", view_points=10, progress=True)
    err = capfd.readouterr().err
    assert "pages" not in err and "tasks" not in err, err
