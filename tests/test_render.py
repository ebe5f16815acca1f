"""Tests for ctx_reference.render: the structured system prompt and its three lint checks."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.render import (
    PromptSpec,
    is_prohibition_only,
    lesson_spec,
    lesson_spec_fixed,
    lint,
    output_warnings,
    render,
    render_text,
    rule_warnings,
    template_variables,
    template_warnings,
)

SEED_ENDING = "<context>\ntime: 2026-10-14\nuser: duang777\n</context>"

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
TEXTS = st.lists(TEXT, max_size=4)
DYNAMIC = st.dictionaries(st.text(min_size=1, max_size=6), TEXT, max_size=6)


def test_render():
    """Seed: the lesson's spec has 3 findings and ends with the sorted context; after the 3 fixes, 0."""
    spec = PromptSpec(
        role="你是代码审查助手",
        task="审查 {{diff}}",
        rules=["不要输出客套话", "不要直接改代码，而是给出建议"],
        dynamic={"time": "2026-10-14", "user": "duang777"},
    )
    text, warnings = render(spec)
    assert len(warnings) == 3
    assert text.endswith("<context>\ntime: 2026-10-14\nuser: duang777\n</context>")

    fixed = dataclasses.replace(
        spec,
        task="审查用户给出的 diff",
        output="Markdown 列表",
        rules=["不要输出客套话，改为直接给结论", "不要直接改代码，而是给出建议"],
    )
    assert render(fixed)[1] == []


def test_lesson_spec_functions_match_the_seed():
    """lesson_spec() is the seed (3 warnings) and lesson_spec_fixed() its fixed form (0 warnings)."""
    seed, fixed = lesson_spec(), lesson_spec_fixed()
    assert seed.task == "审查 {{diff}}"
    assert seed.rules == ("不要输出客套话", "不要直接改代码，而是给出建议")
    assert dict(seed.dynamic) == {"time": "2026-10-14", "user": "duang777"}
    assert (fixed.task, fixed.output, fixed.rules[0]) == (
        "审查用户给出的 diff", "Markdown 列表", "不要输出客套话，改为直接给结论")
    assert len(render(seed)[1]) == 3
    assert render(fixed)[1] == []
    assert render(fixed)[0].endswith(SEED_ENDING)


def test_seed_has_one_warning_of_each_kind():
    """The seed's 3 warnings are one template variable (in task), one missing output, one rule (rule 1)."""
    seed = lesson_spec()
    assert len(template_warnings(seed)) == 1
    assert "task" in template_warnings(seed)[0] and "{{diff}}" in template_warnings(seed)[0]
    assert len(output_warnings(seed)) == 1
    assert len(rule_warnings(seed)) == 1
    assert "第 1 条规则" in rule_warnings(seed)[0] and "不要输出客套话" in rule_warnings(seed)[0]
    assert lint(seed) == template_warnings(seed) + output_warnings(seed) + rule_warnings(seed)


def test_full_render_text():
    """Every block in order: role, task, rules (one '- ' line each), 1-based examples, output, sorted context."""
    spec = PromptSpec(
        role="你是代码审查助手",
        task="审查用户给出的 diff",
        rules=["只报告会影响正确性的问题", "每个问题给出行号"],
        examples=["输入 A → 输出 B", "输入 C → 输出 D"],
        output="Markdown 列表",
        dynamic={"user": "duang777", "repo": "demo", "time": "2026-10-14"},
    )
    assert render_text(spec) == (
        "<role>你是代码审查助手</role>\n"
        "<task>审查用户给出的 diff</task>\n"
        "<rules>\n"
        "- 只报告会影响正确性的问题\n"
        "- 每个问题给出行号\n"
        "</rules>\n"
        '<example index="1">输入 A → 输出 B</example>\n'
        '<example index="2">输入 C → 输出 D</example>\n'
        "<output_format>Markdown 列表</output_format>\n"
        "<context>\n"
        "repo: demo\n"
        "time: 2026-10-14\n"
        "user: duang777\n"
        "</context>"
    )


def test_empty_spec_renders_every_tag():
    """Edge: no rules, examples, output or context still gives the empty blocks, ending </context>."""
    text, warnings = render(PromptSpec(role="", task=""))
    assert text == ("<role></role>\n<task></task>\n<rules>\n</rules>\n<output_format></output_format>\n"
                    "<context>\n</context>")
    assert len(warnings) == 1  # only the missing output format


def test_blank_output_counts_as_missing():
    """An output format of only spaces and newlines is as good as none: one warning."""
    assert len(output_warnings(PromptSpec("r", "t", output="  \n "))) == 1
    assert output_warnings(PromptSpec("r", "t", output="JSON")) == []


def test_template_variables_with_spaces_and_dots():
    """{{ var }}, {{var}} and {{ user.name }} count as template variables; single braces and {{}} do not."""
    assert template_variables("审查 {{ diff }} 与 {{user.name}}") == ["{{ diff }}", "{{user.name}}"]
    assert template_variables("JSON 形如 {\"a\": 1}，空的 {{}} 不算") == []


def test_template_variable_in_every_stable_field_is_found():
    """A variable in role, a rule, an example and output gives 4 warnings naming each field; dynamic is not checked."""
    spec = PromptSpec(
        role="{{who}}",
        task="t",
        rules=["r", "用 {{lang}} 回答"],
        examples=["{{ex}}"],
        output="{{fmt}}",
        dynamic={"k": "{{fine_here}}"},
    )
    warnings = template_warnings(spec)
    assert len(warnings) == 4
    assert [label in w for label, w in zip(["role", "rules[1]", "examples[0]", "output"], warnings)] == [True] * 4


