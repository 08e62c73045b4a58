"""Per-notebook readability figures for issue 21's targets: export cells, median and max lines per export cell,
definitions per export cell, markdown lines per code line, and lines over 120 characters in exported code.

    python tools/notebook_stats.py [nbs_dir] [--check]

`--check` exits 1 when a target is missed: no export cell over 80 lines (cells tagged `generated-table` are
exempt), median <= 30 lines, <= 1.5 definitions per export cell.
"""
import ast, json, re, statistics, sys
from pathlib import Path

MAX_LINES, MAX_MEDIAN, MAX_DEFS = 80, 30, 1.5
EXPORT = re.compile(r"^#\|\s*export(s|i)?\b")


def _definitions(src: str) -> int:
    "Top-level definitions in a cell: functions, classes and assignments of module constants."
    try: tree = ast.parse(src)
    except SyntaxError: return 0
    n = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): n += 1
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t for t in targets if isinstance(t, ast.Name)]
            if names and names[0].id.isupper(): n += 1
    return n


def stats(path: Path) -> dict:
    cells = json.loads(path.read_text())["cells"]
    export_lines, defs, md, code, long_lines, exempt = [], [], 0, 0, 0, 0
    for c in cells:
        lines = "".join(c["source"]).splitlines()
        if c["cell_type"] == "markdown":
            md += len([l for l in lines if l.strip()]); continue
        if c["cell_type"] != "code": continue
        body = [l for l in lines if l.strip()]
        code += len(body)
        if not lines or not EXPORT.match(lines[0]): continue
        long_lines += sum(len(l) > 120 for l in lines)
        if "generated-table" in c["metadata"].get("tags", []): exempt += 1; continue
        export_lines.append(len([l for l in lines[1:] if l.strip()]))
        defs.append(_definitions("\n".join(l for l in lines if not l.startswith("#|"))))
    return dict(notebook=path.name, export_cells=len(export_lines),
                median_lines=statistics.median(export_lines) if export_lines else 0,
                max_lines=max(export_lines, default=0),
                defs_per_cell=round(sum(defs) / len(defs), 2) if defs else 0.0,
                md_per_code=round(md / code, 2) if code else 0.0, over_120=long_lines, exempt=exempt)


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "nbs"
    rows = [stats(p) for p in sorted(root.glob("[0-9]*.ipynb"))]
    cols = list(rows[0])
    print(" ".join(f"{c:>14}" if i else f"{c:<18}" for i, c in enumerate(cols)))
    for r in rows: print(" ".join(f"{r[c]!s:>14}" if i else f"{r[c]!s:<18}" for i, c in enumerate(cols)))
    allc = [r for r in rows if r["export_cells"]]
    bad = [r["notebook"] for r in allc if r["max_lines"] > MAX_LINES or r["median_lines"] > MAX_MEDIAN
           or r["defs_per_cell"] > MAX_DEFS]
    print(f"\ntargets: max <= {MAX_LINES}, median <= {MAX_MEDIAN}, defs/cell <= {MAX_DEFS}; missed by: {bad or 'none'}")
    return 1 if check and bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
