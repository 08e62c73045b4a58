"""Build the documentation site: `make docs` -> _docs/ (static HTML, opens from file:// or any host, no network).

    python tools/build_docs.py [--out _docs] [--studies quick|results|none] [--jobs 2]

What it does, in order:
1. Collects the sources into `_docs_build/src/`: the pages of `docs/*.md` (and the executed notebook page
   `docs/any_distance.ipynb`, shown with its stored outputs); every notebook of `nbs/`, renamed after the
   module it exports (`nbs/06_internal.ipynb` -> `internal.html`) with nbdev's `#|` directives stripped, `#| hide`
   cells removed and an anchor `<a id="name">` before each exported definition (so `between.html#ch_btwn` is the
   derivation of `ch_btwn`); the measure reference generated from the registry (`measures.html#<name>`); one API page
   per module (`api/<module>.html`, autodoc, parameter docs from the docments comments); the real-data gallery
   (`gallery.html`: `clm_nb.assess` on datasets shipped by installable packages, tools/gallery.py, cached in
   `_docs_build/gallery/` by each CSV's sha256 and the package's version and code).
2. The studies' executed notebooks (`studies/<name>.html`): `--studies quick` (default) runs each study with the
   small parameters of `docs/studies_quick.json` (papermill; cached in `_docs_build/studies/` by a key of the study
   notebook, its parameters and the package's code); `--studies results` takes `results/<name>/<name>.ipynb` from
   `make study` where it exists (full runs) and runs the rest quick; `--studies none` leaves them out.
3. Runs Sphinx (MyST-NB renders the notebooks with their stored outputs; math becomes MathML at build time).
4. Builds the leaderboard report of the embedded default datasets into `<out>/leaderboard/`, linking back to the site.
"""
from __future__ import annotations

import argparse
import ast
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS, DOCS = ROOT / "nbs", ROOT / "docs"
BUILD = ROOT / "_docs_build"
PAGES = ["guide.md", "command_line.md", "any_distance.ipynb", "gallery.md", "studies.md",   # in the order of the menu
         "benchmarks.md"]
GENERATED = {"gallery.md"}                 # pages of PAGES written by the build (the others are docs/*.md)


