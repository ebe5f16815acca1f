"""Time scoring a policy on the capstone's visible workloads (notebook 11).

Run with ``python benchmarks/bench_policy.py``. Scoring runs the policy and the four built-in
policies on every visible workload; the built-ins' cache is cleared before each repeat, so the
figure is a cold score, as in a fresh notebook kernel. Goal: under two seconds. Prints the best
of several repeats (wall time, ``time.perf_counter``).
"""
from __future__ import annotations

import time

from ctx_reference.policy import Clear, Compact
from ctx_reference.policy_score import builtin_results, score_policy
from ctx_reference.workloads import visible_workloads

REPEATS = 5


def model_policy(view):
    """The capstone's model answer: over the threshold, drop scratch results and compact to 2."""
    if view.tokens <= view.threshold:
        return None
    old = [r for r in view.records if r.turn <= view.turn - 2]
    if not old:
        return None
    scratch = [r.turn for r in old if not r.cleared and not r.needed and not r.protected]
    return ([Clear(scratch)] if scratch else []) + [Compact(2)]


def cold_score() -> float:
    """Generate the workloads and score the model policy from scratch; return the score."""
    builtin_results.cache_clear()
    return score_policy(model_policy, visible_workloads()).score


def main() -> None:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        score = cold_score()
        best = min(best, time.perf_counter() - start)
    turns = sum(w.turns for w in visible_workloads())
    print(f"score a policy on {len(visible_workloads())} visible workloads ({turns} turns, "
          f"5 policies each): {best * 1000:.1f} ms (score {score:.3f})")


if __name__ == "__main__":
    main()
