"""Clustering validation in literate notebooks: which labeled datasets to trust and which validity index to believe."""

__version__ = "0.1.0"

# The top level is deliberately small, in the style of `sklearn.metrics.cluster`: the measures (one function each,
# all registered with their metadata), the registry (`measures`, `score`, `get_measure`, `register`) and the entry
# points a user calls first (`assess`, `load_dataset`, `list_datasets`). Everything else lives in its submodule
# (`clm_nb.report.build_report`, `clm_nb.runner.run`, ...); `from clm_nb.all import *` imports it all.
#
# `import clm_nb` itself imports nothing heavy (PEP 562): each name is imported from its module on first use, so that
# `clm-nb --help` answers at once. The first measure or registry name loads the measure modules together (numpy,
# pandas, scipy, numba), which fills the registry: `clm_nb.measures()` lists every measure, as before. `assess` pulls
# in the verdict machinery (scikit-learn's estimators) on first use; plotting, templating and the study machinery
# (altair, jinja2, Dask) load when first used.

import importlib as _importlib

_SOURCES = {
    "catalog": ("get_measure", "measures", "register", "score"),
    "internal": ("ball_hall", "c_index", "calinski_harabasz", "davies_bouldin", "dbcv", "dunn", "gamma", "i_index",
                 "point_biserial", "silhouette", "xie_beni", "silhouette_w", "g_plus", "tau", "mcclain_rao", "wcnn",
                 "dunn_owa", "sindex", "widest_gap"),
    "cvi": ("banfeld_raftery", "cdbw", "cop", "cvdd", "cvnn", "det_ratio", "friedman", "ksq_detw", "log_det_ratio",
            "log_ss_ratio", "ratkowsky_lance", "ray_turi", "s_dbw", "scott_symons", "sd", "trace_w", "wb"),
    "curves": ("aucc", "auiprc", "auprc", "sauprc"),
    "separability": ("dsi",),
    "density": ("dcsi", "disco"),
    "between": ("ch_a", "ch_btwn", "ch_t2", "ch_t4", "db_a", "dbcv_btwn", "dcsi_btwn", "dunn_a", "i_a", "sc_a", "xb_a"),
    "external": ("afm", "ami", "ari", "centroid_index", "centroid_index_relative", "criterion_h", "csi", "ecs",
                 "fowlkes_mallows", "inverse_purity", "jaccard_pairs", "mi", "nca", "nmi", "npa", "nvd", "psi", "purity",
                 "rand", "v_measure", "vi", "wallace_ab", "wallace_ba"),
    "consensus": ("aari", "anmi", "discotec"),
    "bundle": ("list_datasets", "load_dataset"),
    "assessment": ("assess", "Assessment"),
}
_LAZY = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = [
    # registry
    "measures", "score", "get_measure", "register",
    # entry points
    "assess", "Assessment", "load_dataset", "list_datasets",
    # internal measures
    "calinski_harabasz", "davies_bouldin", "dunn", "silhouette", "xie_beni", "i_index", "ball_hall", "c_index",
    "point_biserial", "gamma", "dbcv", "ratkowsky_lance", "wb", "cvnn", "cvdd", "trace_w", "det_ratio",
    "log_det_ratio", "log_ss_ratio", "ksq_detw", "scott_symons", "friedman", "banfeld_raftery", "ray_turi", "s_dbw", "sd",
    "cop", "cdbw",
    "aucc", "auprc", "auiprc", "sauprc", "dsi", "dcsi", "disco",
    "silhouette_w", "g_plus", "tau", "mcclain_rao", "wcnn", "dunn_owa", "sindex", "widest_gap",
    # between-dataset measures (comparable across datasets)
    "ch_btwn", "ch_t2", "ch_t4", "ch_a", "db_a", "i_a", "xb_a", "dunn_a", "sc_a", "dbcv_btwn", "dcsi_btwn",
    # external measures
    "ari", "rand", "ami", "nmi", "v_measure", "fowlkes_mallows", "jaccard_pairs", "purity", "inverse_purity", "nvd",
    "criterion_h", "psi", "centroid_index", "centroid_index_relative", "csi", "nca", "npa", "afm", "mi", "vi",
    "wallace_ab", "wallace_ba", "ecs",
    # ensemble measures
    "discotec", "aari", "anmi",
]


# The submodules, imported on first attribute access (`clm_nb.report.build_report` works after a plain
# `import clm_nb`, as in scikit-learn).
_SUBMODULES = ("text", "checks", "registry", "gower", "core", "distances", "pairs", "internal", "cvi", "curves",
               "separability", "density", "external", "consensus", "between", "catalog", "readers", "prepare",
               "synthetic", "bundle",
               "profile", "intervals", "rule", "assessment", "clusterers", "runner", "tasks", "evaluation", "leaderboard",
               "clustbench", "advice", "charts", "report", "cli", "all",
               "datasets", "verdict")           # the last two: deprecated paths, kept for one release


def __getattr__(name: str):
    if name in _LAZY:
        module = _LAZY[name]
        if module != "assessment":                       # a measure or the registry: every measure, registered
            _importlib.import_module("clm_nb.catalog")
        value = getattr(_importlib.import_module(f"clm_nb.{module}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return _importlib.import_module(f"clm_nb.{name}")
    raise AttributeError(f"module 'clm_nb' has no attribute {name!r}; the top level holds the measures, the registry "
                         "and assess/load_dataset/list_datasets, everything else is in its submodule (see clm_nb.all)")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
