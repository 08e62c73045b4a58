"""The notebooks in JupyterLab (issue 21): every nbs/*.ipynb opens without being marked modified, and an executed
notebook signed as `make study` signs it (`jupyter trust`) is trusted, so JupyterLab renders its SVG charts.

One JupyterLab server on a temporary copy of nbs/, one headless Chromium (Playwright), all notebooks opened in one
page with their kernels started: JupyterLab marks a notebook modified when its stored `kernelspec` or
`language_info` differ from what the started kernel reports, which `tools/clean_nbs.py` prevents. Skipped, saying
why, when Chromium, Playwright or JupyterLab is missing."""
import json, os, platform, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from browser import ARGS, CHROMIUM, NEEDS_BROWSER, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
JUPYTER = shutil.which("jupyter", path=str(BIN)) or shutil.which("jupyter")
NOTEBOOKS = sorted(p.name for p in (ROOT / "nbs").glob("*.ipynb"))

try:
    import jupyterlab                                            # noqa: F401
except ImportError:                                              # pragma: no cover - the dev extra installs it
    jupyterlab = None

needs_jupyter = pytest.mark.skipif(JUPYTER is None, reason="jupyter not found: pip install -e '.[dev]'")
needs_lab = [
    *NEEDS_BROWSER,
    pytest.mark.skipif(jupyterlab is None or JUPYTER is None,
                       reason="jupyterlab not installed: pip install -e '.[dev]'"),
]


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory):
    "Private Jupyter config, data (notebook signatures) and runtime folders, so no user setting or secret is read."
    tmp = tmp_path_factory.mktemp("jupyter")
    for d in ("config", "data", "runtime"): (tmp / d).mkdir()
    return dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_DATA_DIR=str(tmp / "data"),
                JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))


def _trust(path, env):
    "Sign `path` as `make study` does."
    subprocess.run([JUPYTER, "trust", str(path)], env=env, check=True, capture_output=True, timeout=60)


def _executed_chart_notebook(path):
    "A small notebook as papermill writes a study: a code cell whose output is an SVG chart (vl-convert) and its repr."
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
           '<rect width="40" height="20" fill="teal"/></svg>')
    kernelspec = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": kernelspec})
    nb.cells = [nbformat.v4.new_code_cell("chart", execution_count=1, outputs=[nbformat.v4.new_output(
        "execute_result", {"image/svg+xml": svg, "text/plain": "alt.Chart(...)"}, execution_count=1)])]
    nbformat.write(nb, path)
    return path


def _read(path):
    return nbformat.read(path, as_version=4)


def _notary(env):
    "A notary with the test's private secret and signature database."
    data = Path(env["JUPYTER_DATA_DIR"])
    return NotebookNotary(data_dir=str(data), db_file=str(data / "nbsignatures.db"),
                          secret_file=str(data / "notebook_secret"))


@needs_jupyter
def test_jupyter_trust_signs_an_executed_notebook(tmp_path, jupyter_env):
    nb_path = _executed_chart_notebook(tmp_path / "study.ipynb")
    notary = _notary(jupyter_env)
    assert not notary.check_signature(_read(nb_path))
    _trust(nb_path, jupyter_env)
    assert notary.check_signature(_read(nb_path))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, jupyter_env):
    """JupyterLab serving a copy of nbs/*.ipynb, plus `signing/` with an executed chart notebook signed by
    `jupyter trust` and the same notebook unsigned; yields its base URL and the served folder."""
    root = tmp_path_factory.mktemp("lab")
    for name in NOTEBOOKS: shutil.copy(ROOT / "nbs" / name, root / name)
    (root / "signing").mkdir()
    _executed_chart_notebook(root / "signing" / "unsigned.ipynb")
    _trust(_executed_chart_notebook(root / "signing" / "signed.ipynb"), jupyter_env)
    port = _free_port()
    log = open(root.parent / "lab.log", "w")
    srv = subprocess.Popen([JUPYTER, "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                            "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
                            f"--ServerApp.root_dir={root}",
                            "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True"],
                           env=jupyter_env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if srv.poll() is not None or time.time() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(root.parent / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.3)
        yield url, root
    finally:
        srv.terminate()                                          # the server shuts its kernels down
        try: srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    url, _ = lab
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        p = browser.new_page(viewport={"width": 1400, "height": 900})
        p.goto(f"{url}/lab?reset", timeout=90_000)
        p.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=90_000)
        p.evaluate("() => window.jupyterapp.restored")
        yield p
        browser.close()


