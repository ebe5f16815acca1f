"""The runner pays per case only for what can matter: no line where none is shown, no copy of what cannot change."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

import ctx_reference.i18n
from ctx_reference.assemble import Item
from ctx_reference.checks import GENERATED, REGISTRY, CheckCase
from ctx_reference.checks.bank import cases as bank
from ctx_reference.checks.generated import run_generated
from ctx_reference.checks.runner import PASSED, copied_call, immutable, run_case
from ctx_reference.ledger import Zone


@dataclass
class _Open:
    """A dataclass that is not frozen: a call may change it."""

    n: int


def _item(name: str) -> Item:
    return Item(name, 3, 1, required=False)


@pytest.mark.parametrize("value", [None, True, 3, 2.5, "a", Zone.SAFE, (1, ("a", None)), frozenset({1}), range(3),
                                   _item("a"), (_item("a"), 1)])
def test_values_no_call_can_change_are_immutable(value):
    assert immutable(value)


@pytest.mark.parametrize("value", [[1], {"a": 1}, (1, [2]), {1}, _Open(1), (_Open(1),)])
def test_values_a_call_can_change_are_not_immutable(value):
    assert not immutable(value)


def test_immutable_arguments_are_passed_as_they_are():
    """A call of scalars, tuples and frozen records only copies nothing: the very objects are passed."""
    record, pair = _item("a"), (1, "b")
    args, kwargs = copied_call((record, pair, 3), {"at": pair})
    assert args[0] is record and args[1] is pair and kwargs["at"] is pair


def test_lists_and_dicts_are_copied_and_one_object_stays_one():
    """A list and a dict are new objects, equal to the case's; a list passed twice is one list in the copy; the
    frozen records inside are kept (nothing can change them)."""
    record, mapping = _item("a"), {"k": [1]}
    items = [record, record]
    args, kwargs = copied_call((items, mapping), {"again": items})
    assert args[0] == items and args[0] is not items and args[1] == mapping and args[1]["k"] is not mapping["k"]
    assert args[0] is kwargs["again"] and args[0][0] is args[0][1] is record


def test_an_open_object_is_still_copied():
    """A dataclass that is not frozen is deep-copied, as before: the case's own object is never passed."""
    value = _Open(1)
    args, _ = copied_call(([value],), {})
    assert args[0][0] == value and args[0][0] is not value


def test_a_passing_case_not_shown_builds_no_line():
    """With shown=False a passing case builds no label and no line (the label is never asked for)."""
    asked = []

    def label() -> str:
        asked.append(1)
        return "标签"

    case = CheckCase("加一", args=(1,), expect=2)
    assert run_case(lambda n: n + 1, case, label=label, shown=False) is PASSED and asked == []
    shown = run_case(lambda n: n + 1, case, label=label)
    assert shown.line == "✓ 标签 → 2" and asked == [1]


def test_a_failing_case_not_shown_still_names_the_changed_argument():
    """A call that changes its list argument fails with the line it always had, even where passing lines are not
    shown, and its label is built once."""
    def pops(lines, keep):
        lines.pop()
        return ["a"]

    case = CheckCase("改动", args=(["a", "b"], 1), expect=["a"])
    outcome = run_case(pops, case, shown=False)
    assert not outcome.passed and outcome.line == "× 改动：你的函数改动了传进去的第 1 个参数（应该保持原样）"


def test_the_generated_cases_of_a_right_function_read_no_message_per_case(monkeypatch):
    """Every generated case of `zone` passes without one gettext lookup per case: a few for the whole check."""
    looked_up = []
    language = ctx_reference.i18n.language
    monkeypatch.setattr(ctx_reference.i18n, "language", lambda: looked_up.append(1) or language())
    zone = REGISTRY["zone"].references[0]
    generated = bank("zone")
    outcome = run_generated(lambda *args: zone(*args), "zone", generated, GENERATED["zone"], REGISTRY["zone"].rules)
    assert outcome.passed and len(generated) > 1000 and len(looked_up) <= 2
