"""Tests for ctx_course.api_check: the drift between the course's vocabulary and an SDK's is a pure function of two
fabricated sets, the SDK's values are read from its types, and `make api-check`'s entry point reports and fails as
it should (its validation run replaced by a fabricated result)."""
import typing
from types import SimpleNamespace
from typing import Literal, Required

import pytest
from typing_extensions import TypedDict

from ctx_course.api_check import (
    KINDS,
    Drift,
    course_vocabulary,
    drift,
    format_drift,
    literal_values,
    main,
    member_types,
    sdk_vocabulary,
)
from ctx_reference.api_requests import THINKING_TYPES


def test_drift_of_fabricated_vocabularies():
    """A value only the SDK lists is unknown, one only the course knows is dropped, both sorted; a kind the SDK
    lacks drops every value; equal sets give nothing."""
    course = {"thinking types": frozenset({"enabled", "adaptive", "disabled"}),
              "context edit types": frozenset({"clear_tool_uses_20250919"}),
              "content block types": frozenset({"text"})}
    sdk = {"thinking types": frozenset({"adaptive", "disabled", "between_tools", "sometimes"}),
           "context edit types": frozenset({"clear_tool_uses_20250919"})}
    assert drift(course, sdk) == {
        "thinking types": Drift(unknown=("between_tools", "sometimes"), dropped=("enabled",)),
        "context edit types": Drift(unknown=(), dropped=()),
        "content block types": Drift(unknown=(), dropped=("text",)),
    }
    assert drift({}, sdk) == {}


def test_drift_refuses_what_is_not_a_mapping():
    """Bad input names both arguments and echoes them."""
    with pytest.raises(ValueError, match=r"course and sdk must be mappings of kind to values \(got \['x'\]"):
        drift(["x"], {})


def test_format_drift_names_every_value():
    """The report says "same" for an unchanged kind and lists every unknown and dropped value with its count."""
    text = format_drift({"a": Drift(("x", "y"), ()), "b": Drift((), ("z",)), "c": Drift((), ())})
    assert text.splitlines() == ["a: the SDK lists 2 the course does not know: x, y",
                                 "b: the course knows 1 the SDK does not list: z", "c: same"]


class _Enabled(TypedDict, total=False):
    type: Required[Literal["enabled"]]
    budget_tokens: Required[int]


class _Off(TypedDict, total=False):
    type: Required[Literal["disabled"]]


def test_member_types_and_literal_values_read_fabricated_types():
    """The ``type`` of each TypedDict of a union (through Optional and Iterable), and the str values of a Literal
    next to str (the shape of the SDKs' model and beta parameters)."""
    assert member_types(typing.Iterable[_Enabled | _Off] | None) == {"enabled", "disabled"}
    assert member_types(str) == frozenset()
    assert literal_values(str | Literal["claude-sonnet-5", "claude-fable-5"]) == {
        "claude-sonnet-5", "claude-fable-5"}


def test_the_installed_sdk_speaks_the_course_thinking_types():
    """The pinned SDK (anthropic 2.17.0) lists exactly the four thinking types the course knows, and every kind of
    KINDS is read from both sides."""
    sdk, course = sdk_vocabulary(), course_vocabulary()
    assert set(sdk) == set(course) == set(KINDS)
    assert sdk["thinking types"] == set(THINKING_TYPES) == {"enabled", "adaptive", "disabled", "between_tools"}
    assert {"clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"} == sdk["context edit types"]
    assert course["content block types"] <= sdk["content block types"]


@pytest.mark.parametrize("returncode, status", [(0, 0), (1, 1)])
def test_main_reports_and_fails_with_the_validation(returncode, status, capsys):
    """main prints the versions and the drift, runs tests/test_api_requests.py once with this interpreter, and
    returns 1 when that run fails."""
    calls = []

    def run(argv, cwd):
        calls.append(argv)
        return SimpleNamespace(returncode=returncode)

    assert main(run) == status
    out = capsys.readouterr().out
    assert out.startswith("anthropic ") and "thinking types: same" in out
    (argv,) = calls
    assert argv[1:3] == ["-m", "pytest"] and argv[-1].endswith("tests/test_api_requests.py")
