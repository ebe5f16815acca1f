"""Tests for ctx_reference.api_requests: every request body is accepted by the official SDK types.

The SDKs' request types are TypedDicts, which nothing checks at run time. Here each one is
validated with a pydantic TypeAdapter after forbidding unknown keys on every TypedDict reachable
from the call's parameter type, and every ``Iterable[...]`` field (which pydantic validates
lazily) is consumed, so a misspelled or misplaced field anywhere fails.
"""

import json
import re
import typing
from pathlib import Path

import pytest
from anthropic.types.anthropic_beta_param import AnthropicBetaParam
from anthropic.types.beta import message_create_params as anthropic_params
from openai.types.responses import response_compact_params as openai_compact
from openai.types.responses import response_create_params as openai_create
from pydantic import ConfigDict, TypeAdapter
from pydantic_core import ValidationError
from typing_extensions import NoExtraItems, is_typeddict

from ctx_reference.api_requests import (
    anthropic_after_compaction,
    anthropic_compaction_request,
    anthropic_request,
    clear_thinking_edit,
    clear_tool_uses_edit,
    compact_edit,
    format_call,
    memory_tool,
    openai_compact_request,
    openai_compaction_item,
    openai_message,
    openai_request,
)

NOTEBOOK = Path(__file__).resolve().parents[1] / "solutions" / "06-strategies" / "strategies.ipynb"


def _forbid_unknown_keys(tp, seen):
    """Set extra='forbid' on every TypedDict reachable from tp (those declaring extra items excepted)."""
    if is_typeddict(tp):
        if tp in seen:
            return
        seen.add(tp)
        declares_extra = getattr(tp, "__extra_items__", NoExtraItems) is not NoExtraItems
        extra = {} if declares_extra else {"extra": "forbid"}
        tp.__pydantic_config__ = ConfigDict(arbitrary_types_allowed=True, **extra)
        for hint in typing.get_type_hints(tp).values():
            _forbid_unknown_keys(hint, seen)
    else:
        for arg in typing.get_args(tp):
            _forbid_unknown_keys(arg, seen)


def _strict_adapter(tp):
    _forbid_unknown_keys(tp, set())
    return TypeAdapter(tp)


ADAPTERS = {
    "beta.messages.create": _strict_adapter(anthropic_params.MessageCreateParamsNonStreaming),
    "responses.create": _strict_adapter(openai_create.ResponseCreateParamsNonStreaming),
    "responses.compact": _strict_adapter(openai_compact.ResponseCompactParams),
}
KNOWN_BETAS = set(typing.get_args(typing.get_args(AnthropicBetaParam)[1]))


