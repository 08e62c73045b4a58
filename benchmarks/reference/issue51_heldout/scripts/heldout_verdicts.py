"""Issue 51, item 5, phase 2 (run once the packaged model is final): each held-out CSV through the command line as a
user runs it (defaults; --missing drop only when the tool's own message asks for it), in both modes, joined with phase
1's ground truth and oracle. Writes /work/store/i51/heldout_results.csv."""
import sys, json
import pandas as pd, numpy as np
sys.path.insert(0, "/work/store/i51/dev")
from heldout import cli_assess, MAN
gt = pd.read_csv("/work/store/i51/heldout_gt.csv").set_index("file")
rows = []
for _, m in MAN.iterrows():
    row = {"file": m.file, "label": m.label}
    extra = ("--missing", "drop") if gt.at[m.file, "missing"] == "drop" else ()
    a, err = cli_assess(m.file, m.label, "prediction", extra)
    r, err2 = cli_assess(m.file, m.label, "rule", extra)
    row["error"] = err or err2
    if a is not None:
        p = a["prediction"] or {}
        row |= {"n": a["n"], "d": a["d"], "K": a["n_classes"], "verdict": a["verdict"], "borderline": "/".join(a["borderline"] or []),
                "expected": p.get("expected"), "low": p.get("low"), "high": p.get("high"), "reason": a["reason"],
                "left_out": ";".join(a["left_out"]), "rule_verdict": r["verdict"] if r else ""}
    rows.append(row)
    print(m.file, row.get("verdict"), flush=True)
out = pd.DataFrame(rows).merge(gt.reset_index(), on="file", how="left")
out.to_csv("/work/store/i51/heldout_results.csv", index=False)
