"""Tests for ctx_reference.api_requests: every request body is accepted by the official SDK types and
carries the beta headers, and follows the compaction procedures, the providers' documentation asks for.

The SDKs' request types are TypedDicts, which nothing checks at run time. Here each one is
validated with a pydantic TypeAdapter after forbidding unknown keys on every TypedDict reachable
from the call's parameter type, and every ``Iterable[...]`` field (which pydantic validates
lazily) is consumed, so a misspelled or misplaced field anywhere fails (`ctx_course.api_check.sdk_validate`,
which `make api-check` also runs this file with, against the newest SDKs).

The types accept any ``betas`` list, so each header rule has a test of its own, whose docstring
names the documentation page the rule comes from (pages read in their September 2026 versions).
"""

import json
import re
from pathlib import Path

import pytest
from anthropic.types.anthropic_beta_param import AnthropicBetaParam
from pydantic_core import ValidationError

from ctx_course.api_check import CALLS, literal_values, sdk_validate
from ctx_reference.api_requests import (
    HEADER_RULES,
    REQUEST_RULES,
    anthropic_after_compaction,
    anthropic_compaction_request,
    anthropic_request,
    check_request,
    clear_thinking_edit,
    clear_tool_uses_edit,
    compact_edit,
    compaction_request_for,
    format_call,
    format_differences,
    memory_tool,
    openai_compact_request,
    openai_compaction_item,
    openai_message,
    openai_request,
    request_features,
    required_betas,
    thinking_forms,
    thinking_off,
)

from notebook_cells import cells, namespace_before

NOTEBOOK = Path(__file__).resolve().parents[1] / "solutions" / "06-strategies" / "strategies.ipynb"


ADAPTERS = CALLS
KNOWN_BETAS = literal_values(AnthropicBetaParam)


MODEL = "claude-sonnet-5"
#: A model of the generation that takes only the budget form of thinking (Claude 4.5).
BUDGET_MODEL = "claude-haiku-4-5"
TOOLS = [{"name": name, "description": f"{name} of the service", "input_schema": {"type": "object"}}
         for name in ("read_log", "lookup_config")]


