"""Strategies of notebook 06's exercises ``select_to_clear`` and ``request_cost``.

``select_to_clear(context_tokens, uncleared_turns, turn, params)``'s domain, against its text
("``context_tokens``: the size of the context after this turn's content was added";
"``uncleared_turns``: the turns whose tool results are still whole, never cleared, sorted oldest
first (it may be a ``range`` or a ``list``)"; "``turn``: the current turn (counting from 1)";
"``params``: a ``SimParams``; you need ``threshold``, ``keep``, ``tool_result``, ``placeholder`` and
``clear_at_least``"; its task runs 60 turns in a window of 100,000 with a threshold of 60,000):
the context (0 tokens or more), the newest turns up to this one, as a ``range`` or a ``list``,
maybe none, the current turn (1 or more) and a ``SimParams``. The strategies draw turns of every
magnitude up to 60 (``_wide.magnitudes``; 1, 2, 5, 15, 16 and 60 weighted), thresholds up to
the window (100,000) and tool results up to 100,000 of every magnitude (the lesson's 60,000 and 3,000 and
small ones weighted), placeholders from 0 to the whole tool result, the context exactly at the
threshold or one token either side of it, ``keep`` of any magnitude up to the turns so far and
beyond (0, 1, the lesson's 5, the whole run and one more weighted), ``clear_at_least`` exactly
what the candidates free, one token either side of it, or any amount up to 1,000,000. Narrower
than the text: the uncleared turns are always the newest ones, as the simulation passes them (the
text's rule 4, "an unbroken run at the start", relies on it); ``params`` fields other than these
five stay the lesson's (the text says only these five matter).

``request_cost(input_tokens, previous_input, rewrote, params)``'s domain, against its text
("``input_tokens``: the size of the context sent on this turn"; "``previous_input``: … ``None`` for
the first request"; "``rewrote``: whether this turn cleared or compacted"; "``params``: you need
``cache_write`` (default 1.25) and ``cache_read`` (default 0.1)"; "Return the cost of this request
(in input equivalents, one number)"): this request's input (0 tokens or more), the previous one
(``None`` for the first request; otherwise, when nothing was rewritten, at most this one: the
context only grows between rewrites) and the prices of ``params`` (0 or more). The strategies
draw token counts of every magnitude up to 2,000,000 (the lesson's 11,600, 15,200 and 58,400
weighted), first requests and rewrites with any previous input, cache hits whose new part is 0,
small, the previous input exactly, more than twice it or any amount (``previous_input`` 0
included), and prices other than the lesson's 1.25 and 0.1: any from 0 to 10 (0, 0.1, 0.5, 1,
1.25, 2 and 3 weighted). Narrower than the text: prices have at most 4 decimal places, as a price
list states them (a float such as 5e-324 is a number but no price); calls whose cost lies on a
rounding tie at the hidden digests' 6 places are left out (``_floats.py``).
"""
from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from ....sim import SimParams, request_cost, select_to_clear
from . import Call
from ._floats import without_ties
from ._wide import magnitudes, weighted

PLACES = 6  # request_cost's hidden digests' rounding (checks/simulation.py GENERATED)

_TURNS = weighted((1, 2, 5, 15, 16, 60), magnitudes(1, 60))
_THRESHOLDS = weighted((0, 10, 60_000), magnitudes(0, 100_000))  # not over the lesson's window (SimParams)
_TOOL_RESULTS = weighted((3_000, 10, 5, 1), magnitudes(1, 100_000))
_NEAR = st.sampled_from((-1, 0, 1))


@st.composite
def _uncleared(draw, turn: int) -> range | list[int]:
    """The turns still uncleared: the newest ones up to ``turn`` (none, some or all), as a range or a list."""
    first = draw(weighted((1, turn, turn + 1), st.integers(1, turn + 1)))
    turns = range(first, turn + 1)
    return list(turns) if draw(st.booleans()) else turns


@st.composite
def _params(draw, *, keep=None, threshold=None, tool_result=None, placeholder=None, clear_at_least=0) -> SimParams:
    threshold = draw(_THRESHOLDS) if threshold is None else threshold
    tool_result = draw(_TOOL_RESULTS) if tool_result is None else tool_result
    if placeholder is None:  # one that frees something: placeholders that free nothing are "placeholder-sizes"
        placeholder = min(draw(weighted((10, 0), magnitudes(0, max(0, tool_result - 1)))), max(0, tool_result - 1))
    keep = draw(weighted((0, 1, 5), magnitudes(0, 60))) if keep is None else keep
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
    keep = draw(weighted((0, 1, 5, turn - 1, turn, turn + 1), magnitudes(0, turn + 2)))
    params = draw(_params(keep=max(0, keep)))
    over = draw(weighted((1, 2, 1_000), magnitudes(1, 1_000_000)))
    return (params.threshold + over, draw(_uncleared(turn)), turn, params), {}


@st.composite
def _clear_at_least(draw, placeholders: bool) -> Call:
    """Over the threshold; ``clear_at_least`` what the candidates free, or one token either side of it.

    With ``placeholders``, the placeholder is 0, the whole tool result or one token below it.
    """
    turn = draw(_TURNS)
    tool_result = draw(_TOOL_RESULTS)
    placeholder = draw(weighted((0, tool_result, tool_result - 1), magnitudes(0, tool_result))) if placeholders \
        else 10
    params = draw(_params(tool_result=tool_result, placeholder=placeholder))
    uncleared = draw(_uncleared(turn))
    candidates = [t for t in uncleared if t <= turn - params.keep]
    freed = len(candidates) * (params.tool_result - params.placeholder)
    at_least = max(0, freed + draw(_NEAR)) if draw(st.integers(0, 3)) \
        else draw(weighted((0, 1, 20_000), magnitudes(0, 1_000_000)))
    params = dataclasses.replace(params, clear_at_least=at_least)
    return (params.threshold + 1, uncleared, turn, params), {}


@st.composite
def _lists_and_ranges(draw) -> Call:
    """Over the threshold with many turns to clear, passed as a range or a list."""
    turn = draw(magnitudes(6, 60))
    params = draw(_params(threshold=draw(weighted((0, 60_000), _THRESHOLDS)), keep=draw(weighted((0, 1, 5),
                                                                                            magnitudes(0, turn)))))
    return (params.threshold + 1, draw(_uncleared(turn)), turn, params), {}


_TOKENS = weighted((0, 1, 10, 11_600, 15_200, 58_400), magnitudes(0, 2_000_000))
# Prices as a price list states them: decimals of up to 4 places (a float such as 5e-324 is no price).
_PRICES = weighted((0.0, 0.1, 0.5, 1.0, 1.25, 2.0, 3.0), st.integers(0, 100_000).map(lambda k: k / 10_000))


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
    new = draw(weighted((0, 1, previous, 2 * previous + 1, 3_600), magnitudes(0, 3 * previous + 5)))
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

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"select_to_clear": 600, "request_cost": 1000}
