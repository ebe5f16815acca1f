"""Request bodies for the providers' context-management features, in the shapes their official SDKs accept.

What the model covers: building -- as plain dicts, the keyword arguments of one SDK call -- every
request notebook 06 shows:

- Anthropic (``client.beta.messages.create(**request)``; ``betas`` becomes the ``anthropic-beta``
  header): context editing with ``clear_thinking_20251015`` and ``clear_tool_uses_20250919``
  (`clear_thinking_edit`, `clear_tool_uses_edit`), threshold compaction ``compact_20260112``
  (`compact_edit`), all carried in ``context_management.edits`` (`anthropic_request`);
  on-demand compaction, a top-level ``compaction`` (`anthropic_compaction_request`), and the
  request after it, which sends the returned block first (`anthropic_after_compaction`); the
  memory tool (`memory_tool`).
- OpenAI: a Responses request with server-side compaction in ``context_management``
  (``client.responses.create``, `openai_request`) and an explicit compaction
  (``client.responses.compact``, `openai_compact_request`), over real input items
  (`openai_message`, `openai_compaction_item`). Neither call takes a beta header.

Beta headers are data, not code: `HEADER_RULES` pairs each feature a request body can contain
with the header it needs (or none) and the documentation page that says so; `request_features`
lists what a body contains and `required_betas` computes its ``betas`` from that. The two
Anthropic compactions differ in what the client sends back, and so in their headers:

- threshold (``compact_20260112``): the client appends the whole response -- the ``compaction``
  block and the answer after it -- to ``messages`` as usual and keeps sending the edit; the API
  drops what came before the block. The threshold page's blocks carry no ``signature``.
- on demand (``compaction``): the response holds only a signed block; the client sends it first,
  in place of the messages it summarised, on every later request, each with the on-demand header.

The rules the APIs enforce beyond the types are checked here, each with a ValueError naming the
argument: ``clear_thinking_20251015`` comes first among the edits and needs extended thinking
(``thinking`` with ``budget_tokens`` >= 1,024 and below ``max_tokens``); a ``compact_20260112``
trigger is at least 50,000 input tokens; a ``compaction`` request cannot also carry
``context_management``; a signed block comes first, alone, and never with a ``compact_20260112``
edit.

What it leaves out: sending anything (no client, no network), responses, streaming, and every
parameter the notebook does not use. `tests/test_api_requests.py` validates what these functions
return against the installed ``anthropic`` and ``openai`` SDK types and tests each header rule;
the providers' documentation stays the authority on behaviour.

Vocabulary: an edit is one entry of ``context_management.edits``; an amount is ``{"type": unit,
"value": N}``, the form every trigger, keep and minimum takes in Anthropic's API; a feature is one
thing a request body contains that a header rule is about (an edit type, a tool type, the
``compaction`` parameter, a compaction block in ``messages``).

Used by notebook 06 (strategies), section "真实 API 里的清理、压缩和记忆".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctx_reference._validate import require_int, require_str
from ctx_reference.context_editing import DEFAULT_KEEP, DEFAULT_THINKING_KEEP, DEFAULT_TRIGGER, check_messages

from .i18n import _

__all__ = [
    "CONTEXT_EDITING_DOC",
    "HEADER_RULES",
    "MEMORY_TOOL_DOC",
    "ON_DEMAND_COMPACTION_DOC",
    "THRESHOLD_COMPACTION_DOC",
    "HeaderRule",
    "CONTEXT_MANAGEMENT_BETA",
    "THRESHOLD_COMPACTION_BETA",
    "ON_DEMAND_COMPACTION_BETA",
    "DEFAULT_COMPACT_TRIGGER",
    "MIN_COMPACT_TRIGGER",
    "MIN_THINKING_BUDGET",
    "amount",
    "anthropic_after_compaction",
    "anthropic_compaction_request",
    "anthropic_request",
    "clear_thinking_edit",
    "clear_tool_uses_edit",
    "compact_edit",
    "format_call",
    "memory_tool",
    "openai_compact_request",
    "openai_compaction_item",
    "openai_message",
    "openai_request",
    "request_features",
    "required_betas",
]

#: Beta header of context editing (both clearing edits).
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
#: Beta header of threshold compaction, the ``compact_20260112`` edit.
THRESHOLD_COMPACTION_BETA = "compact-2026-01-12"
#: Beta header of on-demand compaction: the ``compaction`` request and every request carrying its signed block.
ON_DEMAND_COMPACTION_BETA = "compact-2026-09-04"
#: Input tokens at which ``compact_20260112`` compacts when no trigger is given (documented default).
DEFAULT_COMPACT_TRIGGER = 150_000
#: Smallest ``compact_20260112`` trigger the API accepts, in input tokens (documented minimum).
MIN_COMPACT_TRIGGER = 50_000
#: Smallest ``budget_tokens`` extended thinking accepts, in tokens.
MIN_THINKING_BUDGET = 1_024

_DOCS = "https://platform.claude.com/docs/en"
CONTEXT_EDITING_DOC = f"{_DOCS}/build-with-claude/context-editing"
THRESHOLD_COMPACTION_DOC = f"{_DOCS}/build-with-claude/compaction-threshold"
ON_DEMAND_COMPACTION_DOC = f"{_DOCS}/build-with-claude/compaction-on-demand"
MEMORY_TOOL_DOC = f"{_DOCS}/agents-and-tools/tool-use/memory-tool"


@dataclass(frozen=True)
class HeaderRule:
    """A request body that contains `feature` sends the beta header `beta` (None: it needs none), per `source`."""

    feature: str
    beta: str | None
    source: str


#: Every documented header rule of the Anthropic requests notebook 06 shows, in the order ``betas`` lists them.
#: Features: an edit type, the ``compaction`` parameter, a compaction block in ``messages`` (signed: on demand;
#: unsigned: threshold), a tool type.
HEADER_RULES = (
    HeaderRule("clear_thinking_20251015", CONTEXT_MANAGEMENT_BETA, CONTEXT_EDITING_DOC),
    HeaderRule("clear_tool_uses_20250919", CONTEXT_MANAGEMENT_BETA, CONTEXT_EDITING_DOC),
    HeaderRule("compact_20260112", THRESHOLD_COMPACTION_BETA, THRESHOLD_COMPACTION_DOC),
    HeaderRule("threshold_compaction_block", THRESHOLD_COMPACTION_BETA, THRESHOLD_COMPACTION_DOC),
    HeaderRule("compaction", ON_DEMAND_COMPACTION_BETA, ON_DEMAND_COMPACTION_DOC),
    HeaderRule("signed_compaction_block", ON_DEMAND_COMPACTION_BETA, ON_DEMAND_COMPACTION_DOC),
    HeaderRule("memory_20250818", None, MEMORY_TOOL_DOC),
)

_UNITS = ("input_tokens", "tool_uses", "thinking_turns")


def amount(unit: str, value: int) -> dict:
    """Return the ``{"type": unit, "value": value}`` object of a trigger, keep or minimum.

    >>> amount("input_tokens", 100_000)
    {'type': 'input_tokens', 'value': 100000}
    """
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {', '.join(_UNITS)} (got {unit!r})")
    return {"type": unit, "value": require_int(value, "value", minimum=0)}


def _tool_names(value: object, name: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} must be a list of tool names (got {value!r})")
    return list(value)


def clear_tool_uses_edit(
    *,
    trigger: int = DEFAULT_TRIGGER,
    trigger_unit: str = "input_tokens",
    keep: int = DEFAULT_KEEP,
    clear_at_least: int | None = None,
    exclude_tools: Sequence[str] = (),
    clear_tool_inputs: bool | Sequence[str] = False,
) -> dict:
    """Return a ``clear_tool_uses_20250919`` edit: clear old tool results once the input is over `trigger`.

    `trigger_unit` is ``"input_tokens"`` (the whole input) or ``"tool_uses"``; `keep` counts tool
    uses; `clear_at_least` is in input tokens; `clear_tool_inputs` is a bool or the names of the
    tools whose inputs are cleared too.

    >>> clear_tool_uses_edit(clear_at_least=20_000)["clear_at_least"]
    {'type': 'input_tokens', 'value': 20000}

    Used by notebook 06.
    """
    if trigger_unit not in ("input_tokens", "tool_uses"):
        raise ValueError(f"trigger_unit must be 'input_tokens' or 'tool_uses' (got {trigger_unit!r})")
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": amount(trigger_unit, require_int(trigger, "trigger", minimum=0)),
        "keep": amount("tool_uses", require_int(keep, "keep", minimum=0)),
    }
    if clear_at_least is not None:
        edit["clear_at_least"] = amount("input_tokens", require_int(clear_at_least, "clear_at_least", minimum=0))
    if exclude_tools:
        edit["exclude_tools"] = _tool_names(exclude_tools, "exclude_tools")
    edit["clear_tool_inputs"] = (clear_tool_inputs if isinstance(clear_tool_inputs, bool)
                                 else _tool_names(clear_tool_inputs, "clear_tool_inputs"))
    return edit


def clear_thinking_edit(keep: int | str = DEFAULT_THINKING_KEEP) -> dict:
    """Return a ``clear_thinking_20251015`` edit: keep the thinking of the newest `keep` turns, or ``"all"``.

    >>> clear_thinking_edit()
    {'type': 'clear_thinking_20251015', 'keep': {'type': 'thinking_turns', 'value': 1}}
    >>> clear_thinking_edit("all")["keep"]
    'all'

    Used by notebook 06.
    """
    if keep == "all":
        return {"type": "clear_thinking_20251015", "keep": "all"}
    if isinstance(keep, str):
        raise ValueError(f"keep must be an int >= 0 or 'all' (got {keep!r})")
    return {"type": "clear_thinking_20251015", "keep": amount("thinking_turns", require_int(keep, "keep", minimum=0))}


def compact_edit(
    *, trigger: int = DEFAULT_COMPACT_TRIGGER, pause_after_compaction: bool = False, instructions: str | None = None,
) -> dict:
    """Return a ``compact_20260112`` edit: the server compacts older context once the input reaches `trigger` tokens.

    `trigger` is at least `MIN_COMPACT_TRIGGER` (50,000); `instructions` replace the default
    summarisation prompt. Unless `pause_after_compaction`, the response goes on after the block.

    >>> compact_edit()
    {'type': 'compact_20260112', 'trigger': {'type': 'input_tokens', 'value': 150000}, 'pause_after_compaction': False}

    Used by notebook 06.
    """
    if not isinstance(pause_after_compaction, bool):
        raise ValueError(f"pause_after_compaction must be a bool (got {pause_after_compaction!r})")
    edit: dict[str, Any] = {"type": "compact_20260112",
                            "trigger": amount("input_tokens",
                                              require_int(trigger, "trigger", minimum=MIN_COMPACT_TRIGGER)),
                            "pause_after_compaction": pause_after_compaction}
    if instructions is not None:
        edit["instructions"] = require_str(instructions, "instructions")
    return edit


def memory_tool() -> dict:
    """Return the memory tool's definition; the client carries out its commands (view, create, ...).

    The tool itself needs no beta header (`HEADER_RULES`); clearing edits sent with it bring their own.

    >>> memory_tool()
    {'type': 'memory_20250818', 'name': 'memory'}

    Used by notebook 06.
    """
    return {"type": "memory_20250818", "name": "memory"}


def _compaction_blocks(messages: Sequence[dict]) -> list[tuple[int, int, bool]]:
    """(message index, block index, signed) of every ``compaction`` block in `messages`."""
    found = []
    for m, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for b, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "compaction":
                    found.append((m, b, bool(block.get("signature"))))
    return found


def request_features(request: dict) -> tuple[str, ...]:
    """Return the features of an Anthropic request body that `HEADER_RULES` speaks of, in order of appearance.

    >>> block = {"type": "compaction", "content": "摘要", "signature": "sig"}
    >>> request_features({"messages": [{"role": "assistant", "content": [block]}],
    ...                   "tools": [memory_tool()],
    ...                   "context_management": {"edits": [clear_tool_uses_edit()]}})
    ('clear_tool_uses_20250919', 'memory_20250818', 'signed_compaction_block')
    """
    if not isinstance(request, dict):
        raise ValueError(f"request must be a dict (got {request!r})")
    features = [e.get("type") for e in (request.get("context_management") or {}).get("edits", [])
                if isinstance(e, dict)]
    if "compaction" in request:
        features.append("compaction")
    features += [t.get("type") for t in request.get("tools", []) if isinstance(t, dict) and "type" in t]
    features += ["signed_compaction_block" if signed else "threshold_compaction_block"
                 for _, _, signed in _compaction_blocks(request.get("messages", []))]
    return tuple(dict.fromkeys(f for f in features if isinstance(f, str)))


def required_betas(request: dict) -> list[str]:
    """Return the beta headers a request body needs, by `HEADER_RULES`, each once, in the rules' order.

    A follow-up that carries the signed block of an on-demand compaction needs the on-demand header;
    a plain request needs none:

    >>> block = {"type": "compaction", "content": "摘要", "signature": "sig"}
    >>> required_betas({"messages": [{"role": "assistant", "content": [block]}]})
    ['compact-2026-09-04']
    >>> required_betas({"messages": [{"role": "user", "content": "你好"}], "tools": [memory_tool()]})
    []

    Used by notebook 06.
    """
    features = set(request_features(request))
    betas: list[str] = []
    for rule in HEADER_RULES:
        if rule.feature in features and rule.beta is not None and rule.beta not in betas:
            betas.append(rule.beta)
    return betas


def _check_compaction_blocks(messages: Sequence[dict], kinds: Sequence[object]) -> None:
    """Refuse what the on-demand page rejects: a signed block that is not alone and first, or meets compact_20260112."""
    blocks = _compaction_blocks(messages)
    signed = [(m, b) for m, b, is_signed in blocks if is_signed]
    if not signed:
        return
    if "compact_20260112" in kinds:
        raise ValueError("edits must not hold compact_20260112 when messages carry a signed compaction block: "
                         f"threshold compaction cannot run on such a request (got the edits {list(kinds)!r})")
    if len(blocks) > 1:
        raise ValueError(f"messages must carry exactly one compaction block, the newest (got {len(blocks)})")
    if signed[0] != (0, 0):
        m, b = signed[0]
        raise ValueError("messages must start with the signed compaction block, in place of the messages it "
                         f"summarises (got it at message {m}, block {b})")


def _with_betas(request: dict[str, Any]) -> dict[str, Any]:
    """The request with ``betas`` (when it needs any) right after ``model`` and ``max_tokens``."""
    head = {"model": request.pop("model"), "max_tokens": request.pop("max_tokens")}
    betas = required_betas(request)
    return head | ({"betas": betas} if betas else {}) | request


def _base(messages: object, model: str, max_tokens: int, system: object, tools: Sequence[dict]) -> dict[str, Any]:
    request: dict[str, Any] = {"model": require_str(model, "model"),
                               "max_tokens": require_int(max_tokens, "max_tokens", minimum=1)}
    if system is not None:
        if not isinstance(system, (str, list)):
            raise ValueError(f"system must be a str or a list of text blocks (got {system!r})")
        request["system"] = system
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        raise ValueError(f"tools must be a list of tool definitions (got {tools!r})")
    if tools:
        request["tools"] = list(tools)
    request["messages"] = check_messages(messages)
    return request


def anthropic_request(
    messages: Sequence[dict],
    *,
    model: str,
    max_tokens: int,
    edits: Sequence[dict] = (),
    system: object = None,
    tools: Sequence[dict] = (),
    thinking_budget: int | None = None,
) -> dict:
    """Return the keyword arguments of ``client.beta.messages.create`` for a request with these `edits`.

    ``betas`` lists the beta headers the body needs (`required_betas`: the edits, and a compaction
    block in `messages`) and is left out when it needs none. A ``clear_thinking_20251015`` edit
    must come first and needs `thinking_budget` (extended thinking, >= 1,024 and < `max_tokens`).
    A signed compaction block must open `messages`, alone, without a ``compact_20260112`` edit.

    >>> r = anthropic_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                       model="claude-sonnet-5", max_tokens=8_000, edits=[clear_tool_uses_edit()])
    >>> r["betas"], r["context_management"]["edits"][0]["keep"]
    (['context-management-2025-06-27'], {'type': 'tool_uses', 'value': 3})

    Used by notebook 06.
    """
    request = _base(messages, model, max_tokens, system, tools)
    if isinstance(edits, (str, bytes, dict)) or not isinstance(edits, Sequence):
        raise ValueError(f"edits must be a list of edits (got {edits!r})")
    kinds = [e.get("type") if isinstance(e, dict) else None for e in edits]
    known = ("clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112")
    for edit, kind in zip(edits, kinds, strict=True):
        if kind not in known:
            raise ValueError(f"edits must hold edits of type {', '.join(known)} (got {edit!r})")
    if "clear_thinking_20251015" in kinds[1:]:
        raise ValueError(f"edits must list clear_thinking_20251015 first (got the order {kinds!r})")
    if thinking_budget is not None:
        require_int(thinking_budget, "thinking_budget", minimum=MIN_THINKING_BUDGET)
        if thinking_budget >= max_tokens:
            raise ValueError(f"thinking_budget must be below max_tokens={max_tokens} (got {thinking_budget!r})")
        request["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    elif "clear_thinking_20251015" in kinds:
        raise ValueError("thinking_budget must be given with clear_thinking_20251015, which acts only "
                         "with extended thinking on (got None)")
    if edits:
        request["context_management"] = {"edits": list(edits)}
    _check_compaction_blocks(request["messages"], kinds)
    return _with_betas(request)


def anthropic_compaction_request(
    messages: Sequence[dict], *, model: str, max_tokens: int, instructions: str | None = None,
    system: object = None, tools: Sequence[dict] = (),
) -> dict:
    """Return the keyword arguments of an on-demand compaction: the response is one signed ``compaction`` block.

    The API summarises every message sent and generates nothing after the block; `instructions`
    replace its default summarisation prompt. A conversation that already starts with a block can be
    compacted again.

    >>> anthropic_compaction_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                              model="claude-sonnet-5", max_tokens=8_000)["compaction"]
    {'type': 'summarize'}

    Used by notebook 06.
    """
    request = _base(messages, model, max_tokens, system, tools)
    last = request["messages"][-1] if request["messages"] else None
    if last is not None and last.get("role") == "assistant" and isinstance(last.get("content"), list) and any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in last["content"]):
        raise ValueError("messages must not end in an assistant turn whose tool call has no result yet: "
                         f"send its tool results first, then compact (got {last!r})")
    compaction: dict[str, Any] = {"type": "summarize"}
    if instructions is not None:
        compaction["instructions"] = require_str(instructions, "instructions")
    request["compaction"] = compaction
    _check_compaction_blocks(request["messages"], ())
    return _with_betas(request)


def anthropic_after_compaction(block: dict, newer_messages: Sequence[dict]) -> list[dict]:
    """Return the next request's messages: the signed compaction `block`, unchanged, first, then the messages after it.

    The summarised messages are left out; `newer_messages` are those taken after the compaction
    request was sent (or a tail kept word for word), then the new turn.

    >>> block = {"type": "compaction", "content": "摘要", "signature": "sig"}
    >>> anthropic_after_compaction(block, [{"role": "user", "content": [{"type": "text", "text": "继续"}]}])[0]
    {'role': 'assistant', 'content': [{'type': 'compaction', 'content': '摘要', 'signature': 'sig'}]}

    Used by notebook 06.
    """
    if not isinstance(block, dict) or block.get("type") != "compaction" or not isinstance(
            block.get("signature"), str) or not block["signature"]:
        raise ValueError(f"block must be a signed compaction block as the response returned it (got {block!r})")
    return [{"role": "assistant", "content": [dict(block)]}, *check_messages(newer_messages)]


def openai_message(role: str, text: str) -> dict:
    """Return a Responses input message item.

    >>> openai_message("user", "继续排查")
    {'type': 'message', 'role': 'user', 'content': '继续排查'}
    """
    if role not in ("user", "assistant", "system", "developer"):
        raise ValueError(f"role must be user, assistant, system or developer (got {role!r})")
    return {"type": "message", "role": role, "content": require_str(text, "text")}


def openai_compaction_item(encrypted_content: str) -> dict:
    """Return the compaction item a response carried, to be sent back unchanged (its content is encrypted).

    >>> openai_compaction_item("gAAAA...")
    {'type': 'compaction', 'encrypted_content': 'gAAAA...'}
    """
    return {"type": "compaction", "encrypted_content": require_str(encrypted_content, "encrypted_content")}


def _items(items: object) -> list[dict]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not all(
            isinstance(i, dict) and "type" in i for i in items):
        raise ValueError(f"input must be a list of input items with a 'type' (got {items!r})")
    return list(items)


def openai_request(input_items: Sequence[dict], *, model: str, compact_threshold: int | None = None) -> dict:
    """Return the keyword arguments of ``client.responses.create``; with `compact_threshold`, the server compacts.

    >>> r = openai_request([openai_message("user", "你好")], model="gpt-5.5", compact_threshold=200_000)
    >>> r["context_management"]
    [{'type': 'compaction', 'compact_threshold': 200000}]

    Used by notebook 06.
    """
    request: dict[str, Any] = {"model": require_str(model, "model"), "input": _items(input_items)}
    if compact_threshold is not None:
        request["context_management"] = [
            {"type": "compaction", "compact_threshold": require_int(compact_threshold, "compact_threshold", minimum=1)}]
    return request


def openai_compact_request(input_items: Sequence[dict], *, model: str) -> dict:
    """Return the keyword arguments of ``client.responses.compact`` (``POST /responses/compact``); `model` is required.

    >>> openai_compact_request([openai_message("user", "你好")], model="gpt-5.5")["model"]
    'gpt-5.5'

    Used by notebook 06.
    """
    return {"model": require_str(model, "model"), "input": _items(input_items)}


def _shorten(value: object, limit: int) -> object:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit // 2] + _("……（共 {count:,} 个字符）").format(count=len(value))
    if isinstance(value, dict):
        return {k: _shorten(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v, limit) for v in value]
    return value


def format_call(call: str, request: dict, *, limit: int = 60) -> str:
    """Return ``# client.<call>(**request)`` and the request as indented JSON, long strings shortened.

    Strings over `limit` characters keep their first half of `limit` and say how long they are.

    >>> print(format_call("responses.compact", {"model": "gpt-5.5", "input": []}))
    # client.responses.compact(**request)
    {
      "model": "gpt-5.5",
      "input": []
    }

    Used by notebook 06.
    """
    require_str(call, "call")
    require_int(limit, "limit", minimum=1)
    if not isinstance(request, dict):
        raise ValueError(f"request must be a dict (got {request!r})")
    body = json.dumps(_shorten(request, limit), ensure_ascii=False, indent=2)
    return f"# client.{call}(**request)\n{body}"
