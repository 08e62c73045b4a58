"""Golden values of DCSI and DISCO from the reference implementation (github.com/pasiweber/DISCO, the code of
Beer et al., ICLR 2026, which holds both `src/Evaluation/disco.py` and `src/Evaluation/dcsi.py`).

Run ONCE, in a scratch virtualenv with numpy, scipy and scikit-learn (the reference needs nothing else for these two
files), against a checkout of the reference's `src` folder:

    python3 -m venv /tmp/discovenv && /tmp/discovenv/bin/pip install numpy scipy scikit-learn
    git --git-dir=<mirror of pasiweber/DISCO> archive HEAD src | tar -x -C /tmp/disco_ref
    /tmp/discovenv/bin/python tests/data/density/make_goldens.py /tmp/disco_ref > tests/data/density/goldens.json

The reference's `src/Evaluation/__init__.py` imports every CVI of that repository (torch and more), so the two files
are loaded by path instead. The data sets are stored in the output with the values, so the tests never depend on a
generator's version. Nothing from the reference is copied into clm_nb: it is only run here.
"""
import importlib.util
import json
import sys
import types
from pathlib import Path

import numpy as np
import sklearn
from sklearn.datasets import load_iris, make_blobs, make_moons


def load_reference(root: Path):
    "The reference's disco and dcsi modules, imported by path (their package __init__ pulls in unrelated CVIs)."
    for name, path in (("src", root / "src"), ("src.Evaluation", root / "src" / "Evaluation"),
                       ("src.Evaluation.dcdistances", root / "src" / "Evaluation" / "dcdistances")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(path)]
        sys.modules[name] = pkg
    mods = {}
    for name in ("src.Evaluation.dcdistances.dctree", "src.Evaluation.disco", "src.Evaluation.dcsi"):
        spec = importlib.util.spec_from_file_location(name, root / (name.replace(".", "/") + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        mods[name.rsplit(".", 1)[1]] = mod
    return mods["disco"], mods["dcsi"]


def datasets():
    "Small named data sets: (X, labels), -1 marking noise as the reference reads it."
    out = {}
    X, y = load_iris(return_X_y=True)
    out["iris"] = (X, y)
    X, y = make_moons(n_samples=100, noise=0.08, random_state=0)
    rng = np.random.default_rng(1)
    bg = rng.uniform([-1.5, -1.0], [2.5, 1.5], size=(12, 2))          # 12 background points, labelled noise
    y = y.copy()
    y[rng.choice(100, 6, replace=False)] = -1                         # and 6 moon points labelled noise
    out["moons_noise"] = (np.vstack([X, bg]), np.r_[y, -np.ones(12, int)])
    X, y = make_blobs(n_samples=120, centers=3, cluster_std=1.0, random_state=1)
    out["blobs"] = (X, y)
    X, y = make_blobs(n_samples=[60, 50, 4], centers=[[0, 0], [6, 0], [3, 5]], cluster_std=[1.0, 1.5, 0.3],
                      random_state=2)
    out["blobs_small_class"] = (X, y)                                 # a class of 4 < minPts + 1 points: no core point
    X, _ = make_moons(random_state=42)                                 # the example of the reference's docstrings
    from sklearn.cluster import HDBSCAN
    out["moons_hdbscan"] = (X, HDBSCAN().fit_predict(X))
    X, y = make_moons(n_samples=60, noise=0.05, random_state=3)
    y = np.where(y == 0, 0, -1)                                        # one cluster and noise
    out["one_cluster_noise"] = (X, y)
    return out


def main(root):
    disco, dcsi = load_reference(Path(root))
    res = {"reference": "github.com/pasiweber/DISCO src/Evaluation/{disco,dcsi}.py",
           "versions": {"numpy": np.__version__, "sklearn": sklearn.__version__}, "min_pts": 5, "sets": {}}
    for name, (X, y) in datasets().items():
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        entry = {"X": X.tolist(), "labels": y.tolist(),
                 "disco_samples": np.asarray(disco.disco_samples(X, y, 5), dtype=float).tolist(),
                 "disco_score": float(disco.disco_score(X, y, 5))}
        classes = [c for c in np.unique(y) if c != -1]
        if len(classes) >= 2:
            m = y != -1
            codes = np.searchsorted(classes, y[m])                     # 0..K-1: the reference's pair loop needs it
            entry["dcsi"] = float(dcsi.dcsi_score(X[m], codes, min_pts=5))
            pairs = {}
            for a in range(len(classes)):
                for b in range(a + 1, len(classes)):
                    mm = (codes == a) | (codes == b)
                    pairs[f"{classes[a]},{classes[b]}"] = float(dcsi.dcsi_score(X[m][mm], (codes[mm] == b).astype(int),
                                                                                min_pts=5))
            entry["dcsi_pairs"] = pairs
        res["sets"][name] = entry
    all_noise = np.random.default_rng(4).normal(size=(20, 2))
    res["all_noise_disco"] = np.asarray(disco.disco_samples(all_noise, -np.ones(20, int), 5), float).tolist()
    one = np.asarray(disco.disco_samples(all_noise, np.zeros(20, int), 5), float).tolist()
    res["one_cluster_disco"] = one
    json.dump(res, sys.stdout, indent=None, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1])
