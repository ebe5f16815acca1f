"""Tests for ctx_reference.workloads and ctx_reference.policy_score, and their table and plot."""

import math

import pytest

from ctx_reference.plots import plot_leaderboard, plot_policy_scores
from ctx_reference.policy import BUILTIN_POLICIES, Clear, ClearOldest
from ctx_reference.policy_score import beats, best_builtin, score_builtins, score_policy
from ctx_reference.sim import SimParams, lesson_workload, simulate_policy
from ctx_reference.tables import format_policy_scores, format_workload_scores
from ctx_reference.workloads import VISIBLE_SHAPES, WorkloadShape, generate, visible_workloads


def test_lesson_is_the_first_visible_workload():
    """The first visible workload is notebook 06's task: compact rewrites 6 times, none overflows at 26."""
    lesson = visible_workloads()[0]
    assert lesson == lesson_workload(SimParams())
    assert simulate_policy(BUILTIN_POLICIES["none"], lesson).overflow_turn == 26
    assert simulate_policy(BUILTIN_POLICIES["clear_notes"], lesson).rewrites == 17


def test_generation_is_seeded():
    """The same shape gives the same workload; another seed gives another one."""
    shape = VISIBLE_SHAPES[0]
    assert generate(shape) == generate(shape)
    other = WorkloadShape(shape.name, seed=shape.seed + 1)
    assert generate(other).steps != generate(shape).steps


def test_generated_sizes_follow_the_tool_mix():
    """Each result lies in its tool's range; a burst turn returns burst_tokens from run_tests."""
    shape = WorkloadShape("mix", seed=3, turns=200, bursts=2, burst_length=3, burst_tokens=15_000)
    ranges = {tool: (lo, hi) for tool, _, lo, hi in shape.tools}
    bursts = [s for s in generate(shape).steps if s.result == 15_000]
    assert len(bursts) >= 6 and all(s.tool == "run_tests" for s in bursts)
    for step in generate(shape).steps:
        lo, hi = ranges[step.tool]
        assert lo <= step.result <= hi or step.result == 15_000


def test_questions_follow_lags_and_needed_flags():
    """Every question asks lag_min..lag_max turns later for a needed fact; each needed fact once."""
    shape = WorkloadShape("lags", seed=5, turns=120, lag_min=4, lag_max=9, needed_share=0.4)
    w = generate(shape)
    assert all(4 <= turn - fact <= 9 for turn, fact in w.questions)
    assert sorted(f for _, f in w.questions) == [i + 1 for i, s in enumerate(w.steps) if s.needed]


@pytest.mark.parametrize("kw, fragment", [
    (dict(turns=0), "turns must be >= 1 (got 0)"),
    (dict(lag_min=5, lag_max=4), "lag_max must be >= 5 (got 4)"),
    (dict(needed_share=1.5), "needed_share must be between 0 and 1 (got 1.5)"),
    (dict(tools=(("grep", 1.0, 10, 5),)), "tools must hold"),
])
def test_shape_validates(kw, fragment):
    """A shape with a bad knob is a ValueError naming it and echoing the value."""
    with pytest.raises(ValueError) as info:
        WorkloadShape("bad", seed=1, **kw)
    assert fragment in str(info.value)


def test_doing_nothing_and_forgetting_are_disqualified():
    """none overflows and clear forgets on the visible workloads: both score None."""
    scores = score_builtins(visible_workloads())
    assert scores["none"].score is None and scores["clear"].score is None
    assert scores["none"].workloads[0].overflow_turn == 26


def test_clearing_everything_with_notes_scores_badly():
    """Clearing every result with a note each turn is safe but far costlier than the built-ins."""
    def everything(view):
        turns = tuple(r.turn for r in view.records if not r.cleared)
        return Clear(turns, notes=turns) if turns else None

    s = score_policy(everything, visible_workloads(), "everything")
    assert s.safe and s.score > 2


def test_score_is_geometric_mean_of_ratios():
    """The score is exp(mean(log(cost / cheapest safe built-in))) over the workloads."""
    ws = visible_workloads()
    s = score_policy(ClearOldest(keep=3, notes=True), ws, "keep3")
    ratios = []
    for w in ws:
        _, cost = best_builtin(w)
        ratios.append(simulate_policy(ClearOldest(keep=3, notes=True), w).input_equivalent / cost)
    assert s.score == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)))


def test_compact_is_best_on_the_lesson():
    """On the lesson's task the cheapest safe built-in is compact, 668,560 (docs/models.md §6)."""
    name, cost = best_builtin(lesson_workload())
    assert (name, round(cost)) == ("compact", 668_560)


def test_beats_needs_safety_and_lower_cost():
    """compact does not beat itself; clear (unsafe) beats nothing; compact beats clear_notes
    on the lesson (668,560 < 1,500,744)."""
    w = [lesson_workload()]
    s = score_builtins(w)
    assert not beats(s["compact"], s["compact"])
    assert not beats(s["clear"], s["clear_notes"])
    assert beats(s["compact"], s["clear_notes"])


def test_table_and_plot():
    """The table has one row per policy with 出局 for the disqualified; the plot one point each."""
    scores = score_builtins(visible_workloads())
    text = format_policy_scores(scores)
    assert len(text.splitlines()) == 2 + len(scores)
    assert "出局" in text.splitlines()[2]          # none
    assert "lesson" in format_workload_scores(scores["compact"])
    fig = plot_policy_scores(scores, highlight="compact")
    gids = {line.get_gid() for line in fig.axes[0].lines}
    assert gids == {f"policy:{n}" for n in scores}
    bars = plot_leaderboard(["a", "b"], [0.9, None])
    assert {p.get_gid() for p in bars.axes[0].patches} == {"score:a", "score:b"}
