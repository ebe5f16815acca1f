"""Workloads for context policies: seeded, named task shapes beyond the lesson's 60 turns.

What this covers: a ``WorkloadShape`` names every knob of a long agent task -- which tools it
calls and how large their results are (a few huge file reads, many small searches), bursts of
long outputs (a test run spilling its logs), what share of the facts the task needs again and
after how many turns it asks (the *lag*), and the model's window and threshold. ``generate``
turns a shape into a ``ctx_reference.policy.Workload`` with ``random.Random(seed)``; the same
shape always gives the same workload. ``VISIBLE`` are the capstone notebook's workloads, the
lesson's task first.

What it leaves out: real tool outputs and real question timing; a fact that is asked is asked
once; sizes are drawn uniformly within each tool's range. In a generated workload the ``needed``
hint a policy sees is exact -- an oracle no real agent has; ``with_wrong_hints`` makes it wrong
for a few asked facts, to see what a policy that trusts the hint loses.

Vocabulary: *tool mix* -- (tool, share of turns, smallest result, largest result); *burst* --
``burst_length`` consecutive turns whose result is ``burst_tokens``; *needed* -- the task asks
for that turn's fact again, ``lag`` turns later.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

from ctx_reference._validate import require_int, require_real
from ctx_reference.policy import Step, Workload
from ctx_reference.sim import SimParams, lesson_workload

ToolMix = tuple[tuple[str, float, int, int], ...]

# A coding agent's usual mix: many small searches, some test runs, a few huge file reads.
CODING_TOOLS: ToolMix = (
    ("grep", 0.55, 200, 1_500),
    ("run_tests", 0.30, 1_500, 5_000),
    ("read_file", 0.15, 8_000, 20_000),
)


@dataclass(frozen=True)
class WorkloadShape:
    """Every knob of a generated workload; ``generate(shape)`` draws it with ``seed``.

    >>> WorkloadShape("demo", seed=1).turns
    80
    """

    name: str
    seed: int
    turns: int = 80
    tools: ToolMix = CODING_TOOLS
    bursts: int = 0
    burst_length: int = 3
    burst_tokens: int = 12_000
    needed_share: float = 0.3
    lag_min: int = 8
    lag_max: int = 20
    window: int = 200_000
    threshold: int = 140_000
    base: int = 10_000
    summary_capacity: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty str (got {self.name!r})")
        require_int(self.seed, "seed")
        require_int(self.turns, "turns", minimum=1)
        for name in ("bursts", "burst_tokens", "lag_min", "base"):
            require_int(getattr(self, name), name, minimum=0)
        require_int(self.burst_length, "burst_length", minimum=1)
        require_int(self.lag_max, "lag_max", minimum=self.lag_min)
        require_int(self.window, "window", minimum=1)
        require_int(self.threshold, "threshold", minimum=0)
        if self.summary_capacity is not None:
            require_int(self.summary_capacity, "summary_capacity", minimum=0)
        share = require_real(self.needed_share, "needed_share")
        if not 0 <= share <= 1:
            raise ValueError(f"needed_share must be between 0 and 1 (got {self.needed_share!r})")
        if not isinstance(self.tools, tuple) or not self.tools:
            raise ValueError(f"tools must be a non-empty tuple of (tool, share, smallest, "
                             f"largest) (got {self.tools!r})")
        for mix in self.tools:
            if (not isinstance(mix, tuple) or len(mix) != 4 or not isinstance(mix[0], str)
                    or isinstance(mix[1], bool) or not isinstance(mix[1], (int, float))
                    or mix[1] <= 0 or any(isinstance(v, bool) or not isinstance(v, int)
                                          for v in mix[2:]) or not 0 <= mix[2] <= mix[3]):
                raise ValueError(f"tools must hold (tool, share > 0, smallest, largest) with "
                                 f"0 <= smallest <= largest (got {mix!r})")


def generate(shape: WorkloadShape) -> Workload:
    """Return the workload ``shape`` describes, drawn with ``random.Random(shape.seed)``.

    Each turn picks a tool by share and a result size in its range; ``bursts`` runs of
    ``burst_length`` turns (not overlapping, never on turn 1) return ``burst_tokens`` from
    ``run_tests``. A turn's fact is needed with probability ``needed_share``; it is asked
    ``lag_min``..``lag_max`` turns later, if that is still within the task.

    >>> w = generate(WorkloadShape("demo", seed=1, turns=30))
    >>> w.turns, w == generate(WorkloadShape("demo", seed=1, turns=30))
    (30, True)
    """
    if not isinstance(shape, WorkloadShape):
        raise ValueError(f"shape must be a WorkloadShape (got {shape!r})")
    rng = random.Random(shape.seed)
    total_share = sum(mix[1] for mix in shape.tools)
    burst_turns = _burst_turns(rng, shape)
    steps = []
    questions = []
    for turn in range(1, shape.turns + 1):
        if turn in burst_turns:
            tool, size = "run_tests", shape.burst_tokens
        else:
            pick = rng.random() * total_share
            for tool, share, smallest, largest in shape.tools:  # noqa: B007 - the picked tool is used below
                pick -= share
                if pick < 0:
                    break
            size = smallest + int(rng.random() * (largest - smallest + 1))
        asked_at = None
        if rng.random() < shape.needed_share:
            lag = shape.lag_min + int(rng.random() * (shape.lag_max - shape.lag_min + 1))
            if turn + lag <= shape.turns:
                asked_at = turn + lag
        steps.append(Step(tool, size, needed=asked_at is not None))
        if asked_at is not None:
            questions.append((asked_at, turn))
    return Workload(
        name=shape.name, steps=tuple(steps), questions=tuple(sorted(questions)),
        base=shape.base, window=shape.window, threshold=shape.threshold,
        summary_capacity=shape.summary_capacity)


def _burst_turns(rng: random.Random, shape: WorkloadShape) -> set[int]:
    """Return the turns inside bursts: ``bursts`` runs that do not overlap, never turn 1."""
    starts = range(2, shape.turns - shape.burst_length + 2)
    chosen: set[int] = set()
    for _ in range(shape.bursts):
        free = [s for s in starts
                if not any(t in chosen for t in range(s - 1, s + shape.burst_length + 1))]
        if not free:
            break
        start = free[int(rng.random() * len(free))]
        chosen.update(range(start, start + shape.burst_length))
    return chosen


# The capstone's visible workloads: the lesson's task and four generated shapes.
VISIBLE_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape("repo-survey", seed=11, turns=80),
    WorkloadShape("log-bursts", seed=12, turns=70, bursts=3, burst_length=3, burst_tokens=15_000,
                  window=128_000, threshold=90_000, base=6_000),
    WorkloadShape("quick-questions", seed=13, turns=90, needed_share=0.5, lag_min=3, lag_max=8,
                  window=100_000, threshold=60_000, base=8_000),
    WorkloadShape("long-memory", seed=14, turns=100, needed_share=0.2, lag_min=20, lag_max=50,
                  summary_capacity=12),
)


def visible_workloads() -> tuple[Workload, ...]:
    """Return the capstone's visible workloads: the lesson's 60 turns, then VISIBLE_SHAPES.

    >>> [w.name for w in visible_workloads()]
    ['lesson', 'repo-survey', 'log-bursts', 'quick-questions', 'long-memory']
    """
    return (lesson_workload(SimParams()),) + tuple(generate(s) for s in VISIBLE_SHAPES)


def with_wrong_hints(workload: Workload, wrong: int, seed: int = 0) -> Workload:
    """Return ``workload`` with the ``needed`` hint wrong for ``wrong`` of its asked facts (drawn with ``seed``).

    The questions stay as they are; the chosen facts only look unneeded to a policy, as when an
    agent misjudges a result it reads. The name says how many hints are wrong.

    >>> w = with_wrong_hints(lesson_workload(SimParams()), 2)
    >>> w.name, sum(s.needed for s in w.steps), len(w.questions)
    ('lesson（2 个提示错了）', 10, 12)

    Used by the capstone notebook (not graded).
    """
    if not isinstance(workload, Workload):
        raise ValueError(f"workload must be a Workload (got {workload!r})")
    asked = sorted({fact for _, fact in workload.questions})
    require_int(wrong, "wrong", minimum=0)
    if wrong > len(asked):
        raise ValueError(f"wrong must be at most the {len(asked)} asked facts of {workload.name} (got {wrong!r})")
    require_int(seed, "seed", minimum=0)
    flipped = set(random.Random(seed).sample(asked, wrong))
    steps = tuple(replace(step, needed=False) if turn in flipped else step
                  for turn, step in enumerate(workload.steps, start=1))
    return replace(workload, name=f"{workload.name}（{wrong} 个提示错了）", steps=steps)  # data
