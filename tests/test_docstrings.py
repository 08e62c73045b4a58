"""Docstrings that stand alone in `help()` (issue 50): the entry points read as scikit-learn's numpydoc docstrings (a
summary line, a description, Parameters, Returns and Examples, in that order), their examples run, and no docstring or
parameter comment points at text that `help()` cannot show ("see the prose", "see below", "see above")."""
import doctest
import importlib
import inspect
import pkgutil
import pydoc
import re

import pytest

import clm_nb
from clm_nb.text import doc_sections, param_comments

ENTRY_POINTS = {"assessment": ["assess"], "registry": ["score", "measures", "get_measure"],
                "bundle": ["load_dataset", "list_datasets"], "leaderboard": ["leaderboard"], "advice": ["which_index"],
                "representations": ["compare_representations"], "repair": ["suggest_repairs"]}
CASES = [(module, name) for module, names in ENTRY_POINTS.items() for name in names]
ELSEWHERE = re.compile(r"see (the )?(prose|below|above)|the prose (says|above|below)|as the prose", re.I)
SHIMS = {"all", "datasets", "verdict"}      # the star-import face and the deprecated modules: nothing defined there


def _entry(module: str, name: str):
    mod = importlib.import_module(f"clm_nb.{module}")
    return mod, getattr(mod, name)


def _params(f) -> list:
    "(name as the Parameters section writes it, name) of each parameter of `f`."
    star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [(star.get(p.kind, "") + p.name, p.name) for p in inspect.signature(f).parameters.values()
            if p.name not in ("self", "cls")]


@pytest.mark.parametrize("module,name", CASES)
def test_entry_point_reads_as_numpydoc(module, name):
    mod, f = _entry(module, name)
    shown = pydoc.render_doc(f, renderer=pydoc.plaintext)            # what help() prints
    doc = inspect.getdoc(f)
    for line in doc.splitlines():                                    # help() shows the docstring whole
        assert line.strip() in shown
    head, sections = doc_sections(doc)
    summary, _, description = head.partition("\n\n")
    assert summary and "\n" not in summary, f"{name}: the summary is one line"
    assert description.strip(), f"{name}: a short description after the summary line"
    names = [s for s, _ in sections]
    assert names == ["Parameters", "Returns", "Examples"], f"{name}: sections {names}"
    body = dict(sections)
    for written, p in _params(f):                                    # every parameter, with what it is
        m = re.search(rf"^{re.escape(written)}( : .*)?\n    \S", body["Parameters"], re.M)
        assert m, f"{name}: parameter {p} is not described in Parameters"
    returns = body["Returns"].splitlines()
    assert len(returns) >= 2 and returns[0].strip() and returns[1].startswith("    "), f"{name}: Returns is a type and what it is"
    assert ">>> " in body["Examples"], f"{name}: Examples has a doctest"


@pytest.mark.parametrize("module,name", CASES)
def test_entry_point_examples_run(module, name):
    mod, f = _entry(module, name)
    test = doctest.DocTestParser().get_doctest(inspect.getdoc(f), dict(vars(mod)), f"{mod.__name__}.{name}",
                                               mod.__file__, 0)
    assert test.examples, f"{name}: no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def _modules():
    for m in pkgutil.iter_modules(clm_nb.__path__):
        if not m.name.startswith("_") and m.name not in SHIMS:
            yield importlib.import_module(f"clm_nb.{m.name}")


def _defined(mod, public: bool):
    "The functions and classes `mod` defines (its `__all__` when `public`, else every one), and their methods."
    names = mod.__all__ if public else list(vars(mod))
    for name in names:
        obj = getattr(mod, name, None)
        obj = getattr(obj, "py_func", obj)                            # numba's dispatchers: the Python function
        if getattr(obj, "__module__", None) != mod.__name__ or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        yield f"{mod.__name__}.{name}", obj
        if inspect.isclass(obj):
            for meth_name, meth in vars(obj).items():
                meth = meth.__func__ if isinstance(meth, (classmethod, staticmethod)) else meth
                if inspect.isfunction(meth) and (not public or not meth_name.startswith("_")):
                    yield f"{mod.__name__}.{name}.{meth_name}", meth


def test_public_docstrings_point_at_nothing_help_cannot_show():
    "Every public function, class and method: its docstring (with its generated Parameters) never says 'see the prose'."
    found, checked = [], 0
    for mod in _modules():
        for qual, obj in _defined(mod, public=True):
            checked += 1
            if ELSEWHERE.search(inspect.getdoc(obj) or ""):
                found.append(qual)
    assert checked > 300
    assert not found, f"say the fact, or the docs page (e.g. assessment.html#assess), instead: {found}"


def test_no_parameter_comment_points_elsewhere():
    "Every function and class of the package, private ones too: no parameter comment says 'see below'."
    found = []
    for mod in _modules():
        for qual, obj in _defined(mod, public=False):
            found += [f"{qual}({p})" for p, text in param_comments(obj).items() if ELSEWHERE.search(text)]
    assert not found, f"say the fact, or the docs page, instead: {found}"
