"""A survivor set beside its reference on many drawn calls: the evidence behind a reviewed reason.

Covers: ``mutant_source`` (the reference's source with one survivor's mutation applied, found by
its identity's text) and ``first_difference``, which calls the mutant (as the learner's function,
``targets.learner_function``) and the unmutated copy on the calls the exercise's own strategies draw
(``ctx_reference.checks.drawing.strategies``: the domain its text states), with seeds other than the bank's
and many more calls than the bank holds, and returns the first call on which their outcomes (the
value as the check compares it, or the error raised) differ. ``python -m ctx_course.mutation compare``
runs it over the survivors of the last run. A difference on a drawn call is a gap (the strategies
draw only what the text admits); none is evidence, not proof, of an equivalent mutant, which the
reviewed reason must still argue.

Leaves out: the capstone's exercises, whose check ranks a policy's score and admits many answers
(their survivors are reviewed against a sweep of workloads, not a single right value).

Vocabulary: an *outcome* is ``{"value": plain data}`` or ``{"raises": error name}`` (``bank.outcome``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from .campaign import Mutant
from .targets import CAPSTONE, learner_function, targets

#: the seeds of the comparison's draws (the bank's are 36 and 3601)
SEEDS = (7, 71, 719)


def mutant_source(mutant: Mutant) -> str:
    """Return the exercise's source with ``mutant``'s line(s) replaced by its mutated text, indentation kept.

    The original lines are looked up as a block of consecutive lines whose stripped text is the
    identity's line; the block nearest the mutant's line number is replaced.
    """
    source = targets()[mutant.exercise].source
    lines = source.split("\n")
    old = mutant.line.split("\n")
    starts = [i for i in range(len(lines) - len(old) + 1)
              if [line.strip() for line in lines[i:i + len(old)]] == old]
    if not starts:
        raise ValueError(f"mutant must name lines of its exercise's source (got {mutant.line!r})")
    start = min(starts, key=lambda i: abs(i + 1 - mutant.lineno))
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    new = [indent + text for text in mutant.mutated.split("\n")] if mutant.mutated else []
    return "\n".join(lines[:start] + new + lines[start + len(old):])


def _same(a: Any, b: Any, tol: float | None) -> bool:
    """Whether two plain values are equal, floats within ``tol`` where the check allows a tolerance."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b if tol is None else abs(a - b) <= tol
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tol) for k in a)
    return type(a) is type(b) and a == b


def _calls(exercise: str, count: int) -> Iterator[tuple[str, tuple, dict]]:
    from ctx_reference.checks.drawing.strategies import STRATEGIES
    from ctx_reference.checks.drawing.write_bank import draw

    for name, strategy in STRATEGIES[exercise].items():
        if isinstance(strategy, (list, tuple)):
            for args, kwargs in strategy:
                yield name, args, kwargs
            continue
        for seed in SEEDS:
            for args, kwargs in draw(strategy, count, seed):
                yield name, args, kwargs


def _outcome(func: Callable, args: tuple, kwargs: dict, spec: Any) -> dict[str, Any]:
    from ctx_reference.checks.drawing.write_bank import outcome

    try:
        return outcome(func, args, kwargs, spec)
    except Exception as exc:  # an error the text does not state: an outcome of its own
        return {"raises": f"{type(exc).__name__} (not stated)"}


def first_difference(mutant: Mutant, count: int = 300) -> tuple[str, tuple, dict, dict, dict] | None:
    """Return (strategy, args, kwargs, reference's outcome, mutant's outcome) of the first call that tells them apart.

    ``count`` calls are drawn per strategy and seed. None: they agree on every call drawn.
    """
    from ctx_reference.checks import GENERATED

    if mutant.exercise in CAPSTONE:
        raise ValueError(f"exercise must not be one of the capstone's {CAPSTONE} (got {mutant.exercise!r})")
    target = targets()[mutant.exercise]
    spec = GENERATED[mutant.exercise]
    reference = learner_function(mutant.exercise, target.source, "<reference copy>")
    changed = learner_function(mutant.exercise, mutant_source(mutant), "<mutant>")
    for name, args, kwargs in _calls(mutant.exercise, count):
        expected, got = _outcome(reference, args, kwargs, spec), _outcome(changed, args, kwargs, spec)
        if expected.keys() != got.keys() or not _same(next(iter(expected.values())), next(iter(got.values())),
                                                      spec.tol):
            return name, args, kwargs, expected, got
    return None
