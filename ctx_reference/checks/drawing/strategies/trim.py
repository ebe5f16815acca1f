"""Strategies of notebook 05's exercise ``trim_lines(lines, head, tail)``.

The text's domain ("When ``len(lines) <= head + tail``, return a new list that holds all the
lines"; "``lines`` may be a list or a tuple; always return a ``list``"; its examples run to 150
lines): a list or a tuple of lines (any strings) and two counts ``head`` and ``tail`` of 0 or
more. The strategies draw up to a dozen lines of any characters (``_wide.any_text``), with
samples as extra weight so that equal lines repeat: empty, blank, whitespace-only and newline-only
lines, a ``#`` comment, an indented line, CJK, emoji, an accented letter, and a line that reads
like the omission marker itself; ``head`` and ``tail`` 0 often; and lengths exactly at
``head + tail`` (nothing omitted), one past it (one line omitted), or many past it, as lists and
as tuples. Narrower than the text: at most a dozen lines beyond ``head + tail`` (every count of
omitted lines the rules tell apart, 0, 1 and many, occurs).
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....trim import omission_marker, trim_lines
from . import Call
from ._wide import any_text, weighted

_LINES = weighted((
    "a", "b", "a", "", " ", "\n", "\t", "#", "# 注释", "    indented", "中文", "😀", "é", omission_marker(1),
), any_text(max_size=6))
_COUNTS = st.sampled_from((0, 0, 1, 2, 3)) | st.integers(0, 6)
_AS_LIST = st.just(False)


@st.composite
def _trim_call(draw, extra: st.SearchStrategy[int], as_tuple: st.SearchStrategy[bool] = _AS_LIST) -> Call:
    """Lines whose count is head + tail + ``extra`` (never below 0), as a list or a tuple."""
    head, tail = draw(_COUNTS), draw(_COUNTS)
    size = max(0, head + tail + draw(extra))
    lines = draw(st.lists(_LINES, min_size=size, max_size=size))
    return ((tuple(lines) if draw(as_tuple) else lines), head, tail), {}


ORACLES = {"trim_lines": trim_lines}

STRATEGIES = {
    "trim_lines": {
        "short-enough": _trim_call(st.sampled_from((0, 0, -1, -2)) | st.integers(-8, 0)),
        "one-past": _trim_call(st.just(1)),
        "many-past": _trim_call(st.integers(2, 9)),
        "tuples": _trim_call(st.integers(-2, 4), as_tuple=st.just(True)),
    },
}

#: Calls drawn per strategy: about 6,000 visible cases (and as many hidden), where most exercises have
#: about 3,000: a case of trim_lines costs about 0.05 ms in a check cell (``benchmarks/bench_checks.py``).
EXAMPLES = {"trim_lines": 1500}
