"""Registry contract: metadata for every measure, and the bad-input list of the validation layer for every measure.

The tests iterate the registry, so a measure added later is covered without editing this file."""
import numpy as np
import pandas as pd
import pytest

import clm_nb
from clm_nb.registry import INVARIANCES, KINDS

REGISTRY = clm_nb.measures()
LABELED = REGISTRY[REGISTRY.kind.isin(["internal", "between"])].name.tolist()   # f(X, labels, ...)


def test_registry_is_complete():
    for name in ["calinski_harabasz", "davies_bouldin", "dunn", "silhouette", "xie_beni", "i_index"]:
        assert name in REGISTRY.name.values
    assert list(REGISTRY.columns[:8]) == ["name", "kind", "direction", "lower", "upper", "invariances",
                                          "complexity", "reference"]


@pytest.mark.parametrize("name", REGISTRY.name.tolist())
def test_metadata_is_well_formed(name):
    info = clm_nb.get_measure(name)
    assert info.kind in KINDS and info.direction in ("max", "min")
    assert info.lower <= info.upper
    assert set(info.invariances) <= set(INVARIANCES)
    assert info.complexity and info.reference and info.summary
    assert getattr(clm_nb, info.func.__name__) is info.func          # importable from the top-level package


@pytest.mark.parametrize("name", REGISTRY.name.tolist())
def test_summary_is_a_whole_paragraph_whose_formulas_render(name):
    "The summary the report and the docs show: a whole sentence, its `$...$` LaTeX all converted to MathML."
    from clm_nb.text import render_math
    info = clm_nb.get_measure(name)
    assert "\n" not in info.summary and info.summary.rstrip().endswith((".", ")")), info.summary   # not cut mid-sentence
    html = render_math(info.summary)
    assert "$" not in html and "<code" not in html, html             # no raw LaTeX, no fallback
    assert ("<math" in html) == ("$" in info.summary)


@pytest.mark.parametrize("name", REGISTRY.name.tolist())
def test_summary_reads_as_plain_text_in_the_terminal(name):
    "`clm-nb measures` prints the summary through `plain_math`: no LaTeX left in its formulas, brackets balanced."
    import re
    from clm_nb.text import _MATH, plain_math
    info = clm_nb.get_measure(name)
    for m in _MATH.finditer(info.summary):
        text = plain_math(m.group(0))
        assert "\\" not in text and "{" not in text and "}" not in text, (m.group(0), text)
        leftover = re.findall(r"frac|mathrm|operatorname|left|right|sqrt|text|cdot|big[lr]|[lr]Vert|sum|sigma", text)
        assert not leftover, (m.group(0), text, leftover)               # a command word glued to its argument too
        depth = 0
        for ch in text:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            assert depth >= 0, (m.group(0), text)
        assert depth == 0, (m.group(0), text)
    assert "$" not in plain_math(info.summary).replace("\\$", "")


@pytest.mark.parametrize("name", LABELED)
def test_value_is_float_within_declared_range(name):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(4, 1, (25, 3))]
    y = np.r_[np.zeros(20, int), np.ones(25, int)]
    info = clm_nb.get_measure(name)
    value = clm_nb.score(name, X, y, random_state=0)
    assert type(value) is float
    assert info.lower <= value <= info.upper


def _base():
    rng = np.random.default_rng(1)
    return rng.normal(size=(12, 2)), np.array([0, 1, 2] * 4)


def _with(X, i, j, v):
    X = X.copy(); X[i, j] = v
    return X


# (case id, X, labels, fragment the ValueError message must contain)
BAD_INPUTS = [
    ("nan", lambda X, y: (_with(X, 3, 1, np.nan), y), "NaN"),
    ("inf", lambda X, y: (_with(X, 5, 0, np.inf), y), "infinite"),
    ("too-few-points", lambda X, y: (X[:2], y[:2]), "at least"),
    ("one-cluster", lambda X, y: (X, np.zeros(len(y), int)), "one label"),
    ("all-singletons", lambda X, y: (X, np.arange(len(y))), "its own cluster"),
    ("length-mismatch", lambda X, y: (X, y[:-1]), "one label per point"),
    ("X-1d", lambda X, y: (X[:, 0], y), "2-D"),
    ("X-3d", lambda X, y: (X[:, :, None], y), "2-D"),
    ("labels-2d", lambda X, y: (X, np.c_[y, y]), "1-D"),
    ("labels-missing", lambda X, y: (X, np.where(np.arange(len(y)) == 4, np.nan, y)), "missing"),
    ("X-non-numeric", lambda X, y: (np.array([["a", "b"]] * len(y)), y), "numeric"),
    ("no-features", lambda X, y: (np.empty((len(y), 0)), y), "no features"),
]


# Cases a measure defines, with the value it gives, instead of refusing them. DISCO (Beer et al., ICLR 2026) is
# defined for 1 <= K <= n: one cluster without noise scores 0 at every point, and so does a cluster of one point.
DEFINED = {("disco", "one-cluster"): 0.0, ("disco", "all-singletons"): 0.0}


@pytest.mark.parametrize("case, make, fragment", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
@pytest.mark.parametrize("name", LABELED)
def test_bad_input_raises_clear_value_error(name, case, make, fragment):
    X, y = make(*_base())
    if (name, case) in DEFINED:
        assert clm_nb.score(name, X, y) == DEFINED[name, case]
        return
    with pytest.raises(ValueError, match=fragment):
        clm_nb.score(name, X, y)


@pytest.mark.parametrize("name", LABELED)
def test_unknown_noise_policy_is_refused(name):
    X, y = _base()
    with pytest.raises(ValueError, match="noise policy"):
        clm_nb.score(name, X, y, noise="drop")


@pytest.mark.parametrize("name", LABELED)
def test_pandas_and_hashable_labels_accepted(name):
    X, y = _base()
    words = np.array(["red", "green", "blue"])[y]
    expected = clm_nb.score(name, X, y, random_state=0)
    got = clm_nb.score(name, pd.DataFrame(X, columns=["a", "b"]), pd.Series(words), random_state=0)
    assert got == pytest.approx(expected, rel=1e-12)
    gapped = np.array([10, -7, 300])[y]
    assert clm_nb.score(name, X, gapped, random_state=0) == pytest.approx(expected, rel=1e-12)


def test_unknown_measure_suggests_names():
    with pytest.raises(ValueError, match="Did you mean"):
        clm_nb.score("silhouete", *_base())


def test_measures_filter_by_kind():
    assert set(clm_nb.measures("internal").kind) == {"internal"}
    with pytest.raises(ValueError, match="unknown kind"):
        clm_nb.measures("interior")
