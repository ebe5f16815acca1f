"""The capstone's generated cases: a sweep of seeds of every visible workload shape.

The text asks that the policy never overflow and lose no asked fact on every task, and says the
hidden tasks are the same shapes with other seeds and sizes. So the visible check runs each shape
of ``VISIBLE_SHAPES`` with the seeds ``SEEDS`` (the calls are listed, not drawn: every seed of the
range, in order), each expected to be safe.
"""
from __future__ import annotations

from ....workloads import VISIBLE_SHAPES
from . import call

SEEDS = range(140)  # 4 shapes × 140 seeds: as many simulated runs as fit in about 1 s of the check cell


def _safe(name: str, seed: int) -> tuple:  # noqa: ARG001 - the rule holds for every workload
    """The rule the text states for every workload: no overflow turn, no asked fact lost."""
    return (None, 0)


ORACLES = {"context_policy": _safe}

STRATEGIES = {
    "context_policy": {
        "seed-sweep": [call(shape.name, seed) for shape in VISIBLE_SHAPES for seed in SEEDS],
    },
}
