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


# --- Saving from Jupyter keeps the tree clean (issue 49, item 7) -----------------------------------------------------
# JupyterLab's Run All and autosave rewrote nbs/22_assessment.ipynb and the study notebook (execution counts, the
# kernel's cell metadata, new numbers in the stored outputs, progress-bar widgets): `make test`'s clean check failed
# and `git status` showed hundreds of lines. `make install` links tools/jupyter_server_config.py into the venv's
# Jupyter config; its pre-save hook (tools/clean_nbs.py) cleans the notebook and keeps the stored outputs of the
# cells whose source did not change.

def _load_tool(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"clm_nb_tool_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _widget_output():
    return nbformat.v4.new_output("display_data", {
        "application/vnd.jupyter.widget-view+json": {"model_id": "0f" * 16, "version_major": 2, "version_minor": 0},
        "text/plain": "assess:  40%|####      | 20/50"})


def test_pre_save_hook_keeps_stored_outputs_of_unchanged_cells(tmp_path, monkeypatch):
    """The hook on a notebook of nbs/ as JupyterLab sends it after a run: unchanged cells get the stored outputs
    back, an edited cell keeps its new output without the progress-bar widget, the metadata are cleaned."""
    clean_nbs = _load_tool("clean_nbs")
    name = "22_assessment.ipynb"
    stored = json.loads((ROOT / "nbs" / name).read_text(encoding="utf-8"))
    model_nb = nbformat.reads(json.dumps(stored), as_version=4)
    code = [c for c in model_nb.cells if c.cell_type == "code"]
    shown = next(c for c in code if c.outputs)                     # a display with a stored output
    for i, c in enumerate(code, 1):                                # what a run leaves behind
        c.execution_count = i
        c.metadata.update(trusted=True, execution={"iopub.status.idle": "2025-01-01T00:00:00Z"})
        c.outputs = [_widget_output(), nbformat.v4.new_output("execute_result", {"text/plain": f"new {i}"},
                                                               execution_count=i)]
    edited = code[2]
    edited.source += "\n1 + 1"
    model_nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    model = {"type": "notebook", "format": "json", "content": model_nb}

    class Manager:                                                 # what the hook reads of Jupyter's contents manager
        root_dir = str(ROOT)
    monkeypatch.delenv(clean_nbs.SAVE_OUTPUTS_ENV, raising=False)
    clean_nbs.pre_save_hook(model=model, path=f"nbs/{name}", contents_manager=Manager())
    saved = json.loads(nbformat.writes(nbformat.from_dict(model["content"])))
    by_id = {c["id"]: c for c in stored["cells"]}
    for cell in saved["cells"]:
        if cell["cell_type"] != "code": continue
        assert cell["execution_count"] is None and cell["metadata"] == by_id[cell["id"]]["metadata"]
        if cell["id"] == edited.id:
            assert [o["output_type"] for o in cell["outputs"]] == ["execute_result"], cell["outputs"]
        else:
            assert cell["outputs"] == by_id[cell["id"]]["outputs"], cell["id"]
    assert any(c["id"] == shown.id and c["outputs"] for c in saved["cells"])
    assert saved["metadata"] == stored["metadata"]


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def server_of_a_clone(tmp_path):
    """A clone of the repository's notebooks, pyproject, Makefile and tools, committed in a git repository, served by
    `jupyter lab` with token auth and the config `make jupyter-config` (a step of `make install`) links into a venv
    folder; yields (base url, token, clone, environment)."""
    clone = tmp_path / "clone"
    for name in ("nbs", "tools"):
        shutil.copytree(ROOT / name, clone / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    for name in ("pyproject.toml", "Makefile", ".gitignore"): shutil.copy(ROOT / name, clone / name)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "clone")
    venv = tmp_path / "venv"
    subprocess.run(["make", "--no-print-directory", "jupyter-config", f"VENV={venv}"], cwd=clone, check=True,
                   capture_output=True, timeout=60)
    config = venv / "etc" / "jupyter"
    assert (config / "jupyter_server_config.py").is_symlink()
    for d in ("data", "runtime"): (tmp_path / d).mkdir()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(tmp_path / "data"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    env.pop(_load_tool("clean_nbs").SAVE_OUTPUTS_ENV, None)
    token, port = os.urandom(12).hex(), _free_port()
    log = open(tmp_path / "lab.log", "w")
    srv = subprocess.Popen([JUPYTER, "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1", "--allow-root",
                            f"--IdentityProvider.token={token}"], env=env, cwd=clone, stdout=log,
                           stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                _api(url, token, "GET", "/api/status")
                break
            except OSError:
                if srv.poll() is not None or time.time() > deadline:
                    pytest.fail(f"jupyter lab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.3)
        yield url, token, clone, env
    finally:
        srv.terminate()
        try: srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
        log.close()


def _api(url, token, method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


def _execute(client, code, timeout=180):
    "Run `code` in the kernel; the outputs as JupyterLab stores them in the cell (nbformat outputs)."
    msg_id, outputs = client.execute(code), []
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id: continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle": break
        if kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append(nbformat.v4.output_from_msg(msg))
    reply = client.get_shell_msg(timeout=timeout)
    assert reply["content"]["status"] == "ok", [o.get("traceback") for o in outputs]
    return outputs, reply["content"]["execution_count"]


@needs_jupyter
def test_running_and_saving_in_jupyter_keeps_the_tree_clean(server_of_a_clone):
    """`jupyter lab` configured as `make install` configures it: a kernel session on nbs/22_assessment.ipynb and on the
    leaderboard study, cells run (a display, a progress-bar widget, new execution counts, the kernel's metadata) and
    each notebook saved through the contents API as JupyterLab saves it: `git status --porcelain nbs/` stays empty."""
    from jupyter_client import BlockingKernelClient
    url, token, clone, env = server_of_a_clone
    kernel = {"name": "clm_nb"}                      # the study joins the first notebook's kernel (JupyterLab allows it)
    for path, runs in [("nbs/22_assessment.ipynb", ["c346fdb8", "dcc919c7", "7ad0bcaf", "83225786"]),
                       ("nbs/studies/leaderboard.ipynb", None)]:
        model = _api(url, token, "GET", f"/api/contents/{path}?content=1&type=notebook")
        nb = nbformat.from_dict(model["content"])
        session = _api(url, token, "POST", "/api/sessions",
                       {"path": path, "type": "notebook", "name": "", "kernel": kernel})
        kernel_id = session["kernel"]["id"]
        kernel = {"id": kernel_id}
        client = BlockingKernelClient(connection_file=str(Path(env["JUPYTER_RUNTIME_DIR"]) / f"kernel-{kernel_id}.json"))
        client.load_connection_file()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)       # also waits until iopub is subscribed: no output is missed
            info = client.kernel_info(reply=True, timeout=120)["content"]
            code = [c for c in nb.cells if c.cell_type == "code"]
            todo = [c for c in code if c.id in runs] if runs else code[:2]
            assert len(todo) == (len(runs) if runs else 2)
            for cell in todo:
                if cell.id == "83225786":            # `assess` is defined by the cells in between: import it instead
                    _execute(client, "from clm_nb.assessment import assess")
                cell.outputs, cell.execution_count = _execute(client, cell.source)
                cell.metadata["execution"] = {"iopub.status.idle": "2025-01-01T00:00:00.000Z"}
            if runs:                                 # a bar drawn by a cell (it appears after 2 s)
                bar, _ = _execute(client, "import time\nfrom clm_nb.core import progress_bar\n"
                                          "for _ in progress_bar(range(3), True, 'assess'): time.sleep(0.8)")
                assert any(_is_widget(o) for o in bar), bar          # Jupyter shows the bar as a widget
                todo[-1].outputs = bar + todo[-1].outputs
        finally:
            client.stop_channels()
        assert any(c.outputs for c in todo) or not runs      # 22_assessment's cells showed a display and a bar
        nb.metadata["kernelspec"] = {"display_name": "clm_nb", "language": "python", "name": "clm_nb"}
        nb.metadata["language_info"] = info["language_info"]
        _api(url, token, "PUT", f"/api/contents/{path}", {"type": "notebook", "format": "json", "content": nb})
    status = _git(clone, "status", "--porcelain", "nbs/")
    assert status == "", status + _git(clone, "diff", "--stat")


def _is_widget(output):
    return "application/vnd.jupyter.widget-view+json" in output.get("data", {})
