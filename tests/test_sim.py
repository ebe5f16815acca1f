"""Tests for ctx_reference.sim: the four-strategy long-task simulation (docs/models.md §6)."""

import math
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_reference.sim import (
    STRATEGIES,
    QuestionOutcome,
    SimParams,
    SimResult,
    request_cost,
    select_to_clear,
    simulate,
)

from sim_oracle import MANAGERS, ContextState

DEFAULT = SimParams()


def _cost(value):
    """Return pytest.approx for an input-equivalent literal (floats: 0.1 is inexact)."""
    return pytest.approx(value, rel=0, abs=1e-6)


# ---------------------------------------------------------------------------
# The lesson's table (docs/models.md §6), every cell.


def test_compaction_strategies():
    """The four default runs reproduce every cell of the docs/models.md §6 table.

    none: 8,000 + 25 × 3,600 = 98,000 is the last context that fits; turn 26 would be
    101,600 > 100,000. Questions at 13, 17, 21, 25 (4) are reached, none lost.
    Cost: 1.25 × 11,600 = 14,500 for the first request, then for turns 2..25
    0.1 × (24 × 8,000 + 3,600 × (1 + … + 24)) + 24 × 1.25 × 3,600
    = 127,200 + 108,000, total 249,700.
    clear: 59,550 peak, 11 of 12 lost, 15 rewrites, 1,359,425.
    clear_notes: 61,200 peak, 0 of 12 lost, 17 rewrites, 1,500,744.
    compact: 58,400 peak, 0 of 12 lost, 6 rewrites, 668,560.
    """
    none = simulate("none")
    assert (none.peak, none.facts_lost, none.facts_asked) == (98_000, 0, 4)
    assert (none.overflow_turn, none.rewrites) == (26, 0)
    assert none.input_equivalent == _cost(249_700)

    clear = simulate("clear")
    assert (clear.peak, clear.facts_lost, clear.facts_asked) == (59_550, 11, 12)
    assert (clear.overflow_turn, clear.rewrites) == (None, 15)
    assert clear.input_equivalent == _cost(1_359_425)

    notes = simulate("clear_notes")
    assert (notes.peak, notes.facts_lost, notes.facts_asked) == (61_200, 0, 12)
    assert (notes.overflow_turn, notes.rewrites) == (None, 17)
    assert round(notes.input_equivalent) == 1_500_744

    compact = simulate("compact")
    assert (compact.peak, compact.facts_lost, compact.facts_asked) == (58_400, 0, 12)
    assert (compact.overflow_turn, compact.rewrites) == (None, 6)
    assert round(compact.input_equivalent) == 668_560


def test_compact_costs_less_than_half_of_clear_notes():
    """Compaction's input equivalent is less than half of clear_notes' (668,560 < 750,372)."""
    compact = simulate("compact").input_equivalent
    notes = simulate("clear_notes").input_equivalent
    assert compact < notes / 2


def test_keep_tradeoff():
    """clear with keep 15: peak 89,450, 0 of 12 lost, 45 rewrites, 4,403,187.5.

    Keeping 15 turns protects every asked fact (the lag is 12 < 15) but the context
    stays over the threshold, so every turn from 16 to 60 rewrites it: 45 cache misses.
    """
    r = simulate("clear", SimParams(keep=15))
    assert (r.peak, r.facts_lost, r.facts_asked, r.rewrites) == (89_450, 0, 12, 45)
    assert r.rewrite_turns == tuple(range(16, 61))
    assert r.input_equivalent == _cost(4_403_187.5)
    assert r.overflow_turn is None


def test_clear_at_least():
    """clear with clear_at_least 20,000: peak 75,660, 11 of 12 lost, 7 rewrites, 894,813.5.

    Seed: rewrites drop from 15 to 7 and the input equivalent from 1,359,425 to 894,814.
    """
    r = simulate("clear", SimParams(clear_at_least=20_000))
    assert (r.peak, r.facts_lost, r.facts_asked, r.rewrites) == (75_660, 11, 12, 7)
    assert r.input_equivalent == _cost(894_813.5)
    assert round(r.input_equivalent) == 894_814


