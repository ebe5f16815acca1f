"""Strategies of notebook 03's exercise ``recall(pos, n, half_at=400_000, steep=1.5, middle=0.3)``.

The text's domain: token counts ``0 <= pos < n``, a length ``half_at`` at which the base recall is
one half, a steepness ``steep`` (the text uses 1.5, 2 and 3; any positive number) and a share
``middle`` taken off at the very middle (0 to 1). Each parameter is either passed by keyword or
left to its default, so that a wrong default shows. The strategies draw lengths at, below and
above ``half_at`` (a half, the same, twice, four times; the lesson's 400,000 and 800,000 and
lengths up to 10**9), steepness below, at and above 1, tiny contexts of 1 to 12 tokens whose
every position is drawn (so that the token's midpoint ``pos + 0.5`` decides the value), the first
and the last token, and ``middle`` 0, 1 and between. Calls whose value lies on a rounding tie at
the hidden digests' 6 places are left out (``_floats.py``).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .... import recall
from ..signatures import LEARNER_CALLS
from . import Call
from ._floats import without_ties

PLACES = 6  # the hidden digests' rounding (checks/recall.py GENERATED)

_HALF_AT = st.sampled_from((1, 2, 3, 10, 100_000, 400_000))
_STEEP = st.sampled_from((0.5, 1, 1.0, 1.5, 2, 3))
_MIDDLE = st.sampled_from((0, 0.3, 0.5, 1, 1.0)) | st.integers(0, 100).map(lambda k: k / 100)
_DEFAULT = object()  # a parameter left to the function's default


def _params(draw, half_at=None, steep=None, middle=None) -> dict:
    """Return the keyword arguments of a call: each parameter drawn, or left out for its default."""
    chosen = {"half_at": half_at, "steep": steep, "middle": middle}
    drawn = {"half_at": _HALF_AT, "steep": _STEEP, "middle": _MIDDLE}
    kwargs = {}
    for name in ("half_at", "steep", "middle"):
        value = chosen[name] if chosen[name] is not None else draw(st.sampled_from((_DEFAULT, "draw")))
        if value == "draw":
            value = draw(drawn[name])
        if value is not _DEFAULT:
            kwargs[name] = value
    return kwargs


@st.composite
def _lengths(draw) -> Call:
    """No position effect (``middle=0``, or the first token): n a half, once, twice or four times ``half_at``."""
    kwargs = _params(draw, middle=draw(st.sampled_from((0, _DEFAULT))))
    half_at = kwargs.get("half_at", 400_000)
    n = max(1, int(half_at * draw(st.sampled_from((0.5, 1, 2, 4)))))
    if draw(st.booleans()):
        n = draw(st.sampled_from((1, 1_000, 32_000, 400_000, 800_000, 2_000_000, 10**9)))
    pos = draw(st.sampled_from((0, n - 1))) if "middle" in kwargs else 0
    return (pos, n), kwargs


@st.composite
def _positions(draw) -> Call:
    """A context of 1 to 12 tokens, any position in it; ``middle`` 0, 1 or between."""
    n = draw(st.integers(1, 12))
    pos = draw(st.integers(0, n - 1))
    return (pos, n), _params(draw, half_at=draw(st.sampled_from((_DEFAULT, n, 1, 10))))


@st.composite
def _lesson_positions(draw) -> Call:
    """The lesson's lengths with the answer at the first, the last, the middle or any token."""
    n = draw(st.sampled_from((32_000, 50_000, 400_000, 800_000)))
    pos = draw(st.sampled_from((0, n - 1, n // 2, n // 2 - 1)) | st.integers(0, n - 1))
    return (pos, n), _params(draw)


_recall = LEARNER_CALLS["recall"](vars(recall))


ORACLES = {"recall": _recall}

STRATEGIES = {
    "recall": {
        "lengths": without_ties(_lengths(), _recall, PLACES),
        "tiny-contexts": without_ties(_positions(), _recall, PLACES),
        "lesson-positions": without_ties(_lesson_positions(), _recall, PLACES),
    },
}
