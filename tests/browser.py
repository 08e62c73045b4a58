"""What the browser tests share (test_docs, test_report, test_notebooks_open_clean): Debian's Chromium, the flags
that let it run headless here, Playwright, and the marks that skip a test, saying why, when either is missing."""
import shutil

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