def conversation():
    """A short tool-using conversation with thinking, in the messages API's block shapes."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "排查支付超时"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "先看日志", "signature": "sig-1"},
            {"type": "tool_use", "id": "toolu_1", "name": "read_log", "input": {"turn": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 400}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "再查超时配置", "signature": "sig-2"},
            {"type": "tool_use", "id": "toolu_2", "name": "lookup_config", "input": {"key": "timeout"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                      "content": [{"type": "text", "text": "超时阈值 30 秒"}]}]},
    ]


#: A block as an on-demand compaction returns it: readable summary and a signature.
SIGNED_BLOCK = {"type": "compaction", "content": "目标：查清支付超时。下一步：查超时配置。", "signature": "sig-c"}
CONTINUE = {"role": "user", "content": [{"type": "text", "text": "继续"}]}


def threshold_follow_up():
    """The conversation after a threshold compaction: the whole response (block, then answer) appended as usual."""
    response = {"role": "assistant", "content": [{"type": "compaction", "content": "摘要：已查第 1 轮日志"},
                                                 {"type": "text", "text": "接下来查超时配置。"}]}
    return [*conversation(), response, CONTINUE]


def both_edits():
    return anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, adaptive_thinking=True,
        edits=[clear_thinking_edit(), clear_tool_uses_edit(clear_at_least=20_000, exclude_tools=["lookup_config"],
                                                           clear_tool_inputs=["read_log"])])


def budget_thinking():
    """Both clearing edits on a model of the budget generation (Claude 4.5), thinking with budget_tokens."""
    return anthropic_request(
        conversation(), model=BUDGET_MODEL, max_tokens=8_000, tools=TOOLS, thinking_budget=4_000,
        edits=[clear_thinking_edit(), clear_tool_uses_edit(clear_at_least=20_000)])


@pytest.mark.parametrize("call, build", [
    ("beta.messages.create", both_edits),
    ("beta.messages.create", budget_thinking),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS,
        edits=[clear_tool_uses_edit(trigger=30, trigger_unit="tool_uses", keep=0, clear_tool_inputs=True)])),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=BUDGET_MODEL, max_tokens=8_000, tools=TOOLS, thinking_budget=2_000,
        edits=[clear_thinking_edit("all"), compact_edit(trigger=120_000, pause_after_compaction=True,
                                                        instructions="保留所有配置项")])),
    ("beta.messages.create", lambda: anthropic_request(
        conversation(), model=MODEL, max_tokens=8_000, tools=[*TOOLS, memory_tool()], system="先查记忆目录再开始",
        edits=[clear_tool_uses_edit(exclude_tools=["memory"])])),
    ("beta.messages.create", lambda: anthropic_compaction_request(
        conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, instructions="写清目标、进度和失败的尝试")),
    ("beta.messages.create", lambda: anthropic_request(
        anthropic_after_compaction(SIGNED_BLOCK, [{"role": "user", "content": [{"type": "text", "text": "继续"}]}]),
        model=MODEL, max_tokens=8_000, tools=TOOLS)),
    ("beta.messages.create", lambda: anthropic_request(
        threshold_follow_up(), model=MODEL, max_tokens=8_000, tools=TOOLS, edits=[compact_edit()])),
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
    assert request["thinking"] == {"type": "adaptive"}  # Sonnet 5 refuses the budget form
    assert request["betas"] == ["context-management-2025-06-27"]


@pytest.mark.parametrize("call, build, path, wrong", [
    ("beta.messages.create", both_edits, ("context_management",), "context_managment"),
    ("beta.messages.create", both_edits, ("context_management", "edits", 1, "keep"), "kep"),
    ("beta.messages.create", both_edits, ("context_management", "edits", 1, "clear_tool_inputs"), "clear_tool_input"),
    ("beta.messages.create", budget_thinking, ("thinking", "budget_tokens"), "budget"),
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
    ({"edits": [clear_thinking_edit()], "thinking_budget": 8_000}, "thinking_budget must be below max_tokens"),
    ({"edits": [clear_thinking_edit()], "thinking_budget": 1_000}, "thinking_budget must be >= 1024"),
    ({"edits": [clear_thinking_edit()], "thinking_budget": 2_000, "adaptive_thinking": True},
     "thinking_budget must be left out with adaptive_thinking=True"),
    ({"adaptive_thinking": "yes"}, "adaptive_thinking must be a bool"),
    ({"edits": [{"type": "clear_tool_use"}]}, "edits must hold edits of type"),
])
def test_bad_thinking_and_edit_arguments_are_named(kwargs, message):
    """A wrong thinking or edits argument raises one ValueError naming it (budget-form model, so the range applies)."""
    with pytest.raises(ValueError, match=message):
        anthropic_request(conversation(), model=BUDGET_MODEL, max_tokens=8_000, tools=TOOLS, **kwargs)


@pytest.mark.parametrize("call, kwargs, message", [
    (clear_tool_uses_edit, {"trigger_unit": "messages"}, "trigger_unit must be"),
    (clear_tool_uses_edit, {"keep": -1}, "keep must be >= 0"),
    (clear_tool_uses_edit, {"exclude_tools": "memory"}, "exclude_tools must be a list of tool names"),
    (clear_thinking_edit, {"keep": "most"}, "keep must be an int >= 1 or 'all'"),
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


def _built_requests():
    """(name, call, request) for every request body notebook 06 builds: each dict in the namespace after its last
    section-8 code cell (nested in dicts too) that holds a model and messages or input."""
    index = next(i for i, c in enumerate(cells("06-strategies")) if c.get("id") == "cell-api-summary")
    found = []

    def visit(name, value):
        if isinstance(value, dict) and "model" in value and ("messages" in value or "input" in value):
            call = ("beta.messages.create" if "messages" in value
                    else "responses.compact" if set(value) == {"model", "input"} else "responses.create")
            found.append((name, call, value))
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(f"{name}[{key!r}]", item)

    for name, value in namespace_before("06-strategies", index).items():
        if not name.startswith("_"):
            visit(name, value)
    return found


def test_every_request_notebook_06_prints_is_accepted():
    """Every request notebook 06 prints in full passes the SDK check and every rule of REQUEST_RULES."""
    printed = _printed_requests()
    assert [call for call, _ in printed] == ["beta.messages.create"]
    for call, request in printed:
        sdk_validate(call, request)
        check_request(request)


def test_every_request_notebook_06_builds_is_accepted():
    """Every request body notebook 06 builds (both edits, both compactions and their follow-ups, memory, OpenAI)
    passes the SDK check, and every Anthropic one every rule of REQUEST_RULES; the on-demand compaction request
    carries the system and tools of the conversation it compacts."""
    built = _built_requests()
    assert {call for _, call, _ in built} == set(ADAPTERS)
    assert sum(call == "beta.messages.create" for _, call, _ in built) >= 6
    for name, call, request in built:
        sdk_validate(call, request)
        if call == "beta.messages.create":
            check_request(request)
            assert request["model"] == "claude-sonnet-5", name
    anthropic = [r for _, call, r in built if call == "beta.messages.create"]
    kinds = {e["type"] for r in anthropic for e in r.get("context_management", {}).get("edits", [])}
    assert kinds == {"clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"}
    assert all(r.get("tools") for r in anthropic)   # every conversation carries read_log's tool blocks
    (compaction,) = {id(r): r for r in anthropic if "compaction" in r}.values()
    assert compaction["system"] and all(r.get("system") == compaction["system"] for r in anthropic)
    assert any(memory_tool() in r.get("tools", []) for r in anthropic)
    thinking = [r["thinking"]["type"] for r in anthropic if "thinking" in r]
    assert set(thinking) == {"adaptive", "disabled"}      # Sonnet 5 takes both; the budget form it refuses


def test_notebook_06_keeps_the_thinking_of_every_open_tool_loop():
    """Every Anthropic body notebook 06 builds that ends in an open tool loop either keeps that assistant turn's
    thinking block (Sonnet 5 thinks when thinking is left out) or turns thinking off with "disabled"; none strips it
    (https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows)."""
    open_loops = 0
    for name, call, request in _built_requests():
        messages = request.get("messages", [])
        if call != "beta.messages.create" or len(messages) < 2 or messages[-1]["role"] != "user" or not any(
                b["type"] == "tool_result" for b in messages[-1]["content"]):
            continue
        open_loops += 1
        kept = any(b["type"] == "thinking" and b.get("signature") for b in messages[-2]["content"])
        assert kept or request.get("thinking") == {"type": "disabled"}, name
    assert open_loops >= 5


def test_every_request_notebook_06_builds_carries_the_documented_headers():
    """The Anthropic requests notebook 06 builds: none sends an empty betas list; the on-demand follow-up (a signed
    block first in messages) sends compact-2026-09-04, the threshold follow-up (unsigned block after the old
    messages) compact-2026-01-12 only (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand,
    https://platform.claude.com/docs/en/build-with-claude/compaction-threshold)."""
    anthropic = [r for _, call, r in _built_requests() if call == "beta.messages.create"]
    assert all(r.get("betas") != [] for r in anthropic)
    carrying = {("signature" in b): r["betas"] for r in anthropic for m in r["messages"]
                for b in (m["content"] if isinstance(m["content"], list) else []) if b["type"] == "compaction"}
    assert carrying == {True: ["compact-2026-09-04"], False: ["compact-2026-01-12"]}


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


# --- Beta headers: one test per rule of HEADER_RULES --------------------------------------------

CLEAR_TOOLS = "context-management-2025-06-27"
THRESHOLD = "compact-2026-01-12"
ON_DEMAND = "compact-2026-09-04"


def test_clear_tool_uses_needs_the_context_management_header():
    """clear_tool_uses_20250919 sends context-management-2025-06-27, and nothing else
    (https://platform.claude.com/docs/en/build-with-claude/context-editing, featureMetadata betaHeader)."""
    request = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS,
                                edits=[clear_tool_uses_edit()])
    assert request["betas"] == [CLEAR_TOOLS]


