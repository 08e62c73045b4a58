"""Check every internal link of a static site: `python tools/check_links.py SITE_DIR` (exit 1 when one is broken).

For each HTML file under SITE_DIR, every `href`/`src` that is not an external URL (http:, https:, mailto:, data:,
javascript:) must name a file that exists inside the site and, when it has a `#fragment`, an element with that id
(or a named anchor) in the target page. Resources (stylesheets, scripts, images, fonts) must be local: a page of
this site must load nothing from the network. `make docs` runs it after building; tests/test_docs.py and
tests/test_report.py use `broken_links` and `hrefs`.
"""
from __future__ import annotations

import sys
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL = ("http:", "https:", "mailto:", "javascript:", "tel:")
INLINE = ("data:", "about:")                                    # no request at all
RESOURCE_TAGS = {("link", "href"), ("script", "src"), ("img", "src"), ("source", "src"), ("iframe", "src")}


class _Page(HTMLParser):
    "Collects the ids (and named anchors) of a page and its links, each with whether it is a loaded resource."

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        for attr in ("href", "src"):
            if a.get(attr) is not None:
                rel = (a.get("rel") or "").split()
                resource = (tag, attr) in RESOURCE_TAGS and not (tag == "link" and "canonical" in rel)
                self.links.append((a[attr], resource))


@lru_cache(maxsize=None)
def parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def hrefs(page: str | Path) -> list[str]:
    "The `href`/`src` values of one page, in order."
    return [url for url, _ in parse(Path(page).resolve()).links]


def broken_links(site: str | Path, *, outside_ok: bool = False) -> list[str]:
    """Every broken internal link and every external resource of the site under `site`, as readable lines.
    `outside_ok`: links to files outside `site` are not checked (a report inside a docs site links up into it)."""
    site = Path(site).resolve()
    parse.cache_clear()
    problems = []
    for page in sorted(site.rglob("*.html")):
        where = page.relative_to(site)
        for url, resource in parse(page).links:
            if url.startswith(INLINE):
                continue
            if url.startswith(EXTERNAL) or url.startswith("//"):
                if resource:
                    problems.append(f"{where}: loads {url} from the network")
                continue
            parts = urlsplit(url)
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if site not in target.parents and target != site:
                if not outside_ok:
                    problems.append(f"{where}: {url} points outside the site")
            elif not target.exists():
                problems.append(f"{where}: {url} -> missing file {target.relative_to(site)}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                problems.append(f"{where}: {url} -> no id '{unquote(parts.fragment)}' in {target.relative_to(site)}")
    return problems


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        sys.exit("usage: python tools/check_links.py SITE_DIR")
    found = broken_links(sys.argv[1])
    pages = sum(1 for _ in Path(sys.argv[1]).rglob("*.html"))
    for line in found:
        print(line)
    print(f"{pages} pages checked: {len(found)} broken link(s) or external resource(s)")
    sys.exit(1 if found else 0)
