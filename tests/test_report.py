"""The CLM report (clm_nb.report) in a real browser: built on the embedded default, opened from file:// in headless
Chromium through Playwright. Skipped, saying why, when Chromium or Playwright is missing; `.ci/run` installs both.

issue 38: a hostile, over-long dataset name and hostile labels in the report site: page names bounded, CSVs
spreadsheet-safe, stale pages removed, charts under `ulimit -v`; nothing runs in Chromium in the assessment's HTML,
the report or the gallery's page.

issue 39: the report shows the rank intervals and sorts by their spread; each dataset page has its P(out-rank) table."""
import dataclasses
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest

from clm_nb.bundle import add_to_bundle, list_datasets
from clm_nb.leaderboard import leaderboard
from clm_nb.profile import DEFAULT_PRIMARY
from clm_nb.report import build_report
from clm_nb.runner import run
from clm_nb.tasks import profile_tasks

from hostile import IMG, hostile_data

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from check_links import broken_links, hrefs  # noqa: E402

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def report(tmp_path_factory, monkeypatch_module, embedded_profiles):
    """The report of the embedded default (ten datasets), built once for the module from the session's profiles
    (conftest.py) without their half-sample draws: the tasks' results without `n_resamples`."""
    monkeypatch_module.delenv("CLM_NB_DATA", raising=False)
    tmp = tmp_path_factory.mktemp("report")
    catalog, results = embedded_profiles
    results = results[results.part != "draw"]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_the_site_says_which_answer_gives_the_verdict(report, page, tmp_path):
    "Under the calibrated answer the index and overview say so and print how; under the rule they describe the rule."
    index, board = report
    assert len(board.verdict_lines) == 2 and "expected AMI" in board.verdict_lines[0]
    page.goto(index.as_uri())
    assert page.locator(".clm-verdict-by").count() == 1
    assert "calibrated answer" in page.locator(".clm-verdict-by").inner_text()
    page.locator("details summary", has_text="How the verdict is decided").click()
    assert page.locator("ul.clm-verdict-lines li").all_inner_texts() == list(board.verdict_lines)
    page.goto((index.parent / "overview.html").as_uri())
    heads = page.locator("h2").all_inner_texts()
    assert "The verdict" in heads and "The rule's verdict, beside it" in heads and "The verdict rule" not in heads
    ruled = dataclasses.replace(board, table=board.table.iloc[:2], verdict_lines=())
    other = build_report(ruled, tmp_path / "rule", view_points=10, progress=False)
    page.goto(other.as_uri())
    assert page.locator(".clm-verdict-by").count() == 0 and "The verdict reads two views" in page.inner_text("main")
    page.goto((other.parent / "overview.html").as_uri())
    assert "The verdict rule" in page.locator("h2").all_inner_texts()
    assert page.problems == []


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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
    assert {"../rule.html", "../profile.html", "../studies/dataset_ranking.html", "../between.html"} <= set(overview)
    assert not any(".ipynb" in h for h in overview)
    # the links that stay inside the report still resolve; the others all lead into the docs folder above it
    assert broken_links(site, outside_ok=True) == []
    for page in site.rglob("*.html"):
        for href in hrefs(page):
            if urlsplit(href).scheme == "data":
                continue
            target = (page.parent / urlsplit(href).path).resolve()
            assert docs.resolve() in target.parents, (page.name, href)


# ---- issue 49: a site that one dataset cannot take down ---------------------------------------------------------------

