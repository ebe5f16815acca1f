"""Tests for the policy interface (ctx_reference.policy) run by ctx_reference.sim.simulate_policy."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_reference import policy, sim
from ctx_reference.ledger import Zone
from ctx_reference.policy import (
    BUILTIN_POLICIES,
    Clear,
    ClearOldest,
    Compact,
    CompactOld,
    Protect,
    Step,
    Workload,
)
from ctx_reference.sim import (
    STRATEGIES,
    QuestionOutcome,
    SimParams,
    lesson_workload,
    select_to_clear,
    simulate,
    simulate_policy,
)

from sim_oracle import MANAGERS, ContextState


def test_the_policy_interface_still_imports_from_sim():
    """Every public name of ctx_reference.policy is the same object in ctx_reference.sim.

    Notebooks written against the first release import the interface from sim
    (``from ctx_reference.sim import BUILTIN_POLICIES, Clear, Compact, Protect, simulate_policy``);
    their submissions must still run.
    """
    assert set(policy.__all__) <= set(sim.__all__)
    for name in policy.__all__:
        assert getattr(sim, name) is getattr(policy, name), name
    assert "Protect" in policy.__all__ and "BUILTIN_POLICIES" in policy.__all__


def _totals_run(strategy, params):
    """Run the lesson's rules with MANAGERS (running totals); return the comparable numbers."""
    state = ContextState(tokens=params.base)
    manage = MANAGERS[strategy]
    contexts, rewrites, questions = [], [], []
    overflow = None
    next_q = params.first_question + 1
    for turn in range(1, params.turns + 1):
        state.tokens += params.turn_tokens
        if manage(state, turn, params, select_to_clear):
            rewrites.append(turn)
        if state.tokens > params.window:
            overflow = turn
            break
        if turn == next_q:
            fact = turn - params.fact_lag
            questions.append(QuestionOutcome(turn, fact, state.lost_at.get(fact)))
            next_q += params.question_every
        contexts.append(state.tokens)
    return tuple(contexts), tuple(rewrites), tuple(questions), overflow


@st.composite
def lesson_params(draw):
    """Random valid SimParams of the lesson's shape."""
    window = draw(st.integers(1, 150_000))
    first_question = draw(st.integers(0, 20))
    return SimParams(
        base=draw(st.integers(0, 20_000)), tool_result=draw(st.integers(0, 5_000)),
        window=window, threshold=draw(st.integers(0, window)), keep=draw(st.integers(0, 20)),
        turns=draw(st.integers(0, 80)), placeholder=draw(st.integers(0, 50)),
        summary_capacity=draw(st.none() | st.integers(0, 10)),
        note_tokens=draw(st.integers(0, 100)), clear_at_least=draw(st.integers(0, 50_000)),
        first_question=first_question, question_every=draw(st.integers(1, 6)),
        fact_lag=draw(st.integers(0, first_question)))


@settings(max_examples=150, deadline=None)
@given(params=lesson_params(), strategy=st.sampled_from(STRATEGIES))
def test_policies_agree_with_running_totals(params, strategy):
    """simulate (policies on a workload) sends, rewrites and forgets exactly as MANAGERS do."""
    r = simulate(strategy, params)
    assert (r.contexts, r.rewrite_turns, r.questions, r.overflow_turn) == _totals_run(
        strategy, params)


@settings(max_examples=100, deadline=None)
@given(params=lesson_params(), strategy=st.sampled_from(STRATEGIES))
def test_builtin_policies_match_simulate(params, strategy):
    """The general built-in policies, with the params' keep, give simulate's result."""
    policy = {"none": BUILTIN_POLICIES["none"],
              "clear": ClearOldest(params.keep, params.clear_at_least),
              "clear_notes": ClearOldest(params.keep, params.clear_at_least, notes=True),
              "compact": CompactOld(params.keep)}[strategy]
    assert simulate_policy(policy, lesson_workload(params)) == simulate(strategy, params)


