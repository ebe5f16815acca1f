"""Tests for ctx_reference.workloads.with_wrong_hints: a workload whose needed hint is wrong for a few facts."""

import pytest

from ctx_reference.policy import BUILTIN_POLICIES, Clear, Compact
from ctx_reference.sim import SimParams, lesson_workload, simulate_policy
from ctx_reference.workloads import visible_workloads, with_wrong_hints


def test_only_the_hints_change():
    """Two wrong hints on the lesson's task: 12 facts asked as before, 10 still marked needed, sizes unchanged."""
    lesson = lesson_workload(SimParams())
    wrong = with_wrong_hints(lesson, 2, seed=5)
    assert wrong.questions == lesson.questions
    assert [s.result for s in wrong.steps] == [s.result for s in lesson.steps]
    assert sum(s.needed for s in lesson.steps) == 12 and sum(s.needed for s in wrong.steps) == 10
    flipped = [t for t, (a, b) in enumerate(zip(lesson.steps, wrong.steps, strict=True), 1) if a.needed != b.needed]
    assert len(flipped) == 2 and all(t in {f for _, f in lesson.questions} for t in flipped)


def test_the_same_seed_gives_the_same_workload():
    """The wrong hints are drawn with the seed: the same seed twice gives equal workloads."""
    lesson = lesson_workload(SimParams())
    assert with_wrong_hints(lesson, 3, seed=1) == with_wrong_hints(lesson, 3, seed=1)


def test_a_policy_trusting_the_hint_loses_the_facts():
    """Clearing every unneeded result without a note loses exactly the facts whose hint is wrong (lesson, 2 wrong)."""
    def drop_unneeded_then_compact(view):
        if view.tokens <= view.threshold:
            return None
        old = [r for r in view.records if r.turn <= view.turn - 2]
        scratch = [r.turn for r in old if not r.cleared and not r.needed and not r.protected]
        return ([Clear(scratch)] if scratch else []) + [Compact(2)]

    lesson = lesson_workload(SimParams())
    assert simulate_policy(drop_unneeded_then_compact, lesson).facts_lost == 0
    assert simulate_policy(drop_unneeded_then_compact, with_wrong_hints(lesson, 2)).facts_lost == 2
    assert simulate_policy(BUILTIN_POLICIES["clear_notes"], with_wrong_hints(lesson, 2)).facts_lost == 0


@pytest.mark.parametrize("kwargs, fragment", [
    ({"wrong": -1}, "wrong must be >= 0"),
    ({"wrong": 13}, "wrong must be at most the 12 asked facts of lesson (got 13)"),
    ({"wrong": 1, "seed": -2}, "seed must be >= 0"),
])
def test_bad_arguments_are_named(kwargs, fragment):
    """A bad count or seed is a ValueError naming it."""
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        with_wrong_hints(visible_workloads()[0], **kwargs)
