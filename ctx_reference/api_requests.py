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

The rules the APIs enforce beyond the types are data too: `REQUEST_RULES` holds each with the
official page it comes from and the sentence it rests on, and `check_request` enforces them on a
body, raising one ValueError that names the field and echoes its value. Every builder here ends
with it, so none returns a body the API is documented to refuse: tool blocks need ``tools``; the
thinking type must be one the model accepts (`thinking_forms`: ``budget_tokens`` up to Claude 4.6,
adaptive from Claude 4.6 on, budget refused from Claude 4.7; thinking off is ``disabled``, or
``between_tools`` on Sonnet 5.5, and impossible on Fable 5, Mythos 5 and Opus 5.5: `thinking_off`);
the assistant turn of an open tool loop keeps its thinking blocks (checked where the budget form
makes every turn think); a budget is >= 1,024 and below ``max_tokens``;
``clear_thinking_20251015`` comes first among the edits, needs thinking on
(either form) and keeps at least one turn; a ``compact_20260112`` trigger is at least 50,000 input
tokens; a ``compaction`` request carries no ``context_management``, does not end in an unanswered
tool call, and carries the conversation's own ``system`` and ``tools`` (`compaction_request_for`);
a signed block comes first, alone, unchanged, and never with a ``compact_20260112`` edit.

What it leaves out: sending anything (no client, no network), responses, streaming, and every
parameter the notebook does not use. `tests/test_api_requests.py` validates what these functions
return against the installed ``anthropic`` and ``openai`` SDK types and tests each header rule and
each request rule; the providers' documentation stays the authority on behaviour, and
``docs/api-sources.md`` quotes it for every fact here, under the ids of `API_FACTS`.

Vocabulary: a thinking form is the ``type`` of ``thinking``, one of four (`THINKING_TYPES`):
``"enabled"`` (with ``budget_tokens``: the budget form), ``"adaptive"`` (the model decides how much
to think), ``"disabled"`` (off) and ``"between_tools"`` (Sonnet 5.5's off: no up-front thinking,
only short notes between tool calls, which come back as thinking blocks); an open tool loop is a
conversation whose last message holds the tool results of the assistant turn before it; an edit is one entry of
``context_management.edits``; an amount is ``{"type": unit, "value": N}``, the form every trigger,
keep and minimum takes in Anthropic's API; a feature is one thing a request body contains that a
header rule is about (an edit type, a tool type, the ``compaction`` parameter, a compaction block
in ``messages``); a rule is one entry of `REQUEST_RULES`.

Used by notebook 06 (strategies), section "真实 API 里的清理、压缩和记忆".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctx_reference._validate import require_int, require_str
from ctx_reference.context_editing import DEFAULT_KEEP, DEFAULT_THINKING_KEEP, DEFAULT_TRIGGER, check_messages
from ctx_reference.window import model_family

from .i18n import _
from .tables import format_table

