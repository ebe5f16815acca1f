"""Strategies of notebook 06's exercises ``select_to_clear`` and ``request_cost``.

``select_to_clear(context_tokens, uncleared_turns, turn, params)``'s domain: the context after
this turn (0 tokens or more), the turns whose tool result is still in full, oldest first (as the
simulation passes them: the newest ones up to this turn, as a ``range`` or a ``list``, maybe
none), the current turn (1 or more) and a ``SimParams`` whose ``threshold``, ``keep``,
``tool_result``, ``placeholder`` (not more than ``tool_result``) and ``clear_at_least`` matter.
The strategies draw the context exactly at the threshold or one token either side of it, ``keep``
0, 1, the lesson's 5, the whole run and more, ``clear_at_least`` exactly what the candidates free
or one token either side of it, placeholders of 0, of the whole tool result and one token below
it, and the lesson's sizes beside small ones.

``request_cost(input_tokens, previous_input, rewrote, params)``'s domain: this request's input
(0 tokens or more), the previous one (``None`` for the first request; otherwise, when nothing was
rewritten, at most this one: the context only grows between rewrites) and the prices of
``params`` (0 or more). The strategies draw first requests and rewrites with any previous input,
cache hits whose new part is 0, small, the previous input exactly or more than twice it
(``previous_input`` 0 included), and prices other than the lesson's 1.25 and 0.1, 0 among them.
"""
from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from ....sim import SimParams, request_cost, select_to_clear
from . import Call
from ._floats import without_ties

PLACES = 6  # request_cost's hidden digests' rounding (checks/simulation.py GENERATED)

_TURNS = st.sampled_from((1, 2, 5, 15, 16, 60)) | st.integers(1, 12)
_NEAR = st.sampled_from((-1, 0, 1))


@st.composite
def _uncleared(draw, turn: int) -> range | list[int]:
    """The turns still uncleared: the newest ones up to ``turn`` (none, some or all), as a range or a list."""
    first = draw(st.sampled_from((1, turn, turn + 1)) | st.integers(1, turn + 1))
    turns = range(first, turn + 1)
    return list(turns) if draw(st.booleans()) else turns


@st.composite
def _params(draw, *, keep=None, threshold=None, tool_result=None, placeholder=None, clear_at_least=0) -> SimParams:
    threshold = draw(st.sampled_from((0, 10, 60_000))) if threshold is None else threshold
    tool_result = draw(st.sampled_from((3_000, 10, 5))) if tool_result is None else tool_result
    if placeholder is None:  # one that frees something: placeholders that free nothing are "placeholder-sizes"
        placeholder = min(draw(st.sampled_from((10, 0))), tool_result - 1)
    keep = draw(st.sampled_from((0, 1, 5))) if keep is None else keep
    return SimParams(threshold=threshold, keep=keep, tool_result=tool_result, placeholder=min(placeholder, tool_result),
                     clear_at_least=clear_at_least)


@st.composite
def _at_the_threshold(draw) -> Call:
    """The context exactly at the threshold, or one token either side of it, with turns to clear."""
    turn = draw(_TURNS)
    params = draw(_params())
    context = max(0, params.threshold + draw(_NEAR))
    return (context, draw(_uncleared(turn)), turn, params), {}


@st.composite
def _keep_boundary(draw) -> Call:
    """Over the threshold; ``keep`` 0, 1, 5, the turns so far, one more than them, or any."""
    turn = draw(_TURNS)
    keep = draw(st.sampled_from((0, 1, 5, turn - 1, turn, turn + 1)) | st.integers(0, turn + 2))
    params = draw(_params(keep=max(0, keep)))
    return (params.threshold + draw(st.sampled_from((1, 2, 1_000))), draw(_uncleared(turn)), turn, params), {}


@st.composite
def _clear_at_least(draw, placeholders: bool) -> Call:
    """Over the threshold; ``clear_at_least`` what the candidates free, or one token either side of it.

    With ``placeholders``, the placeholder is 0, the whole tool result or one token below it.
    """
    turn = draw(_TURNS)
    tool_result = draw(st.sampled_from((3_000, 10, 5, 1)))
    placeholder = draw(st.sampled_from((0, tool_result, tool_result - 1))) if placeholders else 10
    params = draw(_params(tool_result=tool_result, placeholder=placeholder))
    uncleared = draw(_uncleared(turn))
    candidates = [t for t in uncleared if t <= turn - params.keep]
    freed = len(candidates) * (params.tool_result - params.placeholder)
    at_least = max(0, freed + draw(_NEAR)) if draw(st.integers(0, 3)) else draw(st.sampled_from((0, 1, 20_000)))
    params = dataclasses.replace(params, clear_at_least=at_least)
    return (params.threshold + 1, uncleared, turn, params), {}


@st.composite
def _lists_and_ranges(draw) -> Call:
    """Over the threshold with many turns to clear, passed as a range or a list."""
    turn = draw(st.integers(6, 30))
    params = draw(_params(threshold=draw(st.sampled_from((0, 60_000))), keep=draw(st.sampled_from((0, 1, 5)))))
    return (params.threshold + 1, draw(_uncleared(turn)), turn, params), {}


_TOKENS = st.sampled_from((0, 1, 10, 11_600, 15_200, 58_400)) | st.integers(0, 60)
_PRICES = st.sampled_from((0.0, 0.1, 0.5, 1.0, 1.25, 2.0, 3.0))


def _prices(draw, lesson: bool) -> SimParams:
    return SimParams() if lesson else SimParams(cache_write=draw(_PRICES), cache_read=draw(_PRICES))


@st.composite
def _writes_all(draw, lesson: bool = True) -> Call:
    """The first request (``rewrote`` either way), or a rewrite after any previous input."""
    previous = None if draw(st.booleans()) else draw(_TOKENS)
    rewrote = draw(st.booleans()) if previous is None else True
    return (draw(_TOKENS), previous, rewrote, _prices(draw, lesson)), {}


@st.composite
def _cache_hit(draw, lesson: bool = True) -> Call:
    """No rewrite: the previous input (0 included) read, and a new part of 0, a little, the previous input or more."""
    previous = draw(_TOKENS)
    new = draw(st.sampled_from((0, 1, previous, 2 * previous + 1, 3_600)) | st.integers(0, 3 * previous + 5))
    return (previous + new, previous, False, _prices(draw, lesson)), {}


def _costs(calls: st.SearchStrategy[Call]) -> st.SearchStrategy[Call]:
    return without_ties(calls, request_cost, PLACES)


ORACLES = {"select_to_clear": select_to_clear, "request_cost": request_cost}

STRATEGIES = {
    "select_to_clear": {
        "at-the-threshold": _at_the_threshold(),
        "keep-boundary": _keep_boundary(),
        "clear-at-least": _clear_at_least(placeholders=False),
        "placeholder-sizes": _clear_at_least(placeholders=True),
        "lists-and-ranges": _lists_and_ranges(),
    },
    "request_cost": {
        "first-or-rewrite": _costs(_writes_all()),
        "cache-hit": _costs(_cache_hit()),
        "other-prices": _costs(st.one_of(_writes_all(lesson=False), _cache_hit(lesson=False))),
    },
}
