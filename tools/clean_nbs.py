"""nbdev-clean, then the notebook metadata JupyterLab itself writes, so that a notebook opens unmodified (issue 21).

    python tools/clean_nbs.py [path ...]             # default: nbs/ (recursive, as nbdev-clean)
    python tools/clean_nbs.py --metadata-only f.ipynb # only the kernel metadata (e.g. an executed study notebook)

JupyterLab marks a notebook modified ("dirty") as soon as it opens when the notebook's metadata differ from what it
sets itself: it adds `language_info: {"name": ""}` when the key is missing, and once the kernel has started it writes
the kernel's `kernelspec` (ipykernel's display name is "Python 3 (ipykernel)") and the kernel's `language_info`
(name, version, mimetype, codemirror_mode, ...). nbdev-clean drops `language_info` unless pyproject's
`allowed_metadata_keys` keeps it, and always sets `kernelspec.display_name` to the kernelspec's name ("python3"),
which no nbdev setting changes. The notebooks therefore run on the project's kernel `clm_nb` (installed into the
venv by `make install`), whose display name equals its name, so plain nbdev-clean leaves it unchanged; this script
runs nbdev-clean and then writes both keys as that kernel reports them. An existing `language_info.version` is kept, so the result does not depend on the Python that runs
the script (`make test` gives the same files on every machine); only a kernel on another Python version still
marks a notebook modified (by the version alone).

Jupyter runs the same cleaning on every save (issue 49): `pre_save_hook` is the project's pre-save hook, nbdev's
convention (`nbdev.clean.clean_jupyter`, enabled by `jupyter_hooks = true` in pyproject's `[tool.nbdev]`), set by
`tools/jupyter_server_config.py`, which `make install` links into the venv's own Jupyter config (never ~/.jupyter).
For a notebook of `nbs/` it also keeps the stored outputs: a cell whose source is unchanged is saved with the outputs
the file already holds, so running a notebook (Run All, a progress bar, a new number) and saving it leaves the file
as it was; an edited or new cell is saved with its new outputs, without progress-bar widgets (their state is not
saved: they would show as "Loading widget..."). Start Jupyter with `CLM_NB_SAVE_OUTPUTS=1` to store every cell's new
outputs on purpose. Notebooks of other projects get nbdev's own hook, which does nothing unless their settings enable
it.
"""
import argparse, copy, functools, json, os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kernel_metadata(name: str = "clm_nb") -> tuple[dict, dict]:
    "The `kernelspec` and `language_info` JupyterLab writes into a notebook once kernel `name` has started."
    return copy.deepcopy(_kernel_metadata(name))


@functools.lru_cache
def _kernel_metadata(name):
    from jupyter_client.kernelspec import KernelSpecManager
    from ipykernel.ipkernel import IPythonKernel
    spec = KernelSpecManager().get_kernel_spec(name)
    kernelspec = {"display_name": spec.display_name, "language": spec.language, "name": name}
    return kernelspec, IPythonKernel.language_info                   # what the kernel's kernel_info reply carries


def set_kernel_metadata(nb: dict, name: str | None = None, keep_version: bool = True) -> dict:
    "Set `nb`'s `kernelspec` and `language_info` to those of the project's kernel (`clm_nb`), in place."
    meta = nb.setdefault("metadata", {})
    kernelspec, language_info = kernel_metadata(name or "clm_nb")
    old = meta.get("language_info") or {}
    if keep_version and old.get("version"): language_info["version"] = old["version"]
    meta["kernelspec"], meta["language_info"] = kernelspec, language_info
    return nb


def _notebooks(path: Path):
    from fastcore.xtras import globtastic
    if path.is_file(): return [path]
    return [Path(f) for f in globtastic(path, file_glob="*.ipynb", skip_folder_re="^[_.]")]


def _settings(root: Path = ROOT):
    "The project's nbdev settings (pyproject's `[tool.nbdev]`), read from `root` wherever the process runs."
    from nbdev.config import get_config
    return get_config(path=root)


