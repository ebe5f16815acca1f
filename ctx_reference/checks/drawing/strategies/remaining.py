"""Strategies of notebook 02's exercise ``remaining(window, read, write, input, max_tokens)``.

The text's domain: a window and four non-negative token counts. The strategies draw small windows
(so that the boundary "below a tenth of the window" is hit exactly, with windows that are and are
not multiples of 10), usages that overrun the window (a negative ``left``), and the lesson's sizes.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....window import remaining
from . import Call, calls

_SMALL = st.integers(min_value=0, max_value=30)
_WINDOWS = st.sampled_from([1, 9, 10, 11, 19, 20, 21, 100, 1_005, 200_000, 1_000_000]) | st.integers(1, 40)


@st.composite
def _at_a_tenth(draw) -> Call:
    """A call whose ``left`` is the window's tenth, or one token either side of it."""
    window = draw(_WINDOWS)
    left = window // 10 + draw(st.sampled_from([-1, 0, 1]))
    used = window - left
    read = draw(st.integers(0, max(0, used)))
    write = draw(st.integers(0, max(0, used - read)))
    max_tokens = draw(st.integers(0, max(0, used - read - write)))
    return (window, read, write, used - read - write - max_tokens, max_tokens), {}


ORACLES = {"remaining": remaining}

STRATEGIES = {
    "remaining": {
        "every-field": calls(_WINDOWS, _SMALL, _SMALL, _SMALL, _SMALL),
        "over-the-window": calls(st.integers(1, 20), st.integers(0, 40), _SMALL, st.integers(10, 40), _SMALL),
        "at-a-tenth": _at_a_tenth(),
    },
}
