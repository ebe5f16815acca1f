"""Strategies of notebook 03's exercise ``recall(pos, n, half_at=400_000, steep=1.5, middle=0.3)``.

The text's domain ("write ``recall(pos, n, half_at=400_000, steep=1.5, middle=0.3)``, which returns
a float. ``pos`` and ``n`` are both in tokens, and ``0 <= pos < n``"; its contexts run from 32,000
to 2,000,000 tokens): token counts ``0 <= pos < n``, a length ``half_at`` at which the base recall
is one half, a steepness ``steep`` (the text uses 1.5, 2 and 3; any positive number) and a share
``middle`` taken off at the very middle (0 to 1). Each parameter is either passed by keyword or
left to its default, so that a wrong default shows. The strategies draw ``half_at`` of every
magnitude up to 2,000,000 (``_wide.magnitudes``; 1 to 10, 100,000 and 400,000 weighted), lengths
at, below and above it (a half, the same, twice, four times) or of any magnitude up to 10**9
(the lesson's 400,000 and 800,000 weighted), any steepness from 0.1 to 5 (0.5, 1, 1.5, 2 and 3
weighted, as ints and floats), any ``middle`` from 0 to 1 (0, 0.3, 0.5 and 1 weighted), tiny
contexts of 1 to 12 tokens whose every position is drawn (so that the token's midpoint
``pos + 0.5`` decides the value), and the first, the last, the middle or any token of contexts of
any length. Narrower than the text: steepness between 0.1 and 5 (a larger one only pushes the
base recall to 0 or 1); calls whose value lies on a rounding tie at the hidden digests' 6 places
are left out (``_floats.py``).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .... import recall
from ..signatures import LEARNER_CALLS
from . import Call
from ._floats import without_ties
from ._wide import magnitudes, positive_reals, weighted

PLACES = 6  # the hidden digests' rounding (checks/recall.py GENERATED)

_LARGEST = 2_000_000  # the longest context the text mentions
_HALF_AT = weighted((1, 2, 3, 10, 100_000, 400_000), magnitudes(1, _LARGEST))
_STEEP = weighted((0.5, 1, 1.0, 1.5, 2, 3), positive_reals(0.1, 5.0))
_MIDDLE = weighted((0, 0.3, 0.5, 1, 1.0), st.integers(0, 100).map(lambda k: k / 100) | st.floats(0, 1))
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
        n = draw(weighted((1, 1_000, 32_000, 400_000, 800_000, 2_000_000, 10**9), magnitudes(1, 10**9)))
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
    """Contexts of any length (the lesson's weighted), the answer at the first, the last, the middle or any token."""
    n = draw(weighted((32_000, 50_000, 400_000, 800_000), magnitudes(2, _LARGEST)))
    pos = draw(weighted((0, n - 1, n // 2, n // 2 - 1), magnitudes(0, n - 1)))
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

#: Calls drawn per strategy: about 9,000 visible cases (and as many hidden), where most exercises have
#: about 3,000: a case of recall costs about 0.03 ms in a check cell (``benchmarks/bench_checks.py``).
EXAMPLES = {"recall": 3000}
