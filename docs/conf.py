"""Sphinx configuration of the clm_nb documentation site (built by `make docs`, i.e. tools/build_docs.py).

Why Sphinx + MyST-NB: both are maintained, pip-installable and render Jupyter notebooks with their stored outputs
(nbdev's own site needs Quarto, which cannot be installed offline). Math is converted to MathML while the site is
built (docs/_ext/mathml.py, latex2mathml), so pages need no script and no CDN: they work from file:// or any host.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "_ext"), str(HERE.parent)]

import clm_nb  # noqa: E402

project = "clm_nb"
author = "clm_nb developers"
release = version = clm_nb.__version__
copyright = "clm_nb developers, Apache-2.0"

extensions = ["myst_nb", "sphinx.ext.autodoc", "mathml", "docstrings"]
html_math_renderer = "mathml"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "html_image"]
myst_dmath_double_inline = True
myst_heading_anchors = 3
nb_execution_mode = "off"                 # notebooks show their stored outputs; studies are executed beforehand
nb_merge_streams = True
nb_render_markdown_format = "myst"
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None),
                              ("html", "application/javascript", None)]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header", "misc.highlighting_failure"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}

html_theme = "furo"
html_title = f"clm_nb {release}"
html_static_path = [str(HERE / "_static")]
html_css_files = ["clm_nb.css"]
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {"navigation_with_keys": True}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