def test_summary_capacity():
    """compact with summary_capacity 2: peak 58,400, 7 of 12 lost, 6 rewrites, 668,560.

    Compactions at 15, 24, 33, 42, 51, 60 fold up to turns 10, 19, 28, 37, 46, 55 and keep
    only the newest 2 facts (9–10, 18–19, 27–28, …). Lost: Q17 (fact 5, at 15), Q25 (13, at
    24), Q29 (17, at 24), Q33 (21, at 33), Q37 (25, at 33), Q45 (33, at 42), Q53 (41, at 51).
    """
    r = simulate("compact", SimParams(summary_capacity=2))
    assert (r.peak, r.facts_lost, r.facts_asked, r.rewrites) == (58_400, 7, 12, 6)
    assert round(r.input_equivalent) == 668_560
    lost = tuple((q.turn, q.fact_turn, q.lost_turn) for q in r.questions if q.lost)
    assert lost == ((17, 5, 15), (25, 13, 24), (29, 17, 24), (33, 21, 33),
                    (37, 25, 33), (45, 33, 42), (53, 41, 51))
    assert r.lost_questions == (17, 25, 29, 33, 37, 45, 53)


@pytest.mark.parametrize("note_tokens", range(29, 44))
def test_note_sizes_29_to_43_give_17_rewrites(note_tokens):
    """Every note size from 29 to 43 tokens gives clear_notes 17 rewrites (docs/models.md §6).

    The reconstruction picks 30 from this range; 28 gives one rewrite fewer and 44 one more
    (see the next two tests).
    """
    assert simulate("clear_notes", SimParams(note_tokens=note_tokens)).rewrites == 17


def test_note_size_28_loses_a_rewrite():
    """With 28-token notes, clear_notes rewrites 16 times: the range of 17 starts at 29."""
    assert simulate("clear_notes", SimParams(note_tokens=28)).rewrites == 16


def test_note_size_44_adds_a_rewrite():
    """With 44-token notes, clear_notes rewrites 18 times.

    From note size 31 on, the fourth clearing comes at turn 35 (30 results cleared
    after it). At turn 39 the context is 8,000 + 39 × 3,600 − 30 × (2,990 − n) =
    58,700 + 30n, over 60,000 once n > 43.3: turn 39 clears, one more rewrite than n = 43.
    """
    assert simulate("clear_notes", SimParams(note_tokens=43)).rewrites == 17
    assert simulate("clear_notes", SimParams(note_tokens=44)).rewrites == 18


# ---------------------------------------------------------------------------
# Worked steps, by hand.


def test_none_contexts_grow_by_one_turn():
    """none sends 8,000 + 3,600 t at turn t for t = 1..25; the turn-26 request is not sent."""
    r = simulate("none")
    assert r.contexts == tuple(8_000 + 3_600 * t for t in range(1, 26))
    assert r.costs[:2] == (14_500.0, pytest.approx(5_660.0))  # 1.25 × 11,600; 1,160 + 4,500


def test_first_clearing():
    """clear first rewrites at turn 15 (62,000 > 60,000): results 1–10 go, leaving 32,100.

    Then +3,600 a turn: 32,100 + 8 × 3,600 = 60,900 at turn 23 (8 cleared, 36,980), and
    36,980 + 7 × 3,600 = 62,180 at turn 30.
    """
    r = simulate("clear")
    assert r.rewrite_turns[:3] == (15, 23, 30)
    assert r.contexts[14] == 32_100
    assert r.contexts[22] == 36_980
    assert r.costs[14] == 1.25 * 32_100


def test_clear_loses_from_the_first_clearing_on():
    """clear: Q13 (fact 1) comes before any clearing; Q17 (fact 5) lost at turn 15,
    Q25 (fact 13) lost at turn 23 (results 11–18 cleared then)."""
    r = simulate("clear")
    first = r.questions[:3]
    assert first[0] == QuestionOutcome(turn=13, fact_turn=1, lost_turn=None)
    assert first[1] == QuestionOutcome(turn=17, fact_turn=5, lost_turn=15)
    assert r.questions[3] == QuestionOutcome(turn=25, fact_turn=13, lost_turn=23)
    assert r.lost_questions == tuple(range(17, 58, 4))


