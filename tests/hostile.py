"""What the hostile-input tests share (issue 38: probes of a careless or hostile user, each a regression test that
failed before its fix): hostile labels and names, data float64 cannot carry, and ways to run a probe bounded in memory,
file size and time. Used by the tests of the modules the probes reach (test_readers, test_core, test_assessment,
test_cli, test_report, test_runner, ...) and by conftest.py's hostile fixtures."""
import html.parser
import json
import os
import re
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import clm_nb


# ---- issue 38: hostile and careless input files (bombs, devices, pipes, huge labels, encodings, spreadsheets), ...

TIMEOUT = 60                                      # seconds; the fixed code answers each probe in about one import


# ---- issue 38 (and 49): numbers float64 cannot carry (±1e308, int64 beyond 2^53, ±inf, complex), label ...

RNG = np.random.default_rng(38)


def separated_blobs(n_per=20, k=3, d=3, seed=0):
    "k well separated Gaussian blobs of n_per points in d dimensions, and their labels."
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(loc=4 * c, size=(n_per, d)) for c in range(k)])
    return X, np.repeat(np.arange(k), n_per)


def huge(X):
    "X with its second column replaced by ±1e308 (finite, and the probe of the issue)."
    X = X.copy()
    X[:, 1] = np.where(np.random.default_rng(1).random(len(X)) < 0.5, 1e308, -1e308)
    return X


def bounded(code: str, limit_bytes: int = 3 << 30, timeout: int = 120) -> dict:
    """Run `code` (which prints one JSON line last) in a fresh interpreter under RLIMIT_AS = `limit_bytes` and a
    timeout; return the parsed JSON."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NUMBA_NUM_THREADS="2")
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
                       preexec_fn=limit, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def with_inf(X, row=5, col=2, value=np.inf):
    X = X.copy()
    X[row, col] = value
    return X


# ---- issue 38: a label, a column or a dataset name a hostile user chose, rendered through every output, runs no ...

# Each payload, if it ever ran, sets window.__pwned (the canary) and opens a dialog.
SCRIPT_MATH = r"$\text{<script>window.__pwned=1;alert(1)</script>}$"


IMG = '"><img src=x onerror="window.__pwned=2;alert(2)">'


LINK = "javascript:window.__pwned=3//=HYPERLINK(1)"


ANSI = "=1+1\x1b[31mred\x1b]0;title\x07"


BIDI = "\u202eevil<script>window.__pwned=4</script>"


LABELS = [SCRIPT_MATH, IMG, LINK, ANSI, BIDI]


SIZES = [80, 80, 5, 5, 5]          # two big overlapping classes: the dominant-pair hint names them (in HTML, as math)


# control, bidirectional and invisible format characters (core's terminal_text class), newline and tab allowed
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


def hostile_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = [(0, 0), (0, 0), (10, 0), (0, 10), (10, 10)]
    X = np.vstack([rng.normal(c, 1, (s, 2)) for c, s in zip(centers, SIZES)])
    return X, np.repeat(np.array(LABELS, dtype=object), SIZES)


class Elements(html.parser.HTMLParser):
    "The start tags of a document: (tag, attributes)."
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def live_markup(doc: str) -> list[str]:
    "What in `doc` a browser would run: a script or element carrying a payload, an event handler, a javascript: link."
    p = Elements()
    p.feed(doc)
    bad = []
    for tag, attrs in p.tags:
        if tag == "img" or (tag == "script" and "__pwned" in doc):
            bad.append(tag)
        bad += [f"{tag} {k}" for k, v in attrs.items() if k.startswith("on") or "javascript:" in (v or "").lower()]
    return bad


# ---- issue 38: a hostile or careless store, output folder or option is refused in one line before any work.

CODE = Path(clm_nb.__file__).resolve().parents[1]      # the checkout whose clm_nb is under test


CLM_NB = Path(sys.executable).parent / "clm-nb"


def one_line_error(code, stdout, stderr, *fragments):
    "Exit code 1, one line `Error: ...` on stderr with every fragment, no traceback."
    assert code == 1, (code, stdout, stderr)
    assert "Traceback" not in stdout + stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def limited(fsize: int):
    "A preexec_fn: files may grow to `fsize` bytes (then EFBIG, SIGXFSZ ignored), memory 4 GB."
    def set_limits():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # inherited across exec: the spawned workers ignore it too
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    return set_limits
