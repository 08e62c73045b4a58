"""Issue 38, rendering: a label, a column or a dataset name a hostile user chose, rendered through every output — the
notebook view of `assess` (`Assessment._repr_html_`), the leaderboard report site (`build_report`), the docs gallery's
page (tools/gallery.py), the terminal (`clm-nb assess`) and the CSV files — runs no script in Chromium and prints no
control character. Also: charts under `ulimit -v`, over-long dataset names, stale report pages, `assess(measures=[])`.
Small data (five classes, 175 points), one browser session."""
import dataclasses
import html.parser
import json
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clm_nb
from clm_nb.text import render_math, user_text
from clm_nb.bundle import add_to_bundle, list_datasets
from clm_nb.report import build_report
from clm_nb.runner import run
from clm_nb.leaderboard import leaderboard
from clm_nb.tasks import profile_tasks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright  # noqa: E402

CLM_NB = Path(sys.executable).parent / "clm-nb"

# Each payload, if it ever ran, sets window.__pwned (the canary) and opens a dialog.
SCRIPT_MATH = r"$\text{<script>window.__pwned=1;alert(1)</script>}$"
IMG = '"><img src=x onerror="window.__pwned=2;alert(2)">'
LINK = "javascript:window.__pwned=3//=HYPERLINK(1)"
ANSI = "=1+1\x1b[31mred\x1b]0;title\x07"
BIDI = "\u202eevil<script>window.__pwned=4</script>"
LABELS = [SCRIPT_MATH, IMG, LINK, ANSI, BIDI]
SIZES = [80, 80, 5, 5, 5]          # two big overlapping classes: the dominant-pair hint names them (in HTML, as math)
# control, bidirectional and invisible format characters (core's terminal_text class), newline and tab allowed
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = [(0, 0), (0, 0), (10, 0), (0, 10), (10, 10)]
    X = np.vstack([rng.normal(c, 1, (s, 2)) for c, s in zip(centers, SIZES)])
    return X, np.repeat(np.array(LABELS, dtype=object), SIZES)


class _Elements(html.parser.HTMLParser):
    "The start tags of a document: (tag, attributes)."
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _live_markup(doc: str) -> list[str]:
    "What in `doc` a browser would run: a script or element carrying a payload, an event handler, a javascript: link."
    p = _Elements()
    p.feed(doc)
    bad = []
    for tag, attrs in p.tags:
        if tag == "img" or (tag == "script" and "__pwned" in doc):
            bad.append(tag)
        bad += [f"{tag} {k}" for k, v in attrs.items() if k.startswith("on") or "javascript:" in (v or "").lower()]
    return bad


@pytest.fixture(scope="module")
def assessed():
    X, y = _data()
    return clm_nb.assess(X, y, n_permutations=5, variants=False)


@pytest.fixture(scope="module")
def hostile_csv(tmp_path_factory):
    "A user's CSV whose labels and one column name are hostile."
    X, y = _data()
    path = tmp_path_factory.mktemp("csv") / "hostile.csv"
    pd.DataFrame({"a": X[:, 0], "b\x1b[1m\u202e": X[:, 1], "class": y}).to_csv(path, index=False)
    return path


# ---- the notebook view of assess ---------------------------------------------------------------------------------

def test_math_renderer_never_passes_raw_html():
    "High #1, defence in depth: latex2mathml copies \\text{} raw; core._formula must not pass it through."
    for tex in (SCRIPT_MATH, r"$\href{javascript:window.__pwned=1}{x}$", r"$\text{<img src=x onerror=alert(1)>}$",
                r"$\text{<![CDATA[</mtext></math><script>alert(1)</script>]]>}$"):
        out = render_math(f"label {tex} end")
        assert _live_markup(out) == [] and "<script" not in out and "<!" not in out, out
    assert "<math" in render_math(r"$\frac{a}{b}$")                  # real formulas are still typeset


def test_assessment_messages_quote_labels(assessed):
    "High #1, the class: the dominant-pair hint quotes the labels with user_text (their $ escaped)."
    hint = next(h for h in assessed.hints if "dominant class pair" in h)
    assert user_text(SCRIPT_MATH) in hint and user_text(IMG) in hint


def test_assessment_html_runs_nothing(assessed):
    "High #1: the notebook view of the assessment holds no script, no image, no handler, no javascript: link."
    doc = assessed._repr_html_()
    assert _live_markup(doc) == [], _live_markup(doc)
    assert "<script" not in doc


def test_assess_refuses_no_measures():
    "Low: assess(measures=[]) used the defaults silently."
    X, y = _data()
    with pytest.raises(ValueError, match=r"measures=\[\] names no measure"):
        clm_nb.assess(X, y, measures=[])


# ---- the terminal --------------------------------------------------------------------------------------------------

