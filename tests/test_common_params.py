"""Registry-wide bad input for option parameters (issue 19, items 8 and 9).

Every keyword option of every registered measure is read from its signature and fed bad values chosen from the type of
its default (a number, a string option, a flag) plus a small table of domain limits. Each must raise a `ValueError`
that names the parameter. A parameter added later without a default type this file knows, and without an entry in
`SPECIAL`, fails `test_every_option_has_bad_values`: add its validation and its bad values here.
Also: complex X is refused by every measure that takes X, every measure defaults to `noise=None`, and every measure's
value on edge inputs lies inside its declared [lower, upper].
"""
import inspect
import warnings

import numpy as np
import pytest

import clm_nb
from clm_nb.between import MonteCarloScore

DATA = {"X", "labels", "labels_a", "labels_b", "partitions"}
OTHER_TESTS = {"random_state"}               # seeds are covered by the Monte-Carlo tests of test_between.py
FORWARDS = {"centroid_index_relative": "centroid_index"}    # **kwargs passed on to another measure


def _options(name):
    "(parameter name, default) of every keyword option of the measure `name` (forwarded **kwargs resolved)."
    func = clm_nb.get_measure(FORWARDS.get(name, name)).func
    out = []
    for p in inspect.signature(func).parameters.values():
        if p.name in DATA or p.name in OTHER_TESTS or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out.append((p.name, p.default))
    return out


# domain limits the default's type cannot tell: out-of-range values, and inf where a parameter allows it
OUT_OF_RANGE = {
    "k": {"cvnn": [0, -3, 2.5], "cvdd": [0, -3, 2.5], "*": [0, -1.0, 1e-320 * 0]},   # kNN counts; logistic steepness > 0
    "max_points": {"*": [0, -10, 2.5]},
    "max_pair_points": {"*": [0, 99, -10, 2.5]},           # dbcv_btwn: the per-pair sample size, >= 100
    "n_permutations": {"*": [0, 1, -5, 2.5]},
    "distance_shift": {"*": [-1.0, -1e-9, 1e300]},    # >= 0 and at most 2^20 times the data's extent
    "p": {"*": [0, -2.0]},
    "beta": {"*": [-1.0]},
    "constraint_weight": {"*": [-0.5]},
    "n_representatives": {"*": [0, -1, 2.5]},                # cdbw: representatives per cluster, >= 1
}
# parameters whose default is None: the bad values, and the other keywords that make the parameter read
SPECIAL = {
    "noise": ([("drop", {}), (["ignore"], {}), (0, {}), (True, {})]),
    "noise_label": ([([-1], {}), (np.nan, {}), ({"a": 1}, {})]),
    "normalize": ([("max", {}), ("none", {}), (1, {}), (True, {}), (["log_n"], {})]),
    "X": ([("abc", {"similarity": "prototype"}), (np.ones((3, 2)) + 1j, {"similarity": "prototype"})]),
    "prototypes_a": ([("abc", {"similarity": "prototype"}), (np.ones((2, 2)), {})]),
    "prototypes_b": ([("abc", {"similarity": "prototype", "prototypes_a": np.ones((3, 2))}), (np.ones((2, 2)), {})]),
    "models_a": ([("abc", {"similarity": "model"}), ((np.zeros((2, 2)), np.ones((2, 2))), {})]),
    "models_b": ([("abc", {"similarity": "model", "models_a": (np.zeros((3, 2)), np.ones((3, 2)))}),
                  ((np.zeros((2, 2)), np.ones((2, 2))), {})]),
    "must_link": ([("abc", {}), ([[0, 1, 2]], {}), ([[0, 999]], {}), ([[0, 0]], {}), ([[0, 1], [2]], {}), ([[0.5, 1]], {})]),
    "cannot_link": ([("abc", {}), ([[0, 999]], {}), ([[3, 3]], {})]),
    "labels_partial": ([([0, 1], {}), (np.zeros((3, 3)), {})]),
    # None = half the free memory (05_pairs); a budget is a positive whole number of bytes
    "max_memory": ([(v, {}) for v in (0, -1, 1.5, np.nan, np.inf, "1GB", True, 1 + 2j, [10**8])]),
    # None = the default exponent (dbcv: X's columns, or the intrinsic dimension; dbcv_btwn on coordinates: the data's
    # dimension); a dimension is a whole number >= 1
    "dim": ([(v, {}) for v in (0, -1, 1.5, 2.5, np.nan, np.inf, "2", True, 1 + 2j, [2])]),
    # None = exact; a tolerance is a finite number >= 0
    "tolerance": ([(v, {}) for v in (-1, -1e-9, np.nan, np.inf, "1e-6", True, 1 + 2j, [1e-6])]),
    # cdbw: at least two strictly increasing shrinking factors in (0, 1)
    "shrink": ([(v, {}) for v in ((0.5,), (0.5, 0.2), (0.1, 0.1), (0.0, 0.5), (0.1, 1.0), (0.1, np.nan), 0.5, "ab",
                                  None, True, (0.1, 1 + 2j), (0.1, "x"))]),
}


def _bad_values(name, param, default):
    "[(bad value, extra keywords)] for one option, from its default's type and the tables above."
    if param in SPECIAL:
        return SPECIAL[param]
    if isinstance(default, (bool, np.bool_)):
        return [(v, {}) for v in (1, 0, "yes", None, np.nan, [True])]
    if isinstance(default, str):
        return [(v, {}) for v in ("no-such-option", default.upper() + "x", [default], 1, None, True)]
    if isinstance(default, (int, float, np.integer, np.floating)):
        table = OUT_OF_RANGE.get(param, {})
        extra = table.get(name, table.get("*", []))
        return [(v, {}) for v in (np.nan, np.inf, -np.inf, "1", [default], 1 + 2j, True, None, *extra)]
    return None