@pytest.mark.parametrize(
    "rule, flagged",
    [
        ("不要输出客套话", True),
        ("  不要输出客套话", False),
        ("不要输出客套话，改为直接给结论", False),
        ("不要直接改代码，而是给出建议", False),
        ("直接给结论，不要客套", False),
        ("", False),
    ],
)
def test_is_prohibition_only(rule, flagged):
    """A rule is flagged iff its first characters are 不要 (not after a space) and it has neither 而是 nor 改为."""
    assert is_prohibition_only(rule) is flagged


def test_identical_prohibition_rules_give_distinct_warnings():
    """Two identical 不要 rules give two warnings that differ (numbered 1 and 2), not one duplicated text."""
    warnings = rule_warnings(PromptSpec("r", "t", rules=["不要啰嗦", "不要啰嗦"]))
    assert len(warnings) == 2
    assert warnings[0] != warnings[1]


@given(role=TEXT, task=TEXT, rules=TEXTS, examples=TEXTS, output=TEXT, dynamic=DYNAMIC)
def test_dynamic_order_does_not_change_output(role, task, rules, examples, output, dynamic):
    """Property: inserting the dynamic keys in reverse order renders the same text and warnings."""
    forward = PromptSpec(role, task, rules, examples, output, dynamic)
    backward = PromptSpec(role, task, rules, examples, output, dict(reversed(list(dynamic.items()))))
    assert render(forward) == render(backward)


@given(role=TEXT, task=TEXT, rules=TEXTS, examples=TEXTS, output=TEXT, dynamic=DYNAMIC)
def test_output_always_ends_with_context(role, task, rules, examples, output, dynamic):
    """Property: every rendered prompt ends with </context>."""
    text, _ = render(PromptSpec(role, task, rules, examples, output, dynamic))
    assert text.endswith("</context>")


@given(
    role=TEXT,
    task=TEXT,
    rules=st.lists(st.sampled_from(["不要啰嗦", "{{x}}", "不要{{y}}", "好"]), max_size=5),
    examples=st.lists(st.sampled_from(["{{x}}", "例"]), max_size=3),
    output=st.sampled_from(["", " ", "{{fmt}}", "JSON"]),
)
def test_warnings_have_no_duplicates(role, task, rules, examples, output):
    """Property: no warning text appears twice, even with repeated rules and examples."""
    warnings = lint(PromptSpec(role, task, rules, examples, output))
    assert len(warnings) == len(set(warnings))


def test_spec_copies_caller_lists_and_dict():
    """Changing the caller's list and dict after construction changes neither the spec nor its render."""
    rules = ["不要输出客套话"]
    dynamic = {"time": "2026-10-14"}
    spec = PromptSpec("r", "t", rules=rules, dynamic=dynamic)
    before = render(spec)
    rules.append("新规则")
    dynamic["user"] = "someone"
    assert spec.rules == ("不要输出客套话",)
    assert dict(spec.dynamic) == {"time": "2026-10-14"}
    assert render(spec) == before


def test_spec_is_frozen_and_defaults_are_not_shared():
    """Fields cannot be reassigned, dynamic cannot be written to, and two default specs share no mutable state."""
    a, b = PromptSpec("r", "t"), PromptSpec("r", "t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.task = "x"
    with pytest.raises(TypeError):
        a.dynamic["k"] = "v"
    assert (a.rules, a.examples, dict(a.dynamic)) == ((), (), {})
    assert a == b and hash(a) == hash(b)


def test_render_does_not_mutate_spec():
    """Rendering twice gives the same result and leaves the spec equal to a fresh copy of the seed."""
    spec = lesson_spec()
    assert render(spec) == render(spec)
    assert spec == lesson_spec()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"role": 1}, r"role must be a str \(got 1\)"),
        ({"task": None}, r"task must be a str \(got None\)"),
        ({"output": ["JSON"]}, r"output must be a str \(got \['JSON'\]\)"),
        ({"rules": "不要啰嗦"}, r"rules must be a list or tuple of str, not a single value \(got '不要啰嗦'\)"),
        ({"rules": ["ok", 3]}, r"rules\[1\] must be a str \(got 3\)"),
        ({"rules": {"a"}}, r"rules must be a list or tuple of str.*\(got \{'a'\}\)"),
        ({"examples": "例子"}, r"examples must be a list or tuple of str, not a single value \(got '例子'\)"),
        ({"examples": [b"x"]}, r"examples\[0\] must be a str \(got b'x'\)"),
        ({"dynamic": [("time", "now")]}, r"dynamic must be a mapping of str to str \(got \[\('time', 'now'\)\]\)"),
        ({"dynamic": {1: "x"}}, r"dynamic keys must be str \(got key 1\)"),
        ({"dynamic": {"time": 2026}}, r"dynamic\['time'\] must be a str \(got 2026\)"),
    ],
)
def test_bad_spec_fields_are_rejected(kwargs, match):
    """Each wrong-typed field raises ValueError naming the field and echoing the value."""
    fields = {"role": "r", "task": "t"} | kwargs
    with pytest.raises(ValueError, match=match):
        PromptSpec(**fields)


@pytest.mark.parametrize("func", [render, render_text, lint, template_warnings, output_warnings, rule_warnings])
def test_functions_reject_a_non_spec(func):
    """Passing a dict instead of a PromptSpec raises ValueError naming spec and echoing the value."""
    with pytest.raises(ValueError, match=r"spec must be a PromptSpec \(got \{'role': 'r'\}\)"):
        func({"role": "r"})


@pytest.mark.parametrize("func, name", [(template_variables, "text"), (is_prohibition_only, "rule")])
def test_text_helpers_reject_non_str(func, name):
    """template_variables and is_prohibition_only reject a non-str, naming their argument."""
    with pytest.raises(ValueError, match=rf"{name} must be a str \(got 42\)"):
        func(42)