__all__ = [
    "API_FACTS",
    "CONTEXT_EDITING_DOC",
    "HEADER_RULES",
    "REQUEST_RULES",
    "RequestRule",
    "check_request",
    "compaction_request_for",
    "format_differences",
    "thinking_forms",
    "thinking_off",
    "THINKING_TYPES",
    "THINKING_BY_FAMILY",
    "EDIT_TYPES",
    "BLOCK_TYPES",
    "OPENAI_MODELS",
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
#: First Claude generation that takes adaptive thinking (Claude 4.6: both forms, the budget one deprecated).
ADAPTIVE_THINKING_SINCE = (4, 6)
#: First Claude generation that refuses the budget form with a 400 (Claude 4.7 and later: adaptive only).
BUDGET_REFUSED_SINCE = (4, 7)
#: The context edits the builders make (``context_management.edits``), by their ``type``.
EDIT_TYPES = ("clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112")
#: The content blocks the builders and `check_request` read in ``messages``, by their ``type``.
BLOCK_TYPES = ("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "compaction")
#: The OpenAI model ids notebook 06 builds requests for.
OPENAI_MODELS = ("gpt-5.5",)
#: The four values of ``thinking.type`` in the SDK's ``BetaThinkingConfigParam``, in the order this module lists them.
THINKING_TYPES = ("adaptive", "enabled", "disabled", "between_tools")
#: The families whose thinking types are not those of their generation (`thinking_forms`), as their pages give them:
#: Sonnet 5.5 turns up-front thinking off with ``between_tools`` and refuses ``disabled``; Fable 5 and Mythos 5 (and
#: their point releases) and Opus 5.5 cannot turn thinking off; Mythos Preview takes both thinking forms and no off.
THINKING_BY_FAMILY: dict[str, tuple[str, ...]] = {
    "Sonnet 5.5": ("adaptive", "between_tools"),
    **{f"{name} 5{point}": ("adaptive",) for name in ("Fable", "Mythos") for point in ("", ".1", ".2")},
    "Opus 5.5": ("adaptive",),
    "Mythos Preview": ("adaptive", "enabled"),
}

_DOCS = "https://platform.claude.com/docs/en"
CONTEXT_EDITING_DOC = f"{_DOCS}/build-with-claude/context-editing"
THRESHOLD_COMPACTION_DOC = f"{_DOCS}/build-with-claude/compaction-threshold"
ON_DEMAND_COMPACTION_DOC = f"{_DOCS}/build-with-claude/compaction-on-demand"
MEMORY_TOOL_DOC = f"{_DOCS}/agents-and-tools/tool-use/memory-tool"
THINKING_TROUBLESHOOTING_DOC = f"{_DOCS}/build-with-claude/thinking-troubleshooting"
SONNET_5_MIGRATION_DOC = "https://platform.claude.com/docs/zh-CN/models/sonnet-5/migration-guide"
THINKING_TROUBLESHOOTING_ZH_DOC = "https://platform.claude.com/docs/zh-CN/build-with-claude/thinking-troubleshooting"
THINKING_TOOL_WORKFLOWS_DOC = "https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows"
MESSAGES_API_DOC = f"{_DOCS}/api/messages"


@dataclass(frozen=True)
class HeaderRule:
    """A request body that contains `feature` sends the beta header `beta` (None: it needs none), per `source`."""

    feature: str
    beta: str | None
    source: str

    @property
    def fact(self) -> str:
        """The stable id of this rule's entry in docs/api-sources.md."""
        return f"header.{self.feature}"


@dataclass(frozen=True)
class RequestRule:
    """A rule the API enforces on a request body beyond the SDK's types, with the page and the sentence it rests on.

    `id` is stable: `check_request` reports it, docs/api-sources.md has an entry under ``request.<id>``
    and tests/test_api_requests.py a test ``test_rule_<id with _ for ->``.
    """

    id: str
    rule: str
    page: str
    url: str
    sentence: str

    @property
    def fact(self) -> str:
        """The stable id of this rule's entry in docs/api-sources.md."""
        return f"request.{self.id}"


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

#: The documented 400 rules of the requests notebook 06 shows that the SDK's types cannot express.
#: Each quotes its page as read for docs/api-sources.md; `check_request` enforces every one.
REQUEST_RULES = (
    RequestRule(
        "tool-blocks-need-tools",
        "messages that carry tool_use or tool_result blocks need a non-empty tools list",
        "Messages API: the 400 invalid_request_error it returns", MESSAGES_API_DOC,
        "Requests which include `tool_use` or `tool_result` blocks must define tools."),
    RequestRule(
        "thinking-form",
        "the thinking form must be one the model's generation accepts: budget_tokens up to Claude 4.6, "
        "adaptive from Claude 4.6 on; Claude 4.7 and later refuse the budget form",
        "Troubleshooting thinking", THINKING_TROUBLESHOOTING_DOC,
        "Claude Opus 4.7, Claude Opus 4.8, Claude Sonnet 5, Claude Fable 5, and Claude Mythos 5 do not support it "
        "and reject requests that use it, returning a 400 error."),
    RequestRule(
        "thinking-off-by-model",
        "thinking is turned off the way the model takes it: disabled on most models, between_tools on Sonnet 5.5 "
        "(which refuses disabled); Fable 5, Mythos 5 and Opus 5.5 cannot turn it off",
        "思考功能故障排查 (Troubleshooting thinking, zh-CN)", THINKING_TROUBLESHOOTING_ZH_DOC,  # data: the page's title
        "只有 Claude Sonnet 5.5 接受 `\"between_tools\"`，并且它用该值代替 `\"disabled\"`。"),  # data: its sentence
    RequestRule(
        "tool-loop-keeps-thinking",
        "the assistant turn of an open tool loop (its tool results are the last message) keeps its thinking blocks; "
        "with the budget form every turn thinks, so such a turn without one has lost it",
        "Thinking with tools", THINKING_TOOL_WORKFLOWS_DOC,
        "Pass thinking blocks back complete and unmodified: when you return a tool result, the thinking blocks from "
        "the assistant message must come back with it"),
    RequestRule(
        "thinking-budget-range",
        "budget_tokens is at least 1,024 and below max_tokens",
        "Messages API reference: thinking", MESSAGES_API_DOC,
        "With `{\"type\": \"enabled\"}` (manual extended thinking), you set a `budget_tokens` of at least 1,024. "
        "Thinking tokens count toward your `max_tokens` limit."),
    RequestRule(
        "clear-thinking-first",
        "clear_thinking_20251015 is the first of the edits",
        "Context editing", CONTEXT_EDITING_DOC,
        "When using multiple strategies, the `clear_thinking_20251015` strategy must be listed first in the "
        "`edits` array."),
    RequestRule(
        "clear-thinking-needs-thinking",
        "clear_thinking_20251015 is sent with thinking on (either form)",
        "Context editing", CONTEXT_EDITING_DOC,
        "The `clear_thinking_20251015` strategy manages `thinking` blocks in conversations when extended "
        "thinking is enabled."),
    RequestRule(
        "thinking-keep-positive",
        "clear_thinking_20251015 keeps at least one thinking turn, or \"all\"",
        "Context editing", CONTEXT_EDITING_DOC,
        "`keep` `{type: \"thinking_turns\", value: 1}` ... N must be > 0 ... or `\"all\"`"),
    RequestRule(
        "compact-trigger-minimum",
        "a compact_20260112 trigger is at least 50,000 input tokens",
        "Compaction at a token threshold", THRESHOLD_COMPACTION_DOC,
        "`value` must be at least 50,000 tokens"),
    RequestRule(
        "compaction-without-context-management",
        "a compaction request carries no context_management",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "You can't combine `compaction` with `context_management` on one request."),
    RequestRule(
        "compaction-no-open-tool-call",
        "a compaction request does not end in an assistant turn whose tool call has no result yet",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "If the last `assistant` turn ends in a tool call with no result yet, the API rejects the request"),
    RequestRule(
        "compaction-same-system-and-tools",
        "a compaction request carries the conversation's own system and tools",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "Send the same `system` prompt and `tools` that you use for the rest of the conversation."),
    RequestRule(
        "signed-block-first",
        "a signed compaction block opens messages, in place of the messages it summarises",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "If any remain in front of the block, the request returns a 400 error (`compaction_block_misplaced`)"),
    RequestRule(
        "one-compaction-block",
        "a request carries exactly one compaction block, the newest",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "Send exactly one `compaction` block per request"),
    RequestRule(
        "no-threshold-with-signed-block",
        "a request carrying a signed block has no compact_20260112 edit",
        "Compaction on demand", ON_DEMAND_COMPACTION_DOC,
        "Threshold compaction (`compact_20260112`) can't run on a request that carries a signed block."),
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
        raise ValueError(f"keep must be an int >= 1 or 'all' (got {keep!r})")
    # REQUEST_RULES thinking-keep-positive: "N must be > 0"
    return {"type": "clear_thinking_20251015", "keep": amount("thinking_turns", require_int(keep, "keep", minimum=1))}


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


def _generation(family: str) -> tuple[int, int]:
    """(major, minor) of a family name: "Sonnet 5" -> (5, 0), "Opus 4.7" -> (4, 7)."""
    major, _, minor = family.split(" ")[-1].partition(".")
    return int(major), int(minor or 0)


def thinking_forms(model: str) -> tuple[str, ...]:
    """Return the ``thinking.type`` values a Claude model accepts, in the order of `THINKING_TYPES` (REQUEST_RULES).

    By generation: Claude 4.5 and earlier take the budget form (``"enabled"``) and ``"disabled"``; Claude 4.6 takes
    both thinking forms (the budget one deprecated) and ``"disabled"``; Claude 4.7 and later refuse the budget form
    with a 400 and take ``"adaptive"`` and ``"disabled"``. The families of `THINKING_BY_FAMILY` differ: Sonnet 5.5
    takes ``"between_tools"`` instead of ``"disabled"``; Fable 5, Mythos 5 and Opus 5.5 only ``"adaptive"``.

    >>> thinking_forms("claude-sonnet-5"), thinking_forms("claude-sonnet-5-5"), thinking_forms("claude-fable-5")
    (('adaptive', 'disabled'), ('adaptive', 'between_tools'), ('adaptive',))
    >>> thinking_forms("claude-sonnet-4-6"), thinking_forms("claude-haiku-4-5")
    (('adaptive', 'enabled', 'disabled'), ('enabled', 'disabled'))

    Used by notebook 06.
    """
    family = model_family(model)
    if family in THINKING_BY_FAMILY:
        return THINKING_BY_FAMILY[family]
    generation = _generation(family)
    if generation >= BUDGET_REFUSED_SINCE:
        return ("adaptive", "disabled")
    if generation >= ADAPTIVE_THINKING_SINCE:
        return ("adaptive", "enabled", "disabled")
    return ("enabled", "disabled")


def thinking_off(model: str) -> str | None:
    """Return the ``thinking.type`` that turns a model's thinking off, or None when it cannot be turned off.

    >>> thinking_off("claude-sonnet-5"), thinking_off("claude-sonnet-5-5"), thinking_off("claude-fable-5")
    ('disabled', 'between_tools', None)

    Used by notebook 06.
    """
    forms = thinking_forms(model)
    return next((form for form in ("disabled", "between_tools") if form in forms), None)


def _blocks(messages: Sequence[dict]) -> list[dict]:
    return [b for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict)]


def _open_tool_call(messages: Sequence[dict]) -> bool:
    last = messages[-1] if messages else None
    return (isinstance(last, dict) and last.get("role") == "assistant" and isinstance(last.get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in last["content"]))


def _rule_errors(request: dict, conversation: dict | None) -> list[tuple[str, str]]:
    """(rule id, message) for every rule of REQUEST_RULES the Anthropic body breaks, in the table's order."""
    messages = request.get("messages", [])
    edits = (request.get("context_management") or {}).get("edits", [])
    kinds = [e.get("type") if isinstance(e, dict) else None for e in edits]
    thinking = request.get("thinking")
    errors: list[tuple[str, str]] = []
    tool_blocks = [b["type"] for b in _blocks(messages) if b.get("type") in ("tool_use", "tool_result")]
    if tool_blocks and not request.get("tools"):
        errors.append(("tool-blocks-need-tools",
                       "tools must define the conversation's tools when messages carry tool_use or tool_result "
                       f"blocks (got tools={request.get('tools')!r} with {len(tool_blocks)} such blocks)"))
    errors += _thinking_errors(request, thinking)
    errors += _edit_errors(edits, kinds, thinking)
    errors += _compaction_errors(request, conversation, messages, kinds)
    return errors


def _thinking_errors(request: dict, thinking: object) -> list[tuple[str, str]]:
    """The thinking rules of ``_rule_errors``: the type the model takes, the budget's range, the open tool loop."""
    errors: list[tuple[str, str]] = []
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind in THINKING_TYPES:
        model = request["model"]
        forms = thinking_forms(model)
        if kind not in forms:
            family = model_family(model)
            if kind in ("disabled", "between_tools"):
                off = thinking_off(model)
                how = (f"it turns thinking off with {off!r}" if off else "its thinking cannot be turned off")
                errors.append(("thinking-off-by-model",
                               f"thinking.type {kind!r} is refused by {family} (model={model!r}): {how} "
                               f"(got {thinking!r})"))
            else:
                want = "adaptive thinking" if "enabled" not in forms else "the budget form (budget_tokens)"
                errors.append(("thinking-form",
                               f"thinking must be {want} for {family} (model={model!r}): it takes "
                               f"{' or '.join(forms)} only (got {thinking!r})"))
        if kind == "enabled" and isinstance(thinking, dict):
            budget = thinking.get("budget_tokens")
            if isinstance(budget, bool) or not isinstance(budget, int) or not (
                    MIN_THINKING_BUDGET <= budget < request.get("max_tokens", 0)):
                errors.append(("thinking-budget-range",
                               f"thinking.budget_tokens must be >= {MIN_THINKING_BUDGET} and below "
                               f"max_tokens={request.get('max_tokens')!r} (got {budget!r})"))
            turn = _open_tool_loop_turn(request.get("messages", []))
            if turn is not None and not any(isinstance(b, dict) and b.get("type") in _THINKING_BLOCKS
                                            for b in turn["content"]):
                errors.append(("tool-loop-keeps-thinking",
                               "messages must keep the thinking block of the assistant turn whose tool results are "
                               f"the last message, unchanged (got a turn of {_block_types(turn)} only)"))
    return errors


_THINKING_BLOCKS = ("thinking", "redacted_thinking")


def _open_tool_loop_turn(messages: Sequence[dict]) -> dict | None:
    """The assistant turn whose tool calls the last message answers with tool results, or None."""
    if len(messages) < 2:
        return None
    turn, last = messages[-2], messages[-1]
    if not (isinstance(turn, dict) and isinstance(last, dict) and turn.get("role") == "assistant"
            and last.get("role") == "user" and isinstance(turn.get("content"), list)
            and isinstance(last.get("content"), list)):
        return None
    uses = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in turn["content"])
    results = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last["content"])
    return turn if uses and results else None


