"""What the browser tests share (test_docs, test_report, test_notebooks_open_clean): Debian's Chromium, the flags
that let it run headless here, Playwright, and the marks that skip a test, saying why, when either is missing."""
import shutil
from contextlib import contextmanager

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# No sandbox as root, and no background connections to Google's hosts (the network is closed, so each would be
# refused and logged).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:                                              # pragma: no cover - the dev extra installs it
    sync_playwright = None

NEEDS_BROWSER = [
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not found: install Debian's chromium (apt-get install "
                                                "chromium) to run the browser tests; .ci/run installs it"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright not installed: pip install -e '.[dev]'"),
]


@contextmanager
def fragment_page(html: str, tmp_path):
    """A Chromium page showing the HTML fragment `html` (an object's `_repr_html_()`, as a notebook shows it), written
    to a file in `tmp_path`; the test is skipped, saying why, when Chromium or Playwright is missing."""
    if CHROMIUM is None or sync_playwright is None:
        pytest.skip("Chromium or playwright missing (see tests/browser.py)")
    page_file = tmp_path / "fragment.html"
    page_file.write_text(f"<!doctype html><meta charset='utf-8'><body>{html}</body>", encoding="utf-8")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = b.new_page()
            page.goto(page_file.as_uri())
            yield page
        finally:
            b.close()
