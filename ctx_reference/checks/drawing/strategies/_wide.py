"""Draws as wide as a text's words: any whitespace, any character, lists that hold one object twice.

Covers: the characters ``str.isspace`` accepts (``WHITESPACE``), and those of them that do not end a
line (``INLINE_WHITESPACE``: ``str.splitlines`` splits on the others); text over all of Unicode
(``any_text``) or over a range of code points; ``weighted``, which keeps an author's samples as
extra weight beside the whole domain, never as the domain; ``magnitudes``, integers spread over
every power of ten up to the largest the text mentions (so that 7, 70,000 and 900,000 are all
drawn, not only small numbers); and ``with_one_twice``, lists in which one element sometimes stands
twice as the same object.

Leaves out: what any one exercise's text allows (each strategies module says, against its text's
sentence, which of these it draws from).

Vocabulary: *samples* are values the author thinks likely to find a mistake (ties, boundaries, the
characters of the lesson); the *domain* is every value the text allows.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

#: Every character ``str.isspace`` accepts (29 of them, from "\t" to "\u3000").
WHITESPACE = "".join(chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace())

#: The whitespace characters that do not end a line for ``str.splitlines`` (space, tab, no-break and
#: ideographic spaces …): what "the whitespace at the ends of a line" can hold.
INLINE_WHITESPACE = "".join(ch for ch in WHITESPACE if len(f"a{ch}b".splitlines()) == 1)

#: The characters that end a line for ``str.splitlines`` ("\n", "\r", "\x0b", "\x1c", "\u2028" …).
LINE_ENDS = "".join(ch for ch in WHITESPACE if ch not in INLINE_WHITESPACE)


def characters(min_codepoint: int = 0, max_codepoint: int = sys.maxunicode) -> st.SearchStrategy[str]:
    """Any character between the two code points that UTF-8 can write (no lone surrogate)."""
    return st.characters(min_codepoint=min_codepoint, max_codepoint=max_codepoint, codec="utf-8")


def weighted(samples: Sequence[Any], domain: st.SearchStrategy) -> st.SearchStrategy:
    """The whole ``domain``, with ``samples`` drawn as often again (never the domain alone)."""
    return st.one_of(st.sampled_from(tuple(samples)), domain)


def any_text(samples: str = "", min_size: int = 0, max_size: int = 12,
             domain: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[str]:
    """Text of any characters of ``domain`` (all of Unicode by default), the characters of ``samples`` as extra
    weight."""
    chars = domain if domain is not None else characters()
    return st.text(weighted(samples, chars) if samples else chars, min_size=min_size, max_size=max_size)


def whitespace(min_size: int = 1, max_size: int = 6, inline: bool = False) -> st.SearchStrategy[str]:
    """Text of whitespace only: any characters ``str.isspace`` accepts (those that end no line, if ``inline``)."""
    return st.text(st.sampled_from(INLINE_WHITESPACE if inline else WHITESPACE), min_size=min_size, max_size=max_size)


@st.composite
def with_one_twice(draw, lists: st.SearchStrategy[list]) -> list:
    """A list from ``lists``, in which, half the time, one element stands a second time as the same object."""
    drawn = list(draw(lists))
    if drawn and draw(st.booleans()):
        again = drawn[draw(st.integers(0, len(drawn) - 1))]
        drawn.insert(draw(st.integers(0, len(drawn))), again)
    return drawn


@st.composite
def magnitudes(draw, min_value: int, max_value: int) -> int:
    """An integer from ``min_value`` to ``max_value`` (both >= 0), each count of digits as likely as another.

    ``magnitudes(0, 1_000_000)`` draws a one-digit number as often as a six-digit one: a uniform draw
    would almost never give a number below 100,000, and a draw of small numbers never one above 100.
    """
    if not 0 <= min_value <= max_value:
        raise ValueError(f"magnitudes needs 0 <= min_value <= max_value (got {min_value!r}, {max_value!r})")
    digits = draw(st.integers(len(str(min_value)), len(str(max_value))))
    low = max(min_value, 10 ** (digits - 1) if digits > 1 else 0)
    return draw(st.integers(low, min(max_value, 10**digits - 1)))


def positive_reals(low: float, high: float) -> st.SearchStrategy[float]:
    """A float from ``low`` to ``high`` (both > 0), spread over their orders of magnitude (any finite float between)."""
    return st.floats(math.log(low), math.log(high)).map(math.exp).map(lambda x: min(max(x, low), high))