def test_lesson_numbers_through_the_interface():
    """On the lesson's workload the built-in policies give docs/models.md §6's table."""
    w = lesson_workload()
    got = {s: simulate_policy(BUILTIN_POLICIES[s], w) for s in STRATEGIES}
    assert got["none"].overflow_turn == 26
    assert (got["clear"].peak, got["clear"].facts_lost, got["clear"].rewrites) == (59_550, 11, 15)
    assert got["clear_notes"].rewrites == 17
    assert got["compact"].rewrites == 6
    assert round(got["compact"].input_equivalent) == 668_560


def _tiny(**kw):
    """Four turns: a 5,000-token read, two 500-token greps, a read; base 1,000; window 20,000."""
    steps = (Step("read", 5_000, True), Step("grep", 500), Step("grep", 500, True),
             Step("read", 5_000))
    fields = dict(questions=((4, 1), (4, 3)), base=1_000, user=0, tool_call=0, answer=0,
                  window=20_000, threshold=10_000, placeholder=10, note_tokens=30,
                  summary_tokens=200)
    fields.update(kw)
    return Workload("tiny", steps, **fields)


def test_view_shows_records_zone_and_sizes():
    """At turn 2 the view holds both records, the tokens 6,500 and the ledger's zone."""
    views = []

    def spy(view):
        views.append((view, view.records))

    simulate_policy(spy, _tiny())
    v, records = views[1]
    assert (v.turn, v.tokens, v.window, v.threshold) == (2, 6_500, 20_000, 10_000)
    assert [r.turn for r in records] == [1, 2]
    assert [(r.tool, r.result_tokens, r.tokens, r.needed) for r in records] == [
        ("read", 5_000, 5_000, True), ("grep", 500, 500, False)]
    assert v.zone is Zone.SAFE                       # 6,500 of 20,000
    assert views[3][0].zone is Zone.CAUTION          # 12,000 of 20,000 is 60 %


def test_view_shows_the_summary_capacity():
    """The view carries the workload's summary capacity: None (no limit) by default, 3 when it is set."""
    seen = []

    def spy(view):
        seen.append(view.summary_capacity)

    simulate_policy(spy, _tiny())
    simulate_policy(spy, _tiny(summary_capacity=3))
    assert seen[0] is None and seen[-1] == 3


def test_view_is_read_only_and_records_only_during_the_call():
    """Setting a field raises; records not read during the policy call cannot be read later."""
    kept = []

    def keep(view):
        kept.append(view)
        with pytest.raises(AttributeError, match="read-only"):
            view.tokens = 0

    simulate_policy(keep, _tiny())
    assert kept[0].turn == 1
    with pytest.raises(ValueError, match="records of a ContextView can only be read while the policy runs"):
        _ = kept[0].records


def test_oldest_in_full_and_summary_facts():
    """After clearing turn 1 at turn 2, turn 3's view says 2 is the oldest in full. Compact(1) at
    turn 3 folds turns 1–2: turn 4's view has 3 as the oldest in full and a summary up to 2 that
    holds fact 2 only (fact 1 was cleared without a note)."""
    seen = {}

    def policy(view):
        seen[view.turn] = (view.oldest_in_full, view.summary_upto, view.summary_facts)
        return {2: Clear([1]), 3: Compact(1)}.get(view.turn)

    simulate_policy(policy, _tiny())
    assert seen[3] == (2, 0, ())
    assert seen[4] == (3, 2, (2,))


def test_clear_with_and_without_notes():
    """Clearing turns 1 and 3 at turn 4, noting 3: 12,000 − 4,990 − 490 + 30; fact 1 lost."""
    def policy(view):
        return Clear([1, 3], notes=[3]) if view.turn == 4 else None

    r = simulate_policy(policy, _tiny())
    assert r.contexts[3] == 12_000 - 4_990 - 490 + 30
    assert r.rewrite_turns == (4,)
    assert r.questions == (QuestionOutcome(4, 1, 4), QuestionOutcome(4, 3, None))
    assert r.costs[3] == 1.25 * r.contexts[3]


def test_compact_folds_notes_and_respects_capacity():
    """Compact(1) at turn 4 folds 1–3 (fact 3 from its note); capacity 1 keeps only fact 3."""
    def policy(view):
        if view.turn == 3:
            return Clear([3], notes=[3])
        if view.turn == 4:
            return Compact(1)
        return None

    r = simulate_policy(policy, _tiny(summary_capacity=1))
    assert r.contexts[3] == 1_000 + 200 + 5_000       # base + summary + turn 4, no notes left
    assert r.rewrite_turns == (3, 4)
    assert r.questions == (QuestionOutcome(4, 1, 4), QuestionOutcome(4, 3, None))


