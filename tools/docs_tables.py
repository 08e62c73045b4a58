"""Refresh the text the docs take from the registry (issue 50): the regions of README.md and docs/*.md between
`<!-- begin: NAME -->` and `<!-- end: NAME -->`, each written by a function of `clm_nb.catalog`.

    python tools/docs_tables.py          # rewrite the regions that are out of date, and say which
    python tools/docs_tables.py --check  # exit 1 when a region is out of date (changes nothing)

NAME is one of `GENERATORS`: `measure-counts` ("80 measures: 43 internal, ..."; a region inside a sentence) and
`measure-table` (the table of the measures by notebook; a block region, the table between blank lines). The pages stay
plain Markdown that reads the same on GitHub, and `make docs` copies them as they are, so `git status` stays clean;
tests/test_docs_tables.py fails when a region differs from what the registry says now.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGION = re.compile(r"(<!-- begin: ([\w-]+) -->)(.*?)(<!-- end: \2 -->)", re.S)


def _generators() -> dict:
    "NAME -> the function that writes its region (imported on use: the package loads every measure)."
    from clm_nb import catalog
    return {"measure-counts": catalog.measure_counts_text,
            "measure-table": lambda: "\n\n" + catalog.measure_table() + "\n\n"}


GENERATORS = ("measure-counts", "measure-table")


def pages() -> list[Path]:
    "The pages that may hold regions: README.md and docs/*.md."
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def refreshed(text: str) -> tuple[str, list[str]]:
    "`text` with every region rewritten by its generator, and the names of the regions that changed."
    gen, changed = _generators(), []

    def one(m):
        name = m.group(2)
        if name not in gen:
            raise ValueError(f"unknown region {name!r}; the regions are {GENERATORS}")
        new = gen[name]()
        if new != m.group(3):
            changed.append(name)
        return m.group(1) + new + m.group(4)
    return REGION.sub(one, text), changed


def main(argv) -> int:
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new, changed = refreshed(text)
        if changed:
            stale += [f"{page.relative_to(ROOT)}: {name}" for name in changed]
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    if "--check" in argv:
        if stale:
            print(f"out of date: {', '.join(stale)}; run python tools/docs_tables.py")
        return 1 if stale else 0
    print(f"refreshed: {', '.join(stale)}" if stale else "every generated region is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
