"""Scoring a context policy on workloads: safe or not, and how its cost compares.

What this covers: one ``WorkloadScore`` per workload (overflowed, facts lost of asked, peak,
rewrites, input equivalent) and one number for a policy, ``PolicyScore.score``: the geometric
mean, over the workloads, of the policy's input equivalent divided by that of the cheapest
*safe* built-in policy on the same workload. Safe means the run never overflowed and lost no
fact that was asked. A policy that is unsafe on any workload is disqualified (score None), so
doing nothing (it overflows) and clearing everything without notes (it forgets) cannot win;
clearing everything with notes every turn is safe but pays a full cache write every turn, so
its score is far above 1. Lower is better; below 1 beats every built-in.

What it leaves out: output tokens, latency, and any quality measure beyond "the fact is in
the context" (see ``ctx_reference.sim``).

Vocabulary: *built-in* -- the four strategies of notebook 06 as policies
(``ctx_reference.policy.BUILTIN_POLICIES``); *ratio* -- cost / cheapest safe built-in's cost on
one workload; *beats X* -- safe on every workload, and on each one either X is unsafe or the
policy costs less than X.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ctx_reference._validate import require_callable
from ctx_reference.policy import BUILTIN_POLICIES, Policy, Workload
from ctx_reference.sim import SimResult, simulate_policy


@dataclass(frozen=True)
class WorkloadScore:
    """What one policy did on one workload, beside the cheapest safe built-in's cost."""

    workload: str
    overflow_turn: int | None
    facts_lost: int
    facts_asked: int
    peak: int
    rewrites: int
    input_equivalent: float
    best_builtin: str
    best_builtin_cost: float

    @property
    def safe(self) -> bool:
        """Return True if the run never overflowed and lost no asked fact."""
        return self.overflow_turn is None and self.facts_lost == 0

    @property
    def ratio(self) -> float | None:
        """Return cost / cheapest safe built-in's cost, or None if this run is not safe."""
        return self.input_equivalent / self.best_builtin_cost if self.safe else None


@dataclass(frozen=True)
class PolicyScore:
    """A policy's scores on every workload and its one number (None: disqualified)."""

    name: str
    workloads: tuple[WorkloadScore, ...]

    @property
    def safe(self) -> bool:
        """Return True if the policy is safe on every workload."""
        return all(w.safe for w in self.workloads)

    @property
    def score(self) -> float | None:
        """Return the geometric mean of the ratios, or None if any workload is unsafe."""
        if not self.safe or not self.workloads:
            return None
        return math.exp(math.fsum(math.log(w.ratio) for w in self.workloads if w.ratio is not None)
                        / len(self.workloads))

    @property
    def total_cost(self) -> float:
        """Return the input equivalent summed over the workloads."""
        return math.fsum(w.input_equivalent for w in self.workloads)


@lru_cache(maxsize=64)
def builtin_results(workload: Workload) -> dict[str, SimResult]:
    """Return each built-in policy's result on ``workload`` (cached: workloads are frozen).

    Treat the returned dict as read-only.
    """
    return {name: simulate_policy(policy, workload) for name, policy in BUILTIN_POLICIES.items()}


def best_builtin(workload: Workload) -> tuple[str, float]:
    """Return the cheapest safe built-in on ``workload`` and its input equivalent.

    Raises ValueError if no built-in is safe there (such a workload cannot be scored).
    """
    safe = [(r.input_equivalent, name) for name, r in builtin_results(workload).items()
            if r.overflow_turn is None and r.facts_lost == 0]
    if not safe:
        raise ValueError(f"workload has no safe built-in policy to compare with "
                         f"(got {workload.name!r})")
    cost, name = min(safe)
    return name, cost


def score_run(result: SimResult, workload: Workload) -> WorkloadScore:
    """Return the WorkloadScore of ``result``, a run on ``workload``."""
    name, cost = best_builtin(workload)
    return WorkloadScore(workload.name, result.overflow_turn, result.facts_lost,
                         result.facts_asked, result.peak, result.rewrites,
                         result.input_equivalent, name, cost)


def score_policy(policy: Policy, workloads: Sequence[Workload], name: str = "mine") -> PolicyScore:
    """Return ``policy``'s scores on ``workloads`` (each run with ``simulate_policy``).

    >>> from ctx_reference.policy import BUILTIN_POLICIES
    >>> from ctx_reference.sim import lesson_workload
    >>> s = score_policy(BUILTIN_POLICIES["compact"], [lesson_workload()], "compact")
    >>> s.safe, s.score, s.workloads[0].best_builtin
    (True, 1.0, 'compact')
    >>> score_policy(BUILTIN_POLICIES["clear"], [lesson_workload()], "clear").score is None
    True
    """
    require_callable(policy, "policy")
    if isinstance(workloads, Workload) or not all(isinstance(w, Workload) for w in workloads):
        raise ValueError(f"workloads must be a list of Workload (got {workloads!r})")
    return PolicyScore(name, tuple(score_run(simulate_policy(policy, w), w) for w in workloads))


def score_builtins(workloads: Sequence[Workload]) -> dict[str, PolicyScore]:
    """Return the PolicyScore of each built-in on ``workloads`` (from the cached runs)."""
    return {name: PolicyScore(name, tuple(score_run(builtin_results(w)[name], w)
                                          for w in workloads))
            for name in BUILTIN_POLICIES}


def beats(mine: PolicyScore, other: PolicyScore) -> bool:
    """Return True if ``mine`` is safe everywhere and, on each workload, ``other`` is unsafe
    or costs more.

    The two must cover the same workloads, in the same order.
    """
    if [w.workload for w in mine.workloads] != [w.workload for w in other.workloads]:
        raise ValueError(f"other must cover the same workloads as mine "
                         f"(got {[w.workload for w in other.workloads]!r})")
    return mine.safe and all(not o.safe or m.input_equivalent < o.input_equivalent
                             for m, o in zip(mine.workloads, other.workloads))

