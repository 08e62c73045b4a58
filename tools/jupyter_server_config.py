"""clm_nb's Jupyter server configuration: every notebook of nbs/ is cleaned as Jupyter saves it (issue 49).

`make install` links this file into the venv's own Jupyter config folder (`.venv/etc/jupyter/`), so the README's
`.venv/bin/jupyter lab` reads it and no other Jupyter (nor ~/.jupyter) does. The hook is `pre_save_hook` of
`tools/clean_nbs.py` (nbdev's convention: `c.ContentsManager.pre_save_hook`, enabled by pyproject's
`jupyter_hooks = true`): nbdev-clean plus the project kernel's metadata, and the stored outputs of the cells whose
source did not change, so that running a notebook and saving it leaves `git status` clean. A notebook outside nbs/ is
left to nbdev's own hook, which changes nothing unless its project enables it.
"""
import importlib.util
from pathlib import Path

_path = Path(__file__).resolve().parent / "clean_nbs.py"          # resolve(): the link in the venv points here
if _path.exists():
    _spec = importlib.util.spec_from_file_location("clm_nb_clean_nbs", _path)
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    c.ContentsManager.pre_save_hook = _module.pre_save_hook       # noqa: F821 (`c` is the config Jupyter passes)