def test_clear_thinking_needs_the_context_management_header():
    """clear_thinking_20251015 sends context-management-2025-06-27; with clear_tool_uses the header appears once
    (https://platform.claude.com/docs/en/build-with-claude/context-editing)."""
    alone = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, adaptive_thinking=True,
                              edits=[clear_thinking_edit()])
    assert alone["betas"] == [CLEAR_TOOLS]
    assert both_edits()["betas"] == [CLEAR_TOOLS]


def test_threshold_compaction_needs_its_own_header():
    """The compact_20260112 edit sends compact-2026-01-12, on the first request and on every follow-up that
    appends the response and keeps the edit; never the on-demand header
    (https://platform.claude.com/docs/en/build-with-claude/compaction-threshold, Basic usage and
    Passing compaction blocks back)."""
    first = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, edits=[compact_edit()])
    follow_up = anthropic_request(threshold_follow_up(), model=MODEL, max_tokens=8_000, tools=TOOLS,
                                  edits=[compact_edit()])
    assert first["betas"] == follow_up["betas"] == [THRESHOLD]


def test_an_unsigned_block_without_the_edit_still_needs_the_threshold_header():
    """A threshold block (no signature) is a feature of threshold compaction, whose page asks for
    compact-2026-01-12 on the requests that use it; it does not call for the on-demand header
    (https://platform.claude.com/docs/en/build-with-claude/compaction-threshold)."""
    request = anthropic_request(threshold_follow_up(), model=MODEL, max_tokens=8_000, tools=TOOLS)
    assert request["betas"] == [THRESHOLD]


def test_the_compaction_request_needs_the_on_demand_header():
    """The request that asks for the summary sends compact-2026-09-04
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Request a summary)."""
    request = anthropic_compaction_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS)
    assert request["betas"] == [ON_DEMAND]
    again = anthropic_compaction_request(anthropic_after_compaction(SIGNED_BLOCK, [CONTINUE]),
                                         model=MODEL, max_tokens=8_000, tools=TOOLS)
    assert again["betas"] == [ON_DEMAND]


