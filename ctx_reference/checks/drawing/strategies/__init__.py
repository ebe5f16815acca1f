"""Hypothesis strategies that draw each exercise's generated cases from the domain its text states.

Covers: one module per case module of ``ctx_reference.checks`` (``remaining.py`` beside
``checks/remaining.py``), each defining ``STRATEGIES`` (exercise → strategy name → a strategy of
calls; a rule of the exercise names the strategies that exercise it in ``Rule.generated``) and
``ORACLES`` (exercise → the reference called as the learner's function is), and optionally
``EXAMPLES`` (exercise → how many calls each strategy draws). This package collects them.

Leaves out: storing the cases (``bank.py`` writes them, with the oracle's results, into
``bank/<exercise>.json.gz``) and running them (``generated.py``). These modules import Hypothesis,
which only the tests and ``python -m ctx_reference.checks.bank`` need: a learner's kernel never
imports them.

Vocabulary: a *call* is ``(args, kwargs)``, made with ``call(*args, **kwargs)``; the strategies
draw from the whole domain the text states (``_wide.py``: any whitespace, any text, lists holding
one object twice), biased as good strategies are, by samples drawn as extra weight, towards small
alphabets and numbers (ties, duplicates, shared prefixes), the boundaries the text names, empty and
blank inputs and text in several scripts.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

Call = tuple[tuple, dict]


def call(*args: Any, **kwargs: Any) -> Call:
    """Return the call ``f(*args, **kwargs)`` as the pair ``(args, kwargs)``."""
    return args, kwargs


def calls(*strategies: st.SearchStrategy, **named: st.SearchStrategy) -> st.SearchStrategy[Call]:
    """Return a strategy of calls whose positional and keyword arguments are drawn from ``strategies`` and ``named``."""
    return st.builds(call, *strategies, **named)


def _modules() -> list[Any]:
    return [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
            if not info.name.startswith("_")]


def _collected(attribute: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for module in _modules():
        found.update(getattr(module, attribute, {}))
    return found


#: exercise → strategy name → strategy of calls.
STRATEGIES: Mapping[str, Mapping[str, st.SearchStrategy[Call]]] = _collected("STRATEGIES")
#: exercise → the reference, called with the learner's signature.
ORACLES: Mapping[str, Callable] = _collected("ORACLES")
#: exercise → calls drawn per strategy (or strategy → calls), where not the default.
EXAMPLES: Mapping[str, int | Mapping[str, int]] = _collected("EXAMPLES")