def notebook_modules() -> dict[str, str]:
    "Map each numbered notebook's stem (`06_internal`, `16_prepare`) to the module it exports (`internal`)."
    out = {}
    for path in sorted(NBS.glob("[0-9][0-9]*_*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            m = re.search(r"^#\|\s*default_exp\s+(\S+)", "".join(cell["source"]), re.M)
            if m:
                out[path.stem] = m.group(1).removesuffix(".__init__")     # a package's page: cli, not cli.__init__
                break
    return out


def rewrite_links(text: str, modules: dict[str, str], studies: set[str], prefix: str = "") -> str:
    """Turn mentions of notebooks (`nbs/06_internal.ipynb`, `studies/x.ipynb`, in links or code spans) into links to
    their pages; `studies` names the executed studies the site has (a study left out stays a code span)."""

    def target(ref: str) -> str | None:
        ref = re.sub(r"^(\.\./)*(nbs/)?", "", ref)
        stem = ref.removesuffix(".ipynb")
        if stem in modules:
            return f"{prefix}{modules[stem]}.ipynb"
        if stem.startswith("studies/") and stem[8:] in studies:
            return f"{prefix}{stem}.ipynb"
        if stem == "index":
            return f"{prefix}notebooks.ipynb"
        return None

    def code_span(m):
        t = target(m.group(1))
        return f"[`{m.group(1)}`]({t})" if t else m.group(0)

    def link(m):
        t = target(m.group(2))
        return f"[{m.group(1)}]({t}{m.group(3) or ''})" if t else m.group(0)

    text = re.sub(r"(?<!\[)`((?:\.\./)*(?:nbs/)?(?:studies/)?[\w]+(?:\.ipynb)?)`(?!\])",
                  lambda m: code_span(m) if (".ipynb" in m.group(1) or re.match(r"(nbs/)?\d\d[a-z]?_", m.group(1))) else m.group(0),
                  text)
    return re.sub(r"\[([^\]]+)\]\(((?:\.\./)*(?:nbs/)?(?:studies/)?[\w]+\.ipynb)(#[^)]*)?\)", link, text)


def exported_names(source: str) -> list[str]:
    "Public functions, classes and CAPS constants an export cell defines (the anchors of its page)."
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return [n for n in names if not n.startswith("_")]


def _markdown(text: str) -> dict:
    "A markdown cell (with the id nbformat 4.5 requires, derived from its text)."
    return {"cell_type": "markdown", "id": hashlib.sha1(text.encode()).hexdigest()[:8], "metadata": {}, "source": text}


def prepare_notebook(nb: dict, modules: dict[str, str], studies: set[str], prefix: str = "") -> dict:
    "Strip nbdev's directives, drop hidden cells, anchor each exported definition, link notebook mentions."
    cells = []
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            cell["source"] = rewrite_links(src, modules, studies, prefix)
            cells.append(cell)
            continue
        if cell["cell_type"] != "code":
            continue
        directives = re.findall(r"^#\|\s*(\w+)", src, re.M)
        if "hide" in directives or "default_exp" in directives and not src.split("\n", 1)[1:]:
            continue
        code = "\n".join(line for line in src.splitlines() if not line.startswith("#|")).strip("\n")
        if not code:
            continue
        if {"export", "exports"} & set(directives):
            anchors = "".join(f'<a id="{n}"></a>' for n in exported_names(code))
            if anchors:
                cells.append(_markdown(anchors))
        cell["source"] = code
        cells.append(cell)
    nb["cells"] = cells
    return nb


def write_notebooks(src: Path, modules: dict[str, str], studies: set[str]) -> None:
    "The notebooks of nbs/, prepared, as `<module>.ipynb` (and the map of notebooks as `notebooks.ipynb`)."
    for stem, module in modules.items():
        nb = json.loads((NBS / f"{stem}.ipynb").read_text())
        (src / f"{module}.ipynb").write_text(json.dumps(prepare_notebook(nb, modules, studies)))
    nb = json.loads((NBS / "index.ipynb").read_text())
    (src / "notebooks.ipynb").write_text(json.dumps(prepare_notebook(nb, modules, studies)))


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def measure_reference() -> str:
    "The measure reference page, generated from the registry (one section per measure, id = its registry name)."
    import clm_nb
    m = clm_nb.measures()
    lines = ["# Measure reference", "",
             f"Every measure of the registry ({len(m)}), generated from `clm_nb.measures()` when the site is built: what "
             "it computes, which direction is better, its range, the transformations it is invariant to, its cost, its "
             "reference, and links to the notebook section that derives it and to its API entry. "
             "Which one to use for which question: see the [guide](guide.md).", "",
             "| measure | kind | better | range | optimum |", "|---|---|---|---|---|"]
    for r in m.itertuples():
        better = "higher" if r.direction == "max" else "lower"
        lines.append(f'| <a href="#{r.name}">{r.name}</a> | {r.kind} | {better} | '
                     f"[{r.lower:g}, {r.upper:g}] | {r.optimum} |")
    for kind in clm_nb.registry.KINDS:
        sub = m[m.kind == kind]
        if not len(sub):
            continue
        lines += ["", f"## {kind.capitalize()} measures", ""]
        for r in sub.itertuples():
            info = clm_nb.get_measure(r.name)
            func = info.func
            module = func.__module__.removeprefix("clm_nb.")
            qual = f"{func.__module__}.{func.__name__}"
            lines += [f"### {r.name}", "", r.summary or "", "",     # its heading's id is its name (myst_heading_anchors)
                      f"kind\n: {r.kind}", "",
                      f"better\n: {'higher' if r.direction == 'max' else 'lower'} (optimum over partitions: {r.optimum})",
                      "", f"range\n: [{r.lower:g}, {r.upper:g}]", "",
                      f"invariant to\n: {', '.join(r.invariances) or 'none claimed'}", "",
                      f"complexity\n: {r.complexity or 'not stated'}", "",
                      f"reference\n: {r.reference or 'this project'}", "",
                      # raw links: MyST checks only its own targets, these ids are written by prepare_notebook
                      # and by autodoc (the link checker of tests/test_docs.py checks them in the built site)
                      f'derivation\n: <a href="{module}.html#{func.__name__}">the {module} notebook</a> · API: '
                      f'<a href="api/{module}.html#{qual}"><code>{qual}</code></a>', ""]
    return "\n".join(lines)


def api_pages(src: Path) -> list[str]:
    "One API page per module (autodoc of its `__all__`), and the API index."
    import importlib
    (src / "api").mkdir(exist_ok=True)
    mods = []
    for module in sorted(set(notebook_modules().values())):
        importlib.import_module(f"clm_nb.{module}")            # fails here, naming the module, if it cannot import
        (src / "api" / f"{module}.md").write_text(            # automodule shows the module's docstring
            f"# clm_nb.{module}\n\nThe notebook with the derivations: "
            f"[{module}](../{module}.ipynb).\n\n```{{eval-rst}}\n.. automodule:: clm_nb.{module}\n   :members:\n```\n")
        mods.append(module)
    (src / "api" / "index.md").write_text(
        "# API reference\n\nEvery public function and class, by module, with its parameters (from the code's docments "
        "comments). The top level `clm_nb` re-exports the measures, `measures`, `score`, `get_measure`, `register`, "
        "`assess`, `Assessment`, `load_dataset` and `list_datasets`.\n\n```{toctree}\n:maxdepth: 1\n\n"
        + "\n".join(mods) + "\n```\n")
    return mods


def code_key() -> str:
    """A digest of the package's code and of the libraries its results depend on: executed studies are reused only
    while both are unchanged (the embedded datasets come from scikit-learn and the project's generators)."""
    from importlib.metadata import version
    h = hashlib.sha256(" ".join(f"{lib}=={version(lib)}" for lib in
                                ("numpy", "scipy", "scikit-learn", "pandas", "numba", "optuna", "kmedoids",
                                 "altair", "vl-convert-python")).encode())
    for p in sorted((ROOT / "clm_nb").rglob("*")):
        if p.is_file() and p.suffix in {".py", ".j2", ".css", ".js"}:
            h.update(p.relative_to(ROOT).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def quick_params() -> dict[str, dict]:
    "The small parameters of each study (docs/studies_quick.json), shared by the docs site and the smoke tests."
    return {k: v for k, v in json.loads((DOCS / "studies_quick.json").read_text()).items() if not k.startswith("_")}


def run_study(name: str, params: dict, key: str) -> tuple[str, Path, str]:
    """Execute one study with papermill on the embedded default datasets (cached by study notebook + parameters +
    code: a changed study, parameter or package module runs it again); returns (name, notebook, how)."""
    study = NBS / "studies" / f"{name}.ipynb"
    digest = hashlib.sha256(study.read_bytes() + json.dumps(params, sort_keys=True).encode() + key.encode()).hexdigest()
    (BUILD / "studies").mkdir(parents=True, exist_ok=True)
    with open(BUILD / "studies" / f"{name}.lock", "w") as lock:   # parallel pytest workers: one runs it, the other waits
        fcntl.flock(lock, fcntl.LOCK_EX)                           # and then finds it cached (released on close)
        return _run_study_locked(name, study, params, digest)


def _run_study_locked(name: str, study: Path, params: dict, digest: str) -> tuple[str, Path, str]:
    "`run_study`'s work, under its study's lock."
    out_dir = BUILD / "studies" / name
    executed, stamp = out_dir / f"{name}.ipynb", out_dir / "key.txt"
    if executed.exists() and stamp.exists() and stamp.read_text() == digest:
        return name, executed, "cached"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    t = time.perf_counter()
    cmd = [sys.executable, "-m", "papermill", str(study), str(executed), "-p", "out_dir", str(out_dir / "out"),
           "--cwd", str(ROOT), "--no-progress-bar", "-k", "python3"]   # the running venv's kernel
    for k, v in params.items():
        cmd += ["-y", json.dumps({k: v})]
    env = {k: v for k, v in os.environ.items() if k != "CLM_NB_DATA"}      # the embedded default, whatever the shell
    env["CLM_NB_PROGRESS"] = "text"     # text bars on stderr (left out below), never widgets that load JS from a CDN
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        raise SystemExit(f"study {name} failed while building the docs:\n{res.stderr[-3000:]}")
    stamp.write_text(digest)
    return name, executed, f"executed in {time.perf_counter() - t:.0f} s"


PROGRESS = re.compile(r"\d+%\||\d+it/s|s/it\]")


def readable_run(nb: dict, out_dir: Path) -> dict:
    """An executed study as a reader wants it: the machine's paths shortened (the output folder reads `out_dir`, the
    checkout `.`), and the stderr streams (progress bars, library warnings with site-packages paths) left out."""
    subs = [(str(out_dir / "out"), "out_dir"), (str(out_dir), "."), (str(ROOT), ".")]

    def clean(text):
        text = "".join(text) if isinstance(text, list) else text
        for a, b in subs:
            text = text.replace(a, b)
        return text
    for cell in nb["cells"]:
        cell["source"] = clean(cell["source"])
        outs = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                if o.get("name") == "stderr":
                    continue
                o["text"] = "".join(line for line in clean(o["text"]).splitlines(keepends=True)
                                    if not PROGRESS.search(line))
            for mime, value in o.get("data", {}).items():
                if mime.startswith("text/"):
                    o["data"][mime] = clean(value)
            outs.append(o)
        if "outputs" in cell:
            cell["outputs"] = outs
    return nb


def studies(src: Path, how: str, jobs: int) -> list[str]:
    "Put the executed studies into the site's sources; returns their names."
    if how == "none":
        return []
    quick = quick_params()
    names = sorted(p.stem for p in (NBS / "studies").glob("*.ipynb"))
    missing = set(names) - set(quick)
    if missing:
        raise SystemExit(f"docs/studies_quick.json has no parameters for {sorted(missing)}: add them")
    (src / "studies").mkdir(exist_ok=True)
    found = {n: ROOT / "results" / n / f"{n}.ipynb" for n in names} if how == "results" else {}
    found = {n: p for n, p in found.items() if p.exists()}
    key = code_key()
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        done = list(pool.map(lambda n: run_study(n, quick[n], key), [n for n in names if n not in found]))
    for n, p in found.items():
        done.append((n, p, f"from {p.relative_to(ROOT)}"))
    modules, have = notebook_modules(), {n for n, _, _ in done}
    for name, path, what in sorted(done):
        print(f"  study {name}: {what}", flush=True)
        nb = readable_run(prepare_notebook(json.loads(path.read_text()), modules, have, prefix="../"), path.parent)
        params = quick.get(name, {}) if "results" not in what else None
        note = ("This page shows the study executed by `make docs` with small parameters "
                f"(`{json.dumps(params)}`), so that it builds in minutes; `make study STUDY={name}` runs it at full "
                "size (see [Studies](../studies.md))." if params is not None else
                f"This page shows the study as executed by `make study STUDY={name}` ({what}).")
        nb["cells"].insert(1, _markdown(f":::{{note}}\n{note}\n:::"))
        (src / "studies" / f"{name}.ipynb").write_text(json.dumps(nb))
    return [n for n, _, _ in sorted(done)]


def index_page(study_names: list[str]) -> str:
    "The home page: docs/index.md and the site's menu (toctrees)."
    text = rewrite_links((DOCS / "index.md").read_text(), notebook_modules(), set(study_names))
    use = [p.removesuffix(".md").removesuffix(".ipynb") for p in PAGES if (DOCS / p).exists() or p in GENERATED]
    use.insert(min(2, len(use)), "measures")
    notebooks = "\n".join(["notebooks", *notebook_modules().values()])
    return (text + "\n\n```{toctree}\n:caption: Use\n:maxdepth: 1\n\n" + "\n".join(use) + "\n```\n"
            f"\n```{{toctree}}\n:caption: Notebooks (the source)\n:maxdepth: 1\n\n{notebooks}\n```\n"
            + (f"\n```{{toctree}}\n:caption: Executed studies\n:maxdepth: 1\n\n"
               + "\n".join(f"studies/{n}" for n in study_names) + "\n```\n" if study_names else "")
            + "\n```{toctree}\n:caption: Reference\n:maxdepth: 1\n\napi/index\n```\n")


def gallery_page(src: Path, modules: dict[str, str], studies: set[str]) -> None:
    """The real-data gallery (tools/gallery.py) as `gallery.md`; a dataset that fails to load or assess shows its
    error on the page (the build goes on)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import gallery
    page = gallery.build(BUILD / "gallery")
    (src / "gallery.md").write_text(rewrite_links(page.read_text(), modules, studies))


def leaderboard(out: Path) -> bool:
    "Copy the leaderboard study's report (embedded default, run with the studies) into `<out>/leaderboard/`."
    site = BUILD / "studies" / "leaderboard" / "out"
    if not (site / "index.html").exists():
        return False
    shutil.copytree(site, out / "leaderboard", ignore=shutil.ignore_patterns("store", "tasks", "gt_store"))
    return True


def build(out: Path, studies_how: str = "quick", jobs: int = 2) -> Path:
    t0 = time.perf_counter()
    src = BUILD / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    print(f"studies ({studies_how}) ...", flush=True)
    study_names = studies(src, studies_how, jobs)
    modules, have = notebook_modules(), set(study_names)
    for page in PAGES:
        if page.endswith(".ipynb") and (DOCS / page).exists():       # an executed page: shown with its outputs
            nb = prepare_notebook(json.loads((DOCS / page).read_text()), modules, have)
            (src / page).write_text(json.dumps(nb))
        elif (DOCS / page).exists():
            (src / page).write_text(rewrite_links((DOCS / page).read_text(), modules, have))
    write_notebooks(src, modules, have)
    print(f"gallery ({time.perf_counter() - t0:.0f} s) ...", flush=True)
    gallery_page(src, modules, have)
    (src / "measures.md").write_text(measure_reference())
    api_pages(src)
    (src / "index.md").write_text(index_page(study_names))
    print(f"sphinx ({time.perf_counter() - t0:.0f} s) ...", flush=True)
    html = BUILD / "html"                  # built inside _docs_build/ (MyST-NB keeps its jupyter_execute/ beside it)
    shutil.rmtree(html, ignore_errors=True)
    res = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(DOCS), "-j", str(jobs),
                          "-d", str(BUILD / "doctrees"), str(src), str(html)], cwd=ROOT)
    if res.returncode:
        raise SystemExit("sphinx-build failed (messages above)")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(html, out)
    if not leaderboard(out):
        print("no leaderboard in the site (it comes with the studies: --studies quick or results)")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"site written to {out}/ in {time.perf_counter() - t0:.0f} s: "
          f"{sum(1 for _ in out.rglob('*.html'))} pages, {size / 2**20:.1f} MiB; open {out / 'index.html'}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "_docs", help="output folder (default _docs/)")
    ap.add_argument("--studies", choices=["quick", "results", "none"], default="quick",
                    help="executed studies: quick runs (default), full runs from results/, or none")
    ap.add_argument("--jobs", type=int, default=2, help="parallel Sphinx workers and study runs (default 2)")
    a = ap.parse_args()
    build(a.out.resolve(), a.studies, a.jobs)