# Opens every path as a notebook, waits until each kernel has started and its info (language_info) and spec
# (kernelspec) have reached the notebook, lets JupyterLab settle, and returns per path whether the document is
# dirty, whether its tab carries `jp-mod-dirty`, and the notebook metadata JupyterLab now holds.
OPEN_ALL = """async (paths) => {
  const app = window.jupyterapp;
  const widgets = [];
  for (const path of paths) widgets.push(await app.commands.execute('docmanager:open', {path, factory: 'Notebook'}));
  for (const w of widgets) {
    await w.context.ready;
    await w.sessionContext.ready;
    const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
    if (kernel) { await kernel.info; await kernel.spec; }
  }
  await new Promise(r => setTimeout(r, 3000));
  return widgets.map(w => ({
    path: w.context.path, dirty: w.context.model.dirty,
    tab: [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].some(t => t.title.includes(w.context.path) ||
          t.textContent.trim() === w.title.label),
    kernel: !!(w.sessionContext.session && w.sessionContext.session.kernel),
    metadata: w.context.model.toJSON().metadata}));
}"""


def _needs_lab(test):
    for mark in needs_lab: test = mark(test)
    return test


def _only_python_version(diff):
    """True when the kernel differs from the stored metadata by its Python version alone (a machine whose Python is not
    the one the notebooks were cleaned with): clean on the project's Python, and not something cleaning can fix."""
    if set(diff) != {"language_info"}: return False
    stored, now = diff["language_info"]
    return (bool(stored) and stored.get("version") != platform.python_version()
            and {**stored, "version": now.get("version")} == now)


@_needs_lab
def test_every_notebook_opens_unmodified(lab, page):
    states = page.evaluate(OPEN_ALL, NOTEBOOKS)
    assert [s["path"] for s in states] == NOTEBOOKS
    assert all(s["kernel"] for s in states), [s["path"] for s in states if not s["kernel"]]
    bad = {}
    for s in states:
        if s["dirty"] or s["tab"]:
            stored = json.loads((lab[1] / s["path"]).read_text(encoding="utf-8"))["metadata"]
            diff = {k: (stored.get(k), v) for k, v in s["metadata"].items() if stored.get(k) != v}
            if _only_python_version(diff): continue
            bad[s["path"]] = diff or "no metadata difference"
    assert not bad, ("marked modified on opening in JupyterLab (stored metadata, what JupyterLab set); "
                     f"run `.venv/bin/python tools/clean_nbs.py`: {bad}")


@_needs_lab
def test_signed_notebook_renders_its_chart(page):
    "The signed notebook shows its SVG; the unsigned one shows only the text repr (the issue's alt.Chart(...) text)."
    shown = {}
    for name in ("signed", "unsigned"):
        shown[name] = page.evaluate("""async (path) => {
          const w = await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
          await w.context.ready; await new Promise(r => setTimeout(r, 1500));
          return {svg: w.node.querySelectorAll('.jp-RenderedSVG img').length,
                  text: w.node.querySelector('.jp-OutputArea-output').textContent.trim()};
        }""", f"signing/{name}.ipynb")
    assert shown["signed"]["svg"] == 1, shown
    assert shown["unsigned"]["svg"] == 0 and "alt.Chart(...)" in shown["unsigned"]["text"], shown
