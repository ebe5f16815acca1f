"""Text tables for the workbook: every ``format_*`` function returns a string.

What this covers: turning the results of the computation modules (window check,
recall comparison, assembly, four-strategy simulation, context ledger) into
aligned plain-text tables that a notebook prints and a terminal shows. Column
labels and notes are Simplified Chinese, because a learner reads them.

What it leaves out: computing anything. Every number comes from the module that
owns it; this module only rounds and lays out. Nothing here prints.

Number formats (the lesson's):
    tokens and costs   -- integers with thousands separators: ``59,550``.
    input equivalent   -- rounded half up, for display only: 4,403,187.5 -> ``4,403,188``,
                          894,813.5 -> ``894,814``. Python's ``round`` and ``format`` round
                          halves to the even neighbour (2.5 -> 2); the lesson's two halves
                          happen to have even neighbours above them, but a reader expects
                          half up every time, so that is the rule here.
    recall             -- three decimals: ``0.183``.
    shares             -- one decimal and a percent sign: ``74.7 %``.
    facts              -- lost over asked: ``11/12``.

Provenance: a number the lesson itself quotes is a *seed* number; a number that
only the workbook's reconstruction produces is *derived* and is marked with
``DERIVED_MARK`` wherever a table shows it, with a footnote saying what the mark means.

Vocabulary:
    display width -- columns a string occupies in a terminal: wide (CJK) characters take 2.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, TypeVar

from ctx_reference.window import Window

from .i18n import N_, _

if TYPE_CHECKING:
    from ctx_reference.assemble import Assembly, Item
    from ctx_reference.ledger import LedgerEntry, LedgerSummary, Zone
    from ctx_reference.policy_score import PolicyScore
    from ctx_reference.recall import ComparisonRow
    from ctx_reference.sim import SimParams, SimResult

DERIVED_MARK = "*"  # appended to a number that the lesson does not quote
# The footnotes, read in the reader's language: ``tables.DERIVED_NOTE`` (see ``__getattr__``).
_NOTES = {
    "DERIVED_NOTE": N_("* 推导值：原课没有给出这个数，它由本工作簿重建的模型算出。"),
    "OTHER_PARAMS_NOTE": N_("参数不是原课里的例子：表中的数都由重建的模型算出（推导值）。"),
    "LEDGER_SPLIT_NOTE": N_("* 每次调用的拆分是推导值：原课只给出了四个桶的合计和峰值。"),
}
COLUMN_GAP = "  "  # between two columns
RULE_CHAR = "-"  # the line under a header
RECALL_DECIMALS = 3
SHARE_DECIMALS = 1
PERCENT = 100  # a share of 1.0 is 100 %

_Key = TypeVar("_Key")


class Labels(Mapping[_Key, str]):
    """A read-only mapping of labels marked with ``N_``; each label reads in the reader's language.

    >>> Labels({"none": "不管理"})["none"]
    '不管理'
    """

    def __init__(self, labels: Mapping[_Key, str]) -> None:
        self._labels = dict(labels)

    def __getitem__(self, key: _Key) -> str:
        return _(self._labels[key])

    def __iter__(self) -> Iterator[_Key]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __repr__(self) -> str:
        return f"Labels({dict(self)!r})"


def __getattr__(name: str) -> str:
    """Return a footnote (``DERIVED_NOTE``, ``OTHER_PARAMS_NOTE``, ``LEDGER_SPLIT_NOTE``) in the reader's language."""
    if name in _NOTES:
        return _(_NOTES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


STRATEGY_LABELS = Labels({
    "none": N_("不管理"),
    "clear": N_("清除旧工具结果"),
    "clear_notes": N_("清除 + 笔记"),
    "compact": N_("压缩成摘要"),
})
"""Name of each simulated strategy (in the reader's language), shown beside its code name."""

OUTCOME_LABELS = Labels({
    "FITS": N_("放得下"),
    "MAY_TRUNCATE": N_("输入放得下，输出可能被截断"),
    "REJECTED": N_("输入超出窗口，请求被拒绝"),
})
"""Reading of each ``window.Outcome`` member (in the reader's language), keyed by member name."""

REASON_LABELS = Labels({
    "duplicate": N_("重复"),
    "no room": N_("放不下"),
})
"""Reading of each reason ``assemble`` gives for dropping an item (in the reader's language), keyed by the reason."""

# Which numbers of which simulation run the lesson quotes (everything else is derived).
# A run is keyed by its strategy and the SimParams fields that differ from the defaults.
_SEED_SIM_CELLS: dict[tuple[str, tuple[tuple[str, object], ...]], frozenset[str]] = {
    ("none", ()): frozenset({"overflow"}),
    ("clear", ()): frozenset({"peak", "facts", "rewrites", "input_equivalent"}),
    ("clear_notes", ()): frozenset({"rewrites"}),
    ("compact", ()): frozenset({"rewrites"}),
    ("clear", (("keep", 15),)): frozenset({"peak", "facts", "rewrites", "input_equivalent"}),
    ("clear", (("clear_at_least", 20_000),)): frozenset({"rewrites", "input_equivalent"}),
    ("compact", (("summary_capacity", 2),)): frozenset({"facts"}),
}
_LESSON_VARIANTS = frozenset(variant for _, variant in _SEED_SIM_CELLS)


# ---------------------------------------------------------------- numbers


def round_half_up(value: float) -> int:
    """Return ``value`` rounded to the nearest integer, halves away from zero.

    >>> round_half_up(4_403_187.5), round_half_up(894_813.5), round_half_up(2.4)
    (4403188, 894814, 2)

    Display only: the computations keep the exact value. Used by every table.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"value must be a number (got {value!r})")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"value must be finite (got {value!r})")
    return int(Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def format_int(value: float) -> str:
    """Return ``value`` rounded half up, with thousands separators.

    >>> format_int(59_550), format_int(4_403_187.5)
    ('59,550', '4,403,188')

    Used by every table and by the notebooks' printed checks.
    """
    return f"{round_half_up(value):,}"


def format_recall(value: float) -> str:
    """Return a recall (0..1) with three decimals.

    >>> format_recall(0.18349)
    '0.183'

    Used by the recall notebook's stuff-versus-retrieve table.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"value must be a number (got {value!r})")
    quantum = Decimal(1).scaleb(-RECALL_DECIMALS)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def format_share(part: float, whole: float) -> str:
    """Return ``part / whole`` as a percentage with one decimal: ``74.7 %``.

    >>> format_share(1080, 1445)
    '74.7 %'
    >>> format_share(0, 0)  # nothing measured yet: no share either
    '0.0 %'

    Used by the ledger summary.
    """
    for name, value in (("part", part), ("whole", whole)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number (got {value!r})")
        if value < 0:
            raise ValueError(f"{name} must be >= 0 (got {value!r})")
    return format_percent(part / whole if whole else 0.0)


def format_percent(fraction: float, *, places: int = SHARE_DECIMALS, sign: bool = False) -> str:
    """Return a fraction (0.747...) as a percentage with ``places`` decimals, in the reader's style.

    Chinese tables write ``74.7 %``, English ones ``74.7%``; ``sign`` writes ``+`` before a
    positive number (a relative error: ``+27 %``).

    >>> format_percent(1080 / 1445), format_percent(0.0), format_percent(0.2712, places=0, sign=True)
    ('74.7 %', '0.0 %', '+27 %')

    Used by the ledger tables and notebook 09.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        raise ValueError(f"fraction must be a number (got {fraction!r})")
    if fraction != fraction or fraction in (float("inf"), float("-inf")):
        raise ValueError(f"fraction must be finite (got {fraction!r})")
    if isinstance(places, bool) or not isinstance(places, int) or places < 0:
        raise ValueError(f"places must be an int >= 0 (got {places!r})")
    quantum = Decimal(1).scaleb(-places)
    number = (Decimal(fraction) * PERCENT).quantize(quantum, rounding=ROUND_HALF_UP)
    return _("{number} %").format(number=f"{number:+}" if sign else f"{number}")


def format_facts(lost: int, asked: int) -> str:
    """Return facts lost over facts asked: ``11/12``.

    >>> format_facts(11, 12)
    '11/12'

    Used by the strategy table.
    """
    for name, value in (("lost", lost), ("asked", asked)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0 (got {value!r})")
    return f"{lost}/{asked}"


def format_overflow(turn: int | None) -> str:
    """Return ``第 26 轮`` for the turn whose request overflowed, ``—`` when none did.

    >>> format_overflow(26), format_overflow(None)
    ('第 26 轮', '—')

    Used by the strategy table.
    """
    if turn is None:
        return "—"
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        raise ValueError(f"turn must be an int >= 1 or None (got {turn!r})")
    return _("第 {turn} 轮").format(turn=turn)


# ---------------------------------------------------------------- layout


def display_width(text: str) -> int:
    """Return the number of terminal columns ``text`` takes (wide CJK characters count 2).

    >>> display_width("token"), display_width("峰值"), display_width("清除 + 笔记")
    (5, 4, 11)

    Used to align every table that mixes Chinese and digits.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str (got {text!r})")
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def pad(text: str, width: int, align: str = "<") -> str:
    """Return ``text`` padded with spaces to ``width`` columns; ``align`` is ``<`` or ``>``.

    >>> pad("峰值", 6) + "|", pad("59,550", 8, ">") + "|"
    ('峰值  |', '  59,550|')

    Used by ``format_table``.
    """
    if align not in ("<", ">"):
        raise ValueError(f"align must be '<' or '>' (got {align!r})")
    gap = " " * max(width - display_width(text), 0)
    return text + gap if align == "<" else gap + text


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> str:
    """Return an aligned text table: header, a rule, one line per row.

    ``align`` has one character per column, ``<`` (left) or ``>`` (right).
    Trailing spaces are stripped from each line.

    >>> print(format_table(["策略", "峰值"], [["clear", "59,550"]], "<>"))
    策略     峰值
    -----  ------
    clear  59,550

    Used by every ``format_*`` table in this module.
    """
    headers = [str(h) for h in headers]
    body = [[str(cell) for cell in row] for row in rows]
    if len(align) != len(headers):
        raise ValueError(f"align must have one character per column, {len(headers)} (got {align!r})")
    for row in body:
        if len(row) != len(headers):
            raise ValueError(f"rows must have {len(headers)} cells each (got {row!r})")
    widths = [display_width(h) for h in headers]
    for row in body:
        widths = [max(w, display_width(cell)) for w, cell in zip(widths, row)]

    def line(cells: Sequence[str]) -> str:
        return COLUMN_GAP.join(pad(c, w, a) for c, w, a in zip(cells, widths, align)).rstrip()

    rule = COLUMN_GAP.join(RULE_CHAR * w for w in widths)
    return "\n".join([line(headers), rule] + [line(row) for row in body])


def _mark(text: str, derived: bool) -> str:
    """Return ``text`` with the derived mark appended when ``derived``."""
    return text + DERIVED_MARK if derived else text


# ---------------------------------------------------------------- window


def format_window_check(size: int, input_tokens: int, max_tokens: int) -> str:
    """Return the window check of one request, spelled out line by line.

    >>> print(format_window_check(1_000_000, 950_000, 128_000))
    窗口        1,000,000 token
    输入          950,000 token
    max_tokens    128,000 token
    输入 + max_tokens = 1,078,000 token，超过窗口 78,000
    结果：MAY_TRUNCATE（输入放得下，输出可能被截断）
    最多还能生成 50,000 token

    Used by the context-window notebook and ``ctx-reference window``.
    """
    window = Window(size)
    outcome = window.check(input_tokens, max_tokens)
    total = input_tokens + max_tokens
    if total > size:
        verdict = _("超过窗口 {excess}").format(excess=format_int(total - size))
    else:
        verdict = _("窗口还剩 {left}").format(left=format_int(size - total))
    rows = [
        (_("窗口"), format_int(size)),
        (_("输入"), format_int(input_tokens)),
        ("max_tokens", format_int(max_tokens)),
    ]
    label_width = max(display_width(label) for label, _ in rows) + 2
    number_width = max(display_width(number) for _, number in rows)
    lines = [pad(label, label_width) + _("{number} token").format(number=pad(number, number_width, ">"))
             for label, number in rows]
    lines.append(_("输入 + max_tokens = {total} token，{verdict}").format(total=format_int(total), verdict=verdict))
    lines.append(_("结果：{outcome}（{reading}）").format(outcome=outcome.name, reading=OUTCOME_LABELS[outcome.name]))
    lines.append(_("最多还能生成 {count} token").format(count=format_int(window.max_output(input_tokens))))
    return "\n".join(lines)


# ---------------------------------------------------------------- recall

PROVENANCE_LABELS = Labels({"seed": N_("原课"), "derived": N_("推导")})
"""How a provenance is shown: "原课" for a number the lesson quotes, "推导" for a derived one."""


def format_stuff_vs_retrieve(rows: Iterable[ComparisonRow]) -> str:
    """Return the stuff-versus-retrieve table: recall, context tokens, provenance, situation.

    ``rows`` are ``recall.ComparisonRow`` values (``recall.stuff_vs_retrieve()``).
    The 来源 column says 原课 for a number the lesson quotes and 推导 for one that
    only the toy model gives, so a derived number is never shown unlabelled.

    With the lesson's model the second row reads
    ``0.183  800,000  推导  全塞 200 篇（80 万 token），答案在第 101 篇``.

    Used by the recall notebook and ``ctx-reference recall``.
    """
    body = []
    for row in rows:
        if row.provenance not in PROVENANCE_LABELS:
            raise ValueError(f"provenance must be 'seed' or 'derived' (got {row.provenance!r})")
        body.append(
            [format_recall(row.recall), format_int(row.n_tokens), PROVENANCE_LABELS[row.provenance], row.label]
        )
    return format_table([_("召回率"), _("上下文 token"), _("来源"), _("情形")], body, ">><<")


# ---------------------------------------------------------------- assembly

DROP_REASON_LABELS = Labels({
    "duplicate": N_("重复：和已保留的一项内容相同"),
    "no room": N_("放不下：加进来会超出预算"),
})
"""Reading of each ``assemble`` drop reason (in the reader's language)."""


def _item_kind(item: Item) -> str:
    """Return how an item is treated: 必需 / 可选（优先级 p）, and 稳定 / 动态."""
    need = _("必需") if item.required else _("可选，优先级 {priority}").format(priority=item.priority)
    place = _("稳定") if item.stable else _("动态")
    return _("{place}，{need}").format(place=place, need=need)


def format_assembly(assembly: Assembly, budget: int | None = None) -> str:
    """Return the kept items in output order, the total against the budget, and the drop log.

    ``assembly`` is an ``assemble.Assembly``; ``budget`` (optional) is the budget it
    was assembled under, shown beside the total.

    For the lesson's example under 11,000 the total line reads
    ``合计 10,920 / 11,000 token（还剩 80）`` and the drop log lists ``doc A (copy)``
    as a duplicate and ``doc C`` as 放不下.

    Used by the assembly notebook and ``ctx-reference assemble``.
    """
    kept = [
        [str(number), item.name, format_int(item.tokens), _item_kind(item)]
        for number, item in enumerate(assembly.items, start=1)
    ]
    lines = [_("保留（按发送顺序：稳定的在前，动态的在后）")]
    lines.append(format_table(["#", _("名称"), _("token"), _("类型")], kept, "><><"))
    if budget is None:
        lines.append(_("合计 {used} token").format(used=format_int(assembly.used)))
    else:
        lines.append(_("合计 {used} / {budget} token（还剩 {left}）").format(
            used=format_int(assembly.used), budget=format_int(budget), left=format_int(budget - assembly.used)))
    if assembly.dropped:
        dropped = [
            [item.name, format_int(item.tokens), DROP_REASON_LABELS.get(reason, reason)]
            for item, reason in assembly.dropped
        ]
        lines.append("")
        lines.append(_("丢弃"))
        lines.append(format_table([_("名称"), _("token"), _("原因")], dropped, "<><"))
    else:
        lines.append(_("没有丢弃任何一项"))
    return "\n".join(lines)


# ---------------------------------------------------------------- simulation


def _changed_fields(params: SimParams) -> tuple[tuple[str, object], ...]:
    """Return the (name, value) pairs where ``params`` differs from its class defaults."""
    if not dataclasses.is_dataclass(params) or isinstance(params, type):
        raise ValueError(f"params must be a SimParams (got {params!r})")
    defaults = type(params)()
    return tuple(
        (f.name, getattr(params, f.name))
        for f in dataclasses.fields(params)
        if getattr(params, f.name) != getattr(defaults, f.name)
    )


def seed_cells(strategy: str, params: SimParams) -> frozenset[str] | None:
    """Return which cells of a run the lesson quotes, or None if the run is not one of the lesson's.

    Cell names: ``peak``, ``facts``, ``rewrites``, ``input_equivalent``, ``overflow``.

    >>> from ctx_reference.sim import SimParams
    >>> sorted(seed_cells("clear_notes", SimParams()))
    ['rewrites']
    >>> seed_cells("clear", SimParams(keep=7)) is None
    True

    Used by ``format_strategy_table`` to mark derived numbers.
    """
    variant = _changed_fields(params)
    if variant not in _LESSON_VARIANTS:
        return None
    return _SEED_SIM_CELLS.get((strategy, variant), frozenset())


def format_strategy_table(results: Mapping[str, SimResult], params: SimParams, *, title: str = "") -> str:
    """Return one row per strategy: peak, facts lost/asked, rewrites, input equivalent, overflow.

    ``results`` maps a strategy name to its ``SimResult``; ``params`` is the
    ``SimParams`` the runs used (it decides which numbers the lesson quotes).
    Numbers the lesson does not quote carry ``DERIVED_MARK``. ``title``, a message (its
    Chinese text, from a notebook's check cell), is shown above the table in the reader's language.

    With the lesson's defaults the ``clear`` row reads
    ``clear  清除旧工具结果  59,550  11/12  15  1,359,425  —`` and the ``none`` row
    shows the overflow at 第 26 轮.

    Used by the simulation notebook and ``ctx-reference sim``.
    """
    if not isinstance(results, Mapping):
        raise ValueError(f"results must be a mapping strategy -> SimResult (got {results!r})")
    headers = [_("策略"), _("做法"), _("峰值 token"), _("丢失/提问"), _("改写次数"), _("输入当量"), _("溢出")]
    rows = []
    any_derived = False
    all_lesson_runs = True
    for strategy, result in results.items():
        seeds = seed_cells(strategy, params)
        all_lesson_runs = all_lesson_runs and seeds is not None
        cells = {
            "peak": format_int(result.peak),
            "facts": format_facts(result.facts_lost, result.facts_asked),
            "rewrites": f"{result.rewrites:,}",
            "input_equivalent": format_int(result.input_equivalent),
            "overflow": format_overflow(result.overflow_turn),
        }
        for name, text in cells.items():
            # Outside the lesson's runs nothing is marked cell by cell: a footnote covers the table.
            derived = seeds is not None and name not in seeds
            if name == "overflow" and result.overflow_turn is None:
                derived = False  # "—" is no number
            any_derived = any_derived or derived
            cells[name] = _mark(text, derived)
        rows.append([strategy, STRATEGY_LABELS.get(strategy, ""), *cells.values()])
    text = format_table(headers, rows, "<<>>>><")
    notes = []
    if any_derived:
        notes.append(_(_NOTES["DERIVED_NOTE"]))
    if not all_lesson_runs:
        notes.append(_(_NOTES["OTHER_PARAMS_NOTE"]))
    return "\n".join([*([_(title)] if title else []), text, *notes])


# ---------------------------------------------------------------- ledger

ZONE_LABELS = Labels({"safe": N_("安全"), "caution": N_("注意"), "danger": N_("危险"), "over": N_("超出窗口")})
"""Reading of each ``ledger.Zone`` value (in the reader's language)."""


def _zone_text(zone: Zone) -> str:
    """Return ``safe（安全）`` for a ``ledger.Zone``."""
    return _("{zone}（{reading}）").format(zone=zone.value, reading=ZONE_LABELS.get(zone.value, zone.value))


def format_ledger_summary(summary: LedgerSummary) -> str:
    """Return a ledger summary: one headline, then tokens and share of each bucket.

    ``summary`` is a ``ledger.LedgerSummary``. For the lesson's six calls the
    headline reads ``窗口账本合计：6 次调用 · 峰值 552 / 8,000 token，safe（安全） ·
    超出窗口 0 次`` and the ``tool_results`` line shows ``1,080`` and ``74.7 %``.

    Used by the context-ledger notebook and ``ctx-reference ledger``.
    """
    headline = _("窗口账本合计：{calls} 次调用 · 峰值 {peak} / {limit} token，{zone} · 超出窗口 {over} 次").format(
        calls=summary.calls, peak=format_int(summary.peak), limit=format_int(summary.limit),
        zone=_zone_text(summary.peak_zone), over=summary.calls_over)
    rows = [
        [bucket, format_int(tokens), format_percent(summary.bucket_shares[bucket])]
        for bucket, tokens in summary.bucket_tokens.items()
    ]
    total_share = format_percent(1.0 if summary.total_tokens else 0.0)
    rows.append([_("合计"), format_int(summary.total_tokens), total_share])
    return headline + "\n" + format_table([_("桶"), _("token"), _("占比")], rows, "<>>")


def format_ledger_entries(entries: Sequence[LedgerEntry], derived: bool = False) -> str:
    """Return one row per measured call: its four buckets, total, share of the window and zone.

    ``entries`` are ``ledger.LedgerEntry`` values (``WindowLedger.entries``). With
    ``derived=True`` every per-call count carries ``DERIVED_MARK`` and a footnote
    says the lesson only gives the totals (true of ``ledger.lesson_calls()``).

    For the lesson's calls the ``research_1`` row shows ``540`` tool-result tokens,
    a total of ``552``, ``6.9 %`` of the window and ``safe（安全）``.

    Used by the context-ledger notebook and ``ctx-reference ledger``.
    """
    headers = [_("调用"), "system", "task_state", "tool_results", "history", _("合计"), _("占窗口"), _("水位")]
    rows = []
    for entry in entries:
        counts = [_mark(format_int(entry.tokens.get(bucket, 0)), derived) for bucket in headers[1:5]]
        rows.append(
            [entry.name or "—", *counts, _mark(format_int(entry.total), derived),
             format_percent(entry.total / entry.limit), _zone_text(entry.zone)]
        )
    text = format_table(headers, rows, "<>>>>>><")
    return text + "\n" + _(_NOTES["LEDGER_SPLIT_NOTE"]) if derived else text


# ---------------------------------------------------------------- policy scores


def format_score(score: float | None) -> str:
    """Return a policy's score with three decimals, or 出局 (disqualified) for None.

    >>> format_score(0.8123), format_score(None)
    ('0.812', '出局')
    """
    return _("出局") if score is None else f"{score:.3f}"


def format_policy_scores(scores: Mapping[str, PolicyScore]) -> str:
    """Return one row per policy: safe workloads, facts lost/asked, overflows, total cost, score.

    ``scores`` maps a policy name to its ``PolicyScore`` (``ctx_reference.policy_score``).
    Used by the capstone notebook and the class leaderboard.
    """
    if not isinstance(scores, Mapping):
        raise ValueError(f"scores must be a mapping name -> PolicyScore (got {scores!r})")
    headers = [_("策略"), _("安全的任务"), _("丢失/提问"), _("溢出次数"), _("总输入当量"), _("得分（越低越好）")]
    rows = []
    for name, s in scores.items():
        ws = s.workloads
        rows.append([
            name, f"{sum(w.safe for w in ws)}/{len(ws)}",
            format_facts(sum(w.facts_lost for w in ws), sum(w.facts_asked for w in ws)),
            str(sum(w.overflow_turn is not None for w in ws)),
            format_int(s.total_cost), format_score(s.score),
        ])
    return format_table(headers, rows, "<>>>>>")


def format_workload_scores(score: PolicyScore) -> str:
    """Return one row per workload of one ``PolicyScore``: overflow, lost/asked, peak, cost, ratio.

    Used by the capstone notebook.
    """
    headers = [_("任务"), _("溢出"), _("丢失/提问"), _("峰值 token"), _("改写次数"), _("输入当量"),
               _("最便宜的安全内置策略"), _("比值")]
    rows = []
    for w in score.workloads:
        rows.append([
            w.workload, format_overflow(w.overflow_turn), format_facts(w.facts_lost, w.facts_asked),
            format_int(w.peak), f"{w.rewrites:,}", format_int(w.input_equivalent),
            f"{w.best_builtin} {format_int(w.best_builtin_cost)}", format_score(w.ratio),
        ])
    return format_table(headers, rows, "<>>>>>>>")
