"""A Sphinx math renderer that writes MathML while the site is built.

Sphinx's HTML builders hand every `math` (inline) and `math_block` (display) node to the renderer named by
`html_math_renderer`. This one converts the node's LaTeX with latex2mathml, the converter the report uses too, so
the browser typesets the formula natively (MathML Core, in Chromium, Firefox and Safari): no script, no CDN, no
network. A formula latex2mathml cannot read is shown as its LaTeX source in a `<code class="math-error">` and the
build warns, so a broken formula is visible instead of silently missing.
"""
from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)


def to_mathml(latex: str, display: bool, node=None) -> str:
    from latex2mathml.converter import convert
    try:
        return convert(latex.strip(), display="block" if display else "inline")
    except Exception as e:                                      # latex2mathml raises its own error types
        logger.warning(f"formula not converted to MathML ({type(e).__name__}: {e}): {latex!r}", location=node)
        from html import escape
        return f'<code class="math-error">{escape(latex)}</code>'


def visit_math(self, node):
    self.body.append(f'<span class="math">{to_mathml(node.astext(), False, node)}</span>')
    raise nodes.SkipNode


def visit_math_block(self, node):
    if node.get("label"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>' if node.get("number") else "")
    self.body.append(f'<div class="math">{to_mathml(node.astext(), True, node)}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