def test_a_follow_up_carrying_the_signed_block_needs_the_on_demand_header():
    """Every later request that carries the signed block sends compact-2026-09-04, also when it has no other beta
    feature, and next to context editing's header when it clears tool results
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Request a summary and
    Errors: a request that left the header out gets a 400)."""
    messages = anthropic_after_compaction(SIGNED_BLOCK, [CONTINUE])
    assert anthropic_request(messages, model=MODEL, max_tokens=8_000, tools=TOOLS)["betas"] == [ON_DEMAND]
    clearing = anthropic_request(messages, model=MODEL, max_tokens=8_000, tools=TOOLS, edits=[clear_tool_uses_edit()])
    assert clearing["betas"] == [CLEAR_TOOLS, ON_DEMAND]


def test_the_memory_tool_needs_no_header():
    """The memory tool itself needs no beta header: alone it sends none; with a clearing edit only the edit's
    (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool, Implement the memory handler)."""
    alone = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=[*TOOLS, memory_tool()])
    assert "betas" not in alone
    paired = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=[*TOOLS, memory_tool()],
                               edits=[clear_tool_uses_edit(exclude_tools=["memory"])])
    assert paired["betas"] == [CLEAR_TOOLS]


@pytest.mark.parametrize("build", [
    lambda: anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS),
    lambda: anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS,
                              edits=[clear_tool_uses_edit()]),
    both_edits,
])
def test_a_request_without_compaction_carries_no_compaction_header(build):
    """No compaction edit, parameter or block: no compact-* header is sent needlessly."""
    assert not [beta for beta in build().get("betas", []) if beta.startswith("compact-")]


def test_openai_compaction_takes_no_header():
    """OpenAI's server-side compaction is a context_management entry and /responses/compact a plain call; neither
    takes a beta header, so the builders return only the call's body
    (https://developers.openai.com/api/docs/guides/compaction)."""
    items = [openai_message("user", "你好")]
    assert set(openai_request(items, model="gpt-5.5", compact_threshold=200_000)) == {
        "model", "input", "context_management"}
    assert set(openai_compact_request(items, model="gpt-5.5")) == {"model", "input"}


def test_every_rule_names_a_header_the_sdk_lists_and_an_official_page():
    """HEADER_RULES holds only beta names of the SDK's AnthropicBetaParam and cites a platform.claude.com page."""
    for rule in HEADER_RULES:
        assert rule.beta is None or rule.beta in KNOWN_BETAS, rule
        assert rule.source.startswith("https://platform.claude.com/docs/en/"), rule


def test_request_features_reads_edits_parameter_tools_and_blocks():
    """The features of a body: its edit types, the compaction parameter, tool types, and each block signed or not."""
    request = anthropic_request(threshold_follow_up(), model=MODEL, max_tokens=8_000, tools=[*TOOLS, memory_tool()],
                                edits=[compact_edit()])
    assert request_features(request) == ("compact_20260112", "memory_20250818", "threshold_compaction_block")
    assert request_features({"compaction": {"type": "summarize"},
                             "messages": anthropic_after_compaction(SIGNED_BLOCK, [CONTINUE])}) == (
        "compaction", "signed_compaction_block")
    assert required_betas({"messages": []}) == []


# --- The two compaction procedures ---------------------------------------------------------------

def test_a_threshold_follow_up_keeps_the_old_messages_before_the_block():
    """Threshold compaction: the client appends the whole response; the messages before the block stay and the API
    drops them (https://platform.claude.com/docs/en/build-with-claude/compaction-threshold, How compaction works)."""
    request = anthropic_request(threshold_follow_up(), model=MODEL, max_tokens=8_000, tools=TOOLS,
                                edits=[compact_edit()])
    assert request["messages"][:5] == conversation()
    assert [b["type"] for b in request["messages"][5]["content"]] == ["compaction", "text"]


def test_an_on_demand_follow_up_puts_the_block_first_in_place_of_the_summary():
    """On demand: the signed block goes first, unchanged, and only the messages after it follow
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Continue from the summary)."""
    messages = anthropic_after_compaction(SIGNED_BLOCK, [CONTINUE])
    assert messages == [{"role": "assistant", "content": [SIGNED_BLOCK]}, CONTINUE]


@pytest.mark.parametrize("messages, edits, message", [
    ([{"role": "assistant", "content": [SIGNED_BLOCK]}, CONTINUE], [compact_edit()],
     "edits must not hold compact_20260112"),
    ([*conversation(), {"role": "assistant", "content": [SIGNED_BLOCK]}, CONTINUE], [],
     "messages must start with the signed compaction block"),
    ([{"role": "assistant", "content": [SIGNED_BLOCK, dict(SIGNED_BLOCK, signature="sig-d")]}, CONTINUE], [],
     "messages must carry exactly one compaction block"),
])
def test_the_on_demand_block_rules_are_refused_when_broken(messages, edits, message):
    """A signed block must come first and alone, and threshold compaction cannot run on a request carrying one
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Continue from the summary,
    Errors, and Limits and interactions with other features)."""
    with pytest.raises(ValueError, match=message):
        anthropic_request(messages, model=MODEL, max_tokens=8_000, tools=TOOLS, edits=edits)


