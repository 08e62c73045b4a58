"""Text for people (clm_nb.text, notebook 00_text).

issue 38: the math renderer never passes raw HTML.

issue 39: progress goes to stderr, and a malformed CLM_NB_PROGRESS is refused."""
import numpy as np
import pytest

import clm_nb
from clm_nb.text import progress_bar, render_math, show_progress

from hostile import SCRIPT_MATH, live_markup


# ---- issue 38: the math renderer never passes raw HTML.

def test_math_renderer_never_passes_raw_html():
    "High #1, defence in depth: latex2mathml copies \\text{} raw; core._formula must not pass it through."
    for tex in (SCRIPT_MATH, r"$\href{javascript:window.__pwned=1}{x}$", r"$\text{<img src=x onerror=alert(1)>}$",
                r"$\text{<![CDATA[</mtext></math><script>alert(1)</script>]]>}$"):
        out = render_math(f"label {tex} end")
        assert live_markup(out) == [] and "<script" not in out and "<!" not in out, out
    assert "<math" in render_math(r"$\frac{a}{b}$")                  # real formulas are still typeset


# ---- issue 39: progress goes to stderr, and a malformed CLM_NB_PROGRESS is refused.

def test_progress_goes_to_stderr_and_is_refused_when_malformed(capsys):
    import time
    for i in progress_bar(range(2), "counting"):      # the bar shows after 2 s: a first step longer than that
        time.sleep(2.1 if i == 0 else 0)
        print(i)
    out = capsys.readouterr()
    assert out.out == "0\n1\n"
    assert "counting" in out.err and "2/2" in out.err
    assert progress_bar([1], False) == [1]
    with pytest.raises(ValueError, match="progress=2"):
        show_progress(2)
    with pytest.raises(ValueError, match="progress="):
        clm_nb.assess(np.zeros((6, 2)), [0, 0, 0, 1, 1, 1], progress=5)
