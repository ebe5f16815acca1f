"""Tests for ctx_reference.context_editing: clearing old tool uses and old thinking, offline."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.context_editing import (
    DEFAULT_KEEP,
    DEFAULT_TRIGGER,
    PLACEHOLDER,
    clear_thinking,
    clear_tool_uses,
    messages_tokens,
    tool_uses,
)


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
    new, report = clear_tool_uses(conversation(["grep"] * 6), trigger=10_000, keep=3)
    assert report.cleared == ("t0", "t1", "t2")
    assert report.freed == 3 * 2_992 and report.after == report.before - 8_976
    contents = [b["content"] for m in new for b in m["content"] if b["type"] == "tool_result"]
    assert contents[:3] == [PLACEHOLDER] * 3 and all(c == "x" * 12_000 for c in contents[3:])


def test_exclude_tools_protects_a_tool_and_keep_still_counts_it():
    """Tools a, b, a, b, a, b with b excluded, keep 2: only a's results t0 and t2 are cleared (t4 is among
    the newest 2)."""
    _, report = clear_tool_uses(conversation(["a", "b"] * 3), trigger=0, keep=2, exclude_tools=["b"])
    assert report.cleared == ("t0", "t2")


def test_clear_at_least_blocks_a_small_edit():
    """Two eligible results free 5,984 tokens: clear_at_least 5,984 applies the edit, 5,985 leaves everything as is."""
    msgs = conversation(["grep"] * 5)
    assert clear_tool_uses(msgs, trigger=0, keep=3, clear_at_least=5_984)[1].freed == 5_984
    new, report = clear_tool_uses(msgs, trigger=0, keep=3, clear_at_least=5_985)
    assert new == msgs and not report.applied


def test_clear_tool_inputs_blanks_the_inputs_of_cleared_uses_only():
    """With clear_tool_inputs, cleared uses get input {} and the kept ones keep theirs."""
    new, _ = clear_tool_uses(conversation(["grep"] * 4), trigger=0, keep=1, clear_tool_inputs=True)
    inputs = [b["input"] for m in new for b in m["content"] if b["type"] == "tool_use"]
    assert inputs == [{}, {}, {}, {"q": "step 3"}]


def test_already_cleared_results_are_not_cleared_again():
    """A second edit right after the first finds nothing new to clear."""
    once, first = clear_tool_uses(conversation(["grep"] * 6), trigger=0, keep=3)
    twice, second = clear_tool_uses(once, trigger=0, keep=3)
    assert first.applied and not second.applied and twice == once


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=8), st.integers(0, 5), st.integers(0, 20_000))
def test_the_input_is_never_changed_and_tokens_never_grow(names, keep, at_least):
    """Clearing never mutates its input, never adds tokens, and never touches the newest keep uses."""
    msgs = conversation(names, result_chars=400)
    snapshot = copy.deepcopy(msgs)
    new, report = clear_tool_uses(msgs, trigger=0, keep=keep, clear_at_least=at_least, exclude_tools=["c"])
    assert msgs == snapshot
    assert messages_tokens(new) == report.after <= report.before
    newest = {use_id for use_id, _ in tool_uses(msgs)[len(names) - keep:]} if keep else set()
    assert not newest & set(report.cleared)


def test_clear_thinking_keeps_the_newest_turns():
    """Three assistant turns with thinking, keep 1: two thinking blocks go, the last turn keeps its own."""
    thought, text = {"type": "thinking", "thinking": "想一想"}, {"type": "text", "text": "好"}
    turn = {"role": "assistant", "content": [thought, text]}
    msgs = [turn, {"role": "user", "content": [{"type": "text", "text": "继续"}]}, turn, turn]
    new, removed = clear_thinking(msgs, keep=1)
    assert removed == 2
    assert [len(m["content"]) for m in new] == [1, 1, 1, 2]
    assert [len(m["content"]) for m in msgs] == [2, 1, 2, 2]   # input untouched


@pytest.mark.parametrize("call, name", [
    (lambda: clear_tool_uses("hello"), "messages"),
    (lambda: clear_tool_uses([], keep=-1), "keep"),
    (lambda: clear_tool_uses([], trigger=-5), "trigger"),
    (lambda: clear_tool_uses([], exclude_tools="grep"), "exclude_tools"),
    (lambda: clear_tool_uses([], clear_tool_inputs="yes"), "clear_tool_inputs"),
    (lambda: clear_tool_uses([{"role": "system", "content": []}]), "messages"),
    (lambda: clear_thinking([], keep=-1), "keep"),
])
def test_bad_arguments_raise_value_error_naming_them(call, name):
    """Bad input raises ValueError whose message names the argument."""
    with pytest.raises(ValueError, match=name):
        call()
