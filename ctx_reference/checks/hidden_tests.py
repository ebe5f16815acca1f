"""The hidden tests of every exercise and the rules each decides, as the release read them from the notebooks.

Covers: ``HiddenTest``, one hidden test of an exercise's check cell (its label, and the rules its
``decides=`` names, or, for the hidden generated cases, ``generated``); ``rule_names``, the one check of
a ``decides=`` value (``expect_digest``, ``expect_generated`` and the table use it); the table's file in
this package, ``hidden_tests.json``, written by ``table_text`` and read by ``read_table``; and
``HIDDEN_TESTS``, that file read once: exercise → its hidden tests, in the check cell's order.

Leaves out: finding the hidden tests in the notebooks (``ctx_course/editions/hidden_table.py``, run by
``python -m ctx_course release``, which writes the file) and which rules each test decides in the end
(the exercise's record, ``exercise.py``: the hidden generated cases decide every rule that has
generated cases).

Vocabulary: a *hidden test* is one ``expect_digest(label, value, digest, decides=(...))`` or
``expect_generated(label, exercise, function)`` call between a check cell's ``### BEGIN HIDDEN TESTS``
and ``### END HIDDEN TESTS``; the notebook's hidden part is the one place that says what it decides.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

#: The table's file in this package, written by ``python -m ctx_course release``.
TABLE_FILE = "hidden_tests.json"


def rule_names(decides: Any, argument: str = "decides") -> tuple[str, ...]:
    """Return ``decides`` if it is a non-empty tuple of rule names; raise ValueError naming ``argument`` otherwise.

    >>> rule_names(("negative-when-over",))
    ('negative-when-over',)
    >>> rule_names("negative-when-over")
    Traceback (most recent call last):
    ...
    ValueError: decides must be a non-empty tuple of rule names, e.g. ("negative-when-over",) (got 'negative-when-over')
    """
    if (type(decides) is not tuple or not decides
            or not all(type(name) is str and name and name == name.strip() for name in decides)):
        raise ValueError(f'{argument} must be a non-empty tuple of rule names, e.g. ("negative-when-over",) '
                         f"(got {decides!r})")
    return decides


@dataclass(frozen=True)
class HiddenTest:
    """One hidden test: ``HiddenTest("超额时余量为负数", ("negative-when-over",))``, or ``HiddenTest("生成的隐藏例子",
    generated=True)`` for the hidden generated cases, whose rules the record derives."""

    label: str
    decides: tuple[str, ...] = ()
    generated: bool = False

    def __post_init__(self) -> None:
        if type(self.label) is not str or not self.label:
            raise ValueError(f"label must be a non-empty string (got {self.label!r})")
        if self.generated:
            if self.decides != ():
                raise ValueError(f"decides must be left out of the hidden generated cases, whose rules are derived "
                                 f"(got {self.decides!r} for hidden test {self.label!r})")
        else:
            rule_names(self.decides)


def table_text(table: Mapping[str, tuple[HiddenTest, ...]]) -> str:
    """Return the file text of ``table`` (exercise → its hidden tests): JSON, exercises sorted, one test a line.

    >>> tests = (HiddenTest("超额", ("negative",)), HiddenTest("生成", generated=True))
    >>> print(table_text({"remaining": tests}), end="")
    {
     "remaining": [
      {"label": "超额", "decides": ["negative"]},
      {"label": "生成", "generated": true}
     ]
    }
    """
    def line(test: HiddenTest) -> str:
        entry = {"label": test.label, "generated": True} if test.generated else {"label": test.label,
                                                                                 "decides": list(test.decides)}
        return "  " + json.dumps(entry, ensure_ascii=False)

    blocks = [f" {json.dumps(name)}: [\n" + ",\n".join(line(test) for test in table[name]) + "\n ]"
              for name in sorted(table)]
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def read_table(text: str) -> Mapping[str, tuple[HiddenTest, ...]]:
    """Return exercise → its hidden tests from the file text ``table_text`` wrote; raise ValueError on any other text.

    >>> read_table('{"remaining": [{"label": "超额", "decides": ["negative"]}]}')["remaining"]
    (HiddenTest(label='超额', decides=('negative',), generated=False),)
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(tests, list) for tests in data.values()):
        raise ValueError(f"{TABLE_FILE} must map each exercise to a list of hidden tests (got {text[:80]!r})")
    table = {}
    for name, tests in data.items():
        if not all(isinstance(test, dict) and set(test) in ({"label", "decides"}, {"label", "generated"})
                   for test in tests):
            raise ValueError(f"{TABLE_FILE}: each hidden test of {name!r} must hold a label and either decides or "
                             f"generated (got {tests!r})")
        table[name] = tuple(HiddenTest(test["label"], generated=True) if test.get("generated") is True
                            else HiddenTest(test["label"], tuple(test.get("decides", ()))) for test in tests)
    return MappingProxyType(table)


def _packaged() -> Mapping[str, tuple[HiddenTest, ...]]:
    """Return the table this package holds, or an empty one where the release has not written it yet."""
    path = resources.files(__name__.rpartition(".")[0]).joinpath(TABLE_FILE)
    if not path.is_file():
        return MappingProxyType({})
    return read_table(path.read_text(encoding="utf-8"))


#: Exercise → its hidden tests, in the order of its check cell (the release's ``hidden_tests.json``).
HIDDEN_TESTS: Mapping[str, tuple[HiddenTest, ...]] = _packaged()

__all__ = ["HIDDEN_TESTS", "TABLE_FILE", "HiddenTest", "read_table", "rule_names", "table_text"]
