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


def clean(paths=None, metadata_only: bool = False) -> list[Path]:
    "nbdev-clean each path (file or folder; default nbs/), then set the kernel metadata; the files that step changed."
    from fastcore.nbio import nb2str
    from nbdev.clean import nbdev_clean
    paths = [Path(p).resolve() for p in (paths or [ROOT / "nbs"])]
    changed, cwd = [], os.getcwd()
    for path in paths:
        if not metadata_only:
            os.chdir(ROOT)                                  # nbdev reads its settings from the project's pyproject.toml
            try: nbdev_clean.__wrapped__(str(path))
            finally: os.chdir(cwd)
        for f in _notebooks(path):
            text = f.read_text(encoding="utf-8")
            new = nb2str(set_kernel_metadata(json.loads(text)))    # nbdev's own format: sorted keys, indent 1
            if new != text:
                f.write_text(new, encoding="utf-8")
                changed.append(f)
    return changed


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="notebooks or folders (default: nbs/)")
    ap.add_argument("--metadata-only", action="store_true", help="skip nbdev-clean; only set the kernel metadata")
    args = ap.parse_args()
    clean(args.paths, args.metadata_only)
