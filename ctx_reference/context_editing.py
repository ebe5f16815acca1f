"""Server-side context editing, replayed offline on a message list.

What the model covers: the clearing rule of a "clear old tool uses" edit, applied to a list of
messages in the shape of a messages API (``{"role": ..., "content": [blocks]}`` with ``text``,
``tool_use``, ``tool_result`` and ``thinking`` blocks). When the messages exceed `trigger`
tokens, the results of the oldest tool uses are replaced by a short placeholder, keeping the
newest `keep` tool uses and never touching the tools named in `exclude_tools`; the edit is
applied only if it frees at least `clear_at_least` tokens, and can also blank the tool calls'
inputs. `clear_thinking` keeps the thinking blocks of the newest assistant turns only. Both
return a new list and a report; the caller's messages are never changed -- as with the real
edit, which runs on the server while the client keeps its full history.

What it leaves out: the real request format and names (beta headers, field spellings, the exact
placeholder text, how tokens are counted): the defaults here follow the lesson (trigger 100,000
input tokens, keep 3); everything else is a model of the idea, and the provider's documentation
is the authority. Tokens are estimated with `estimate_tokens`.

Vocabulary:
- tool use: a ``tool_use`` block (id, name, input) and the ``tool_result`` block answering it.
- cleared: a tool result whose content was replaced by `PLACEHOLDER`.
- freed: tokens removed by an edit (old content minus placeholder, summed).

Used by notebook 06 (strategies), section "真实 API 里的清理".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ctx_reference._validate import require_int
from ctx_reference.tokens import estimate_tokens

__all__ = [
    "DEFAULT_TRIGGER",
    "DEFAULT_KEEP",
    "PLACEHOLDER",
    "ClearReport",
    "block_tokens",
    "messages_tokens",
    "tool_uses",
    "clear_tool_uses",
    "clear_thinking",
]

#: Input tokens above which the edit runs (the lesson's default for clear_tool_uses).
DEFAULT_TRIGGER = 100_000
#: Newest tool uses left untouched (the lesson's default).
DEFAULT_KEEP = 3
#: What a cleared tool result holds instead of its content (this model's wording).
PLACEHOLDER = "[工具结果已清除]"


def block_tokens(block: dict) -> int:
    """Return the estimated tokens of one content block (text, thinking, tool input or result content).

    >>> block_tokens({"type": "text", "text": "hello world"})
    3
    """
    if not isinstance(block, dict) or "type" not in block:
        raise ValueError(f"block must be a dict with a 'type' (got {block!r})")
    kind = block["type"]
    if kind == "text":
        return estimate_tokens(block.get("text", ""))
    if kind == "thinking":
        return estimate_tokens(block.get("thinking", ""))
    if kind == "tool_use":
        return estimate_tokens(block.get("name", "")) + estimate_tokens(
            json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True))
    if kind == "tool_result":
        content = block.get("content", "")
        if not isinstance(content, str):
            raise ValueError(f"tool_result content must be a str in this model (got {content!r})")
        return estimate_tokens(content)
    raise ValueError(f"block type must be text, thinking, tool_use or tool_result (got {kind!r})")


def _check_messages(messages: object) -> list[dict]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValueError(f"messages must be a list of messages (got {messages!r})")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise ValueError(f"messages[{i}] must be a dict with role 'user' or 'assistant' (got {message!r})")
        if not isinstance(message.get("content"), list):
            raise ValueError(f"messages[{i}]['content'] must be a list of blocks (got {message.get('content')!r})")
    return list(messages)


def messages_tokens(messages: Sequence[dict]) -> int:
    """Return the estimated tokens of all blocks of all messages.

    >>> messages_tokens([{"role": "user", "content": [{"type": "text", "text": "上下文"}]}])
    3
    """
    return sum(block_tokens(b) for m in _check_messages(messages) for b in m["content"])


def tool_uses(messages: Sequence[dict]) -> list[tuple[str, str]]:
    """Return (id, name) of every tool_use block, oldest first.

    >>> tool_uses([{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {}}]}])
    [('t1', 'grep')]
    """
    return [(b["id"], b["name"]) for m in _check_messages(messages) for b in m["content"] if b["type"] == "tool_use"]


@dataclass(frozen=True)
class ClearReport:
    """What one edit did: tokens before and after, the tool-use ids cleared (oldest first), tokens freed.

    `applied` is False when nothing was cleared (under the trigger, nothing eligible, or less
    than `clear_at_least` to free).
    """

    before: int
    after: int
    cleared: tuple[str, ...]
    freed: int

    @property
    def applied(self) -> bool:
        """True when the edit changed the messages."""
        return bool(self.cleared)


def clear_tool_uses(
    messages: Sequence[dict],
    *,
    trigger: int = DEFAULT_TRIGGER,
    keep: int = DEFAULT_KEEP,
    clear_at_least: int = 0,
    exclude_tools: Sequence[str] = (),
    clear_tool_inputs: bool = False,
) -> tuple[list[dict], ClearReport]:
    """Return (new messages, report) after clearing old tool results; the input is never changed.

    Runs only when the messages are over `trigger` tokens. Eligible: every tool use except the
    newest `keep` (counted over all tool uses) and those whose tool name is in `exclude_tools`,
    whose result is not cleared yet. Their results become `PLACEHOLDER` (and, with
    `clear_tool_inputs`, their inputs ``{}``) -- but only if that frees at least `clear_at_least`
    tokens; otherwise nothing changes.

    Five 3,000-token grep results, trigger 10,000, keep 3: the two oldest are cleared, each
    freeing 3,000 − 8 (the placeholder: 7 characters + 2 brackets) = 2,992 tokens.

    >>> msgs = []
    >>> for i in range(5):
    ...     use = {"type": "tool_use", "id": f"t{i}", "name": "grep", "input": {}}
    ...     result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 12_000}
    ...     msgs += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    >>> new, report = clear_tool_uses(msgs, trigger=10_000, keep=3)
    >>> report.cleared, report.freed
    (('t0', 't1'), 5984)

    Used by notebook 06.
    """
    checked = _check_messages(messages)
    require_int(trigger, "trigger", minimum=0)
    require_int(keep, "keep", minimum=0)
    require_int(clear_at_least, "clear_at_least", minimum=0)
    if isinstance(exclude_tools, (str, bytes)) or not isinstance(exclude_tools, Sequence):
        raise ValueError(f"exclude_tools must be a list of tool names (got {exclude_tools!r})")
    if not isinstance(clear_tool_inputs, bool):
        raise ValueError(f"clear_tool_inputs must be a bool (got {clear_tool_inputs!r})")

    before = messages_tokens(checked)
    unchanged = ClearReport(before, before, (), 0)
    if before <= trigger:
        return copy.deepcopy(checked), unchanged
    uses = tool_uses(checked)
    protected = {use_id for use_id, _ in uses[len(uses) - keep:]} if keep else set()
    excluded = set(exclude_tools)
    results = {b["tool_use_id"]: b for m in checked for b in m["content"] if b["type"] == "tool_result"}
    eligible = [use_id for use_id, name in uses
                if use_id not in protected and name not in excluded
                and use_id in results and results[use_id].get("content") != PLACEHOLDER]
    if not eligible:
        return copy.deepcopy(checked), unchanged

    new = copy.deepcopy(checked)
    targets = set(eligible)
    for message in new:
        for block in message["content"]:
            if block["type"] == "tool_result" and block["tool_use_id"] in targets:
                block["content"] = PLACEHOLDER
            elif block["type"] == "tool_use" and clear_tool_inputs and block["id"] in targets:
                block["input"] = {}
    after = messages_tokens(new)
    if before - after < clear_at_least:
        return copy.deepcopy(checked), unchanged
    return new, ClearReport(before, after, tuple(eligible), before - after)


def clear_thinking(messages: Sequence[dict], *, keep: int = 1) -> tuple[list[dict], int]:
    """Return (new messages, thinking blocks removed): thinking is kept in the newest `keep` assistant messages only.

    >>> thought, text = {"type": "thinking", "thinking": "想一想"}, {"type": "text", "text": "好"}
    >>> turn = {"role": "assistant", "content": [thought, text]}
    >>> new, removed = clear_thinking([turn, turn, turn], keep=1)
    >>> removed, [len(m["content"]) for m in new]
    (2, [1, 1, 2])

    Used by notebook 06.
    """
    checked = _check_messages(messages)
    require_int(keep, "keep", minimum=0)
    assistant = [i for i, m in enumerate(checked) if m["role"] == "assistant"]
    kept = set(assistant[len(assistant) - keep:]) if keep else set()
    new, removed = [], 0
    for i, message in enumerate(checked):
        message = copy.deepcopy(message)
        if message["role"] == "assistant" and i not in kept:
            blocks = [b for b in message["content"] if b["type"] != "thinking"]
            removed += len(message["content"]) - len(blocks)
            message["content"] = blocks
        new.append(message)
    return new, removed