def test_the_compaction_request_refuses_an_open_tool_call():
    """The API rejects a compaction request whose last assistant turn ends in a tool call with no result
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Request a summary)."""
    with pytest.raises(ValueError, match="tool call has no result yet"):
        anthropic_compaction_request(conversation()[:4], model=MODEL, max_tokens=8_000, tools=TOOLS)


def test_after_compaction_wants_the_signed_block():
    """The block is sent back exactly as returned, signature included; a block without one is refused
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Continue from the summary)."""
    with pytest.raises(ValueError, match="block must be a signed compaction block"):
        anthropic_after_compaction({"type": "compaction", "content": "摘要"}, [CONTINUE])


def test_the_threshold_trigger_is_at_least_50000():
    """compact_20260112's trigger value must be at least 50,000 tokens; 50,000 itself is accepted
    (https://platform.claude.com/docs/en/build-with-claude/compaction-threshold, Parameters)."""
    assert compact_edit(trigger=50_000)["trigger"] == {"type": "input_tokens", "value": 50_000}
    with pytest.raises(ValueError, match="trigger must be >= 50000"):
        compact_edit(trigger=49_999)


# --- Request rules: one test per rule of REQUEST_RULES, its docstring citing the rule's page ----------------

def _rule_of(excinfo) -> str:
    return str(excinfo.value).rsplit("[rule ", 1)[-1].rstrip("]")


def test_rule_tool_blocks_need_tools():
    """Messages carrying tool_use/tool_result blocks need tools: every builder refuses the body without them and
    accepts it with them (the Messages API's 400: "Requests which include `tool_use` or `tool_result` blocks must
    define tools."; https://platform.claude.com/docs/en/api/messages)."""
    with pytest.raises(ValueError, match=r"tools must define the conversation's tools .* \(got tools=None with 4 "
                                         r"such blocks\)") as excinfo:
        anthropic_request(conversation(), model=MODEL, max_tokens=8_000)
    assert _rule_of(excinfo) == "tool-blocks-need-tools"
    with pytest.raises(ValueError, match="tool-blocks-need-tools"):
        anthropic_compaction_request(conversation(), model=MODEL, max_tokens=8_000)
    assert anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS)["tools"] == TOOLS
    assert "tools" not in anthropic_request([CONTINUE], model=MODEL, max_tokens=8_000)


#: The thinking types each model accepts, as the pages give them (expectations written from the pages, not the code):
#: the budget form refused from Claude 4.7 and deprecated on 4.6, the only form up to 4.5 (thinking-troubleshooting);
#: Sonnet 5 thinks adaptively by default and refuses the budget form (zh-CN Sonnet 5 migration guide); Sonnet 5.5 takes
#: between_tools instead of disabled (zh-CN whats-new-sonnet-5-5, zh-CN thinking-troubleshooting); Fable 5 and
#: Mythos 5 refuse both disabled and the budget form (en Fable 5 migration guide); Opus 5.5 cannot turn thinking off
#: (a secondary source: dev.to, "Claude Opus 5.5 / Sonnet 5.5: 5 settings that return 400", October 2026); every value
#: a page does not list as refused is accepted (zh-CN thinking-troubleshooting).
THINKING_BY_MODEL = [
    ("claude-sonnet-5", ("adaptive", "disabled")), ("claude-opus-4-7", ("adaptive", "disabled")),
    ("claude-opus-4-8", ("adaptive", "disabled")), ("claude-opus-5", ("adaptive", "disabled")),
    ("claude-fable-5", ("adaptive",)), ("claude-mythos-5", ("adaptive",)), ("claude-fable-5-1", ("adaptive",)),
    ("claude-opus-5-5", ("adaptive",)), ("claude-sonnet-5-5", ("adaptive", "between_tools")),
    ("claude-sonnet-4-6", ("adaptive", "enabled", "disabled")),
    ("claude-opus-4-6", ("adaptive", "enabled", "disabled")),
    ("claude-mythos-preview", ("adaptive", "enabled")),
    ("claude-sonnet-4-5-20250929", ("enabled", "disabled")),
    ("claude-opus-4-5", ("enabled", "disabled")),
    ("claude-haiku-4-5", ("enabled", "disabled")),
]


