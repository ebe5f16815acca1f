"""Strategies of notebook 01's exercises ``check(size, input_tokens, max_tokens)`` and ``estimate_tokens(text)``.

``check``'s domain, against its text ("Write ``check(size, input_tokens, max_tokens)``. It returns
one of ``Outcome.FITS``, ``Outcome.MAY_TRUNCATE`` or ``Outcome.REJECTED``"; the lesson's problem is
"a window of 1,000,000 tokens, an input of 950,000 tokens, and ``max_tokens`` at 128k"): a window of
``size`` tokens (at least 1) and two token counts of 0 or more. The strategies draw windows of
every magnitude from 1 to 2,000,000 tokens (``_wide.magnitudes``: a 3-digit window as often as a
7-digit one; 1 to 4, 10 and the lesson's 200,000 and 1,000,000 weighted), with the input, or the
input plus ``max_tokens``, over the window by one token, a few, or any amount up to the window
again, exactly at it, or (the sum) one token or any amount below it; ``max_tokens`` of every
magnitude up to 1,000,000 (0, 1 and the window weighted); the two counts drawn independently, so
that they are often equal. Narrower than the text: no window over 2,000,000 (twice the largest the
text mentions) and no negative count (the reference raises on it; the text does not say what to do).

``estimate_tokens``'s domain, against its text ("按上面的规则返回一个整数": every 4 ASCII characters,
rounded up, and every other character, one token each): any text. The strategies draw texts of
any Unicode characters (``_wide.any_text``), with the author's samples as extra weight: ASCII only
(any code point below 128; letters, digits, spaces, tabs, newlines, ``#`` and code point 127
weighted), whitespace only (any character ``str.isspace`` accepts, ASCII or not), non-ASCII only
(any code point from 128; CJK, full-width punctuation, accented letters, emoji, the ideographic
and the no-break space weighted), the characters just above ASCII (code points 128, 129, 255),
and both kinds interleaved, so that every remainder of the ASCII count by 4 occurs. Code point
127 stands in the ASCII texts whose length is a multiple of 4, so that a wrong boundary shows as
breaking "4 to a token". The text counts characters (``ord(ch)``): an emoji of several code
points is several characters, as any string of them is. Narrower than the text: texts of at most
14 characters (a longer text only repeats the remainders by 4 that these already hold).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .... import window
from ....tokens import estimate_tokens
from ..signatures import LEARNER_CALLS
from . import Call, call
from ._wide import any_text, characters, magnitudes, weighted, whitespace

_LESSON_SIZES = (200_000, 1_000_000)
_LARGEST = 2_000_000  # twice the largest window the text mentions
_SIZES = weighted((1, 2, 3, 4, 10) + _LESSON_SIZES, magnitudes(1, _LARGEST))
_MAX_TOKENS = magnitudes(0, 1_000_000)  # the lesson's 128k among them


def _by(size: int) -> st.SearchStrategy[int]:
    """How far over (or under) the window: one token, a few, or any amount up to the window again."""
    return weighted((1, 1, 2, size), magnitudes(1, size))


def _check(size: int, input_tokens: int, max_tokens: int) -> Call:
    return call(size, input_tokens, max_tokens)


@st.composite
def _input_over(draw) -> Call:
    """An input one or a few tokens over the window; ``max_tokens`` 0, small or as large as the window."""
    size = draw(_SIZES)
    input_tokens = size + draw(_by(size))
    return _check(size, input_tokens, draw(weighted((0, 1, size), _MAX_TOKENS)))


@st.composite
def _total_over(draw) -> Call:
    """An input below the window (0 included) and input + ``max_tokens`` one or a few tokens over it.

    An input exactly the window is ``_exactly_full``'s: that case tells "equal is not over" apart.
    """
    size = draw(_SIZES)
    input_tokens = draw(weighted((0, size - 1), magnitudes(0, size - 1)))
    return _check(size, input_tokens, size - input_tokens + draw(_by(size)))


@st.composite
def _exactly_full(draw) -> Call:
    """The input exactly the window (``max_tokens`` 0 or more), or input + ``max_tokens`` exactly the window
    (or one token below it)."""
    size = draw(_SIZES)
    if draw(st.booleans()):
        return _check(size, size, draw(weighted((0, 0, 1, size), _MAX_TOKENS)))
    input_tokens = draw(weighted((0, size), magnitudes(0, size)))
    below = draw(weighted((0, 0, 1), magnitudes(0, size)))  # exactly full, one token below, or any amount
    return _check(size, input_tokens, max(0, size - input_tokens - below))


_ASCII = "ab Z0#\n\t"
_WHITESPACE = " \n\t\r"
_OTHER = "中文，。é😀\x80\u3000\u00a0"


def _text(samples: str, min_size: int = 0, max_size: int = 13, domain: st.SearchStrategy[str] | None = None
          ) -> st.SearchStrategy[Call]:
    return st.builds(call, any_text(samples, min_size, max_size, domain))


_ANY_ASCII = characters(0, 127)
_ANY_OTHER = characters(128)


ORACLES = {
    "check": LEARNER_CALLS["check"](vars(window)),
    "estimate_tokens": estimate_tokens,
}

STRATEGIES = {
    "check": {
        "input-over": _input_over(),
        "total-over": _total_over(),
        "exactly-full": _exactly_full(),
    },
    "estimate_tokens": {
        "ascii-fours": st.integers(0, 3).flatmap(lambda n: _text(_ASCII + "\x7f", 4 * n, 4 * n, _ANY_ASCII)),
        "whitespace-only": st.builds(call, whitespace(1, 9)),
        "ascii-any-length": _text(_ASCII, domain=_ANY_ASCII),
        "other-only": _text(_OTHER, max_size=8, domain=_ANY_OTHER),
        "code-point-128": st.builds(call, st.text(alphabet="\x80\x81\xff", min_size=1, max_size=9)),
        "interleaved": _text(_ASCII + _OTHER, min_size=2, max_size=14),
    },
}

#: Calls drawn per strategy: about 9,000 visible cases per exercise (and as many hidden), where the other
#: exercises have about 3,000: a case of check or estimate_tokens costs about 0.02 ms in a check cell,
#: the cheapest of all (``benchmarks/bench_checks.py``).
EXAMPLES = {"check": 3000, "estimate_tokens": 1500}
