"""Tests for ctx_reference.context_editing: clearing old tool uses and old thinking, offline."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.api_requests import anthropic_request, clear_thinking_edit, clear_tool_uses_edit
from ctx_reference.context_editing import (
    DEFAULT_KEEP,
    DEFAULT_TRIGGER,
    PLACEHOLDER,
    apply_context_management,
    clear_thinking,
    clear_tool_uses,
    input_tokens,
    messages_tokens,
    tool_uses,
)


def edit(**options):
    """A clear_tool_uses_20250919 edit as a request carries it."""
    return clear_tool_uses_edit(**options)


def conversation(names, result_chars=12_000):
    """One assistant tool_use and one user tool_result per name; each result is result_chars ASCII (÷ 4 tokens)."""
    messages = [{"role": "user", "content": [{"type": "text", "text": "开始"}]}]
    for i, name in enumerate(names):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": name,
                                                           "input": {"q": f"step {i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": "x" * result_chars}]})
    return messages


def test_defaults_are_the_lessons():
    """The lesson's defaults: trigger 100,000 input tokens, keep the newest 3 tool uses."""
    assert (DEFAULT_TRIGGER, DEFAULT_KEEP) == (100_000, 3)


def test_under_the_trigger_nothing_is_cleared():
    """Five 3,000-token results (about 15,000 tokens) under a 100,000 trigger: nothing changes."""
    msgs = conversation(["grep"] * 5)
    new, report = clear_tool_uses(msgs)
    assert new == msgs and not report.applied and report.freed == 0


def test_over_the_trigger_all_but_the_newest_keep_are_cleared():
    """Six results, trigger 10,000, keep 3: t0–t2 are cleared, each freeing 3,000 − 8 = 2,992."""
    new, report = clear_tool_uses(conversation(["grep"] * 6), edit(trigger=10_000, keep=3))
    assert report.cleared == ("t0", "t1", "t2")
    assert report.freed == 3 * 2_992 and report.after == report.before - 8_976
    contents = [b["content"] for m in new for b in m["content"] if b["type"] == "tool_result"]
    assert contents[:3] == [PLACEHOLDER] * 3 and all(c == "x" * 12_000 for c in contents[3:])


def test_exclude_tools_protects_a_tool_and_keep_still_counts_it():
    """Tools a, b, a, b, a, b, b excluded, keep 2: only a's t0 and t2 are cleared (t4 is among the newest 2)."""
    _, report = clear_tool_uses(conversation(["a", "b"] * 3), edit(trigger=0, keep=2, exclude_tools=["b"]))
    assert report.cleared == ("t0", "t2")


def test_clear_at_least_blocks_a_small_edit():
    """Two eligible results free 5,984 tokens: clear_at_least 5,984 applies the edit, 5,985 leaves everything as is."""
    msgs = conversation(["grep"] * 5)
    assert clear_tool_uses(msgs, edit(trigger=0, keep=3, clear_at_least=5_984))[1].freed == 5_984
    new, report = clear_tool_uses(msgs, edit(trigger=0, keep=3, clear_at_least=5_985))
    assert new == msgs and not report.applied


def test_clear_tool_inputs_blanks_the_inputs_of_cleared_uses_only():
    """With clear_tool_inputs, cleared uses get input {} and the kept ones keep theirs."""
    new, _ = clear_tool_uses(conversation(["grep"] * 4), edit(trigger=0, keep=1, clear_tool_inputs=True))
    inputs = [b["input"] for m in new for b in m["content"] if b["type"] == "tool_use"]
    assert inputs == [{}, {}, {}, {"q": "step 3"}]


def test_already_cleared_results_are_not_cleared_again():
    """A second edit right after the first finds nothing new to clear."""
    once, first = clear_tool_uses(conversation(["grep"] * 6), edit(trigger=0, keep=3))
    twice, second = clear_tool_uses(once, edit(trigger=0, keep=3))
    assert first.applied and not second.applied and twice == once


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=8), st.integers(0, 5), st.integers(0, 20_000))
def test_the_input_is_never_changed_and_tokens_never_grow(names, keep, at_least):
    """Clearing never mutates its input, never adds tokens, and never touches the newest keep uses."""
    msgs = conversation(names, result_chars=400)
    snapshot = copy.deepcopy(msgs)
    new, report = clear_tool_uses(msgs, edit(trigger=0, keep=keep, clear_at_least=at_least, exclude_tools=["c"]))
    assert msgs == snapshot
    assert messages_tokens(new) == report.after <= report.before
    newest = {use_id for use_id, _ in tool_uses(msgs)[len(names) - keep:]} if keep else set()
    assert not newest & set(report.cleared)


def test_clear_thinking_keeps_the_newest_turns():
    """Three assistant turns with thinking, keep 1: two thinking blocks go, the last turn keeps its own."""
    turn = {"role": "assistant", "content": [{"type": "thinking", "thinking": "想一想", "signature": "s"},
                                          {"type": "text", "text": "好"}]}
    msgs = [turn, {"role": "user", "content": [{"type": "text", "text": "继续"}]}, turn, turn]
    new, removed = clear_thinking(msgs, clear_thinking_edit(1))
    assert removed == 2
    assert [len(m["content"]) for m in new] == [1, 1, 1, 2]
    assert [len(m["content"]) for m in msgs] == [2, 1, 2, 2]   # input untouched


CTU = "clear_tool_uses_20250919"