@pytest.mark.parametrize("model, forms", THINKING_BY_MODEL)
def test_rule_thinking_form(model, forms):
    """The thinking forms per model, as the page lists them: budget refused from Claude 4.7 (Opus 4.7, 4.8, Sonnet 5,
    Fable 5, Mythos 5), both on Claude 4.6 and Mythos Preview, budget only up to 4.5; a refused form raises naming
    the argument, an accepted one builds (https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting,
    and for Sonnet 5 https://platform.claude.com/docs/zh-CN/models/sonnet-5/migration-guide)."""
    assert thinking_forms(model) == forms
    kwargs = {"model": model, "max_tokens": 8_000, "tools": TOOLS, "edits": [clear_thinking_edit()]}
    if "enabled" in forms:
        built = anthropic_request(conversation(), thinking_budget=4_000, **kwargs)
        assert built["thinking"] == {"type": "enabled", "budget_tokens": 4_000}
    else:
        with pytest.raises(ValueError, match=r"thinking_budget is refused by .* \(got 4000\)"):
            anthropic_request(conversation(), thinking_budget=4_000, **kwargs)
    if "adaptive" in forms:
        assert anthropic_request(conversation(), adaptive_thinking=True, **kwargs)["thinking"] == {"type": "adaptive"}
        assert anthropic_request(conversation(), thinking="adaptive", **kwargs)["thinking"] == {"type": "adaptive"}
    else:
        with pytest.raises(ValueError, match=r"adaptive_thinking is not taken by .* \(got 'adaptive'\)"):
            anthropic_request(conversation(), adaptive_thinking=True, **kwargs)


@pytest.mark.parametrize("model, forms", THINKING_BY_MODEL)
def test_rule_thinking_off_by_model(model, forms):
    """Thinking off is spelled per model: "disabled" where the model takes it (Sonnet 5, the Claude 4 models), only
    "between_tools" on Sonnet 5.5, and not at all on Fable 5, Mythos 5, Opus 5.5 and Mythos Preview; the builder sends
    the accepted one and refuses the other naming the argument and the value, and check_request refuses a body built
    elsewhere (https://platform.claude.com/docs/zh-CN/build-with-claude/thinking-troubleshooting: only Sonnet 5.5
    takes between_tools, in place of disabled; https://platform.claude.com/docs/en/models/fable-5/migration-guide)."""
    off = "disabled" if "disabled" in forms else "between_tools" if "between_tools" in forms else None
    assert thinking_off(model) == off
    for kind in ("disabled", "between_tools"):
        body = {"model": model, "max_tokens": 8_000, "thinking": {"type": kind}, "messages": [CONTINUE]}
        if kind == off:
            built = anthropic_request([CONTINUE], model=model, max_tokens=8_000, thinking=kind)
            assert built["thinking"] == {"type": kind} and check_request(body) is body
            sdk_validate("beta.messages.create", built)
            continue
        with pytest.raises(ValueError, match=rf"thinking='{kind}' is refused by .* \(got '{kind}'\)") as excinfo:
            anthropic_request([CONTINUE], model=model, max_tokens=8_000, thinking=kind)
        assert (f"thinking={off!r}" if off else "cannot be turned off") in str(excinfo.value)
        with pytest.raises(ValueError, match="thinking-off-by-model"):
            check_request(body)


def test_rule_tool_loop_keeps_thinking():
    """The assistant turn whose tool results close the conversation keeps its thinking block: with the budget form,
    where every turn thinks, the body with that block stripped is refused naming the rule; the same history with the
    block, or with thinking off, builds; a turn already answered by text is not an open tool loop
    (https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows: "Pass thinking blocks back complete
    and unmodified")."""
    kwargs = {"model": BUDGET_MODEL, "max_tokens": 8_000, "tools": TOOLS}
    assert anthropic_request(conversation(), thinking_budget=2_000, **kwargs)
    stripped = conversation()
    stripped[3] = {"role": "assistant", "content": stripped[3]["content"][1:]}
    with pytest.raises(ValueError, match=r"must keep the thinking block .* \(got a turn of tool_use only\) "
                                         r"\[rule tool-loop-keeps-thinking\]"):
        anthropic_request(stripped, thinking_budget=2_000, **kwargs)
    assert anthropic_request(stripped, thinking="disabled", **kwargs)["thinking"] == {"type": "disabled"}
    answered = [*stripped, {"role": "assistant", "content": [{"type": "text", "text": "超时阈值是 30 秒"}]}, CONTINUE]
    assert anthropic_request(answered, thinking_budget=2_000, **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"thinking": "off"}, r"thinking must be one of 'adaptive', 'disabled', 'between_tools'; .* \(got 'off'\)"),
    ({"thinking": "enabled"}, r"the budget form is thinking_budget=N \(got 'enabled'\)"),
    ({"thinking": "disabled", "adaptive_thinking": True}, r"thinking must be left out with adaptive_thinking=True"),
    ({"thinking": "disabled", "thinking_budget": 2_000}, r"thinking_budget must be left out with thinking='disabled'"),
])
def test_a_wrong_thinking_argument_is_named(kwargs, message):
    """A thinking value that is not a type the argument takes, or two ways of asking at once, raises naming it."""
    with pytest.raises(ValueError, match=message):
        anthropic_request([CONTINUE], model=BUDGET_MODEL, max_tokens=8_000, **kwargs)


