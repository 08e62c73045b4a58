"""The package's public surface (issue 21): small and explicit, every registered measure on it, no function
shadowing a module, and no heavy library loaded by `import clm_nb`."""
import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import clm_nb

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = {"measures", "score", "get_measure", "register"}
ENTRY_POINTS = {"assess", "Assessment", "load_dataset", "list_datasets"}
MODULES = ["core", "pairs", "internal", "between", "external", "cvi", "curves", "separability", "consensus", "datasets",
           "clusterers", "evaluation", "runner", "tasks", "verdict", "charts", "report", "assessment", "cli"]


def test_all_is_the_measures_the_registry_and_the_entry_points():
    measures = set(clm_nb.measures().name)
    assert set(clm_nb.__all__) == measures | REGISTRY | ENTRY_POINTS
    assert len(clm_nb.__all__) == len(set(clm_nb.__all__))
    for name in clm_nb.__all__:
        assert getattr(clm_nb, name) is not None
    for name in measures:                        # the top-level function is the registered one
        assert getattr(clm_nb, name) is clm_nb.get_measure(name).func


def test_public_names_are_the_surface_and_the_submodules():
    public = {n for n in dir(clm_nb) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(clm_nb, n), types.ModuleType)}
    assert public - modules == set(clm_nb.__all__)


@pytest.mark.parametrize("module", MODULES)
def test_every_submodule_is_the_module_not_a_function(module):
    m = importlib.import_module(f"clm_nb.{module}")
    assert getattr(clm_nb, module) is m           # e.g. `clm_nb.between` is the module, never the function between()


def test_unknown_attribute_names_itself():
    with pytest.raises(AttributeError, match="no attribute 'run'"):
        clm_nb.run


def test_all_module_star_exports_every_module():
    import clm_nb.all as everything
    for module in MODULES:
        for name in importlib.import_module(f"clm_nb.{module}").__all__:
            assert hasattr(everything, name), (module, name)


def test_assess_is_loaded_on_first_use():
    code = ("import sys, clm_nb; before = 'clm_nb.assessment' in sys.modules; f = clm_nb.assess; "
            "print(before, 'clm_nb.assessment' in sys.modules, callable(f))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_import_loads_no_heavy_library():
    heavy = ["altair", "vl_convert", "jinja2", "joblib", "sklearn", "optuna", "dask", "distributed", "kmedoids",
             "tqdm"]                                # (pyarrow is not listed: pandas itself imports it when installed)
    code = f"import sys, json, clm_nb; print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == [], f"`import clm_nb` loads {loaded}: import them inside the function that uses them"


def test_notebooks_meet_the_readability_targets():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "notebook_stats.py"), str(ROOT / "nbs"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_public_callables_document_every_parameter():
    "Every public function or class with more than two parameters documents each one (docments comments)."
    import inspect
    from fastcore.docments import docments
    undocumented, checked = {}, 0
    for module in MODULES:
        mod = importlib.import_module(f"clm_nb.{module}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not callable(obj) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            try:
                sig = inspect.signature(obj)
            except (TypeError, ValueError):
                continue
            params = [p for p, v in sig.parameters.items() if p not in ("self", "cls")
                      and v.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
            if len(params) <= 2:
                continue
            checked += 1
            docs = docments(obj, full=False)
            missing = [p for p in params if not docs.get(p)]
            if missing:
                undocumented[f"{module}.{name}"] = missing
    assert checked > 100
    assert not undocumented, undocumented


def test_public_methods_document_every_parameter():
    "The same for the public methods of public classes (the API reference lists them too)."
    import inspect
    from fastcore.docments import docments
    undocumented, checked = {}, 0
    for module in MODULES:
        mod = importlib.import_module(f"clm_nb.{module}")
        classes = [getattr(mod, n) for n in mod.__all__ if inspect.isclass(getattr(mod, n))]
        for cls in (c for c in classes if c.__module__ == mod.__name__):
            for name, meth in vars(cls).items():
                meth = meth.__func__ if isinstance(meth, (classmethod, staticmethod)) else meth
                if name.startswith("_") or not inspect.isfunction(meth):
                    continue
                params = [p for p in inspect.signature(meth).parameters if p not in ("self", "cls")]
                if len(params) <= 2:
                    continue
                checked += 1
                missing = [p for p in params if not docments(meth, full=False).get(p)]
                if missing:
                    undocumented[f"{module}.{cls.__name__}.{name}"] = missing
    assert checked >= 1
    assert not undocumented, undocumented


def test_submodules_load_on_first_attribute_access():
    "After a plain `import clm_nb`, `clm_nb.report.build_report` works (as the docs write it), loaded on first use."
    code = ("import sys, clm_nb; before = 'clm_nb.report' in sys.modules; f = clm_nb.report.build_report; "
            "g = clm_nb.clusterers.ground_truth_task; print(before, callable(f), callable(g))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_references_in_docs_and_benchmarks_resolve():
    "Every `clm_nb.a.b` named in README, docs/, CHANGELOG and benchmarks/ exists (after a plain `import clm_nb`)."
    import re
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "benchmarks").glob("*.py"))]
    missing = []
    for f in files:
        for ref in sorted(set(re.findall(r"\bclm_nb(?:\.[A-Za-z_]\w*)+", f.read_text()))):
            obj = clm_nb
            try:
                for part in ref.split(".")[1:]:
                    obj = getattr(obj, part)
            except AttributeError:
                missing.append(f"{f.name}: {ref}")
    assert not missing, missing
