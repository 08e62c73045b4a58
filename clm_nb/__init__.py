"""Clustering validation in literate notebooks: which labeled datasets to trust and which validity index to believe."""

__version__ = "0.1.0"

# The top level is deliberately small, in the style of `sklearn.metrics.cluster`: the measures (one function each,
# all registered with their metadata; the names come from the registry, no list of them is typed here), the registry (`measures`, `score`, `get_measure`, `register`) and the entry
# points a user calls first (`assess`, `compare_representations`, `suggest_repairs`, `load_dataset`, `list_datasets`). Everything else lives in its submodule
# (`clm_nb.report.build_report`, `clm_nb.runner.run`, ...); `from clm_nb.all import *` imports it all.
#
# `import clm_nb` itself imports nothing heavy (PEP 562): each name is imported from its module on first use, so that
# `clm-nb --help` answers at once. The first measure or registry name loads the measure modules together (numpy,
# pandas, scipy, numba), which fills the registry: `clm_nb.measures()` lists every measure, as before. `assess` pulls
# in the verdict machinery (scikit-learn's estimators) on first use; plotting, templating and the study machinery
# (altair, jinja2, Dask) load when first used.

import importlib as _importlib

_ENTRY_POINTS = {"assess": "assessment", "Assessment": "assessment", "compare_representations": "representations",
                 "suggest_repairs": "repair", "load_dataset": "bundle", "list_datasets": "bundle"}
_REGISTRY_NAMES = ("measures", "score", "get_measure", "register")   # the registry, read through clm_nb.catalog


def _measure_names() -> list[str]:
    "The package's registered measures, in registry order (imports every measure module: `clm_nb.catalog`)."
    catalog = _importlib.import_module("clm_nb.catalog")
    table = catalog.measures()
    return [n for n in table.name if catalog.get_measure(n).func.__module__.startswith("clm_nb.")]


# The submodules, imported on first attribute access (`clm_nb.report.build_report` works after a plain
# `import clm_nb`, as in scikit-learn).
_SUBMODULES = ("text", "checks", "registry", "gower", "core", "distances", "pairs", "internal", "cvi", "curves",
               "separability", "density", "external", "consensus", "between", "subsets", "catalog", "readers", "prepare",
               "synthetic", "bundle", "rule", "profile", "intervals", "prediction", "assessment", "representations", "clusterers", "repair", "runner",
               "study", "tasks", "evaluation", "calibration", "leaderboard", "clustbench", "curate", "advice", "charts", "report",
               "cli", "all",
               "datasets", "verdict")           # the last two: deprecated paths, kept for one release


def __getattr__(name: str):
    if name in _SUBMODULES:                              # `clm_nb.between` is the module, never the function between()
        return _importlib.import_module(f"clm_nb.{name}")
    if name in _ENTRY_POINTS:
        value = getattr(_importlib.import_module(f"clm_nb.{_ENTRY_POINTS[name]}"), name)
    elif name in _REGISTRY_NAMES:
        value = getattr(_importlib.import_module("clm_nb.catalog"), name)
    elif name == "__all__":                              # what the registry knows, never a list typed by hand
        value = list(_REGISTRY_NAMES) + list(_ENTRY_POINTS) + _measure_names()
    elif not name.startswith("_") and name in _measure_names():
        value = _importlib.import_module("clm_nb.catalog").get_measure(name).func
    else:
        raise AttributeError(f"module 'clm_nb' has no attribute {name!r}; the top level holds the measures, the "
                             "registry and assess/compare_representations/suggest_repairs/load_dataset/list_datasets, everything else is in its submodule "
                             "(see clm_nb.all)")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_ENTRY_POINTS) | set(_REGISTRY_NAMES) | set(_measure_names()) | set(_SUBMODULES))