def test_rule_thinking_form_in_a_body_built_elsewhere():
    """check_request refuses the body issue 38 found printed (budget form on claude-sonnet-5) and names the rule
    (https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting)."""
    body = {"model": "claude-sonnet-5", "max_tokens": 8_000, "thinking": {"type": "enabled", "budget_tokens": 4_000},
            "messages": [CONTINUE]}
    with pytest.raises(ValueError, match=r"thinking must be adaptive thinking for Sonnet 5") as excinfo:
        check_request(body)
    assert _rule_of(excinfo) == "thinking-form"


@pytest.mark.parametrize("budget, ok", [(1_023, False), (1_024, True), (7_999, True), (8_000, False)])
def test_rule_thinking_budget_range(budget, ok):
    """budget_tokens is at least 1,024 and below max_tokens (8,000 here), in the builder and in check_request
    (https://platform.claude.com/docs/en/api/messages, the thinking field)."""
    body = {"model": BUDGET_MODEL, "max_tokens": 8_000, "thinking": {"type": "enabled", "budget_tokens": budget},
            "messages": [CONTINUE]}
    if ok:
        assert check_request(body) is body
        assert anthropic_request([CONTINUE], model=BUDGET_MODEL, max_tokens=8_000, thinking_budget=budget)
    else:
        with pytest.raises(ValueError, match="thinking-budget-range"):
            check_request(body)
        with pytest.raises(ValueError, match="thinking_budget must be"):
            anthropic_request([CONTINUE], model=BUDGET_MODEL, max_tokens=8_000, thinking_budget=budget)


def test_rule_clear_thinking_first():
    """clear_thinking_20251015 must be the first edit; second, it raises
    (https://platform.claude.com/docs/en/build-with-claude/context-editing)."""
    with pytest.raises(ValueError, match=r"edits must list clear_thinking_20251015 first \(got the order "
                                         r"\['clear_tool_uses_20250919', 'clear_thinking_20251015'\]\)"):
        anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, adaptive_thinking=True,
                          edits=[clear_tool_uses_edit(), clear_thinking_edit()])


@pytest.mark.parametrize("model, thinking", [(MODEL, {"adaptive_thinking": True}),
                                             (BUDGET_MODEL, {"thinking_budget": 2_000})])
def test_rule_clear_thinking_needs_thinking(model, thinking):
    """clear_thinking_20251015 manages thinking blocks, so thinking must be on: without it the builder raises; with
    either form the model takes, it builds (https://platform.claude.com/docs/en/build-with-claude/context-editing)."""
    with pytest.raises(ValueError, match=r"thinking must be on .* \(got thinking=None\) \[rule "
                                         r"clear-thinking-needs-thinking\]"):
        anthropic_request(conversation(), model=model, max_tokens=8_000, tools=TOOLS, edits=[clear_thinking_edit()])
    built = anthropic_request(conversation(), model=model, max_tokens=8_000, tools=TOOLS,
                              edits=[clear_thinking_edit()], **thinking)
    assert built["context_management"]["edits"][0]["type"] == "clear_thinking_20251015"


def test_rule_thinking_keep_positive():
    """keep counts thinking turns and must be > 0 (or "all"): clear_thinking_edit(keep=0), a body with value 0 and
    the offline replay all raise; keep=1 and "all" build
    (https://platform.claude.com/docs/en/build-with-claude/context-editing)."""
    from ctx_reference.context_editing import clear_thinking

    with pytest.raises(ValueError, match=r"keep must be >= 1 \(got 0\)"):
        clear_thinking_edit(keep=0)
    body = {"model": MODEL, "max_tokens": 8_000, "thinking": {"type": "adaptive"}, "messages": [CONTINUE],
            "context_management": {"edits": [{"type": "clear_thinking_20251015",
                                              "keep": {"type": "thinking_turns", "value": 0}}]}}
    with pytest.raises(ValueError, match="thinking-keep-positive"):
        check_request(body)
    with pytest.raises(ValueError, match=r"keep must be >= 1 \(got 0\)"):
        clear_thinking(conversation(), body["context_management"]["edits"][0])
    assert clear_thinking_edit(keep=1)["keep"] == {"type": "thinking_turns", "value": 1}
    assert clear_thinking_edit("all")["keep"] == "all"


def test_rule_compact_trigger_minimum():
    """compact_20260112's trigger value must be at least 50,000 tokens, in the edit builder and in check_request
    (https://platform.claude.com/docs/en/build-with-claude/compaction-threshold, Parameters)."""
    body = anthropic_request([CONTINUE], model=MODEL, max_tokens=8_000, edits=[compact_edit(trigger=50_000)])
    body["context_management"]["edits"][0]["trigger"]["value"] = 49_999
    with pytest.raises(ValueError, match=r"compact_20260112 trigger must be >= 50000 \(got 49999\)"):
        check_request(body)


