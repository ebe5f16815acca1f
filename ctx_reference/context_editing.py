"""Server-side context editing, replayed offline on the request that asks for it.

What the model covers: the two clearing edits of Anthropic's context editing, written exactly as
a request carries them in ``context_management.edits`` (see `ctx_reference.api_requests`, which
builds them), applied to the request's ``messages`` (``{"role": ..., "content": [blocks]}`` with
``text``, ``thinking``, ``tool_use`` and ``tool_result`` blocks):

- ``clear_tool_uses_20250919``: runs when the input is over ``trigger`` -- ``{"type":
  "input_tokens", "value": N}`` counts the whole input (system, tools and messages), ``{"type":
  "tool_uses", "value": N}`` counts the tool uses in the messages. Then every tool use except the
  newest ``keep.value`` and those of the tools in ``exclude_tools`` has its result replaced by
  `PLACEHOLDER` (and its input by ``{}`` when ``clear_tool_inputs`` is true, or names its tool),
  but only if that frees at least ``clear_at_least.value`` input tokens; otherwise nothing
  changes. Defaults as documented: trigger 100,000 input tokens, keep 3 tool uses, no minimum.
- ``clear_thinking_20251015``: the thinking blocks of all but the newest ``keep`` assistant turns
  are removed (``{"type": "thinking_turns", "value": N}`` with N >= 1, default 1; ``"all"`` keeps
  them all).

Every function returns a new list; the caller's messages are never changed -- as with the real
edit, which runs on the server while the client keeps its full history.

Where the model simplifies (the provider's documentation is the authority):
- tokens are estimated with `estimate_tokens` (a tool definition: its JSON; a tool use: its name
  and JSON input), not counted by the provider's tokenizer;
- the placeholder wording is this model's; the server's text differs;
- ``keep`` counts the newest tool uses of every tool, excluded ones included;
- a tool result's content is a string or a list of text blocks (images and documents are not
  modelled); a thinking turn is an assistant message, not the server's grouping of turns;
- ``compact_20260112`` (threshold compaction) is not replayed: its summary is written by the model.

Vocabulary:
- input: what one request sends, ``system`` + ``tools`` + ``messages``.
- tool use: a ``tool_use`` block (id, name, input) and the ``tool_result`` block answering it.
- cleared: a tool result whose content was replaced by `PLACEHOLDER`.
- freed: input tokens removed by an edit (before minus after).

Used by notebook 06 (strategies), section "真实 API 里的清理".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctx_reference._validate import require_int
from ctx_reference.tokens import estimate_tokens

__all__ = [
    "DEFAULT_TRIGGER",
    "DEFAULT_KEEP",
    "DEFAULT_THINKING_KEEP",
    "PLACEHOLDER",
    "ClearReport",
    "apply_context_management",
    "block_tokens",
    "check_messages",
    "clear_thinking",
    "clear_tool_uses",
    "input_tokens",
    "messages_tokens",
    "tool_uses",
]

#: Input tokens above which ``clear_tool_uses_20250919`` runs when no trigger is given (documented default).
DEFAULT_TRIGGER = 100_000
#: Newest tool uses left untouched when no ``keep`` is given (documented default).
DEFAULT_KEEP = 3
#: Newest assistant turns whose thinking ``clear_thinking_20251015`` keeps by default (documented default).
DEFAULT_THINKING_KEEP = 1
#: What a cleared tool result holds instead of its content (this model's wording).
PLACEHOLDER = "[工具结果已清除]"  # data

#: The API facts this module states, by the stable id of their entry in docs/api-sources.md (see api_requests).
API_FACTS: dict[str, tuple[str, ...]] = {
    "default.clear-tool-uses-trigger": ("DEFAULT_TRIGGER",),
    "default.clear-tool-uses-keep": ("DEFAULT_KEEP",),
    "default.clear-thinking-keep": ("DEFAULT_THINKING_KEEP",),
}
#: Public constants that are this model's own choices, not facts about an API.
LESSON_CONSTANTS = ("PLACEHOLDER",)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    raise ValueError(f"tool_result content must be a str or a list of text blocks in this model (got {content!r})")


def block_tokens(block: dict) -> int:
    """Return the estimated tokens of one content block (text, thinking, tool input or result content).

    >>> block_tokens({"type": "text", "text": "hello world"})
    3
    >>> block_tokens({"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "上下文"}]})
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
        return estimate_tokens(_content_text(block.get("content", "")))
    raise ValueError(f"block type must be text, thinking, tool_use or tool_result (got {kind!r})")


def check_messages(messages: object) -> list[dict]:
    """Return `messages` as a list if it is a list of ``{"role": "user" | "assistant", "content": [blocks]}``.

    >>> check_messages([{"role": "user", "content": "hi"}])
    Traceback (most recent call last):
    ValueError: messages[0]['content'] must be a list of blocks (got 'hi')
    """
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
    return sum(block_tokens(b) for m in check_messages(messages) for b in m["content"])


def input_tokens(messages: Sequence[dict], *, system: object = None, tools: Sequence[dict] = ()) -> int:
    """Return the estimated input tokens of a request: system prompt + tool definitions (as JSON) + messages.

    >>> input_tokens([{"role": "user", "content": [{"type": "text", "text": "上下文"}]}], system="只用中文回答")
    9
    """
    if system is None:
        system_tokens = 0
    elif isinstance(system, str):
        system_tokens = estimate_tokens(system)
    elif isinstance(system, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in system):
        system_tokens = sum(estimate_tokens(b.get("text", "")) for b in system)
    else:
        raise ValueError(f"system must be a str or a list of text blocks (got {system!r})")
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        raise ValueError(f"tools must be a list of tool definitions (got {tools!r})")
    tool_tokens = sum(estimate_tokens(json.dumps(t, ensure_ascii=False, sort_keys=True)) for t in tools)
    return system_tokens + tool_tokens + messages_tokens(messages)


def tool_uses(messages: Sequence[dict]) -> list[tuple[str, str]]:
    """Return (id, name) of every tool_use block, oldest first.

    >>> tool_uses([{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {}}]}])
    [('t1', 'grep')]
    """
    return [(b["id"], b["name"]) for m in check_messages(messages) for b in m["content"] if b["type"] == "tool_use"]


@dataclass(frozen=True)
class ClearReport:
    """What one edit did: input tokens before and after, the tool-use ids cleared (oldest first), tokens freed.

    `applied` is False when nothing was cleared (not over the trigger, nothing eligible, or less
    than ``clear_at_least`` to free).
    """

    before: int
    after: int
    cleared: tuple[str, ...]
    freed: int

    @property
    def applied(self) -> bool:
        """True when the edit changed the messages."""
        return bool(self.cleared)


def _amount(edit: dict, field: str, kinds: tuple[str, ...], default: dict | None) -> dict | None:
    value = edit.get(field, default)
    if value is None:
        return None
    if (not isinstance(value, dict) or set(value) != {"type", "value"} or value["type"] not in kinds
            or isinstance(value["value"], bool) or not isinstance(value["value"], int) or value["value"] < 0):
        shape = " or ".join(f'{{"type": "{k}", "value": N}}' for k in kinds)
        raise ValueError(f"edit[{field!r}] must be {shape} with N >= 0 (got {value!r})")
    return value


def _edit(edit: object, kind: str, fields: set[str]) -> dict:
    if not isinstance(edit, dict) or edit.get("type") != kind:
        raise ValueError(f"edit must be a dict with type {kind!r} (got {edit!r})")
    unknown = set(edit) - fields - {"type"}
    if unknown:
        raise ValueError(f"edit has fields {kind} does not know: {sorted(unknown)} (got {edit!r})")
    return edit


def _names(value: object, field: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"edit[{field!r}] must be a list of tool names (got {value!r})")
    return list(value)


def clear_tool_uses(
    messages: Sequence[dict], edit: dict | None = None, *, system: object = None, tools: Sequence[dict] = (),
) -> tuple[list[dict], ClearReport]:
    """Return (new messages, report) after one ``clear_tool_uses_20250919`` edit; the input is never changed.

    `edit` is the edit as the request carries it (built by
    `ctx_reference.api_requests.clear_tool_uses_edit`); None means every default. `system` and
    `tools` are the request's: an ``input_tokens`` trigger counts them too.

    Five 3,000-token grep results, trigger 10,000 input tokens, keep 3: the two oldest are
    cleared, each freeing 3,000 − 8 (the placeholder: 7 characters + 2 brackets) = 2,992 tokens.

    >>> msgs = []
    >>> for i in range(5):
    ...     use = {"type": "tool_use", "id": f"t{i}", "name": "grep", "input": {}}
    ...     result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 12_000}
    ...     msgs += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    >>> edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 10_000},
    ...         "keep": {"type": "tool_uses", "value": 3}}
    >>> new, report = clear_tool_uses(msgs, edit)
    >>> report.cleared, report.freed
    (('t0', 't1'), 5984)

    Used by notebook 06.
    """
    checked = check_messages(messages)
    edit = _edit({"type": "clear_tool_uses_20250919"} if edit is None else edit, "clear_tool_uses_20250919",
                 {"trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"})
    trigger = _amount(edit, "trigger", ("input_tokens", "tool_uses"),
                      {"type": "input_tokens", "value": DEFAULT_TRIGGER})
    keep_amount = _amount(edit, "keep", ("tool_uses",), {"type": "tool_uses", "value": DEFAULT_KEEP})
    at_least_amount = _amount(edit, "clear_at_least", ("input_tokens",), None)
    assert trigger is not None and keep_amount is not None  # both have defaults
    keep = keep_amount["value"]
    clear_at_least = at_least_amount["value"] if at_least_amount else 0
    excluded = set(_names(edit.get("exclude_tools") or [], "exclude_tools"))
    inputs = edit.get("clear_tool_inputs") or False
    if not isinstance(inputs, bool):
        inputs = set(_names(inputs, "clear_tool_inputs"))

    before = input_tokens(checked, system=system, tools=tools)
    unchanged = ClearReport(before, before, (), 0)
    uses = tool_uses(checked)
    measured = before if trigger["type"] == "input_tokens" else len(uses)
    if measured <= trigger["value"]:
        return copy.deepcopy(checked), unchanged
    protected = {use_id for use_id, _ in uses[len(uses) - keep:]} if keep else set()
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
            elif (block["type"] == "tool_use" and block["id"] in targets
                  and (inputs is True or (isinstance(inputs, set) and block["name"] in inputs))):
                block["input"] = {}
    after = input_tokens(new, system=system, tools=tools)
    if before - after < clear_at_least:
        return copy.deepcopy(checked), unchanged
    return new, ClearReport(before, after, tuple(eligible), before - after)


def clear_thinking(messages: Sequence[dict], edit: dict | None = None) -> tuple[list[dict], int]:
    """Return (new messages, thinking blocks removed) after one ``clear_thinking_20251015`` edit.

    Thinking stays in the newest ``keep`` assistant messages only (default 1); ``"all"`` keeps it all.

    >>> turn = {"role": "assistant", "content": [
    ...     {"type": "thinking", "thinking": "想一想", "signature": "sig"}, {"type": "text", "text": "好"}]}
    >>> new, removed = clear_thinking([turn, turn, turn], {"type": "clear_thinking_20251015",
    ...                                                    "keep": {"type": "thinking_turns", "value": 1}})
    >>> removed, [len(m["content"]) for m in new]
    (2, [1, 1, 2])

    Used by notebook 06.
    """
    checked = check_messages(messages)
    edit = _edit({"type": "clear_thinking_20251015"} if edit is None else edit, "clear_thinking_20251015", {"keep"})
    keep_value: Any = edit.get("keep", {"type": "thinking_turns", "value": DEFAULT_THINKING_KEEP})
    if keep_value == "all" or keep_value == {"type": "all"}:
        return copy.deepcopy(checked), 0
    keep = _amount({"keep": keep_value}, "keep", ("thinking_turns",), None)
    assert keep is not None
    require_int(keep["value"], "keep", minimum=1)  # the context-editing page: "N must be > 0"
    assistant = [i for i, m in enumerate(checked) if m["role"] == "assistant"]
    kept = set(assistant[len(assistant) - keep["value"]:])
    new, removed = [], 0
    for i, message in enumerate(checked):
        message = copy.deepcopy(message)
        if message["role"] == "assistant" and i not in kept:
            blocks = [b for b in message["content"] if b["type"] != "thinking"]
            removed += len(message["content"]) - len(blocks)
            message["content"] = blocks
        new.append(message)
    return new, removed


def apply_context_management(request: dict) -> tuple[list[dict], list[ClearReport | int]]:
    """Return (messages the model would see, one report per edit) for a request with ``context_management``.

    The edits run in the request's order on its messages, counted with its system and tools: a
    ``clear_thinking_20251015`` edit reports the thinking blocks removed, a
    ``clear_tool_uses_20250919`` edit its `ClearReport`. The request is never changed.

    >>> request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...            "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}
    >>> apply_context_management(request)[1]
    [ClearReport(before=2, after=2, cleared=(), freed=0)]

    Used by notebook 06.
    """
    if not isinstance(request, dict) or not isinstance(request.get("context_management"), dict):
        raise ValueError(f"request must be a dict with a context_management object (got {request!r})")
    edits = request["context_management"].get("edits", [])
    messages = check_messages(request.get("messages"))
    system, tools = request.get("system"), request.get("tools", ())
    reports: list[ClearReport | int] = []
    for edit in edits:
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind == "clear_thinking_20251015":
            messages, removed = clear_thinking(messages, edit)
            reports.append(removed)
        elif kind == "clear_tool_uses_20250919":
            messages, report = clear_tool_uses(messages, edit, system=system, tools=tools)
            reports.append(report)
        else:
            raise ValueError(f"edit type must be clear_thinking_20251015 or clear_tool_uses_20250919 here "
                             f"(compaction is written by the model and not replayed) (got {edit!r})")
    return messages, reports