CASES = [(name, param, default) for name in clm_nb.measures().name for param, default in _options(name)]


def _base(kind):
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 12)
    X = rng.normal(size=(36, 2)) + 6 * np.c_[y, y % 2]
    if kind in ("internal", "between"):
        return (X, y), {}
    if kind == "external":
        return (y, np.roll(y, 3)), {}
    return ([y, np.roll(y, 3), np.roll(y, 5), y[::-1]],), {}


@pytest.mark.parametrize("name,param,default", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_every_option_has_bad_values(name, param, default):
    bad = _bad_values(name, param, default)
    assert bad, (f"{name}: option {param!r} (default {default!r}) has no bad values here; validate it at the door "
                 "with clm_nb.checks.check_number/check_choice/check_flag and add its bad values to tests/test_common_params.py")


@pytest.mark.parametrize("name,param,default", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_bad_option_values_raise_valueerror_naming_the_parameter(name, param, default):
    info = clm_nb.get_measure(name)
    args, kw = _base(info.kind)
    for value, extra in _bad_values(name, param, default) or []:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=param) as exc:
                info.func(*args, **kw, **extra, **{param: value})
        assert name in str(exc.value) or FORWARDS.get(name, "") in str(exc.value) or param in ("X",), (
            f"{name}: the message for {param}={value!r} does not name the measure: {exc.value}")


def test_good_values_still_accepted():
    X, y = _base("internal")[0]
    assert 0 <= clm_nb.score("ch_a", X, y, k=3.0, distance_shift=0.5) <= 1
    assert clm_nb.score("cvnn", X, y, k=5.0) >= 0                                   # an integral float is an integer
    assert 0 <= clm_nb.score("sauprc", X, y, estimator=np.str_("trapezoid"), max_memory=1e7) <= 1
    assert isinstance(clm_nb.score("ch_btwn", X, y, random_state=0, return_se=np.bool_(True)), MonteCarloScore)


def test_db_a_huge_shift_is_refused_not_overflowing():
    X, y = _base("internal")[0]
    for shift in (1e300, 1e30):
        with pytest.raises(ValueError, match="distance_shift"):
            clm_nb.score("db_a", X, y, distance_shift=shift)
    assert 0 <= clm_nb.score("db_a", X, y, distance_shift=1e3 * np.ptp(X)) <= 1


@pytest.mark.parametrize("name", list(clm_nb.measures(["internal", "between"]).name))
def test_complex_X_refused(name):
    X, y = _base("internal")[0]
    with pytest.raises(ValueError, match="X is complex"):
        clm_nb.score(name, X + 0j, y, random_state=0)
    with pytest.raises(ValueError, match="X is complex"):
        clm_nb.score(name, (X + 1j).tolist(), y, random_state=0)


@pytest.mark.parametrize("name", list(clm_nb.measures().name))
def test_noise_defaults_to_none(name):
    "One noise default everywhere: -1 is an ordinary label unless a policy is asked for (04_core, noise policy)."
    params = inspect.signature(clm_nb.get_measure(FORWARDS.get(name, name)).func).parameters
    assert "noise" in params and params["noise"].default is None


def _edge_inputs():
    "Labelled data at the edges: duplicates, a collapsed cluster, singletons, two points per cluster, tiny and huge scales."
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 10)
    base = rng.normal(size=(30, 2)) + 5 * np.c_[y, y % 2]
    collapsed = base.copy(); collapsed[y == 0] = [0.1, 0.2]
    dups = np.repeat(base[::3], 3, axis=0)
    all_same_cluster_points = np.repeat(np.array([[0., 0], [5, 5], [9, 0]]), 10, axis=0)
    yield "collapsed", collapsed, y
    yield "duplicates", dups, y
    yield "clusters are points", all_same_cluster_points, y
    yield "shuffled", base, rng.permutation(y)
    yield "singleton cluster", base[:11], np.r_[np.zeros(10, int), 1]
    yield "tiny scale", base * 1e-150, y
    yield "huge scale", base * 1e150, y
    yield "1-D", base[:, :1], y


EDGE = list(_edge_inputs())


@pytest.mark.parametrize("name", list(clm_nb.measures(["internal", "between"]).name))
def test_values_on_edge_inputs_stay_in_the_declared_range(name):
    info = clm_nb.get_measure(name)
    for case, X, y in EDGE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                v = float(info.func(X, y, random_state=0))
            except ValueError:
                continue                      # refused with a message (e.g. k >= n, a singleton-only DSI): not a value
        assert not np.isnan(v), (name, case)
        assert info.lower <= v <= info.upper, (name, case, v, info.lower, info.upper)


@pytest.mark.parametrize("name", list(clm_nb.measures(["external", "ensemble"]).name))
def test_external_and_ensemble_values_stay_in_the_declared_range(name):
    info = clm_nb.get_measure(name)
    rng = np.random.default_rng(5)
    labelings = [np.arange(8), np.zeros(8, int), np.array([0, 0, 0, 0, 1, 1, 1, 1]), rng.integers(0, 3, 8),
                 np.array([0, 1] * 4)]
    for a in labelings:
        for b in labelings:
            args = (a, b) if info.kind == "external" else ([a, b, labelings[2], labelings[3]],)
            v = np.asarray(info.func(*args), dtype=float)
            assert not np.isnan(v).any(), (name, a, b)
            assert ((info.lower <= v) & (v <= info.upper)).all(), (name, a, b, v)


# Study parameters typed on the command line (issue 37): papermill converts `-p flag True` but passes `true`, `yes`, `on`
# on as text (and `1` as an int), so a "bool" study parameter takes every usual spelling and writes the bool back.
