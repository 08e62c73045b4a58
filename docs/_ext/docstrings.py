"""API reference: clm_nb's docstrings and docments comments, made readable by autodoc.

clm_nb writes docstrings as plain text with Markdown's inline marks (`code`, $math$) and documents parameters
nbdev's way, as a comment after each parameter (fastcore's docments). autodoc reads docstrings as reStructuredText,
where `|x|`, `*` or `name_` mean something else, and it does not see the comments. This hook, run on every
docstring autodoc collects:
1. turns `code` spans into RST literals and $...$ into the :math: role, and escapes RST's special characters
   everywhere else, so the text reads as written;
2. appends a `:param name: comment` field for each commented parameter (and `:returns:`), which Sphinx renders as
   the Parameters list next to the type hints, in place of the plain-text 'Parameters' (and generated 'Returns')
   section that `clm_nb.text.document_params` puts in the docstrings for help() (removed here);
3. shows the docstring's other numpydoc sections (an 'Examples' section, a 'Returns' written in the docstring,
   'Notes') under a rubric each, their doctest lines (`>>>`) as written.
"""
import re

_SPAN = re.compile(r"(`[^`]+`|\$[^$]+\$)")


def md_line_to_rst(line: str) -> str:
    "Docstring text: code spans -> ``literal``, $x$ -> :math:`x`, RST specials escaped elsewhere (spans may wrap)."
    out = []
    for i, part in enumerate(_SPAN.split(line)):
        if i % 2:                                                 # a code span or a formula
            body = part[1:-1]
            out.append(f"\\ ``{body}``\\ " if part[0] == "`" else f"\\ :math:`{body}`\\ ")
        else:
            out.append(re.sub(r"([\\*|`_<>\[\]])", r"\\\1", part))
    return "".join(out)


def docments_fields(obj) -> list[str]:
    "`:param name: comment` lines from the docments comments of `obj`'s signature."
    from fastcore.docments import docments
    try:
        docs = docments(obj, full=False)
    except Exception:                                             # builtins, numba dispatchers without source
        return []
    fields = [f":param {p}: {md_line_to_rst(d)}" for p, d in docs.items() if p != "return" and d]
    if docs.get("return"):
        fields.append(f":returns: {md_line_to_rst(docs['return'])}")
    return fields


def _body_to_rst(body: str) -> str:
    "A section's body: doctest blocks (paragraphs that start with `>>>`) as written, the rest as `md_line_to_rst`."
    blocks = body.split("\n\n")
    return "\n\n".join(b if b.lstrip().startswith(">>>") else md_line_to_rst(b) for b in blocks)


def sections_to_rst(doc: str, returns_field: bool) -> str:
    """The docstring in RST without the numpy-style 'Parameters' section that `clm_nb.text.document_params` puts there
    for help() and Jupyter's `?` (the `:param:` fields below say the same, and RST would read its underline as a
    section title), nor the 'Returns' it generates when `returns_field` (the `:returns:` field says it); every other
    section under a rubric."""
    from clm_nb.text import doc_sections
    head, sections = doc_sections(doc)
    out = [md_line_to_rst(head)]
    for header, body in sections:
        if header == "Parameters" or (header == "Returns" and returns_field):
            continue
        out += ["", f".. rubric:: {header}", "", _body_to_rst(body)]
    return "\n".join(out)


def process(app, what, name, obj, options, lines):
    fields = docments_fields(obj) if what in ("function", "method", "class") else []
    returns_field = any(f.startswith(":returns:") for f in fields)
    lines[:] = sections_to_rst("\n".join(lines), returns_field).split("\n")
    if fields:
        lines.extend(["", *fields])


def skip_foreign(app, what, name, obj, skip, options):
    """Leave out members a clm_nb class gets from elsewhere: scikit-learn generates `set_*_request` methods on every
    estimator subclass (e.g. `ShrinkageLDA`), with scikit-learn's own RST and sentinel defaults such as '$UNCHANGED$'."""
    if what == "class" and not getattr(obj, "__module__", "clm_nb").startswith("clm_nb"):
        return True
    return True if re.fullmatch(r"set_\w+_request", name) else None


def setup(app):
    app.connect("autodoc-process-docstring", process)
    app.connect("autodoc-skip-member", skip_foreign)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