def test_compaction_schedule():
    """compact rewrites at 15, 24, 33, 42, 51, 60.

    After a compaction the context is 8,000 + 2,000 + 5 × 3,600 = 28,000; it passes
    60,000 nine turns later (28,000 + 9 × 3,600 = 60,400), and 58,400 (eight turns on)
    is the peak.
    """
    r = simulate("compact")
    assert r.rewrite_turns == (15, 24, 33, 42, 51, 60)
    assert r.contexts[14] == 28_000
    assert r.contexts[22] == 56_800
    assert r.contexts[23] == 28_000


def test_threshold_is_strict():
    """A context exactly at the threshold is not managed.

    clear_notes, after the rewrite at 30 (25 cleared): 8,000 + 30 × 3,600 − 25 × 2,960
    = 42,000; turn 35 is 60,000, not over 60,000, so the next rewrite is at turn 36.
    """
    r = simulate("clear_notes")
    assert r.contexts[34] == 60_000
    assert 35 not in r.rewrite_turns
    assert 36 in r.rewrite_turns


def test_question_schedule():
    """Questions come at 13, 17, …, 57 and ask for turns 1, 5, …, 45."""
    r = simulate("compact")
    assert [q.turn for q in r.questions] == list(range(13, 58, 4))
    assert [q.fact_turn for q in r.questions] == list(range(1, 46, 4))


# ---------------------------------------------------------------------------
# Reference hooks.


def test_select_to_clear_reference():
    """Over 60,000 at turn 15 with nothing cleared: results of turns 1..10 are cleared."""
    assert select_to_clear(62_000, range(1, 16), 15, DEFAULT) == list(range(1, 11))
    assert select_to_clear(60_000, range(1, 16), 15, DEFAULT) == []
    assert select_to_clear(62_000, [11, 12, 13, 14, 15], 15, DEFAULT) == []


def test_select_to_clear_honours_clear_at_least():
    """10 results free 10 × 2,990 = 29,900: enough for 29,900, not for 29,901."""
    args = (62_000, range(1, 16), 15)
    assert select_to_clear(*args, SimParams(clear_at_least=29_900)) == list(range(1, 11))
    assert select_to_clear(*args, SimParams(clear_at_least=29_901)) == []


def test_request_cost_reference():
    """First request 1.25 × input; then 0.1 × previous + 1.25 × new; a rewrite 1.25 × input."""
    assert request_cost(11_600, None, False, DEFAULT) == 14_500.0
    assert request_cost(15_200, 11_600, False, DEFAULT) == pytest.approx(5_660.0)
    assert request_cost(32_100, 62_000, True, DEFAULT) == 40_125.0


def test_managers_table():
    """MANAGERS maps exactly the four strategies, in the order of STRATEGIES."""
    assert STRATEGIES == ("none", "clear", "clear_notes", "compact")
    assert tuple(MANAGERS) == STRATEGIES


def test_manage_compact_holds_newest_facts():
    """A compaction at turn 15 with capacity 2 folds turns 1–10 and keeps facts 9 and 10."""
    state = ContextState(tokens=62_000)
    assert MANAGERS["compact"](state, 15, SimParams(summary_capacity=2), select_to_clear)
    assert (state.tokens, state.folded_upto, state.held_from) == (28_000, 10, 9)
    assert state.lost_at == {f: 15 for f in range(1, 9)}


# ---------------------------------------------------------------------------
# Injected hooks are called.


def _never(context_tokens, uncleared_turns, turn, params):
    """A clearing policy that never clears."""
    return []


def _slicing_policy(context_tokens, uncleared_turns, turn, params):
    """A learner's version of the reference policy, written with a slice."""
    if context_tokens <= params.threshold:
        return []
    cut = max(0, len(uncleared_turns) - params.keep)
    chosen = list(uncleared_turns[:cut])
    freed = len(chosen) * (params.tool_result - params.placeholder)
    if not chosen or freed < params.clear_at_least:
        return []
    return chosen


