"""Rebuild the calibrated predictor the package ships (issue 51): clm_nb/models/clm_ami.json.

    python benchmarks/calibrate.py --data ../shared/datasets --store STORE [--n-jobs 2]

1. the calibration tasks of every labelled dataset and reference labelling of the bundle
   (`clm_nb.calibration.calibration_tasks`: what `assess` sees, and the ground truth: paper 000's nine techniques,
   20 TPE trials each, at most 5,000 points), run with the cached runner into STORE (resumable: run it again);
2. the one table (`calibration_table`), written to benchmarks/reference/calibration/table.csv.gz;
3. the validation figures of every candidate (`CANDIDATES` below, today's rule first), leaving whole collections
   out, intervals nested: benchmarks/reference/calibration/evidence.json;
4. `fit_predictor(table, MODEL_SPEC)` with its provenance (the bundle's digest, the versions, this command, the
   chosen spec's figures) written to clm_nb/models/clm_ami.json.

--gt-version / --features-version pin the two halves' code versions (`runner.Task.version`) so that a store made by
an earlier commit is reused; --gt-repin TECHS=VERSION pins some techniques' ground truth to another version (after a
fix that changes only theirs: issue 51's dbscan,hdbscan, whose own noise points had been left out). The pins used are
recorded in the provenance. Without them every task is identified by
the code that computes it, and an edit anywhere in the package recomputes everything (hours: the ground truth).
"""
import argparse, dataclasses, hashlib, json, os, subprocess, sys, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd

from clm_nb.calibration import (calibration_table, calibration_tasks, fit_predictor, hgb_model, MODEL_SPEC,
                                rule_model, validation_figures)
from clm_nb.runner import load_results, run

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "reference" / "calibration"

MEASURES = ("ch_btwn", "dbcv_btwn", "ch_a", "db_a", "dunn_a", "i_a", "sc_a")
VALUES = tuple((f"{m}__value", "identity") for m in MEASURES)
SUMMARIES = tuple((f"{m}__{f}", "identity") for m in MEASURES for f in ("weighted", "share_below", "worst"))
DESCRIPTORS = (("desc_n", "log10"), ("desc_d", "log10"), ("desc_K", "log10"), ("desc_d_over_n", "log10"),
               ("desc_balance", "identity"), ("desc_min_share", "identity"), ("desc_duplicates", "identity"),
               ("desc_intrinsic_dim", "identity"), ("desc_id_ratio", "identity"), ("desc_spread_ratio", "log10"))
AGREEMENT = (("desc_centroid_accuracy", "identity"), ("desc_knn_agreement", "identity"))   # stop 57's two
CLUSTERERS = (("desc_centroid_accuracy", "identity"), ("desc_knn_kappa", "identity"),   # chance-corrected neighbours,
              ("desc_clusterer_agreement", "identity"))                               # six fast clusterers' best AMI
RISING = {c: 1 for c, _ in VALUES + AGREEMENT + CLUSTERERS}   # every CLM score and agreement: higher, better separated
CANDIDATES = {                                      # name -> spec (inputs, monotone); the rule is added first
    "sc_a alone": {"inputs": (("sc_a__value", "identity"),), "monotone": RISING},
    "the two views": {"inputs": VALUES[:2], "monotone": RISING},
    "all scores": {"inputs": VALUES, "monotone": RISING},
    "scores + descriptors": {"inputs": VALUES + DESCRIPTORS, "monotone": RISING},
    "scores + summaries + descriptors": {"inputs": VALUES + SUMMARIES + DESCRIPTORS, "monotone": RISING},
    "scores + descriptors, unconstrained": {"inputs": VALUES + DESCRIPTORS},
    "the two agreements alone": {"inputs": AGREEMENT, "monotone": RISING},
    "scores + agreements": {"inputs": VALUES + AGREEMENT, "monotone": RISING},
    "scores + descriptors + agreements (stop 57)": {"inputs": VALUES + DESCRIPTORS + AGREEMENT, "monotone": RISING},
    "scores + summaries + descriptors + agreements": {"inputs": VALUES + SUMMARIES + DESCRIPTORS + AGREEMENT,
                                                       "monotone": RISING},
    "fast clusterers alone": {"inputs": CLUSTERERS[2:], "monotone": RISING},
    "the three agreements alone": {"inputs": CLUSTERERS, "monotone": RISING},
    "scores + descriptors + kappa": {"inputs": VALUES + DESCRIPTORS + CLUSTERERS[:2], "monotone": RISING},
    "scores + descriptors + clusterers": {"inputs": VALUES + DESCRIPTORS + AGREEMENT + CLUSTERERS[2:],
                                          "monotone": RISING},
    "scores + descriptors + kappa + clusterers": {"inputs": VALUES + DESCRIPTORS + CLUSTERERS, "monotone": RISING},
    "scores + summaries + descriptors + kappa + clusterers": {"inputs": VALUES + SUMMARIES + DESCRIPTORS + CLUSTERERS,
                                                               "monotone": RISING},
}


