"""Digest comparisons for the hidden tests, so that their expected values are not in the cell.

A hidden test reads ``expect_digest("tail 0：只留头部", trim_lines(hundred, 3, 0), "…")``: the
returned value is turned into plain data of exact types (``runner.plain``), written as a
canonical text, hashed with SHA-256, and the first 16 hex digits are compared with the literal.
A learner's function that inspects its caller's frame or source finds a hash, not the answer.

The canonical text tags every value with its type (``i:3``, ``s:"a"``, ``[…]`` for a list,
``(…)`` for a tuple), so ``3`` and ``3.0``, or a list and a tuple, have different digests. Dict
keys are sorted by their canonical text. Floats are rounded to ``places`` decimals first when
given, so that a correct function computing in another order still matches; with ``places``,
numbers are compared by their value: an ``int``, a ``Fraction``, a ``Decimal`` or a numpy number
counts as the ``float`` of the same value (the exercises whose digests have ``places`` return
numbers; bool stays bool).

When grading, the hidden tests run only on the grader's side: the learner's function is called
in a process of its own and only its returned value, as plain data, comes back to be digested
and compared here (``ctx_course/grading/steps/judge.py``); neither the digests nor the hidden
tests reach the learner's kernel.
"""
from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Any

from ..i18n import _
from .runner import CheckFailed, NotPlain, plain

DIGEST_HEX = 16  # hex digits kept of the SHA-256 digest


def canonical_text(value: Any, places: int | None = None) -> str:
    """Return the canonical text of plain data: ``canonical_text([1, "a"]) == '[i:1,s:"a"]'``."""
    kind = type(value)
    if value is None:
        return "n"
    if kind is bool:
        return f"b:{value}"
    if kind is int and places is None:
        return f"i:{value}"
    if kind is int:
        kind, value = float, float(value)  # with places, 3 and 3.0 are the same number
    if kind is float:
        shown = round(value, places) if places is not None else value
        return f"f:{shown + 0.0!r}"  # + 0.0 turns -0.0 into 0.0
    if kind is str:
        return "s:" + json.dumps(value, ensure_ascii=False)
    if kind is list:
        return "[" + ",".join(canonical_text(v, places) for v in value) + "]"
    if kind is tuple:
        return "(" + ",".join(canonical_text(v, places) for v in value) + ")"
    if kind is dict:
        items = sorted((canonical_text(k, places), canonical_text(v, places)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, Enum):
        return f"e:{kind.__name__}.{value.name}"
    raise NotPlain(_("不能比较 {kind} 类型的值").format(kind=kind.__name__))


def digest(value: Any, places: int | None = None) -> str:
    """Return the digest of plain data: the first 16 hex digits of SHA-256 of its canonical text.

    With ``places``, any real number counts by its value: ``digest(Fraction(1, 2), 6) == digest(0.5, 6)``.
    """
    text = canonical_text(plain(value, by_value=places is not None), places)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_HEX]


def expect_digest(label: str, value: Any, expected: str, places: int | None = None) -> None:
    """Raise CheckFailed naming ``label`` (in the reader's language) unless ``value``'s digest equals ``expected``."""
    try:
        got = digest(value, places)
    except NotPlain as exc:
        raise CheckFailed(
            _("隐藏测试没有通过：{label}（{reason}）").format(label=_(label), reason=exc)
        ) from None
    if got != expected:
        raise CheckFailed(_("隐藏测试没有通过：{label}").format(label=_(label))) from None
