"""The documentation site (`make docs` = tools/build_docs.py): it builds, every internal link resolves, every page
loads from file:// in headless Chromium with no failed request, and formulas are typeset as MathML (no raw `$...$`).

The site is built once per session into a temporary folder (executed studies are cached in `_docs_build/`), or
taken from `CLM_NB_DOCS_SITE` when that names an already-built site (e.g. `_docs` after `make docs`)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clm_nb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from check_links import broken_links  # noqa: E402

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    "The built site (index.html's folder)."
    given = os.environ.get("CLM_NB_DOCS_SITE")
    if given:
        assert (Path(given) / "index.html").exists(), f"CLM_NB_DOCS_SITE={given} holds no index.html"
        return Path(given).resolve()
    out = tmp_path_factory.mktemp("docs") / "site"
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "build_docs.py"), "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-4000:]
    return out


def _notebook_pages() -> dict[str, Path]:
    "Page name -> source notebook, for the notebooks of nbs/ (the studies are under studies/)."
    sys.path.insert(0, str(ROOT / "tools"))
    from build_docs import notebook_modules
    pages = {f"{m}.html": ROOT / "nbs" / f"{stem}.ipynb" for stem, m in notebook_modules().items()}
    pages.update({f"studies/{p.stem}.html": p for p in (ROOT / "nbs" / "studies").glob("*.ipynb")})
    return pages


def test_every_page_exists(site):
    missing = [p for p in ["index.html", "measures.html", "guide.html", "command_line.html", "any_distance.html", "gallery.html", "cli.html", "studies.html", "api/index.html",
                           "notebooks.html", "leaderboard/index.html", *_notebook_pages()] if not (site / p).exists()]
    assert not missing, f"pages missing from the site: {missing}"
    for module in {m.removesuffix(".html") for m in _notebook_pages() if "/" not in m}:
        assert (site / "api" / f"{module}.html").exists(), module


def test_every_internal_link_resolves_and_nothing_loads_from_the_network(site):
    problems = broken_links(site)
    assert not problems, f"{len(problems)} broken links:\n" + "\n".join(problems[:40])


def test_measure_reference_has_every_registered_measure_with_its_derivation_and_api(site):
    html = (site / "measures.html").read_text()
    for name, func in ((r.name, clm_nb.get_measure(r.name).func) for r in clm_nb.measures().itertuples()):
        assert f'id="{name}"' in html, name
        module = func.__module__.removeprefix("clm_nb.")
        assert f'href="{module}.html#{func.__name__}"' in html, name            # the notebook section deriving it
        assert f'href="api/{module}.html#{func.__module__}.{func.__name__}"' in html, name


def test_api_reference_lists_parameters_from_the_docments_comments(site):
    html = (site / "api" / "internal.html").read_text()
    entry = html[html.index('id="clm_nb.internal.silhouette"'):][:6000]
    assert "Parameters" in entry
    for param in ["X", "labels", "metric", "noise"]:
        assert f"<strong>{param}</strong>" in entry, param


def test_links_checker_catches_a_broken_link(tmp_path):
    "Fault injection: the checker is not vacuous."
    (tmp_path / "a.html").write_text('<a href="b.html#x">b</a><a href="c.html">c</a><img src="https://cdn/x.png">'
                                     '<a id="here" href="#here">self</a>')
    (tmp_path / "b.html").write_text('<p id="y">no x here</p>')
    found = broken_links(tmp_path)
    assert len(found) == 3 and any("no id 'x'" in f for f in found) and any("missing file c.html" in f for f in found)
    assert any("from the network" in f for f in found)


RAW_MATH = re.compile(r"\$[^$\s][^$\n]{0,200}?\$")
TEXT_WITHOUT_CODE = """() => { const b = document.body.cloneNode(true);
    b.querySelectorAll('pre, code, .highlight, math, script, style, .cell_output').forEach(e => e.remove());
    return b.innerText; }"""


def _has_math(nb: Path) -> bool:
    cells = json.loads(nb.read_text())["cells"]
    return any(c["cell_type"] == "markdown" and RAW_MATH.search(re.sub(r"`[^`]*`", "", "".join(c["source"])))
               for c in cells)


@NEEDS_BROWSER[0]
@NEEDS_BROWSER[1]
def test_pages_load_offline_in_chromium_with_math_typeset(site):
    everything = sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if "_static" not in p.parts)
    boards = [p for p in everything if p.startswith("leaderboard/datasets/")]
    pages = [p for p in everything if p not in boards] + boards[:2]       # two dataset pages stand for all of them
    failures = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        failed = []
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.on("pageerror", lambda e: failed.append(f"page error: {e}"))
        for name in pages:
            failed.clear()
            page.goto((site / name).as_uri(), wait_until="load")
            if failed:
                failures.append(f"{name}: failed requests {failed[:5]}")
            text = page.evaluate(TEXT_WITHOUT_CODE)
            raw = RAW_MATH.findall(text)
            if raw:
                failures.append(f"{name}: raw LaTeX left {raw[:3]}")
            source = _notebook_pages().get(name)
            if source is not None and _has_math(source) or name == "measures.html":
                n, width = page.evaluate("""() => { const m = [...document.querySelectorAll('math')];
                    return [m.length, m.reduce((w, e) => w + e.getBoundingClientRect().width, 0)]; }""")
                if not n or width <= 0:
                    failures.append(f"{name}: formulas not typeset ({n} math elements, total width {width})")
            if page.query_selector("code.math-error"):
                failures.append(f"{name}: a formula MathML could not convert (code.math-error)")
        ARTIFACTS.mkdir(exist_ok=True)
        for name, shot in [("measures.html#ch_btwn", "docs_measures.png"), ("between.html", "docs_between.png"),
                           ("api/internal.html", "docs_api_internal.png")]:
            page.goto((site / name.split("#")[0]).as_uri() + ("#" + name.split("#")[1] if "#" in name else ""))
            page.screenshot(path=str(ARTIFACTS / shot))
        browser.close()
    assert not failures, "\n".join(failures)


def _cli_commands(cmd=None, path=()):
    "(path, command) of `clm-nb` and of every command and subcommand under it."
    import click
    from clm_nb.cli import cli
    cmd = cmd or cli
    yield list(path), cmd
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _cli_commands(sub, (*path, name))


def test_command_line_page_names_every_option_of_every_command():
    """docs/command_line.md names each option of each `clm-nb` command in that command's section (`## \\`clm-nb
    NAME\\``; `clm-nb`'s own before the first section). Read from the click objects, so a new option or command is
    covered without editing this test (issue 37: --sep and --decimal were missing)."""
    import click
    text = (ROOT / "docs" / "command_line.md").read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    sections = {"": parts[0]}
    for part in parts[1:]:
        m = re.match(r"`clm-nb ([\w -]+?)`", part)
        if m:
            sections[m.group(1)] = part
    problems = []
    for path, cmd in _cli_commands():
        opts = [o for p in cmd.params if isinstance(p, click.Option) and not p.hidden
                for o in (*p.opts, *p.secondary_opts) if o not in ("-h", "--help")]
        name = " ".join(path)
        if not opts:
            continue
        if name not in sections:
            problems.append(f"no section '## `clm-nb {name}`' for its options {opts}")
            continue
        missing = [o for o in opts if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", sections[name])]
        if missing:
            problems.append(f"clm-nb {name}: {missing} not in its section")
    assert not problems, "docs/command_line.md: " + "; ".join(problems) + \
        " (python tools/cli_help_blocks.py refreshes the --help blocks)"


def test_command_line_page_help_blocks_are_current():
    "Every `$ clm-nb ... --help` block of docs/command_line.md is what the command prints today."
    from cli_help_blocks import refreshed
    _, changed = refreshed((ROOT / "docs" / "command_line.md").read_text(encoding="utf-8"))
    assert not changed, f"out of date: {changed}; run python tools/cli_help_blocks.py"