BIDI_NAME = "gnp\u202e.exe"                  # shown reversed when printed raw: 'gnp' + 'exe.' reads like a png


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory, monkeypatch_module):
    """The report of a bundle with a not-scored dataset (a missing value), an unlabeled one, one whose every view
    refuses (one class), a name with U+202E, a 2-D dataset with feature names added from a file in the home folder."""
    import numpy as np
    import pandas as pd
    from clm_nb.bundle import add_to_bundle
    root = tmp_path_factory.mktemp("bundle")
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 2)) + 6 * y[:, None]
    home_file = str(Path.home() / "private" / "flowers.csv")
    add_to_bundle(X, y, root, "mine", "flowers", feature_names=["Petal length", "Petal width"], source=home_file)
    add_to_bundle(np.r_[X[:59], [[np.nan, 1.0]]], y, root, "mine", "holes")                   # not scored: refused
    add_to_bundle(X, np.zeros(60, int), root, "mine", "one_class")                             # every view refuses
    add_to_bundle(X[:, ::-1] * 2, y, root, "mine", "bidi")
    manifest = pd.read_csv(root / "manifest.csv", dtype=str, keep_default_na=False)
    manifest.loc[manifest.name == "bidi", "name"] = BIDI_NAME
    unlabeled = manifest.iloc[0].to_dict() | dict(name="no_labels", status="unlabeled", file="mine/no_labels.npz",
                                                  n_classes="", label_variants="0", original_path="")
    np.savez_compressed(root / "mine" / "no_labels.npz", X=X)
    pd.concat([manifest, pd.DataFrame([unlabeled])]).to_csv(root / "manifest.csv", index=False)
    catalog = list_datasets(root, labeled=False)
    results = run(profile_tasks(catalog, data_dir=root, n_permutations=2), store=tmp_path_factory.mktemp("tasks"),
                  executor="inline", progress=False)
    board = leaderboard(results, catalog, data_dir=root)
    return root, board, build_report(board, tmp_path_factory.mktemp("site"), view_points=10, progress=False).parent


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_whole_site_with_unscoreable_datasets(hostile_site):
    "Issue 49: a not-scored dataset, one with no labels and one whose every view refuses; the whole site is written."
    _, board, site = hostile_site
    t = board.table.set_index("dataset")
    assert t.at["holes", "verdict"] == "not scored" and t.at["one_class", "verdict"] == "not scored"
    assert t.at["no_labels", "verdict"] == "no labels" and t.at["flowers", "verdict"] in ("trustworthy", "doubtful")
    assert (site / "index.html").is_file() and (site / "overview.html").is_file()
    pages = {p.name for p in (site / "datasets").glob("*.html")}
    assert len(pages) == int(board.table.labeled.sum()) == 4
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "could not be built" not in index and not (site / "errors.csv").exists()     # nothing failed here


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_a_page_that_fails_is_a_recorded_problem(hostile_site, tmp_path, monkeypatch):
    "Issue 49: one page that cannot be built (any error) is a page saying why, a line of the index and of errors.csv."
    import clm_nb.report as report
    from clm_nb.text import read_csv
    _, board, _ = hostile_site
    real = report._dataset_page

    def broken(r, *a, **k):
        if r["dataset"] == "flowers":
            raise TypeError("Column 'lowest' has dtype object, cannot use method 'nsmallest'")
        return real(r, *a, **k)

    monkeypatch.setattr(report, "_dataset_page", broken)
    index = build_report(board, tmp_path, view_points=10, progress=False)
    assert len(list((tmp_path / "datasets").glob("*.html"))) == 4
    page = (tmp_path / "datasets" / "mine__flowers.html").read_text(encoding="utf-8")
    assert "This page could not be built:</b> TypeError" in page
    html = index.read_text(encoding="utf-8")
    assert "1 page could not be built" in html and 'href="datasets/mine__flowers.html">mine/flowers</a>' in html
    errors = read_csv(tmp_path / "errors.csv", keep_default_na=False)
    assert errors[["part", "dataset"]].values.tolist() == [["pages", "flowers"]]
    assert errors.error.iloc[0].startswith("TypeError: Column 'lowest'")


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_names_with_bidi_characters_are_shown_escaped(hostile_site):
    "Issue 49: U+202E in a dataset name reached the leaderboard's HTML raw (shown reversed); escaped as the terminal does."
    _, _, site = hostile_site
    for page in [site / "index.html", site / "overview.html", *(site / "datasets").glob("*.html")]:
        assert "\u202e" not in page.read_text(encoding="utf-8"), page.name
    assert "gnp\\u202e.exe" in (site / "index.html").read_text(encoding="utf-8")


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_scatter_axes_carry_the_feature_names(hostile_site):
    "Issue 49: the 2-D view labelled its axes x1/x2 although the bundle stores feature_names."
    _, _, site = hostile_site
    page = (site / "datasets" / "mine__flowers.html").read_text(encoding="utf-8")
    assert "Petal length" in page and "Petal width" in page


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_no_absolute_path_in_the_published_site(hostile_site):
    "Issue 49: the provenance block printed the user's absolute file path; the site names no folder of the machine."
    root, _, site = hostile_site
    page = (site / "datasets" / "mine__flowers.html").read_text(encoding="utf-8")
    assert "<dt>original path</dt><dd>flowers.csv</dd>" in page and "<dt>file</dt><dd>mine/flowers.npz</dd>" in page
    for f in site.rglob("*"):
        if f.is_file() and f.suffix in (".html", ".json", ".csv"):
            text = f.read_text(encoding="utf-8")
            assert str(root) not in text and str(Path.home()) + "/" not in text, f.name