@pytest.mark.parametrize("call, name", [
    (lambda: clear_tool_uses("hello"), "messages"),
    (lambda: clear_tool_uses([], {"type": CTU, "keep": {"type": "tool_uses", "value": -1}}), "keep"),
    (lambda: clear_tool_uses([], {"type": CTU, "trigger": 100_000}), "trigger"),
    (lambda: clear_tool_uses([], {"type": CTU, "keep": 3}), "keep"),
    (lambda: clear_tool_uses([], {"type": CTU, "clear_at_least": {"type": "tool_uses", "value": 2}}), "clear_at_least"),
    (lambda: clear_tool_uses([], {"type": CTU, "exclude_tools": "grep"}), "exclude_tools"),
    (lambda: clear_tool_uses([], {"type": CTU, "clear_tool_inputs": "yes"}), "clear_tool_inputs"),
    (lambda: clear_tool_uses([], {"type": CTU, "kep": {"type": "tool_uses", "value": 3}}), "kep"),
    (lambda: clear_tool_uses([], {"type": "clear_thinking_20251015"}), "edit"),
    (lambda: clear_tool_uses([{"role": "system", "content": []}]), "messages"),
    (lambda: clear_tool_uses([], system=42), "system"),
    (lambda: clear_thinking([], {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": -1}}),
     "keep"),
    (lambda: apply_context_management({"messages": [], "context_management": [{"type": CTU}]}), "context_management"),
])
def test_bad_arguments_raise_value_error_naming_them(call, name):
    """Bad input (including an edit in the wrong shape or with a misspelled field) raises ValueError naming it."""
    with pytest.raises(ValueError, match=name):
        call()


def test_the_trigger_counts_system_and_tools_too():
    """Messages of 15,027 tokens, trigger 16,000: nothing is cleared, but a 1,000-token system prompt tips it over."""
    msgs = conversation(["grep"] * 5)
    assert messages_tokens(msgs) == 15_027      # 2 (开始) + 5 × (3,000 result + 1 grep + 4 {"q": "step i"})
    assert not clear_tool_uses(msgs, edit(trigger=16_000))[1].applied
    _, report = clear_tool_uses(msgs, edit(trigger=16_000), system="x" * 4_000)
    assert report.before == 16_027 and report.cleared == ("t0", "t1")


def test_tool_definitions_count_as_their_json():
    """A tool definition is counted as its JSON text: {"name": "grep"} is 16 ASCII characters, 4 tokens."""
    assert input_tokens([], tools=[{"name": "grep"}]) == 4


def test_a_tool_uses_trigger_counts_tool_uses():
    """Trigger {tool_uses: 4}: four uses leave everything, five clear all but the newest keep."""
    assert not clear_tool_uses(conversation(["grep"] * 4), edit(trigger=4, trigger_unit="tool_uses", keep=1))[1].applied
    _, report = clear_tool_uses(conversation(["grep"] * 5), edit(trigger=4, trigger_unit="tool_uses", keep=1))
    assert report.cleared == ("t0", "t1", "t2", "t3")


def test_keep_zero_clears_every_eligible_use():
    """keep 0 protects nothing: all four results are cleared."""
    _, report = clear_tool_uses(conversation(["grep"] * 4), edit(trigger=0, keep=0))
    assert report.cleared == ("t0", "t1", "t2", "t3")


def test_clear_tool_inputs_can_name_tools():
    """clear_tool_inputs=["a"]: the cleared uses of a lose their input, those of b keep it."""
    new, report = clear_tool_uses(conversation(["a", "b", "a", "b"]), edit(trigger=0, keep=1, clear_tool_inputs=["a"]))
    assert report.cleared == ("t0", "t1", "t2")
    inputs = [b["input"] for m in new for b in m["content"] if b["type"] == "tool_use"]
    assert inputs == [{}, {"q": "step 1"}, {}, {"q": "step 3"}]


def test_a_result_given_as_text_blocks_is_counted_and_cleared():
    """A tool result whose content is a list of text blocks counts its text and is cleared like a string."""
    msgs = conversation(["grep"] * 2)
    msgs[2]["content"][0]["content"] = [{"type": "text", "text": "x" * 12_000}]
    assert messages_tokens(msgs) == messages_tokens(conversation(["grep"] * 2))
    new, report = clear_tool_uses(msgs, edit(trigger=0, keep=1))
    assert report.cleared == ("t0",) and new[2]["content"][0]["content"] == PLACEHOLDER


def test_thinking_all_keeps_every_block():
    """clear_thinking with keep "all" removes nothing."""
    turn = {"role": "assistant", "content": [{"type": "thinking", "thinking": "想", "signature": "s"}]}
    assert clear_thinking([turn, turn], clear_thinking_edit("all"))[1] == 0


def test_apply_context_management_replays_a_built_request_in_order():
    """The request built for both edits replays as: thinking cleared in 2 of 3 turns, then old tool results cleared."""
    msgs = conversation(["grep"] * 5)
    for message in msgs:
        if message["role"] == "assistant":
            message["content"].insert(0, {"type": "thinking", "thinking": "想一想", "signature": "s"})
    grep = {"name": "grep", "description": "search the code", "input_schema": {"type": "object"}}
    request = anthropic_request(msgs[:7], model="claude-sonnet-5", max_tokens=8_000, adaptive_thinking=True,
                                tools=[grep],
                                edits=[clear_thinking_edit(1), clear_tool_uses_edit(trigger=5_000, keep=1)])
    seen, (removed, report) = apply_context_management(request)
    assert removed == 2 and report.cleared == ("t0", "t1")
    assert request["messages"] == msgs[:7]       # the request is untouched
    assert sum(b["type"] == "thinking" for m in seen for b in m["content"]) == 1
