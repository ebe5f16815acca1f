"""What an exercise's text admits where it says "a number" or "an integer" of the value returned.

Covers: ``Numbers``, the words of one exercise's text about a returned number (the value itself,
or one item of a returned tuple, named as the text names it), and ``Numbers.read``, which turns
what a learner's function returned into the value a case compares, or into the sentence saying
what the text asked for. "A number" (``NUMBER``) is any real number, compared by its value:
``int``, ``float``, ``Fraction``, ``Decimal``, numpy's integers and floats (``_validate.real_value``),
bool excluded. "An integer" (``INTEGER``) is an ``int`` (numpy's integers are one, as
``values.python_scalar`` says); any other number, bool included, gets one line in the learner's
words saying that the text asks for an integer. ``stating`` gives every case of an exercise its
``Numbers``.

Leaves out: the comparison itself (``values.same``, with the case's tolerance) and the hidden
digests: there, ``places`` already compares numbers by their rounded value (``values.digest``).

Vocabulary: the *words* are the phrase of the text that says what the number is ("一个数",
"整数余量"); a *reading* is the pair (value to compare, None) or (what came back, the sentence
why it is not what the text asked for).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._validate import real_value
from ..i18n import _
from .runner import CheckCase
from .values import python_scalar, show

NUMBER = "number"  # "a number": any real number, by its value
INTEGER = "integer"  # "an integer": an int


@dataclass(frozen=True)
class Numbers:
    """What the text says a returned number is: ``kind`` (``NUMBER`` or ``INTEGER``), where (``item``: None for
    the value itself, else the position in a returned tuple) and how the text names it (``name``, a message:
    "返回值" when None).

    >>> Numbers(INTEGER).read(3.0)[1]
    '练习的文字要求返回值是一个整数（int），你的函数给的是 float：3.0'
    >>> from fractions import Fraction
    >>> Numbers(NUMBER).read(Fraction(29_000, 2))
    (14500.0, None)
    """

    kind: str
    item: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in (NUMBER, INTEGER):
            raise ValueError(f"kind must be {NUMBER!r} or {INTEGER!r} (got {self.kind!r})")

    def read(self, value: Any) -> tuple[Any, str | None]:
        """Return (the value to compare, None), or (``value``, why it is not the number the text asks for).

        A value of another shape (not a tuple long enough, for an ``item``) is returned as it is: the
        comparison with the expected value then says what is wrong with it.
        """
        if self.item is None:
            number, why = self._number(value)
            return number, why
        if type(value) is not tuple or not -len(value) <= self.item < len(value):
            return value, None
        number, why = self._number(value[self.item])
        if why is not None:
            return value, why
        return value[: self.item] + (number,) + value[self.item + 1:], None

    def _number(self, value: Any) -> tuple[Any, str | None]:
        if self.kind == NUMBER:
            number = real_value(value)
            return (value if number is None else number), None
        value = python_scalar(value)  # numpy's integers are integers
        if type(value) is int or (real_value(value) is None and not isinstance(value, bool)):
            return value, None  # an int, or no number at all: the comparison says what came back
        return value, _("练习的文字要求{what}是一个整数（int），你的函数给的是 {kind}：{got}").format(
            what=_(self.name) if self.name is not None else _("返回值"), kind=type(value).__name__, got=show(value))



def stating(numbers: Numbers, cases: Sequence[CheckCase]) -> tuple[CheckCase, ...]:
    """Return ``cases``, each reading the returned number as ``numbers`` says (an exercise's cases all do)."""
    return tuple(replace(case, numbers=numbers) for case in cases)