def _clipped(page) -> list:
    """The elements of `main` that reach past their pane (the viewport, or the grid cell they sit in) without a
    scroll container between them and it: content a reader cannot see."""
    return page.evaluate("""() => {
      const vw = document.documentElement.clientWidth, out = [];
      const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
      for (const e of document.querySelectorAll('main *')) {
        const r = e.getBoundingClientRect();
        if (!r.width) continue;
        let p = e.parentElement, pane = null, inScroll = false;
        for (; p && p.tagName !== 'MAIN'; p = p.parentElement) {
          if (scrolls(p)) { inScroll = true; break; }
          if (!pane && p.parentElement && p.parentElement.classList.contains('grid')) pane = p;
        }
        if (inScroll) continue;
        const right = pane ? pane.getBoundingClientRect().right : vw;
        if (r.right > right + 1) out.push(`${e.tagName}.${e.className.baseVal ?? e.className}: ${Math.round(r.right)} > ${Math.round(right)}`);
      }
      return out.slice(0, 5).concat(document.documentElement.scrollWidth > vw ? ['page scrolls sideways'] : []);
    }""")


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
@pytest.mark.parametrize("width", [800, 1100])
def test_tables_and_charts_fit_their_pane(report, browser, width):
    "Issue 49: the wide tables (scores, measures) ran past their pane and were cut; now they fit or scroll."
    index, _ = report
    page = browser.new_page(viewport={"width": width, "height": 900})
    for f in (index, index.parent / "overview.html", index.parent / "datasets" / "sklearn__digits.html"):
        page.goto(f.as_uri())
        page.wait_for_load_state("load")
        assert _clipped(page) == [], (width, f.name)
    page.close()

@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
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


# ---- issue 38: a hostile, over-long dataset name and hostile labels in the report site: page names bounded, CSVs ...

SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


LONG_NAME = IMG + "_" + "x" * 300      # over every file system's 255-byte limit


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    "A leaderboard of two datasets of a bundle: one with the hostile labels and an over-long hostile name, one plain."
    root = tmp_path_factory.mktemp("bundle")
    X, y = hostile_data()
    add_to_bundle(X, y, root, "evil", "data")
    add_to_bundle(*hostile_data(1), root, "evil", "plain")
    manifest = pd.read_csv(root / "manifest.csv", dtype=str, keep_default_na=False)
    manifest.loc[manifest.name == "data", "name"] = LONG_NAME          # a hand-written manifest may name it anything
    manifest.to_csv(root / "manifest.csv", index=False)
    catalog = list_datasets(root)
    results = run(profile_tasks(catalog, data_dir=root, n_permutations=2), store=root / "tasks", n_jobs=1,
                  progress=False)
    return leaderboard(results, catalog, data_dir=root)


@pytest.fixture(scope="module")
def site(board, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    return build_report(board, out, view_points=10, progress=False).parent


def test_report_page_names_are_bounded(board, site):
    "Medium #7: a dataset name over 255 characters aborted the report (File name too long)."
    pages = sorted(p.name for p in (site / "datasets").glob("*.html"))
    assert len(pages) == 2 and "evil__plain.html" in pages
    assert all(len(p.encode()) < 200 and SAFE_NAME.fullmatch(p) for p in pages), pages


def test_report_csvs_are_spreadsheet_safe(site):
    "The report's CSVs: no cell a spreadsheet would run as a formula, no control character."
    for name in ("leaderboard.csv", "class_pairs.csv"):
        text = (site / name).read_text(encoding="utf-8")
        cells = [c for row in pd.read_csv(site / name, dtype=str, keep_default_na=False).itertuples(index=False)
                 for c in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "@")], name   # '-' begins negative numbers
        assert "'=1+1" in text or name == "leaderboard.csv"


def test_rebuild_removes_stale_pages_only(board, site):
    "Low: a removed dataset's page survived a rebuild; the report removes the pages it wrote, nothing else."
    mine = site / "datasets" / "mine.html"
    mine.write_text("a page of my own")
    kept = dataclasses.replace(board, table=board.table[board.table.dataset != "plain"])
    build_report(kept, site, view_points=10, progress=False)
    names = sorted(p.name for p in (site / "datasets").glob("*.html"))
    assert "evil__plain.html" not in names and "mine.html" in names and len(names) == 2