def clean_notebook(nb: dict, metadata_only: bool = False, stored: dict | None = None, root: Path = ROOT) -> dict:
    """`nb` (a notebook dict) cleaned in place as nbdev-clean cleans it with the project's settings (unless
    `metadata_only`), then with the project kernel's metadata; `language_info.version` is taken from `stored` (the
    file's notebook) when given, else kept from `nb`."""
    if not metadata_only:
        from nbdev.clean import clean_nb
        cfg = _settings(root)
        clean_nb(nb, cfg.clear_all, cfg.get("allowed_metadata_keys") or [], cfg.get("allowed_cell_metadata_keys") or [],
                 cfg.clean_ids, cfg.get("allowed_out_metadata_keys") or [])
    if stored is not None and (stored.get("metadata", {}).get("language_info") or {}).get("version"):
        nb.setdefault("metadata", {}).setdefault("language_info", {})["version"] = \
            stored["metadata"]["language_info"]["version"]
    return set_kernel_metadata(nb)


def clean(paths=None, metadata_only: bool = False) -> list[Path]:
    "nbdev-clean each path (file or folder; default nbs/), then set the kernel metadata; the files that step changed."
    from fastcore.nbio import nb2str
    paths = [Path(p).resolve() for p in (paths or [ROOT / "nbs"])]
    changed = []
    for path in paths:
        for f in _notebooks(path):
            text = f.read_text(encoding="utf-8")
            new = nb2str(clean_notebook(json.loads(text), metadata_only))    # nbdev's own format: sorted keys, indent 1
            if new != text:
                f.write_text(new, encoding="utf-8")
                changed.append(f)
    return changed


SAVE_OUTPUTS_ENV = "CLM_NB_SAVE_OUTPUTS"   # '1': a save from Jupyter stores every cell's new outputs


def _source(cell) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def _is_widget(output) -> bool:
    "A widget view (a tqdm bar in Jupyter): its state is not saved, so the saved view shows nothing useful."
    return "application/vnd.jupyter.widget-view+json" in (output.get("data") or {})


def keep_stored_outputs(nb: dict, stored: dict | None, keep: bool = True) -> dict:
    """Each code cell of `nb` whose id and source are those of a cell of `stored` (the notebook on disk) gets that
    cell's outputs back (when `keep`); the others lose their widget views. `nb`, in place."""
    old = {c.get("id"): c for c in (stored or {}).get("cells", []) if c.get("cell_type") == "code"}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code": continue
        before = old.get(cell.get("id"))
        if keep and before is not None and _source(before) == _source(cell):
            cell["outputs"] = copy.deepcopy(before.get("outputs", []))
        else:
            cell["outputs"] = [o for o in cell.get("outputs", []) if not _is_widget(o)]
    nb.get("metadata", {}).pop("widgets", None)          # the widgets' saved state: no view is left to show it
    return nb


def pre_save_hook(model, path, contents_manager=None, **kwargs):
    """Jupyter's pre-save hook for the project (see the module's docstring): a notebook of the project's `nbs/` is
    cleaned as `clean` cleans it and keeps the stored outputs of its unchanged cells; any other notebook goes to
    nbdev's own hook (`nbdev.clean.clean_jupyter`)."""
    if model.get("type") != "notebook" or (model.get("content") or {}).get("nbformat") != 4: return
    root = Path(getattr(contents_manager, "root_dir", "") or os.getcwd()).expanduser()
    os_path = (root / str(path).strip("/")).resolve()
    # the project the notebook belongs to (its nearest pyproject.toml), not the one this file came from: a server may
    # read this hook through another checkout's venv (CI's fresh clone serving a copy, a second worktree)
    project = next((p for p in os_path.parents if (p / "pyproject.toml").is_file()), None)
    cfg = _settings(project) if project is not None else None
    ours = cfg is not None and cfg.get("lib_name") == "clm_nb" and cfg.jupyter_hooks   # another project: nbdev's hook
    if not (ours and os_path.is_relative_to(Path(cfg.config_path) / cfg.nbs_path)):
        from nbdev.clean import clean_jupyter
        return clean_jupyter(path=str(os_path), model=model, **kwargs)
    try: stored = json.loads(os_path.read_text(encoding="utf-8"))
    except (OSError, ValueError): stored = None          # a new file, or one that is not JSON: nothing to keep
    nb = model["content"]
    clean_notebook(nb, stored=stored, root=project)
    keep_stored_outputs(nb, stored, keep=os.environ.get(SAVE_OUTPUTS_ENV, "").strip() != "1")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="notebooks or folders (default: nbs/)")
    ap.add_argument("--metadata-only", action="store_true", help="skip nbdev-clean; only set the kernel metadata")
    args = ap.parse_args()
    clean(args.paths, args.metadata_only)
