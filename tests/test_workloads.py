"""Tests for ctx_reference.workloads: wrong hints, and the capstone's model policy.

The policy is run on 200 seeds of every kind of workload.
"""

from dataclasses import replace

import pytest

from ctx_reference.policy import BUILTIN_POLICIES, Clear, Compact
from ctx_reference.policy_score import builtin_results
from ctx_reference.sim import SimParams, lesson_workload, simulate_policy
from ctx_reference.workloads import VISIBLE_SHAPES, WorkloadShape, generate, visible_workloads, with_wrong_hints

from notebook_cells import BEGIN, END, check_cell, prefix_namespace

SEEDS = range(200)   # seeds drawn for every kind of workload the capstone grades on


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



def _hidden_shapes() -> tuple[WorkloadShape, ...]:
    """Return the shapes of the capstone's hidden workloads, read from its first hidden block.

    The block builds ``_HIDDEN = tuple(generate(s) for s in (WorkloadShape(...), ...))``; run with
    ``generate`` as the identity (its imports left out), it leaves the shapes themselves.
    """
    block = check_cell("11-capstone", "check_my_policy").split(BEGIN)[1].split(END)[0]
    code = "\n".join(line for line in block.splitlines() if not line.startswith(("from ", "import ")))
    namespace = {"WorkloadShape": WorkloadShape, "generate": lambda shape: shape}
    exec(code, namespace)
    return namespace["_HIDDEN"]


def _model_policy():
    """Return the capstone's model answer, ``my_policy``, as the solution notebook defines it."""
    return prefix_namespace("11-capstone", "check_my_policy")["my_policy"]


def _unsafe_seeds(policy, shape: WorkloadShape) -> list[tuple[int, int | None, int]]:
    """Return (seed, overflow turn, facts lost) for every seed of SEEDS on which ``policy`` is not safe."""
    unsafe = []
    for seed in SEEDS:
        run = simulate_policy(policy, generate(replace(shape, seed=seed)))
        if run.overflow_turn is not None or run.facts_lost:
            unsafe.append((seed, run.overflow_turn, run.facts_lost))
    return unsafe


def test_the_hidden_set_has_one_workload_of_each_visible_kind():
    """The hidden block defines 5 shapes, one with a summary capacity of 12 (the visible long-memory's)."""
    hidden = _hidden_shapes()
    assert len(hidden) == 5 and all(isinstance(s, WorkloadShape) for s in hidden)
    assert [s.summary_capacity for s in hidden].count(12) == 1


def test_the_old_model_policy_loses_facts_on_long_memory_seed_309():
    """Clearing what is not needed and then Compact(2), blind to the summary's capacity, loses 3 facts
    on the long-memory shape drawn with seed 309: the 12-fact summary pushes out facts not yet asked."""
    def blind(view):
        if view.tokens <= view.threshold or view.turn <= 2:
            return None
        scratch = [r.turn for r in view.records
                   if r.turn <= view.turn - 2 and not r.cleared and not r.needed and not r.protected]
        return [Clear(scratch), Compact(2)] if scratch else Compact(2)

    long_memory = VISIBLE_SHAPES[3]
    assert long_memory.name == "long-memory"
    assert simulate_policy(blind, generate(replace(long_memory, seed=309))).facts_lost == 3


@pytest.mark.parametrize("kind", ["visible", "hidden"])
def test_the_model_policy_is_safe_on_200_seeds_of_every_kind(kind):
    """The capstone's model answer never overflows and loses no asked fact on seeds 0-199 of every
    visible shape and every hidden shape (only the seed changes), and on long-memory's seed 309."""
    policy = _model_policy()
    shapes = VISIBLE_SHAPES if kind == "visible" else _hidden_shapes()
    assert {s.name: _unsafe_seeds(policy, s) for s in shapes} == {s.name: [] for s in shapes}
    if kind == "visible":
        run = simulate_policy(policy, generate(replace(VISIBLE_SHAPES[3], seed=309)))
        assert (run.overflow_turn, run.facts_lost) == (None, 0)


def test_the_model_policy_is_not_always_cheaper_than_compact():
    """The capstone says the bonus is not promised: on repo-survey's seeds 0-199 the model answer
    costs no less than compact (which is safe there) on exactly 3 seeds."""
    policy = _model_policy()
    repo_survey = VISIBLE_SHAPES[0]
    assert repo_survey.name == "repo-survey"
    not_cheaper = 0
    for seed in SEEDS:
        workload = generate(replace(repo_survey, seed=seed))
        compact = builtin_results(workload)["compact"]
        mine = simulate_policy(policy, workload)
        if compact.overflow_turn is None and not compact.facts_lost:
            not_cheaper += mine.input_equivalent >= compact.input_equivalent
    assert not_cheaper == 3
