"""Keep generated calls whose float results a hidden digest can compare: none lies on a rounding tie.

A hidden generated case compares the digest of the value rounded to ``places`` decimals. A value
that lies on (or within float noise of) a tie at that place, such as 0.3828125 at 6 places, would
round either way for a correct function that computes in another order; such calls are dropped
from the bank, visible and hidden alike.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from . import Call

MARGIN = 1e-3  # in units of the last kept place: how far from a tie a value must be


def floats_in(value: Any) -> list[float]:
    """Return the floats inside a value of plain data (tuples, lists and dict values walked)."""
    if type(value) is float:
        return [value]
    if type(value) in (list, tuple):
        return [f for item in value for f in floats_in(item)]
    if type(value) is dict:
        return [f for item in value.values() for f in floats_in(item)]
    return []


def clear_of_ties(value: Any, places: int) -> bool:
    """Return True if no float of ``value`` lies within MARGIN of a rounding tie at ``places`` decimals."""
    for number in floats_in(value):
        if not math.isfinite(number):
            continue
        scaled = abs(number) * 10**places
        if abs(scaled - math.floor(scaled) - 0.5) < MARGIN:
            return False
    return True


def without_ties(calls: st.SearchStrategy[Call], oracle: Callable, places: int,
                 project: Callable[[Any], Any] | None = None) -> st.SearchStrategy[Call]:
    """Return ``calls`` without the calls whose result (projected) lies on a rounding tie at ``places``."""
    def clear(call: Call) -> bool:
        args, kwargs = call
        try:
            value = oracle(*args, **kwargs)
        except (ValueError, TypeError, ZeroDivisionError):
            return True  # an error is compared by its name, not rounded
        return clear_of_ties(project(value) if project is not None else value, places)
    return calls.filter(clear)