def bundle_digest(tasks) -> str:
    "SHA-256 of the (collection, dataset, labels, content digest) of every labelling the table can hold."
    keys = sorted((t.key["collection"], t.key["dataset"], t.key["labels"], t.params["data_digest"]) for t in tasks)
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:16]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("CLM_NB_DATA", str(ROOT.parent / "shared" / "datasets")))
    ap.add_argument("--store", required=True, help="the runner's store (kept between runs: resumable)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--n-trials", type=int, default=20)
    ap.add_argument("--max-points", type=int, default=5000)
    ap.add_argument("--gt-version", default=None)
    ap.add_argument("--features-version", default=None)
    ap.add_argument("--gt-repin", action="append", default=[], metavar="TECH[,TECH]=VERSION",
                    help="these techniques' ground truth under another pinned version (after a fix of theirs)")
    ap.add_argument("--table-only", action="store_true", help="stop after the table (step 2)")
    ap.add_argument("--no-run", action="store_true", help="read what the store holds; run only the (cheap) descriptors")
    ap.add_argument("--model-only", action="store_true", help="skip the other candidates' figures (evidence.json kept)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    tasks = calibration_tasks(args.data, n_trials=args.n_trials, max_points=args.max_points,
                              gt_version=args.gt_version, features_version=args.features_version)
    for spec in args.gt_repin:                       # e.g. dbscan,hdbscan=gt2-...: their own -1 no longer left out
        techs, version = spec.split("=", 1)
        tasks["ground_truth"] = [dataclasses.replace(t, version=version) if t.key["technique"] in techs.split(",")
                                 else t for t in tasks["ground_truth"]]
    print(f"{len(tasks['features'])} labellings, {len(tasks['ground_truth'])} ground-truth tasks", flush=True)
    t0 = time.time()
    if args.no_run:
        feats, gt = (load_results(tasks[k], args.store, seed=0) for k in ("features", "ground_truth"))
        desc = run(tasks["descriptors"], store=args.store, n_jobs=args.n_jobs, seed=0, progress=True)   # seconds
    else:
        feats, desc, gt = (run(tasks[k], store=args.store, n_jobs=args.n_jobs, seed=0, progress=True)
                           for k in ("features", "descriptors", "ground_truth"))
    techniques = gt.groupby(["collection", "dataset"]).technique.nunique().max()
    table = calibration_table(feats, gt, desc)
    complete = table[table.gt_techniques == techniques].reset_index(drop=True)
    print(f"table: {len(table)} labellings, {len(complete)} with all {techniques} techniques "
          f"({time.time() - t0:.0f} s)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    complete.to_csv(OUT / "table.csv.gz", index=False)
    if args.table_only:
        return
    same = dict(level=MODEL_SPEC["level"], edges=MODEL_SPEC["edges"], min_rows=MODEL_SPEC["min_rows"])
    evidence = {"today's rule": validation_figures(complete, *rule_model(), **same)}
    for name, spec in ({} if args.model_only else CANDIDATES).items():
        evidence[name] = validation_figures(complete, *hgb_model(spec["inputs"], spec.get("monotone")), **same)
        print(f"{name:40s} " + "  ".join(f"{k} {v:.3f}" for k, v in evidence[name].items() if k != "rows"), flush=True)
    chosen = validation_figures(complete, *hgb_model(MODEL_SPEC["inputs"], MODEL_SPEC.get("monotone"),
                                                     **MODEL_SPEC.get("params", {})),
                                level=MODEL_SPEC["level"], edges=MODEL_SPEC["edges"], min_rows=MODEL_SPEC["min_rows"])
    evidence["MODEL_SPEC"] = chosen
    if not args.model_only:
        (OUT / "evidence.json").write_text(json.dumps(evidence, indent=1) + "\n")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    prov = {"bundle_digest": bundle_digest(tasks["features"]), "data": "shared bundle (455 datasets)",
            "labellings": int(len(complete)), "collections": int(complete.collection.nunique()),
            "gt_version": args.gt_version, "gt_repin": args.gt_repin, "features_version": args.features_version,
            "n_trials": args.n_trials,
            "max_points": args.max_points, "commit": commit, "command": "python benchmarks/calibrate.py",
            "validation": chosen}
    pred = fit_predictor(complete, MODEL_SPEC, provenance=prov)
    path = ROOT / "clm_nb" / "models" / "clm_ami.json"
    path.write_text(json.dumps(pred.to_dict(), indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {path} (model {pred.id}; {len(pred.model.trees)} trees); rho {chosen['rho']:.3f}, coverage "
          f"{chosen['coverage']:.3f}", flush=True)


if __name__ == "__main__":
    main()