def test_protect_stops_clearing():
    """After Protect("read"), ClearOldest skips reads and an explicit Clear of one is refused."""
    seen = []

    def policy(view):
        seen.append(tuple(r.protected for r in view.records))
        if view.turn == 1:
            return Protect("read")
        return ClearOldest(keep=0)(view)

    r = simulate_policy(policy, _tiny(threshold=0))
    assert seen[1] == (True, False)
    assert seen[3][-1] is True                        # a later read is protected on arrival
    assert r.questions[0].lost_turn is None           # fact 1 sits in a protected read
    with pytest.raises(ValueError, match=r"Clear.turns: the result of turn 1 is protected"):
        simulate_policy(lambda v: Protect("read") if v.turn == 1 else Clear([1]), _tiny())


def test_overflow_ends_the_run():
    """Keeping everything in a 11,000 window: turn 4 (12,000) is not sent."""
    r = simulate_policy(BUILTIN_POLICIES["none"], _tiny(window=11_000, threshold=10_000))
    assert (r.overflow_turn, len(r.contexts), r.facts_asked) == (4, 3, 0)


@pytest.mark.parametrize("decision, fragment", [
    ("clear", "policy must return None, an action"),
    ([Clear([1]), "x"], "policy must return None, an action"),
    (Clear([5]), "Clear.turns: turn 5 is not in the context at turn 2"),
    (Compact(3), "Compact.keep: keeping 3 turns at turn 2 leaves nothing to fold"),
])
def test_bad_decisions(decision, fragment):
    """A decision that is not an action, or names turns it cannot, is a ValueError naming it."""
    with pytest.raises(ValueError) as info:
        simulate_policy(lambda v: decision if v.turn == 2 else None, _tiny())
    assert fragment in str(info.value)


def test_clearing_twice_is_refused():
    """Clearing turn 1 at turn 1 and again at turn 2 names it as already cleared."""
    with pytest.raises(ValueError, match="turn 1 is already cleared"):
        simulate_policy(lambda v: Clear([1]), _tiny())


@pytest.mark.parametrize("make, fragment", [
    (lambda: Clear([]), "Clear.turns must name at least one turn (got [])"),
    (lambda: Clear("12"), "Clear.turns must be a list or tuple of turns (got '12')"),
    (lambda: Clear([0]), "Clear.turns must hold int turns >= 1 (got 0 in [0])"),
    (lambda: Clear([1.0]), "Clear.turns must hold int turns >= 1 (got 1.0"),
    (lambda: Clear([2, 2]), "Clear.turns names a turn twice (got [2, 2])"),
    (lambda: Clear([1], notes=[1, 2]), "Clear.notes must be a subset of Clear.turns"),
    (lambda: Compact(True), "Compact.keep must be an int (got True)"),
    (lambda: Protect(""), "Protect.tool must be a non-empty str (got '')"),
])
def test_actions_validate_their_fields(make, fragment):
    """Each action refuses a bad field with a ValueError naming the field and the value."""
    with pytest.raises(ValueError) as info:
        make()
    assert fragment in str(info.value)


@pytest.mark.parametrize("kw, fragment", [
    (dict(questions=((5, 1),)), "1 <= fact_turn <= turn <= 4"),
    (dict(questions=((4, 1), (3, 3))), "in turn order"),
    (dict(threshold=30_000), "threshold must be <= window (20000) (got 30000)"),
    (dict(cache_read=math.nan), "cache_read must be a finite number >= 0 (got nan)"),
])
def test_workload_validates(kw, fragment):
    """A workload with a bad field is a ValueError naming it."""
    with pytest.raises(ValueError) as info:
        _tiny(**kw)
    assert fragment in str(info.value)


def test_policy_must_be_callable():
    """simulate_policy refuses a policy that is not callable, echoing it."""
    with pytest.raises(ValueError, match="policy must be callable .got 'clear'"):
        simulate_policy("clear", _tiny())