def test_rule_compaction_without_context_management():
    """A compaction request never carries context_management: the builders leave it out, check_request refuses it
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand)."""
    chat = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS,
                             edits=[clear_tool_uses_edit()])
    compaction = compaction_request_for(chat)
    assert "context_management" not in compaction and compaction["betas"] == [ON_DEMAND]
    with pytest.raises(ValueError, match="compaction-without-context-management"):
        check_request(dict(compaction, context_management=chat["context_management"]))


def test_rule_compaction_no_open_tool_call():
    """The API rejects a compaction request whose last assistant turn ends in a tool call with no result
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Request a summary)."""
    with pytest.raises(ValueError, match="tool call has no result yet") as excinfo:
        anthropic_compaction_request(conversation()[:4], model=MODEL, max_tokens=8_000, tools=TOOLS)
    assert _rule_of(excinfo) == "compaction-no-open-tool-call"


def test_rule_compaction_same_system_and_tools():
    """The compaction request carries the conversation's own system and tools: compaction_request_for copies them,
    and a compaction request that drops or changes one is refused against its conversation
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand)."""
    chat = anthropic_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS, system="先查日志")
    compaction = compaction_request_for(chat, instructions="写清目标和进度")
    assert (compaction["system"], compaction["tools"], compaction["messages"]) == ("先查日志", TOOLS, chat["messages"])
    other = anthropic_compaction_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS)
    with pytest.raises(ValueError, match=r"system of the compaction request must be the conversation's \(got None"):
        check_request(other, conversation=chat)
    fewer = anthropic_compaction_request(conversation(), model=MODEL, max_tokens=8_000, tools=TOOLS[:1],
                                         system="先查日志")
    with pytest.raises(ValueError, match="tools of the compaction request must be the conversation's"):
        check_request(fewer, conversation=chat)


def test_rule_signed_block_first():
    """A signed block opens messages; with messages in front of it the request is refused
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Errors)."""
    with pytest.raises(ValueError, match=r"must start with the signed compaction block.* \(got it at message 5, "
                                         r"block 0\)"):
        anthropic_request([*conversation(), {"role": "assistant", "content": [SIGNED_BLOCK]}, CONTINUE],
                          model=MODEL, max_tokens=8_000, tools=TOOLS)


def test_rule_one_compaction_block():
    """Exactly one compaction block per request, the newest
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Continue from the summary)."""
    with pytest.raises(ValueError, match=r"exactly one compaction block, the newest \(got 2\)"):
        anthropic_request([{"role": "assistant", "content": [SIGNED_BLOCK, dict(SIGNED_BLOCK, signature="sig-d")]},
                           CONTINUE], model=MODEL, max_tokens=8_000)


def test_rule_no_threshold_with_signed_block():
    """Threshold compaction cannot run on a request that carries a signed block
    (https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand, Limits and interactions)."""
    with pytest.raises(ValueError, match="edits must not hold compact_20260112"):
        anthropic_request(anthropic_after_compaction(SIGNED_BLOCK, [CONTINUE]), model=MODEL, max_tokens=8_000,
                          edits=[compact_edit()])


def test_every_request_rule_has_its_test_citing_its_page():
    """Each rule of REQUEST_RULES has a test_rule_<id> here whose docstring gives the rule's address, and a
    platform.claude.com page; ids are unique."""
    tests = {name: obj for name, obj in globals().items() if name.startswith("test_rule_")}
    assert len({rule.id for rule in REQUEST_RULES}) == len(REQUEST_RULES)
    for rule in REQUEST_RULES:
        test = tests.get("test_rule_" + rule.id.replace("-", "_"))
        assert test is not None, rule.id
        assert rule.url in test.__doc__.replace("\n", ""), rule.id
        assert rule.url.startswith("https://platform.claude.com/docs/") and rule.sentence and rule.page, rule


def test_format_differences_shows_only_what_differs():
    """Two bodies differing in betas and compaction: one row per body and field, the shared fields named after."""
    chat = anthropic_request([CONTINUE], model=MODEL, max_tokens=8_000, system="先查日志")
    text = format_differences({"对话": chat, "压缩": compaction_request_for(chat)})
    lines = text.splitlines()
    assert [line.split()[:2] for line in lines[2:6]] == [["对话", "betas"], ["compaction", "—"],
                                                         ["压缩", "betas"], ["compaction", '{"type":']]
    assert lines[-1] == "各请求相同的字段：model、max_tokens、system、messages"
    with pytest.raises(ValueError, match="requests must be a non-empty dict"):
        format_differences({})
