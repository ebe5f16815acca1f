"""Strategies of notebook 02's exercise ``remaining(window, read, write, input, max_tokens)``.

The text's domain ("Return ``(left, compact)``: ``left`` is the room left, as an integer (it can be
negative when the request is over the window), and ``compact`` is ``True`` when ``left`` is less than
one tenth of the window"; its example: a window of 1,000,000 with 800,000 read, 50,000 written,
20,000 input and 64,000 for ``max_tokens``): a window of 1 token or more and four token counts of
0 or more. The strategies draw windows of every magnitude up to 2,000,000 (``_wide.magnitudes``;
windows that are and are not multiples of 10, 1 to 21, 100, 1,005 and the lesson's 200,000 and
1,000,000 weighted) and counts of every magnitude up to the window, each drawn independently (so
that equal counts occur); usages that overrun the window by one token or by any amount (a
negative ``left``); and ``left`` exactly at the window's tenth or one token either side of it.
Narrower than the text: no window over twice the largest the text mentions, and no negative or
non-integer count (the reference raises on them; the text does not say what to do).
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....window import remaining
from . import Call, call
from ._wide import magnitudes, weighted

_LARGEST = 2_000_000  # twice the largest window the text mentions
_WINDOWS = weighted([1, 9, 10, 11, 19, 20, 21, 100, 1_005, 200_000, 1_000_000], magnitudes(1, _LARGEST))


def _count(window: int) -> st.SearchStrategy[int]:
    """A token count of any magnitude up to the window (0 and the window weighted)."""
    return weighted([0, 1, window], magnitudes(0, window))


@st.composite
def _every_field(draw) -> Call:
    """Any window and four counts each up to the window, drawn independently: ``left`` of either sign."""
    window = draw(_WINDOWS)
    return call(window, *(draw(_count(window)) for _ in range(4)))


@st.composite
def _over_the_window(draw) -> Call:
    """Counts whose sum overruns the window by one token or by any amount up to the window again."""
    window = draw(_WINDOWS)
    over = draw(weighted([1, 2], magnitudes(1, window)))
    total = window + over
    read = draw(magnitudes(0, total))
    write = draw(magnitudes(0, total - read))
    max_tokens = draw(magnitudes(0, total - read - write))
    return call(window, read, write, total - read - write - max_tokens, max_tokens)


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
        "every-field": _every_field(),
        "over-the-window": _over_the_window(),
        "at-a-tenth": _at_a_tenth(),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"remaining": 1000}