def test_never_clearing_policy_behaves_like_none():
    """clear with a policy that never clears overflows at 26 with none's numbers."""
    r = simulate("clear", clear_policy=_never)
    assert (r.peak, r.overflow_turn, r.rewrites, r.facts_asked, r.facts_lost) == (
        98_000, 26, 0, 4, 0)
    assert r.input_equivalent == _cost(249_700)


def test_learner_policy_reproduces_reference():
    """A policy written another way gives clear's 15 rewrites, 11/12 lost and 1,359,425."""
    r = simulate("clear", DEFAULT, clear_policy=_slicing_policy)
    assert (r.peak, r.rewrites, r.facts_lost) == (59_550, 15, 11)
    assert r.input_equivalent == _cost(1_359_425)


def test_policy_sees_plain_arguments():
    """The policy gets the context, the uncleared turns (oldest first), the turn, the params."""
    calls = []

    def spy(context_tokens, uncleared_turns, turn, params):
        calls.append((context_tokens, list(uncleared_turns), turn, params))
        return []

    params = SimParams(turns=2)
    simulate("clear_notes", params, clear_policy=spy)
    assert calls == [(11_600, [1], 1, params), (15_200, [1, 2], 2, params)]


def test_policy_clearing_everything_each_turn():
    """A policy clearing every result, this turn's included, leaves 8,000 + t × 610 at turn t."""
    def all_of_them(context_tokens, uncleared_turns, turn, params):
        return list(uncleared_turns)

    r = simulate("clear", SimParams(turns=3), clear_policy=all_of_them)
    assert r.contexts == (8_610, 9_220, 9_830)
    assert r.rewrites == 3


def test_compact_ignores_clear_policy():
    """compact never calls the clearing policy."""
    def boom(*args):
        raise AssertionError("called")

    assert simulate("compact", clear_policy=boom).rewrites == 6


def test_custom_cost_is_used():
    """A flat cost of 1 per request sums to the number of requests sent (60; none: 25)."""
    def flat(input_tokens, previous_input, rewrote, params):
        return 1

    assert simulate("compact", request_cost=flat).input_equivalent == 60
    assert simulate("none", request_cost=flat).input_equivalent == 25


def test_cost_sees_first_request_and_rewrites():
    """The cost hook sees previous None once, then the previous input, and rewrote at 15."""
    seen = []

    def spy(input_tokens, previous_input, rewrote, params):
        seen.append((input_tokens, previous_input, rewrote))
        return 0.0

    simulate("compact", SimParams(turns=16), request_cost=spy)
    assert seen[0] == (11_600, None, False)
    assert seen[1] == (15_200, 11_600, False)
    assert seen[14] == (28_000, 58_400, True)
    assert seen[15] == (31_600, 28_000, False)


@pytest.mark.parametrize("returned, fragment", [
    (None, "must return a list"),
    ({1}, "must return a list"),
    ([1.0], "must return int turns"),
    ([True], "must return int turns"),
    ([0], "returned turn 0"),
    ([16], "returned turn 16"),
    ([1, 1], "twice"),
    ([2], "oldest results first"),
])
def test_bad_policy_result(returned, fragment):
    """A policy result that is not the oldest n uncleared turns is a ValueError naming it."""
    def bad(context_tokens, uncleared_turns, turn, params):
        return returned if turn == 15 else []

    with pytest.raises(ValueError, match="clear_policy") as info:
        simulate("clear", clear_policy=bad)
    assert fragment in str(info.value)
    assert "turn 15" in str(info.value)


def test_policy_cannot_clear_twice():
    """Clearing turn 1 again after it was cleared names turn 1 and the clearable span."""
    def twice(context_tokens, uncleared_turns, turn, params):
        return [1] if turn <= 2 else []

    with pytest.raises(ValueError, match=r"clear_policy returned turn 1 at turn 2.*2\.\.2"):
        simulate("clear", clear_policy=twice)


@pytest.mark.parametrize("returned", [-1.0, math.nan, math.inf, "1", True, None])
def test_bad_cost_result(returned):
    """A cost that is not a finite number >= 0 is a ValueError echoing it."""
    def bad(input_tokens, previous_input, rewrote, params):
        return returned

    with pytest.raises(ValueError, match="request_cost") as info:
        simulate("none", request_cost=bad)
    assert repr(returned) in str(info.value)