def test_report_survives_ulimit_v(board, tmp_path):
    "Medium #5: vl-convert's V8 died with SIGTRAP under ulimit -v and took the report with it."
    (tmp_path / "board.pkl").write_bytes(pickle.dumps(board))
    code = textwrap.dedent(f"""
        import pickle, resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        from clm_nb.report import build_report
        board = pickle.loads(open({str(tmp_path / 'board.pkl')!r}, 'rb').read())
        print(build_report(board, {str(tmp_path / 'site')!r}, view_points=10, progress=False))
    """)
    env = {k: v for k, v in __import__("os").environ.items() if k != "CLM_NB_VL_CONVERT"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert (tmp_path / "site" / "index.html").exists() and len(list((tmp_path / "site" / "datasets").iterdir())) == 2
    assert done.stderr.count("charts left out") == 1 and "ulimit -v" in done.stderr


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_nothing_runs_in_chromium(assessed, site, gallery_html, tmp_path, browser):
    "The acceptance: each output opened in Chromium fires no dialog, leaves the canary unset, holds no live payload."
    notebook = tmp_path / "assessment.html"
    notebook.write_text(f"<!doctype html><meta charset=utf-8><body>{assessed._repr_html_()}</body>", encoding="utf-8")
    docs = [notebook, site / "index.html", site / "overview.html", *sorted((site / "datasets").glob("*.html")),
            gallery_html]
    live = """() => [...document.querySelectorAll('script')].filter(s => s.textContent.includes('__pwned')).length
                  + document.querySelectorAll('img').length
                  + [...document.querySelectorAll('[href]')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href'))).length
                  + [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length"""
    page = browser.new_page()                      # the module's Chromium: one Playwright per process at a time
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for doc in docs:
        page.goto(doc.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("() => window.__pwned") is None, doc.name
        assert page.evaluate(live) == 0, doc.name
    page.close()
    assert dialogs == []
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x" in index                                    # the hostile name is there, as text


# ---- issue 39: the report shows the rank intervals and sorts by their spread; each dataset page has its P(out- ...

@pytest.mark.skipif(CHROMIUM is None or sync_playwright is None, reason="needs Chromium and playwright")
def test_report_shows_and_sorts_rank_intervals(rank_board, browser):
    b, _, _, tmp = rank_board
    index = build_report(b, tmp / "site", view_points=50, progress=False)
    csv = pd.read_csv(tmp / "site" / "leaderboard.csv")
    assert {"rank_low", "rank_high", "sc_a_low", "sc_a_high"} <= set(csv.columns)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})    # the module's Chromium, as above
    problems = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(index.as_uri())
    heads = [h.replace("▲", "").replace("▼", "").replace("↕", "").strip()
             for h in page.locator("#board thead th").all_inner_texts()]
    first = page.locator("#board tbody tr").first.locator("td").first.inner_text()
    assert first.startswith("1 (1–") and first.endswith(")")
    col = heads.index("rank spread")
    page.locator("#board thead th").nth(col).locator("button").click()
    widths = page.eval_on_selector_all(f"#board tbody tr td:nth-child({col + 1})",
                                       "cells => cells.map(c => parseFloat(c.getAttribute('data-v')))")
    assert widths == sorted(widths)
    page.locator("#board tbody tr").nth(5).locator("a").first.click()
    table = page.locator("table.outranks")
    assert table.count() == 1 and "P(this out-ranks it)" in table.inner_text()
    assert "%" in table.locator("tr").nth(1).inner_text()
    page.close()
    assert problems == []


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_the_expected_ami_column_shows_and_sorts_the_calibrated_answer(report, page):
    """Issue 51: the overview shows each dataset's expected AMI with its interval, sorts by the expectation, and the
    verdict's tooltip is its reason."""
    index, board = report
    page.goto(index.as_uri())
    col = _column(page, "expected AMI (interval)")
    cells = page.locator(f"#board tbody tr td:nth-child({col + 1})").all_inner_texts()
    t = board.table.set_index("dataset")
    assert any(c for c in cells) and all(("(" in c and "–" in c) for c in cells if c)
    page.locator("#board thead th").nth(col).locator("button").click()                # largest expectation first
    v = [float(x) for x in _values(page, col) if x is not None]
    assert v == sorted(v, reverse=True) and len(v) == t.expected_ami.notna().sum()
    verdict = _column(page, "verdict")
    tips = page.eval_on_selector_all(f"#board tbody tr td:nth-child({verdict + 1})", "cs => cs.map(c => c.title)")
    assert any(tip.startswith("expected AMI of the best technique") for tip in tips)
    assert not page.problems, page.problems
