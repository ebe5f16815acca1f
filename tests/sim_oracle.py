"""A second, independent statement of the four strategies, for the tests to compare against.

``ctx_reference.sim`` runs the four strategies as policies on a workload, turn by turn over a
list of TurnRecords. This module states the same rules as running totals: the context's size,
the first turn still in full, the number of notes, the last turn folded into the summary.
``tests/test_policy.py`` runs both on random SimParams and asserts they send, rewrite and forget
alike; a mistake would have to be made twice, in two different forms, to go unseen.

What it leaves out: costs (the tests price both runs with the same ``request_cost``), questions
(the caller asks them of ``state.lost_at``), protection, and checking a clearing policy's answer
(it is only ever called with ``select_to_clear``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctx_reference.sim import ClearPolicy, SimParams, select_to_clear  # noqa: F401 (doctests)


@dataclass(slots=True)
class ContextState:
    """The managed context of one run, as running totals; owned and updated by the caller.

    tokens          -- size of the context now.
    first_uncleared -- turns >= this still hold their tool result in full (clearing goes
                       oldest first, so the uncleared results are always a run of turns).
    notes           -- how many notes the context holds (clear_notes).
    folded_upto     -- turns 1..folded_upto live only in the summary (0: no summary yet).
    held_from       -- the summary still holds the facts of turns held_from..folded_upto.
    lost_at         -- fact turn -> the turn whose rewrite removed that fact.
    """

    tokens: int
    first_uncleared: int = 1
    notes: int = 0
    folded_upto: int = 0
    held_from: int = 1
    lost_at: dict[int, int] = field(default_factory=dict)


Manager = Callable[[ContextState, int, SimParams, ClearPolicy], bool]


def manage_none(state: ContextState, turn: int, params: SimParams,
                clear_policy: ClearPolicy) -> bool:
    """Leave the context as it is; return False (no rewrite).

    >>> manage_none(ContextState(tokens=98_000), 25, SimParams(), select_to_clear)
    False
    """
    return False


def manage_clear(state: ContextState, turn: int, params: SimParams,
                 clear_policy: ClearPolicy) -> bool:
    """Clear the tool results ``clear_policy`` picks; return True if it cleared any.

    A cleared fact is gone from the context (``state.lost_at`` records when).

    >>> s = ContextState(tokens=62_000)           # turn 15: 8,000 + 15 × 3,600
    >>> manage_clear(s, 15, SimParams(), select_to_clear), s.tokens, s.first_uncleared
    (True, 32100, 11)

    Ten results cleared: 62,000 − 10 × (3,000 − 10) = 32,100.
    """
    return clear_oldest(state, turn, params, clear_policy, with_notes=False)


def manage_clear_notes(state: ContextState, turn: int, params: SimParams,
                       clear_policy: ClearPolicy) -> bool:
    """As ``manage_clear``, but each cleared fact is first kept as a ``note_tokens`` note.

    >>> s = ContextState(tokens=62_000)
    >>> manage_clear_notes(s, 15, SimParams(), select_to_clear), s.tokens, s.notes
    (True, 32400, 10)

    62,000 − 10 × 2,990 + 10 × 30 = 32,400.
    """
    return clear_oldest(state, turn, params, clear_policy, with_notes=True)


def manage_compact(state: ContextState, turn: int, params: SimParams,
                   clear_policy: ClearPolicy) -> bool:
    """Fold every turn but the newest ``keep`` into one summary; return True if it did.

    Only when the context is over the threshold and at least one turn not yet folded
    lies before the newest ``keep``. The context becomes base + summary + kept turns;
    with ``summary_capacity = c`` the summary holds only the newest ``c`` facts it covers.
    ``clear_policy`` is not used.

    >>> s = ContextState(tokens=62_000)           # turn 15
    >>> manage_compact(s, 15, SimParams(), select_to_clear), s.tokens, s.folded_upto
    (True, 28000, 10)

    8,000 + 2,000 + 5 × 3,600 = 28,000.
    """
    fold_to = turn - params.keep
    if state.tokens <= params.threshold or fold_to <= state.folded_upto:
        return False
    state.tokens = params.base + params.summary_tokens + params.keep * params.turn_tokens
    state.folded_upto = fold_to
    if params.summary_capacity is not None:
        held_from = max(state.held_from, fold_to - params.summary_capacity + 1)
        for fact in range(state.held_from, held_from):
            state.lost_at[fact] = turn
        state.held_from = held_from
    return True


MANAGERS: dict[str, Manager] = {
    "none": manage_none,
    "clear": manage_clear,
    "clear_notes": manage_clear_notes,
    "compact": manage_compact,
}


def clear_oldest(state: ContextState, turn: int, params: SimParams, clear_policy: ClearPolicy,
           with_notes: bool) -> bool:
    """Apply ``clear_policy`` to ``state``; return True if it cleared at least one result."""
    uncleared = range(state.first_uncleared, turn + 1)
    chosen = clear_policy(state.tokens, uncleared, turn, params)
    count = len(chosen)
    assert list(chosen) == list(uncleared[:count]), f"clearing goes oldest first (got {chosen!r})"
    if count == 0:
        return False
    first = state.first_uncleared
    state.first_uncleared = first + count
    state.tokens -= count * (params.tool_result - params.placeholder)
    if with_notes:
        state.notes += count
        state.tokens += count * params.note_tokens
    else:
        for fact in range(first, first + count):
            state.lost_at[fact] = turn
    return True