@pytest.mark.parametrize("kind", [Fraction, Decimal, np.float64, np.float32])
def test_a_cost_in_any_real_number_type_counts_by_its_value(kind):
    """The text asks request_cost for "a number": a Fraction, a Decimal or a numpy float of the lesson's costs
    gives the clear row of the lesson (peak 59,550, 15 rewrites, input equivalent 1,359,425), as floats."""
    def cost(input_tokens, previous_input, rewrote, params):
        write, read = Fraction(5, 4), Fraction(1, 10)  # the lesson's prices, exactly
        value = write * input_tokens if previous_input is None or rewrote else (
            read * previous_input + write * (input_tokens - previous_input))
        return kind(value) if kind is Fraction else kind(str(float(value)))

    result = simulate("clear", request_cost=cost)
    assert (result.peak, result.rewrites) == (59_550, 15)
    assert type(result.input_equivalent) is float
    assert abs(result.input_equivalent - 1_359_425) < 1e-3  # float32 keeps about 7 digits of each cost


@pytest.mark.parametrize("hook", ["clear_policy", "request_cost"])
def test_hooks_must_be_callable(hook):
    """A hook that is not callable is a ValueError naming the hook."""
    with pytest.raises(ValueError, match=f"{hook} must be callable .got 42"):
        simulate("clear", **{hook: 42})


# ---------------------------------------------------------------------------
# Edge cases.


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_zero_turns(strategy):
    """With 0 turns nothing is sent: peak 0, cost 0, no questions, no overflow."""
    r = simulate(strategy, SimParams(turns=0))
    assert r == SimResult(peak=0, rewrites=0, input_equivalent=0.0, overflow_turn=None,
                          facts_asked=0, facts_lost=0, contexts=())


def test_keep_zero_clears_this_turns_result_too():
    """clear, keep 0: at turn 15 all 15 results go: 62,000 − 15 × 2,990 = 17,150.

    Next over 60,000 at 17,150 + 12 × 3,600 = 60,350, turn 27.
    """
    r = simulate("clear", SimParams(keep=0))
    assert r.contexts[14] == 17_150
    assert r.rewrite_turns[:2] == (15, 27)


def test_keep_zero_compact_is_base_plus_summary():
    """compact, keep 0: at turn 15 the context becomes 8,000 + 2,000 = 10,000."""
    assert simulate("compact", SimParams(keep=0)).contexts[14] == 10_000


def test_keep_zero_notes_lose_nothing():
    """clear_notes loses no fact even when it clears every result at once."""
    assert simulate("clear_notes", SimParams(keep=0)).facts_lost == 0


def test_window_exactly_fits():
    """A context equal to the window is sent: window 98,000 overflows at 26, 101,600 at 27."""
    assert simulate("none", SimParams(window=98_000)).overflow_turn == 26
    r = simulate("none", SimParams(window=101_600))
    assert (r.overflow_turn, r.peak) == (27, 101_600)


def test_base_larger_than_window_overflows_at_turn_one():
    """If base + one turn exceeds the window, turn 1 overflows and nothing is sent."""
    r = simulate("clear", SimParams(base=97_000))
    assert (r.overflow_turn, r.peak, r.contexts, r.input_equivalent) == (1, 0, (), 0.0)


def test_summary_capacity_zero_loses_every_folded_fact():
    """compact, capacity 0: every asked fact already folded is lost, 10 of 12.

    Held: Q13 (fact 1, nothing folded yet) and Q41 (fact 29; folded up to 28 then).
    """
    r = simulate("compact", SimParams(summary_capacity=0))
    assert (r.facts_asked, r.facts_lost) == (12, 10)
    assert [q.turn for q in r.questions if not q.lost] == [13, 41]


