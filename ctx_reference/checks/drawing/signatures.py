"""The reference of an exercise called as the learner's function is, where the reference is a method or a class.

Covers: ``LEARNER_CALLS``, exercise → a function that takes the namespace of the reference's module
(the real one, or a mutant's copy) and returns a callable with the learner's signature as the
notebook states it: ``check(size, input_tokens, max_tokens)`` through ``Window(size).check``,
``recall(pos, n, **params)`` through ``RecallModel``, ``fit_position(positions, accuracy, n_docs)``
through ``fit_position_curve``. The bank's oracles (``strategies/``) and the mutation campaign's
mutants (``ctx_course/mutation/targets.py``) are both called this way.

Leaves out: the exercises whose reference already has the learner's signature (called as they are).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _check(namespace: Mapping[str, Any]) -> Callable:
    window = namespace["Window"]
    return lambda size, input_tokens, max_tokens: window(size).check(input_tokens, max_tokens)


def _recall(namespace: Mapping[str, Any]) -> Callable:
    model = namespace["RecallModel"]
    # the model's own defaults stand for the parameters a case leaves out
    return lambda pos, n, **params: model(**params).recall(pos, n)


def _fit_position(namespace: Mapping[str, Any]) -> Callable:
    curve_type, fit_curve = namespace["MeasuredCurve"], namespace["fit_position_curve"]

    def fit_position(positions, accuracy, n_docs):
        curve = curve_type("fit", n_docs, tuple(positions), tuple(100 * a for a in accuracy), 0.0, "")
        fit = fit_curve(curve)
        return fit.base, fit.middle, fit.end_drop
    return fit_position


#: The exercises whose reference is not called as the learner's function is: how to call it so.
LEARNER_CALLS: dict[str, Callable[[Mapping[str, Any]], Callable]] = {
    "check": _check,
    "recall": _recall,
    "fit_position": _fit_position,
}
