"""Where the grader may hand a check a way to call a learner's function on many cases at once.

Covers: ``batched(func, calls)``, which the generated cases' runner asks before it calls ``func``
on each of ``calls`` in order (any iterable, read only by a caller: ``bank.calls``): ``func`` itself,
unless a caller is registered for ``func``'s exact type, and ``register``, with which the grader's
side registers one for the objects that stand, on its side, for a learner's function (each call of
those crosses a process boundary, and the caller sends many in one message). What the caller
returns must behave exactly as ``func`` would, call by call.

Leaves out: the batches themselves (``ctx_course/sandbox/batch.py``). Nothing in the learner's
kernel registers a caller: there, and for any object of another type (a learner's function, a
wrapper, an object with forged attributes), ``batched`` returns ``func`` as it is.

Vocabulary: a *call* is one case's ``(args, kwargs)``; a *caller* is a function
``(func, calls) -> callable``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Calls = Iterable[tuple[tuple, Mapping[str, Any]]]
_CALLERS: dict[type, Callable[[Any, Calls], Callable]] = {}


def register(kind: type, caller: Callable[[Any, Calls], Callable]) -> None:
    """Make ``batched`` hand objects of exactly type ``kind`` to ``caller`` (the grader's side, once)."""
    if not isinstance(kind, type):
        raise TypeError(f"kind must be a class (got {kind!r})")
    _CALLERS[kind] = caller


def batched(func: Any, calls: Calls) -> Any:
    """Return what to call, in order, in place of ``func`` on ``calls``: ``func`` unless its exact type has a caller.

    ``calls`` is read only by a caller (in the learner's kernel, never): an iterator of them costs nothing there.
    """
    caller = _CALLERS.get(type(func))
    return func if caller is None else caller(func, calls)
