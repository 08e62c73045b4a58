"""Issue 51, second held-out set, phase 2 (run once, after the packaged model is final): each CSV through the command
line as a user runs it (defaults, plus the options the tool's own messages asked for in phase 1), in both modes
(`--verdict-by prediction` and `rule`), joined with phase 1's ground truth and oracle.
    python heldout2_verdicts.py DATA_DIR GT_CSV OUT_CSV ["--scaling standardize"]
The optional last argument adds options to every call (the oracle's reading: features standardized)."""
import json, subprocess, sys
from pathlib import Path
import pandas as pd
HERE = Path(__file__).resolve().parent
DATA, GT, OUT = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ALSO = sys.argv[4].split() if len(sys.argv) > 4 else []
MAN = pd.read_csv(HERE.parent / "manifest.csv")
CLI = str(Path(sys.executable).parent / "clm-nb")

def cli_assess(f, label, mode, extra):
    r = subprocess.run([CLI, "assess", str(DATA / f), "--label-col", label, "--json", "--verdict-by", mode, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    return json.loads(r.stdout), ""

gt = pd.read_csv(GT).set_index("file")
rows = []
for _, m in MAN.iterrows():
    f, label = m["file"], m["label"]
    opts = gt.at[f, "options"] if f in gt.index and isinstance(gt.at[f, "options"], str) else ""
    extra = opts.split() + ALSO
    row = {"file": f, "label": label}
    a, err = cli_assess(f, label, "prediction", extra)
    r, err2 = cli_assess(f, label, "rule", extra)
    row["error"] = err or err2
    if a is not None:
        p = a["prediction"] or {}
        row |= {"n": a["n"], "d": a["d"], "K": a["n_classes"], "verdict": a["verdict"],
                "borderline": "/".join(a["borderline"] or []), "expected": p.get("expected"), "low": p.get("low"),
                "high": p.get("high"), "reason": a["reason"], "left_out": ";".join(a["left_out"]),
                "rule_verdict": r["verdict"] if r else "", "model": p.get("model")}
    rows.append(row)
    print(f, row.get("verdict"), flush=True)
pd.DataFrame(rows).merge(gt.reset_index(), on="file", how="left").to_csv(OUT, index=False)
