"""The package's layering, read with `ast` (issue 50): notebook order is import order.

Every module of `clm_nb` is exported by one numbered notebook of `nbs/`, and the notebooks' order is the order in which
a reader meets the modules. This file fails on

- an import of a `clm_nb` module that comes later in that order, at the top of a module or inside a function (a
  function-level import may only delay a slow third-party library, never hide a cycle);
- a private name (`_x`) imported from another module (a helper another module needs is public);
- a public name defined at the top level of two modules (one name, one thing);
- a module longer than `MAX_LINES`.

It reads the exported files, which `make test` checks are exactly what the notebooks export.
"""
import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 1400


def notebook_order() -> dict[str, int]:
    "module -> its notebook's position in `nbs/` (file name order, as nbdev and the docs read them)."
    order = {}
    for i, nb in enumerate(sorted((ROOT / "nbs").glob("[0-9]*.ipynb"))):
        for cell in json.loads(nb.read_text())["cells"]:
            m = re.search(r"^#\|\s*default_exp\s+(\S+)", "".join(cell["source"]), re.M)
            if m:
                order[m.group(1)] = i
                break
    return order


ORDER = notebook_order()


def module_path(module: str) -> Path:
    return ROOT / "clm_nb" / (module.replace(".", "/") + ".py")


def known(dotted: str) -> str:
    "The ORDER key of the clm_nb module `dotted` ('cli.assess'); a package ('cli') is its `__init__` ('cli.__init__')."
    return dotted if dotted in ORDER or f"{dotted}.__init__" not in ORDER else f"{dotted}.__init__"


def imports(module: str):
    "(target module, names, line, inside a function) for every import of a clm_nb module in `module`."
    tree = ast.parse(module_path(module).read_text())
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside |= {id(n) for n in ast.walk(node) if n is not node}
    package = ("clm_nb." + module).split(".")[:-1]                # clm_nb.cli for cli.assess and cli.__init__
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:                                        # relative to the module's package (clm_nb.cli...)
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base == "clm_nb" or f"{base[len('clm_nb.'):]}.__init__" in ORDER:   # a package: from clm_nb import core
                prefix = base[len("clm_nb."):] + "." if base != "clm_nb" else ""
                modules = [f"{prefix}{a.name}" for a in node.names if known(f"{prefix}{a.name}") in ORDER]
                for m in modules:
                    yield known(m), [], node.lineno, id(node) in inside
                rest = [a.name for a in node.names if f"{prefix}{a.name}" not in modules]
                if base != "clm_nb" and rest:                     # from clm_nb.cli import main
                    yield known(base[len("clm_nb."):]), rest, node.lineno, id(node) in inside
            elif base.startswith("clm_nb."):
                yield known(base[len("clm_nb."):]), [a.name for a in node.names], node.lineno, id(node) in inside
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("clm_nb."):
                    yield known(a.name[len("clm_nb."):]), [], node.lineno, id(node) in inside


def test_every_module_has_a_notebook():
    files = {".".join(p.relative_to(ROOT / "clm_nb").with_suffix("").parts) for p in (ROOT / "clm_nb").rglob("*.py")}
    files -= {"__init__", "_modidx", "all"}
    assert files <= set(ORDER), f"modules without a notebook: {sorted(files - set(ORDER))}"


def test_no_import_runs_up_the_notebook_order():
    up = [f"{m}:{line} imports {t}{' (inside a function)' if fn else ''}"
          for m in ORDER for t, _, line, fn in imports(m) if t in ORDER and ORDER[t] > ORDER[m]]
    assert not up, "imports up the notebook order:\n" + "\n".join(up)


def test_no_cycles():
    graph = {m: {t for t, *_ in imports(m) if t in ORDER and t != m} for m in ORDER}
    seen, stack, cycles = set(), [], []

    def visit(m):
        if m in stack:
            cycles.append(stack[stack.index(m):] + [m])
            return
        if m in seen:
            return
        seen.add(m); stack.append(m)
        for t in sorted(graph[m]):
            visit(t)
        stack.pop()

    for m in sorted(graph):
        visit(m)
    assert not cycles, f"import cycles: {cycles}"


def test_no_private_name_crosses_a_module():
    private = [f"{m}:{line} takes {t}.{n}" for m in ORDER for t, names, line, _ in imports(m) if t != m
               for n in names if n.startswith("_") and not n.startswith("__")]
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_no_public_name_is_defined_twice():
    where = {}
    for m in ORDER:
        for node in ast.parse(module_path(m).read_text()).body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                if (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                        and node.value.func.id == "LazyModule"):
                    continue                       # `pd = LazyModule("pandas")`: an import on first use, not a name
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            for n in names:
                if not n.startswith("_"):
                    where.setdefault(n, []).append(m)
    twice = {n: ms for n, ms in where.items() if len(ms) > 1}
    assert not twice, f"public names defined by more than one module: {twice}"


@pytest.mark.parametrize("module", sorted(ORDER))
def test_module_size(module):
    lines = len(module_path(module).read_text().splitlines())
    assert lines <= MAX_LINES, f"clm_nb/{module}.py has {lines} lines (at most {MAX_LINES}): split it by idea"