def _consume(value):
    """Turn pydantic's lazy iterators into lists, recursively, so every item is validated."""
    if isinstance(value, dict):
        return {k: _consume(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [_consume(v) for v in value]
    return value


def sdk_validate(call, request):
    """Validate request as the keyword arguments of client.<call>; raise ValidationError or ValueError."""
    _consume(ADAPTERS[call].validate_python(request))
    unknown = set(request.get("betas", [])) - KNOWN_BETAS
    if unknown:
        raise ValueError(f"beta headers the SDK does not list: {sorted(unknown)}")


MODEL = "claude-sonnet-5"


def conversation():
    """A short tool-using conversation with thinking, in the messages API's block shapes."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "排查支付超时"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "先看日志", "signature": "sig-1"},
            {"type": "tool_use", "id": "toolu_1", "name": "read_log", "input": {"turn": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 400}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "lookup_config", "input": {"key": "timeout"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                      "content": [{"type": "text", "text": "超时阈值 30 秒"}]}]},
    ]


def both_edits():
    return anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, thinking_budget=4_000,
        edits=[clear_thinking_edit(), clear_tool_uses_edit(clear_at_least=20_000, exclude_tools=["lookup_config"],
                                                           clear_tool_inputs=["read_log"])])


@pytest.mark.parametrize("call, build", [
    ("beta.messages.create", both_edits),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000,
        edits=[clear_tool_uses_edit(trigger=30, trigger_unit="tool_uses", keep=0, clear_tool_inputs=True)])),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, thinking_budget=2_000,
        edits=[clear_thinking_edit("all"), compact_edit(trigger=120_000, pause_after_compaction=True,
                                                        instructions="保留所有配置项")])),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, tools=[memory_tool()], system="先查记忆目录再开始",
        edits=[clear_tool_uses_edit(exclude_tools=["memory"])])),
    ("beta.messages.create", lambda: anthropic_compaction_request(
        conversation(), model=MODEL, max_tokens=8_000, instructions="写清目标、进度和失败的尝试")),
    ("beta.messages.create", lambda: anthropic_request(
        anthropic_after_compaction({"type": "compaction", "content": "摘要", "signature": "sig"},
                                   [{"role": "user", "content": [{"type": "text", "text": "继续"}]}]),
        model=MODEL, max_tokens=8_000)),
    ("responses.create", lambda: openai_request(
        [openai_message("user", "排查支付超时"), openai_compaction_item("gAAAA-opaque"),
         openai_message("user", "继续")], model="gpt-5.5", compact_threshold=200_000)),
    ("responses.compact", lambda: openai_compact_request(
        [openai_message("user", "排查支付超时"), openai_message("assistant", "先看日志")], model="gpt-5.5")),
])
def test_the_sdk_types_accept_every_builder(call, build):
    """Each builder's request is accepted by the SDK type of the call it is meant for, unknown keys forbidden."""
    sdk_validate(call, build())


def test_both_edits_carry_the_documented_shapes():
    """Both clearing edits: thinking first, every amount a {type, value} object, thinking on, the beta header set."""
    request = both_edits()
    edits = request["context_management"]["edits"]
    assert [e["type"] for e in edits] == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    assert edits[1]["trigger"] == {"type": "input_tokens", "value": 100_000}
    assert edits[1]["keep"] == {"type": "tool_uses", "value": 3}
    assert edits[1]["clear_at_least"] == {"type": "input_tokens", "value": 20_000}
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 4_000}
    assert request["betas"] == ["context-management-2025-06-27"]


@pytest.mark.parametrize("call, build, path, wrong", [
    ("beta.messages.create", both_edits, ("context_management",), "context_managment"),
    ("beta.messages.create", both_edits, ("context_management", "edits", 1, "keep"), "kep"),
    ("beta.messages.create", both_edits, ("context_management", "edits", 1, "clear_tool_inputs"), "clear_tool_input"),
    ("beta.messages.create", both_edits, ("thinking", "budget_tokens"), "budget"),
    ("beta.messages.create", both_edits, ("messages", 2, "content", 0, "tool_use_id"), "tool_id"),
    ("responses.create", lambda: openai_request([openai_message("user", "你好")], model="gpt-5.5",
                                                compact_threshold=200_000),
     ("context_management", 0, "compact_threshold"), "compact_treshold"),
    ("responses.compact", lambda: openai_compact_request([openai_compaction_item("x")], model="gpt-5.5"),
     ("input", 0, "encrypted_content"), "encrypted"),
])
def test_a_misspelled_field_fails(call, build, path, wrong):
    """Renaming one field anywhere in a valid request (top level or nested in an iterable) makes the SDK check fail."""
    request = build()
    sdk_validate(call, request)
    parent = request
    for key in path[:-1]:
        parent = parent[key]
    parent[wrong] = parent.pop(path[-1])
    with pytest.raises(ValidationError):
        sdk_validate(call, request)


def test_the_old_sketch_is_rejected():
    """The hand-drawn shape (a list of edits, bare ints for trigger and keep) is what the SDK rejects."""
    request = both_edits()
    request["context_management"] = [{"type": "clear_tool_uses_20250919", "trigger": 100_000, "keep": 3}]
    with pytest.raises(ValidationError):
        sdk_validate("beta.messages.create", request)


def test_a_misspelled_beta_header_fails():
    """A beta header the SDK does not list is refused (its type accepts any str, so the test checks the list)."""
    request = both_edits()
    request["betas"] = ["context-managment-2025-06-27"]
    with pytest.raises(ValueError, match="context-managment"):
        sdk_validate("beta.messages.create", request)


@pytest.mark.parametrize("kwargs, message", [
    ({"edits": [clear_tool_uses_edit(), clear_thinking_edit()], "thinking_budget": 4_000},
     "must list clear_thinking_20251015 first"),
    ({"edits": [clear_thinking_edit()]}, "thinking_budget must be given"),
    ({"edits": [clear_thinking_edit()], "thinking_budget": 8_000}, "thinking_budget must be below max_tokens"),
    ({"edits": [clear_thinking_edit()], "thinking_budget": 1_000}, "thinking_budget must be >= 1024"),
    ({"edits": [{"type": "clear_tool_use"}]}, "edits must hold edits of type"),
])
def test_rules_beyond_the_types_are_refused(kwargs, message):
    """What the API refuses although the types allow it raises one ValueError naming the argument."""
    with pytest.raises(ValueError, match=message):
        anthropic_request(conversation(), model=MODEL, max_tokens=8_000, **kwargs)


@pytest.mark.parametrize("call, kwargs, message", [
    (clear_tool_uses_edit, {"trigger_unit": "messages"}, "trigger_unit must be"),
    (clear_tool_uses_edit, {"keep": -1}, "keep must be >= 0"),
    (clear_tool_uses_edit, {"exclude_tools": "memory"}, "exclude_tools must be a list of tool names"),
    (clear_thinking_edit, {"keep": "most"}, "keep must be an int >= 0 or 'all'"),
    (compact_edit, {"pause_after_compaction": 1}, "pause_after_compaction must be a bool"),
    (openai_request, {"input_items": ["……全部输出项……"], "model": "gpt-5.5"}, "input must be a list of input items"),
])
def test_bad_arguments_are_named(call, kwargs, message):
    """A wrong argument raises a ValueError naming it and echoing the value."""
    with pytest.raises(ValueError, match=message):
        call(**kwargs)


def _printed_requests():
    """(call, request) for every `# client.<call>(**request)` block in notebook 06's stored outputs."""
    found = []
    decoder = json.JSONDecoder()
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", ""))
            for match in re.finditer(r"^# client\.([\w.]+)\(\*\*request\)\n", text, re.MULTILINE):
                body, _ = decoder.raw_decode(text, match.end())
                found.append((match.group(1), body))
    return found


def test_every_request_notebook_06_prints_is_accepted():
    """Every request notebook 06 prints (both edits, both compactions, memory, OpenAI) passes the SDK check."""
    printed = _printed_requests()
    assert [call for call, _ in printed].count("beta.messages.create") >= 4
    assert {call for call, _ in printed} == set(ADAPTERS)
    for call, request in printed:
        sdk_validate(call, request)
    kinds = {e["type"] for call, r in printed if call == "beta.messages.create"
             for e in r.get("context_management", {}).get("edits", [])}
    assert kinds == {"clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"}
    assert any("compaction" in r for _, r in printed) and any(memory_tool() in r.get("tools", []) for _, r in printed)


def test_notebook_06_writes_no_request_by_hand():
    """No code cell of notebook 06 spells a request field as a literal key: the requests come from the builders."""
    literal = re.compile(r"""["'](context_management|betas|compact_threshold|clear_at_least|edits)["']\s*:""")
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            assert not literal.search("".join(cell["source"])), "".join(cell["source"])[:200]


def test_format_call_shortens_long_strings_only():
    """format_call keeps short strings and shortens a 12,000-character result to its start and its length."""
    text = format_call("beta.messages.create", {"a": "短", "b": "x" * 12_000}, limit=60)
    assert '"a": "短"' in text and "（共 12,000 个字符）" in text and "x" * 31 not in text