def test_cli_prints_no_control_character(hostile_csv):
    "Medium #10: clm-nb assess (its text and an error line) prints the labels' escapes as visible text; JSON is ASCII."
    missing = hostile_csv.parent / "\x1b]0;retitled\x07\u202evsc.csv"            # click's own error line
    runs = {k: subprocess.Popen([str(CLM_NB), "assess", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
            for k, args in {"text": [str(hostile_csv), "-l", "class", "--no-variants", "--permutations", "5"],
                            "error": [str(missing), "-l", "class"]}.items()}
    out = {k: p.communicate(timeout=120) + (p.returncode,) for k, p in runs.items()}
    assert out["text"][2] == 0 and out["error"][2] == 1, out
    for k, (stdout, stderr, _) in out.items():
        assert not CONTROL.search(stdout) and not CONTROL.search(stderr), (k, stdout[-400:], stderr[-400:])
    assert "\\u202e" in out["text"][0] and "\\x1b]0;title\\x07" in out["text"][0]    # shown, escaped
    assert "\\x1b]0;retitled\\x07\\u202evsc.csv: no such file" in out["error"][1]
    from click.testing import CliRunner
    from clm_nb.cli import cli
    r = CliRunner().invoke(cli, ["assess", str(hostile_csv), "-l", "class", "--no-variants", "--permutations", "5",
                                 "--json"])
    assert r.exit_code == 0 and not CONTROL.search(r.stdout) and r.stdout.isascii(), r.stdout[-400:]
    data = json.loads(r.stdout)                                                  # valid JSON, the labels intact
    assert {data["worst_pairs"][0][k] for k in ("class_a", "class_b")} <= set(LABELS)


def test_assessment_text_escapes(assessed):
    "Medium #10: Assessment.text() (its repr) escapes the labels' control characters too."
    assert not CONTROL.search(assessed.text()) and "\\u202e" in repr(assessed)


# ---- the leaderboard report ------------------------------------------------------------------------------------------

LONG_NAME = IMG + "_" + "x" * 300      # over every file system's 255-byte limit


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    "A leaderboard of two datasets of a bundle: one with the hostile labels and an over-long hostile name, one plain."
    root = tmp_path_factory.mktemp("bundle")
    X, y = _data()
    add_to_bundle(X, y, root, "evil", "data")
    add_to_bundle(*_data(1), root, "evil", "plain")
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


# ---- the docs gallery ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gallery_html(hostile_csv, tmp_path_factory):
    "The gallery's section of the hostile CSV (tools/gallery.py), rendered as MyST would: raw HTML on, dollarmath."
    import gallery
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    spec = gallery.Spec(name="hostile", title="Hostile", source="test", licence="none", write="", label="class",
                        options={"n_permutations": 5, "variants": False})
    record = gallery.assess_one(spec, hostile_csv)
    md = "\n".join(gallery.section(spec, record))
    md = md.split("````{raw} html")[0]                 # the assessment's own HTML: tested above, not Markdown
    body = MarkdownIt("commonmark", {"html": True}).enable("table").use(dollarmath_plugin).render(md)
    path = tmp_path_factory.mktemp("gallery") / "gallery.html"
    path.write_text(f"<!doctype html><meta charset=utf-8><body>{body}</body>", encoding="utf-8")
    return path


def test_gallery_page_escapes_labels(gallery_html):
    "The docs example: the gallery's Markdown passed labels and column names through raw (MyST renders raw HTML)."
    doc = gallery_html.read_text(encoding="utf-8")
    assert _live_markup(doc) == [] and "<script" not in doc, _live_markup(doc)
    assert "&lt;img src=x" in doc and "<math" not in doc.split("Worst class pairs")[-1]   # shown as text, no math


# ---- everything in Chromium ----------------------------------------------------------------------------------------

@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_nothing_runs_in_chromium(assessed, site, gallery_html, tmp_path):
    "The acceptance: each output opened in Chromium fires no dialog, leaves the canary unset, holds no live payload."
    notebook = tmp_path / "assessment.html"
    notebook.write_text(f"<!doctype html><meta charset=utf-8><body>{assessed._repr_html_()}</body>", encoding="utf-8")
    docs = [notebook, site / "index.html", site / "overview.html", *sorted((site / "datasets").glob("*.html")),
            gallery_html]
    live = """() => [...document.querySelectorAll('script')].filter(s => s.textContent.includes('__pwned')).length
                  + document.querySelectorAll('img').length
                  + [...document.querySelectorAll('[href]')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href'))).length
                  + [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length"""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for doc in docs:
            page.goto(doc.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("() => window.__pwned") is None, doc.name
            assert page.evaluate(live) == 0, doc.name
        browser.close()
    assert dialogs == []
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x" in index                                    # the hostile name is there, as text