def _edit_errors(edits: Sequence, kinds: list, thinking: object) -> list[tuple[str, str]]:
    """The context-management rules of ``_rule_errors``: the edits' order and each edit's own limits."""
    errors: list[tuple[str, str]] = []
    if "clear_thinking_20251015" in kinds[1:]:
        errors.append(("clear-thinking-first",
                       f"edits must list clear_thinking_20251015 first (got the order {kinds!r})"))
    if "clear_thinking_20251015" in kinds and not (
            isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")):
        errors.append(("clear-thinking-needs-thinking",
                       "thinking must be on (a budget, or adaptive) with clear_thinking_20251015, which only "
                       f"manages thinking blocks (got thinking={thinking!r})"))
    for edit in edits:
        if isinstance(edit, dict) and edit.get("type") == "clear_thinking_20251015":
            keep = edit.get("keep", "all")
            if keep != "all" and not (isinstance(keep, dict) and isinstance(keep.get("value"), int)
                                      and keep["value"] >= 1):
                errors.append(("thinking-keep-positive",
                               f"clear_thinking_20251015 keep must keep >= 1 thinking turn or 'all' (got {keep!r})"))
        if isinstance(edit, dict) and edit.get("type") == "compact_20260112":
            value = (edit.get("trigger") or {}).get("value", DEFAULT_COMPACT_TRIGGER)
            if not isinstance(value, int) or value < MIN_COMPACT_TRIGGER:
                errors.append(("compact-trigger-minimum",
                               f"compact_20260112 trigger must be >= {MIN_COMPACT_TRIGGER} (got {value!r})"))
    return errors


def _compaction_errors(
    request: dict, conversation: dict | None, messages: Sequence[dict], kinds: list
) -> list[tuple[str, str]]:
    """The compaction rules of ``_rule_errors``: a compaction request's own, then the signed block's."""
    errors: list[tuple[str, str]] = []
    if "compaction" in request:
        if "context_management" in request:
            errors.append(("compaction-without-context-management",
                           "context_management must be left out of a compaction request "
                           f"(got {request['context_management']!r})"))
        if _open_tool_call(messages):
            errors.append(("compaction-no-open-tool-call",
                           "messages must not end in an assistant turn whose tool call has no result yet: send its "
                           f"tool results first, then compact (got {messages[-1]!r})"))
        if conversation is not None:
            for field in ("system", "tools"):
                if request.get(field) != conversation.get(field):
                    errors.append(("compaction-same-system-and-tools",
                                   f"{field} of the compaction request must be the conversation's "
                                   f"(got {request.get(field)!r}, the conversation sends {conversation.get(field)!r})"))
    blocks = _compaction_blocks(messages)
    signed = [(m, b) for m, b, is_signed in blocks if is_signed]
    if signed and signed[0] != (0, 0):
        m, b = signed[0]
        errors.append(("signed-block-first",
                       "messages must start with the signed compaction block, in place of the messages it "
                       f"summarises (got it at message {m}, block {b})"))
    if signed and len(blocks) > 1:
        errors.append(("one-compaction-block",
                       f"messages must carry exactly one compaction block, the newest (got {len(blocks)})"))
    if signed and "compact_20260112" in kinds:
        errors.append(("no-threshold-with-signed-block",
                       "edits must not hold compact_20260112 when messages carry a signed compaction block: "
                       f"threshold compaction cannot run on such a request (got the edits {kinds!r})"))
    return errors


def check_request(request: dict, *, conversation: dict | None = None) -> dict:
    """Return the Anthropic request body `request` if it breaks none of `REQUEST_RULES`; else raise ValueError.

    The error names the field and echoes its value, and says which rule (its id) it breaks. For a
    compaction request, `conversation` is the request the conversation sends otherwise: its
    ``system`` and ``tools`` must be the same.

    >>> check_request({"model": "claude-sonnet-5", "max_tokens": 8_000,
    ...                "thinking": {"type": "enabled", "budget_tokens": 4_000}, "messages": []})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: thinking must be adaptive thinking for Sonnet 5 (model='claude-sonnet-5'): ... [rule thinking-form]

    Used by every Anthropic builder here and by notebook 06's tests.
    """
    if not isinstance(request, dict) or not isinstance(request.get("model"), str):
        raise ValueError(f"request must be a dict with a model (got {request!r})")
    errors = _rule_errors(request, conversation)
    if errors:
        rule, message = errors[0]
        raise ValueError(f"{message} [rule {rule}]")
    return request


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


_THINKING_ARGUMENT = ("adaptive", "disabled", "between_tools")


def _thinking(model: str, max_tokens: int, thinking: str | None, thinking_budget: int | None,
              adaptive_thinking: bool) -> dict | None:
    """The ``thinking`` field the arguments ask for, checked against the model's forms (errors name the argument)."""
    if not isinstance(adaptive_thinking, bool):
        raise ValueError(f"adaptive_thinking must be a bool (got {adaptive_thinking!r})")
    if thinking is not None and thinking not in _THINKING_ARGUMENT:
        raise ValueError(f"thinking must be one of {', '.join(map(repr, _THINKING_ARGUMENT))}; the budget form is "
                         f"thinking_budget=N (got {thinking!r})")
    if adaptive_thinking:
        if thinking not in (None, "adaptive"):
            raise ValueError(f"thinking must be left out with adaptive_thinking=True (got {thinking!r})")
        thinking = "adaptive"
    if thinking_budget is not None:
        if thinking is not None:
            name = "adaptive_thinking=True" if adaptive_thinking else f"thinking={thinking!r}"
            raise ValueError(f"thinking_budget must be left out with {name} (got {thinking_budget!r})")
        return _budget_thinking(model, max_tokens, thinking_budget)
    if thinking is None:
        return None
    forms = thinking_forms(model)
    family = model_family(model)
    if thinking not in forms:
        if thinking == "adaptive":
            raise ValueError(f"adaptive_thinking is not taken by {family} (model={model!r}), which only takes the "
                             f"budget form: pass thinking_budget instead (got {thinking!r})")
        off = thinking_off(model)
        how = f"turn it off with thinking={off!r}" if off else "its thinking cannot be turned off"
        raise ValueError(f"thinking={thinking!r} is refused by {family} (model={model!r}), which takes "
                         f"{' or '.join(forms)}: {how} (got {thinking!r})")
    return {"type": thinking}


def _budget_thinking(model: str, max_tokens: int, thinking_budget: int) -> dict:
    require_int(thinking_budget, "thinking_budget", minimum=MIN_THINKING_BUDGET)
    if thinking_budget >= max_tokens:
        raise ValueError(f"thinking_budget must be below max_tokens={max_tokens} (got {thinking_budget!r})")
    if "enabled" not in thinking_forms(model):
        raise ValueError(f"thinking_budget is refused by {model_family(model)} (model={model!r}): Claude 4.7 and "
                         f"later take only adaptive thinking, so pass adaptive_thinking=True "
                         f"(got {thinking_budget!r})")
    return {"type": "enabled", "budget_tokens": thinking_budget}


def anthropic_request(
    messages: Sequence[dict],
    *,
    model: str,
    max_tokens: int,
    edits: Sequence[dict] = (),
    system: object = None,
    tools: Sequence[dict] = (),
    thinking: str | None = None,
    thinking_budget: int | None = None,
    adaptive_thinking: bool = False,
) -> dict:
    """Return the keyword arguments of ``client.beta.messages.create`` for a request with these `edits`.

    ``betas`` lists the beta headers the body needs (`required_betas`: the edits, and a compaction
    block in `messages`) and is left out when it needs none. `thinking` is the ``thinking.type`` to
    send: ``"adaptive"`` (also ``adaptive_thinking=True``), ``"disabled"`` or ``"between_tools"``;
    `thinking_budget` sends the budget form (Claude 4.6 and earlier, >= 1,024 and < `max_tokens`).
    Left out, the body has no ``thinking`` and the model does what it does by default (many current
    models think). `thinking_forms` says which types the `model` takes and `thinking_off` how it
    turns thinking off; a type it refuses raises, naming the argument. The body passes
    `check_request`: tool blocks in `messages` need `tools`, ``clear_thinking_20251015`` comes first
    and needs thinking on, a signed compaction block opens `messages`, alone, without
    ``compact_20260112``.

    >>> r = anthropic_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                       model="claude-sonnet-5", max_tokens=8_000, adaptive_thinking=True,
    ...                       edits=[clear_thinking_edit(), clear_tool_uses_edit()])
    >>> r["betas"], r["thinking"], r["context_management"]["edits"][1]["keep"]
    (['context-management-2025-06-27'], {'type': 'adaptive'}, {'type': 'tool_uses', 'value': 3})

    Used by notebook 06.
    """
    request = _base(messages, model, max_tokens, system, tools)
    if isinstance(edits, (str, bytes, dict)) or not isinstance(edits, Sequence):
        raise ValueError(f"edits must be a list of edits (got {edits!r})")
    kinds = [e.get("type") if isinstance(e, dict) else None for e in edits]
    for edit, kind in zip(edits, kinds, strict=True):
        if kind not in EDIT_TYPES:
            raise ValueError(f"edits must hold edits of type {', '.join(EDIT_TYPES)} (got {edit!r})")
    thinking_field = _thinking(request["model"], request["max_tokens"], thinking, thinking_budget, adaptive_thinking)
    if thinking_field is not None:
        request["thinking"] = thinking_field
    if edits:
        request["context_management"] = {"edits": list(edits)}
    return check_request(_with_betas(request))


def anthropic_compaction_request(
    messages: Sequence[dict], *, model: str, max_tokens: int, instructions: str | None = None,
    system: object = None, tools: Sequence[dict] = (),
) -> dict:
    """Return the keyword arguments of an on-demand compaction: the response is one signed ``compaction`` block.

    The API summarises every message sent and generates nothing after the block; `instructions`
    replace its default summarisation prompt. A conversation that already starts with a block can be
    compacted again. Send the conversation's own `system` and `tools`: `compaction_request_for`
    builds the request from the conversation's and checks that it does.

    >>> anthropic_compaction_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                              model="claude-sonnet-5", max_tokens=8_000)["compaction"]
    {'type': 'summarize'}

    Used by notebook 06.
    """
    request = _base(messages, model, max_tokens, system, tools)
    compaction: dict[str, Any] = {"type": "summarize"}
    if instructions is not None:
        compaction["instructions"] = require_str(instructions, "instructions")
    request["compaction"] = compaction
    return check_request(_with_betas(request))


def compaction_request_for(conversation: dict, *, instructions: str | None = None) -> dict:
    """Return the on-demand compaction request of the conversation whose latest request is `conversation`.

    Same model, ``max_tokens``, ``system``, ``tools`` and ``messages`` (REQUEST_RULES
    compaction-same-system-and-tools); its ``context_management`` is left out (a compaction request
    cannot carry it), and so is ``thinking``, which the page does not ask for.

    >>> chat = anthropic_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                          model="claude-sonnet-5", max_tokens=8_000, system="简短回答")
    >>> compaction_request_for(chat)["system"], compaction_request_for(chat)["betas"]
    ('简短回答', ['compact-2026-09-04'])

    Used by notebook 06.
    """
    if not isinstance(conversation, dict) or "messages" not in conversation or "model" not in conversation:
        raise ValueError(f"conversation must be a request body as anthropic_request returns it (got {conversation!r})")
    request = anthropic_compaction_request(
        conversation["messages"], model=conversation["model"], max_tokens=conversation["max_tokens"],
        instructions=instructions, system=conversation.get("system"), tools=conversation.get("tools", ()))
    return check_request(request, conversation=conversation)


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


def _block_types(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "+".join(str(b.get("type")) for b in content if isinstance(b, dict))
    return str(message.get("type", "message"))


def _field_summary(field: str, value: object, limit: int) -> str:
    """One line saying what a request field holds: edit types, header names, tool names, message block types."""
    if field in ("messages", "input") and isinstance(value, list):
        return _("{count} 条：{blocks}").format(count=len(value), blocks=" | ".join(
            _block_types(m) for m in value if isinstance(m, dict)))
    if field == "context_management" and isinstance(value, dict):
        return ", ".join(str(e.get("type")) for e in value.get("edits", []) if isinstance(e, dict))
    if field == "betas" and isinstance(value, list):
        return ", ".join(map(str, value))
    if field == "tools" and isinstance(value, list):
        return ", ".join(str(t.get("name", t.get("type"))) for t in value if isinstance(t, dict))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return str(_shorten(text, limit))


def format_differences(requests: dict[str, dict], *, limit: int = 60) -> str:
    """Return a table of the fields in which request bodies differ (one row per request and field), then the rest.

    A field a body lacks shows as "—". Messages show as their count and the block types of each
    message, edits as their types, tools as their names.

    >>> chat = anthropic_request([{"role": "user", "content": [{"type": "text", "text": "你好"}]}],
    ...                          model="claude-sonnet-5", max_tokens=8_000)
    >>> print(format_differences({"对话": chat, "压缩": compaction_request_for(chat)}))
    请求  字段        内容
    ----  ----------  ---------------------
    对话  betas       —
          compaction  —
    压缩  betas       compact-2026-09-04
          compaction  {"type": "summarize"}
    各请求相同的字段：model、max_tokens、messages

    Used by notebook 06.
    """
    if not isinstance(requests, dict) or not requests or not all(isinstance(r, dict) for r in requests.values()):
        raise ValueError(f"requests must be a non-empty dict of request bodies by name (got {requests!r})")
    require_int(limit, "limit", minimum=1)
    fields = list(dict.fromkeys(f for r in requests.values() for f in r))

    def held(request: dict, field: str) -> str | None:
        return json.dumps(request[field], sort_keys=True, ensure_ascii=False) if field in request else None

    differing = [f for f in fields if len({held(r, f) for r in requests.values()}) > 1]
    rows = []
    for name, request in requests.items():
        for i, field in enumerate(differing):
            shown = _field_summary(field, request[field], limit) if field in request else "—"
            rows.append([name if i == 0 else "", field, shown])
    same = [f for f in fields if f not in differing]
    table = format_table([_("请求"), _("字段"), _("内容")], rows, "<<<") if differing else ""
    tail = _("各请求相同的字段：{fields}").format(fields=_("、").join(same)) if same else ""
    return "\n".join(part for part in (table, tail) if part)


#: The API facts this module states, by the stable id of their entry in docs/api-sources.md: the constants
#: (by name), the header rules and the request rules (their ``fact``). tests/test_api_sources.py checks that
#: every id has an entry and every public constant of the module is one of these.
API_FACTS: dict[str, tuple[str, ...]] = {
    "beta.context-management": ("CONTEXT_MANAGEMENT_BETA",),
    "beta.threshold-compaction": ("THRESHOLD_COMPACTION_BETA",),
    "beta.on-demand-compaction": ("ON_DEMAND_COMPACTION_BETA",),
    "default.compact-trigger": ("DEFAULT_COMPACT_TRIGGER",),
    "limit.compact-trigger-minimum": ("MIN_COMPACT_TRIGGER",),
    "limit.thinking-budget-minimum": ("MIN_THINKING_BUDGET",),
    "thinking.forms-by-generation": ("ADAPTIVE_THINKING_SINCE", "BUDGET_REFUSED_SINCE"),
    "thinking.types": ("THINKING_TYPES",),
    "thinking.by-family": ("THINKING_BY_FAMILY",),
    "page.context-editing": ("CONTEXT_EDITING_DOC",),
    "page.threshold-compaction": ("THRESHOLD_COMPACTION_DOC",),
    "page.on-demand-compaction": ("ON_DEMAND_COMPACTION_DOC",),
    "page.memory-tool": ("MEMORY_TOOL_DOC",),
    "page.thinking-troubleshooting": ("THINKING_TROUBLESHOOTING_DOC",),
    "page.sonnet-5-migration": ("SONNET_5_MIGRATION_DOC",),
    "page.thinking-troubleshooting-zh": ("THINKING_TROUBLESHOOTING_ZH_DOC",),
    "page.thinking-tool-workflows": ("THINKING_TOOL_WORKFLOWS_DOC",),
    "page.messages-api": ("MESSAGES_API_DOC",),
    "models.ids": ("OPENAI_MODELS",),
    **{rule.fact: () for rule in HEADER_RULES},
    **{rule.fact: () for rule in REQUEST_RULES},
}
#: Public constants that are this module's vocabulary (the SDK type names it builds; `make api-check` compares them
#: with the newest SDK's), not facts about an API's behaviour.
LESSON_CONSTANTS: tuple[str, ...] = ("EDIT_TYPES", "BLOCK_TYPES")
