"""The reference of an exercise called as the learner's function is, where the reference is a method or a class.

Covers: ``LEARNER_CALLS``, exercise → its record's ``learner_call``: a function that takes the namespace
of the reference's module (the real one, or a mutant's copy) and returns a callable with the learner's
signature as the notebook states it (``check(size, input_tokens, max_tokens)`` through
``Window(size).check``). The bank's oracles (``strategies/``) and the mutation campaign's mutants
(``ctx_course/mutation/targets.py``) are both called this way.

Leaves out: the calls themselves, which each exercise's record holds (``exercises/``), and the
exercises whose reference already has the learner's signature (called as they are).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..exercises import REGISTRY

#: The exercises whose reference is not called as the learner's function is: how to call it so.
LEARNER_CALLS: Mapping[str, Callable[[Mapping[str, Any]], Callable]] = {
    name: exercise.learner_call for name, exercise in REGISTRY.items() if exercise.learner_call is not None}