def test_rewrite_on_overflow_turn_counts():
    """A compaction that still leaves the context over the window counts; its request is not sent.

    Window 25,000, threshold 20,000. With keep 5 nothing can be folded by turn 4, and
    turn 5 (8,000 + 5 × 3,600 = 26,000) overflows. With keep 1 and a 20,000-token summary,
    turn 4 (22,400 > 20,000) folds to 8,000 + 20,000 + 3,600 = 31,600 > 25,000: one
    rewrite, overflow at 4, three requests sent.
    """
    assert simulate("compact", SimParams(window=25_000, threshold=20_000)).overflow_turn == 5
    r = simulate("compact", SimParams(window=25_000, threshold=20_000, keep=1,
                                      summary_tokens=20_000))
    assert (r.overflow_turn, r.rewrites, r.rewrite_turns, len(r.contexts)) == (4, 1, (4,), 3)


# ---------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize("strategy", ["clever", "", "Clear", 3, None])
def test_unknown_strategy(strategy):
    """An unknown strategy is a ValueError naming 'strategy', echoing it, listing the valid."""
    with pytest.raises(ValueError, match="strategy") as info:
        simulate(strategy)
    message = str(info.value)
    assert repr(strategy) in message
    assert all(name in message for name in STRATEGIES)


def test_params_must_be_simparams():
    """params that are not a SimParams are a ValueError naming params."""
    with pytest.raises(ValueError, match=r"params must be a SimParams \(got \{'keep': 5\}\)"):
        simulate("clear", {"keep": 5})


COUNT_FIELDS = ("base", "user", "tool_call", "tool_result", "answer", "threshold", "keep",
                "turns", "placeholder", "summary_tokens", "note_tokens", "clear_at_least",
                "first_question", "fact_lag")


@pytest.mark.parametrize("name", COUNT_FIELDS)
def test_negative_count(name):
    """A negative token size or count is a ValueError naming the field and echoing -1."""
    with pytest.raises(ValueError, match=rf"^{name} must be >= 0 \(got -1\)$"):
        SimParams(**{name: -1})


@pytest.mark.parametrize("name", COUNT_FIELDS + ("window", "question_every",
                                                  "summary_capacity"))
@pytest.mark.parametrize("value", [True, 2.5, "5"])
def test_count_must_be_int(name, value):
    """A count that is a bool, float or str is a ValueError naming the field and the value."""
    with pytest.raises(ValueError, match=rf"^{name} must be an int \(got {value!r}\)$"):
        SimParams(**{name: value})


@pytest.mark.parametrize("name, value", [("window", 0), ("question_every", 0),
                                         ("summary_capacity", -1)])
def test_below_minimum(name, value):
    """window 0, question_every 0 and summary_capacity -1 are ValueErrors echoing the value."""
    with pytest.raises(ValueError, match=rf"^{name} must be >= \d \(got {value}\)$"):
        SimParams(**{name: value})


def test_threshold_above_window():
    """A threshold over the window is a ValueError naming both numbers."""
    with pytest.raises(ValueError, match=r"threshold must be <= window \(100000\) \(got 100001\)"):
        SimParams(threshold=100_001)


def test_fact_lag_before_turn_one():
    """fact_lag 13 with first_question 12 would ask for turn 0: a ValueError naming fact_lag."""
    with pytest.raises(ValueError, match=r"fact_lag must be <= first_question \(12\).*got 13"):
        SimParams(fact_lag=13)


@pytest.mark.parametrize("name", ["cache_write", "cache_read"])
@pytest.mark.parametrize("value", [-0.1, math.nan, math.inf, "1.25", True, None])
def test_bad_price(name, value):
    """A cache price that is not a finite number >= 0 is a ValueError naming it."""
    with pytest.raises(ValueError, match=rf"^{name} must be a .*\(got {value!r}\)$"):
        SimParams(**{name: value})


def test_threshold_equal_to_window_and_zero_are_fine():
    """threshold == window and threshold 0 are valid edge values."""
    assert SimParams(threshold=100_000).threshold == 100_000
    assert SimParams(threshold=0).threshold == 0


# ---------------------------------------------------------------------------
# Properties.


