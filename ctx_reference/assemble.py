"""Assemble a context from candidate pieces under a token budget.

What this covers: choosing which pieces (rules, tool definitions, memory,
retrieved documents, the current time, the question) go into one request, and in
what order, so that the total stays within a budget:

1. every required piece is kept; if the required pieces alone exceed the budget
   that is a design problem, reported as ``BudgetError``, never solved by cutting
   text short;
2. the other pieces are tried by priority, high to low (ties in input order),
   and each goes in if it still fits;
3. a piece whose text equals the text of a piece already kept is a duplicate and
   is dropped (required pieces are kept even then: "required" is a promise);
4. the output puts stable pieces first and dynamic ones after, each group in
   input order, so the stable prefix is the same from call to call and a prompt
   cache can reuse it;
5. every dropped piece is reported with its reason, ``"duplicate"`` or ``"no room"``.

What it leaves out: splitting or summarising a piece to make it fit (a piece is
kept whole or dropped), near-duplicates (only equal text counts), and counting
tokens (each piece carries its own count; see ``tokens.estimate_tokens``).

Vocabulary:
    item     -- one candidate piece, with a name and a size in tokens.
    budget   -- the most tokens the assembled context may use.
    stable   -- the same on every call (rules, tools, long-lived memory); dynamic is the rest.
    required -- must be in every request (rules, the question).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ctx_reference._validate import require_int, require_str
from ctx_reference.i18n import _

DUPLICATE = "duplicate"  # drop reason: same text as an item already kept
NO_ROOM = "no room"  # drop reason: would push the total over the budget
LESSON_BUDGET = 11_000  # tokens: the budget of the lesson's worked example


@dataclass(frozen=True)
class Item:
    """One candidate piece of context: its name, size in tokens and how it must be treated.

    ``text`` is only used to spot duplicates; None means "never a duplicate".
    """

    name: str
    tokens: int
    priority: int = 0
    required: bool = False
    stable: bool = False
    text: str | None = None

    def __post_init__(self) -> None:
        require_str(self.name, "name")
        require_int(self.tokens, "tokens", minimum=0)
        require_int(self.priority, "priority")
        if not isinstance(self.required, bool):
            raise ValueError(f"required must be a bool (got {self.required!r})")
        if not isinstance(self.stable, bool):
            raise ValueError(f"stable must be a bool (got {self.stable!r})")
        if self.text is not None and not isinstance(self.text, str):
            raise ValueError(f"text must be a str or None (got {self.text!r})")


@dataclass(frozen=True)
class Assembly:
    """The result of ``assemble``.

    items:   the kept items in output order (stable first, then dynamic, each in input order);
    used:    their total tokens;
    dropped: (item, reason) for every item left out, in input order.
    """

    items: list[Item]
    used: int
    dropped: list[tuple[Item, str]]


class BudgetError(ValueError):
    """The required items alone need more tokens than the budget allows.

    ``required_tokens`` and ``budget`` are the two numbers (notebook 04's check compares them);
    the message says them in the reader's language, once.
    """

    def __init__(self, required_tokens: int, budget: int) -> None:
        self.required_tokens = required_tokens
        self.budget = budget
        super().__init__(
            _("预算不够：必需项共 {required_tokens} tokens，超过了 budget={budget}；"
              "请精简或拆分必需项，或者加大预算。").format(required_tokens=required_tokens, budget=budget)
        )


def assemble(items: Iterable[Item], budget: int) -> Assembly:
    """Return the items that fit in ``budget`` following rules 1-5 of the module docstring.

    >>> result = assemble(lesson_items(), LESSON_BUDGET)
    >>> result.used  # 3,000 + 2,000 + 800 + 2,500 + 2,500 + 20 + 100
    10920
    >>> [item.name for item in result.items]
    ['rules', 'tools', 'memory', 'doc A', 'doc B', 'time', 'question']
    >>> [(item.name, reason) for item, reason in result.dropped]
    [('doc A (copy)', 'duplicate'), ('doc C', 'no room')]

    Required items cost 5,120; memory, A and B bring it to 10,920; A's copy has
    A's text; C (1,500) would make 12,420 > 11,000. Used by notebook 04-assembly
    and the CLI.
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ValueError(f"items must be an iterable of Item (got {items!r})")
    candidates = list(items)
    for index, item in enumerate(candidates):
        if not isinstance(item, Item):
            raise ValueError(f"items[{index}] must be an Item (got {item!r})")
    require_int(budget, "budget", minimum=0)

    required_tokens = sum(item.tokens for item in candidates if item.required)
    if required_tokens > budget:
        raise BudgetError(required_tokens, budget)

    kept = {index for index, item in enumerate(candidates) if item.required}
    kept_texts = {candidates[index].text for index in kept} - {None}
    used = required_tokens
    reasons: dict[int, str] = {}

    optional = [index for index, item in enumerate(candidates) if not item.required]
    by_priority = sorted(optional, key=lambda index: -candidates[index].priority)  # stable sort
    for index in by_priority:
        item = candidates[index]
        if item.text is not None and item.text in kept_texts:
            reasons[index] = DUPLICATE
        elif used + item.tokens > budget:
            reasons[index] = NO_ROOM
        else:
            kept.add(index)
            used += item.tokens
            if item.text is not None:
                kept_texts.add(item.text)

    in_order = [index for index in range(len(candidates)) if index in kept]
    stable_first = [candidates[i] for i in in_order if candidates[i].stable]
    stable_first += [candidates[i] for i in in_order if not candidates[i].stable]
    dropped = [(candidates[index], reasons[index]) for index in sorted(reasons)]
    return Assembly(items=stable_first, used=used, dropped=dropped)


def lesson_items() -> tuple[Item, ...]:
    """Return the nine candidate items of the lesson's example, in the lesson's order.

    >>> sum(item.tokens for item in lesson_items())
    14920

    Assemble them with ``LESSON_BUDGET`` (11,000). Used by notebook 04-assembly and the CLI.
    """
    doc_a_text = "文档 A：缓存命中按基础输入价格的一成计费。"  # data
    return (
        Item("rules", 3_000, required=True, stable=True, text="系统规则"),  # data
        Item("tools", 2_000, required=True, stable=True, text="工具定义"),  # data
        Item("memory", 800, priority=3, stable=True, text="长期记忆"),  # data
        Item("doc A", 2_500, priority=2, text=doc_a_text),
        Item("doc B", 2_500, priority=2, text="文档 B：窗口包括输入和本轮输出。"),  # data
        Item("doc A (copy)", 2_500, priority=2, text=doc_a_text),
        Item("doc C", 1_500, priority=1, text="文档 C：工具结果可以清理成占位符。"),  # data
        Item("time", 20, required=True, text="当前时间"),  # data
        Item("question", 100, required=True, text="用户问题"),  # data
    )