@st.composite
def sim_params(draw):
    """Random, valid, realistic-ish SimParams (cache writes cost at least cache reads)."""
    window = draw(st.integers(1, 150_000))
    first_question = draw(st.integers(0, 20))
    cache_read = draw(st.floats(0, 1, allow_nan=False))
    return SimParams(
        base=draw(st.integers(0, 20_000)),
        user=draw(st.integers(0, 500)),
        tool_call=draw(st.integers(0, 300)),
        tool_result=draw(st.integers(0, 5_000)),
        answer=draw(st.integers(0, 500)),
        window=window,
        threshold=draw(st.integers(0, window)),
        keep=draw(st.integers(0, 20)),
        turns=draw(st.integers(0, 80)),
        placeholder=draw(st.integers(0, 50)),
        summary_tokens=draw(st.integers(0, 5_000)),
        summary_capacity=draw(st.none() | st.integers(0, 10)),
        note_tokens=draw(st.integers(0, 100)),
        clear_at_least=draw(st.integers(0, 50_000)),
        first_question=first_question,
        question_every=draw(st.integers(1, 6)),
        fact_lag=draw(st.integers(0, first_question)),
        cache_write=cache_read + draw(st.floats(0, 2, allow_nan=False)),
        cache_read=cache_read,
    )


@settings(max_examples=200, deadline=None)
@given(params=sim_params(), strategy=st.sampled_from(STRATEGIES))
def test_contexts_never_exceed_window(params, strategy):
    """No request sent is larger than the window, so peak <= window for every strategy."""
    r = simulate(strategy, params)
    assert all(c <= params.window for c in r.contexts)
    assert r.peak <= params.window
    assert r.peak == max(r.contexts, default=0)


@settings(max_examples=200, deadline=None)
@given(params=sim_params(), strategy=st.sampled_from(("clear", "clear_notes", "compact")))
def test_managed_peak_within_window_when_no_overflow(params, strategy):
    """Every strategy but none: a run without overflow sent every turn, each within the window."""
    r = simulate(strategy, params)
    if r.overflow_turn is None:
        assert len(r.contexts) == params.turns
        assert r.peak <= params.window


@settings(max_examples=200, deadline=None)
@given(params=sim_params(), strategy=st.sampled_from(STRATEGIES))
def test_cost_at_least_cache_reads(params, strategy):
    """input_equivalent >= cache_read × the sum of all inputs sent."""
    r = simulate(strategy, params)
    floor = params.cache_read * sum(r.contexts)
    assert r.input_equivalent >= floor - 1e-6 * max(1.0, floor)


@settings(max_examples=200, deadline=None)
@given(params=sim_params(), strategy=st.sampled_from(STRATEGIES))
def test_bookkeeping_is_consistent(params, strategy):
    """facts_lost <= facts_asked; one request per turn until overflow; costs add up."""
    r = simulate(strategy, params)
    assert 0 <= r.facts_lost <= r.facts_asked == len(r.questions)
    sent = params.turns if r.overflow_turn is None else r.overflow_turn - 1
    assert len(r.contexts) == len(r.costs) == sent
    assert r.rewrites == len(r.rewrite_turns)
    assert list(r.rewrite_turns) == sorted(set(r.rewrite_turns))
    assert r.input_equivalent == pytest.approx(math.fsum(r.costs), rel=1e-9, abs=1e-6)
    for q in r.questions:
        assert q.turn - q.fact_turn == params.fact_lag
        assert q.lost_turn is None or 1 <= q.lost_turn <= q.turn


@settings(max_examples=200, deadline=None)
@given(params=sim_params())
def test_only_clearing_without_notes_or_small_summaries_forget(params):
    """none, clear_notes and compact with an unlimited summary never lose a fact."""
    assert simulate("none", params).facts_lost == 0
    assert simulate("clear_notes", params).facts_lost == 0
    assert simulate("compact", replace(params, summary_capacity=None)).facts_lost == 0


@settings(max_examples=100, deadline=None)
@given(params=sim_params())
def test_learner_style_policy_matches_reference(params):
    """A slice-based policy gives the same result as the reference, for any params."""
    for strategy in ("clear", "clear_notes"):
        assert simulate(strategy, params, clear_policy=_slicing_policy) == simulate(
            strategy, params)


@settings(max_examples=100, deadline=None)
@given(params=sim_params(), strategy=st.sampled_from(STRATEGIES))
def test_params_unchanged(params, strategy):
    """simulate leaves the caller's params exactly as they were."""
    before = replace(params)
    simulate(strategy, params)
    assert params == before
