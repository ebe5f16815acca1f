"""A context ledger: measure what each LLM call puts into its window, before sending it.

What the model covers: a prompt is split into four buckets -- `system`,
`task_state`, `tool_results`, `history` -- each counted with an injectable
`Tokenizer`. A call's total, divided by the window limit, falls into one of
four zones (safe, caution, danger, over). `measure` does this for one call
and returns counts only; `WindowLedger` keeps one entry per call, can refuse
a call that is over the window (enforce mode), and sums everything up in a
`LedgerSummary` (calls, peak and its zone, calls over, tokens and share per
bucket). `measured_call` shows the "switch": with no ledger the prompt goes
out exactly the same and nothing is recorded anywhere.

Bucket rules (a convention, kept the same everywhere so shares are comparable):
retrieved material and tool output -> `tool_results`; anything the model
generated earlier (findings, summaries, reviews, old notes) -> `history`;
instructions, the current task, loaded skills -> `task_state`; the standing
identity and ground rules -> `system`.

What it leaves out: real tokenizers and the usage figures an API returns
after a call (the ledger measures before the call, with an estimate); what
to do about a high zone (trimming, compaction, moving material out of the
window) -- the ledger only tells you where the tokens went. The 60 % / 85 %
thresholds are a starting convention, not a law.

Vocabulary:
- tokens: as counted by the tokenizer (`FakeTokenizer` by default: len(text) // 4).
- window limit: the tokens one call may occupy (8,000 in the lesson).
- share of the window: used / limit; a bucket's share: bucket tokens / all bucket tokens.
- zone: safe (< 60 %), caution (60 % to 85 %, both ends included),
  danger (above 85 % up to and including 100 %), over (above 100 %).
- call total: the sum of its four bucket counts (separators between buckets are not counted).
- reserved output: the tokens set aside for the answer (the request's max_tokens). By the
  window rule of notebook 01 the answer shares the window with the prompt, so an optional
  `reserve_output` is added to the total before the zone is decided. It defaults to 0, which
  measures the prompt alone, as the lesson's ledger does: then a prompt of exactly 100 % of
  the window reads as danger, although it leaves no room at all for an answer.

Used by the context-ledger notebook (second lesson).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType

from ctx_reference._validate import require_int, require_str
from ctx_reference.tokens import FakeTokenizer, Tokenizer

from .i18n import _

__all__ = [
    "Zone",
    "zone",
    "window_share",
    "zones_for",
    "CAUTION_FROM_PERCENT",
    "DANGER_ABOVE_PERCENT",
    "OVER_ABOVE_PERCENT",
    "DEFAULT_WINDOW_LIMIT_TOKENS",
    "BUCKETS",
    "BUCKET_SEPARATOR",
    "ContextOverflowError",
    "LedgerEntry",
    "measure",
    "LedgerSummary",
    "summarize",
    "WindowLedger",
    "join_buckets",
    "measured_call",
    "lesson_calls",
    "LongHaul",
    "long_haul_calls",
]

#: A call at or above this share of the window (in %) is in the caution zone.
CAUTION_FROM_PERCENT = 60
#: A call above this share of the window (in %) is in the danger zone.
DANGER_ABOVE_PERCENT = 85
#: A call above this share of the window (in %) is over the window.
OVER_ABOVE_PERCENT = 100

#: The lesson's window limit, in tokens per call.
DEFAULT_WINDOW_LIMIT_TOKENS = 8000

#: The four buckets, in the order they are reported and joined into a prompt.
BUCKETS = ("system", "task_state", "tool_results", "history")

#: What `join_buckets` puts between two non-empty bucket texts.
BUCKET_SEPARATOR = "\n\n"


class Zone(Enum):
    """How full one call's window is, by share of the window limit."""

    SAFE = "safe"
    CAUTION = "caution"
    DANGER = "danger"
    OVER = "over"


def zone(used: int, limit: int) -> Zone:
    """Return the zone of a call using `used` tokens of a `limit`-token window.

    Integer arithmetic (used * 100 against percent * limit), so every boundary
    is exact: 60 % and 85 % are caution, 100 % is danger.

    >>> zone(552, 8000)  # 6.9 % of the window
    <Zone.SAFE: 'safe'>
    >>> zone(4800, 8000), zone(6800, 8000), zone(8000, 8000), zone(8001, 8000)
    (<Zone.CAUTION: 'caution'>, <Zone.CAUTION: 'caution'>, <Zone.DANGER: 'danger'>, <Zone.OVER: 'over'>)

    Used by the context-ledger notebook (the learner writes it).
    """
    require_int(used, "used", minimum=0)
    require_int(limit, "limit", minimum=1)
    if used * 100 < CAUTION_FROM_PERCENT * limit:
        return Zone.SAFE
    if used * 100 <= DANGER_ABOVE_PERCENT * limit:
        return Zone.CAUTION
    if used * 100 <= OVER_ABOVE_PERCENT * limit:
        return Zone.DANGER
    return Zone.OVER


def window_share(used: int, limit: int) -> float:
    """Return used / limit, the share of the window one call occupies (for plots and tables).

    >>> window_share(552, 8000)
    0.069

    Used by the context-ledger notebook.
    """
    require_int(used, "used", minimum=0)
    require_int(limit, "limit", minimum=1)
    return used / limit


def zones_for(contexts: Sequence[int], limit: int) -> list[Zone]:
    """Return the zone of every context size in `contexts` (tokens), in order.

    Meant for a list of per-request context sizes such as a simulation's
    `contexts`: with a 100,000-token window, 59,550 is safe, 61,200 caution,
    89,450 danger.

    >>> [z.value for z in zones_for([59_550, 61_200, 89_450], 100_000)]
    ['safe', 'caution', 'danger']

    Used by the context-ledger notebook.
    """
    if isinstance(contexts, (str, bytes)) or not isinstance(contexts, Sequence):
        raise ValueError(f"contexts must be a list or tuple of token counts (got {contexts!r})")
    require_int(limit, "limit", minimum=1)
    for i, used in enumerate(contexts):
        require_int(used, f"contexts[{i}]", minimum=0)
    return [zone(used, limit) for used in contexts]


class ContextOverflowError(Exception):
    """Raised by an enforcing `WindowLedger` when a call is over its window limit.

    Deliberately not a ValueError: the arguments are well formed, the call is
    simply too big for the window -- the simulated counterpart of an API
    rejecting the request. Callers are expected to catch it and shrink the
    context. Attributes: `name`, `total`, `limit`; the message says them once, in the reader's language.
    """

    def __init__(self, name: str, total: int, limit: int, reserve_output: int = 0) -> None:
        self.name = name
        self.total = total
        self.limit = limit
        self.reserve_output = reserve_output
        reserved = _("（提示词 {prompt} + 预留输出 {reserve}）").format(
            prompt=total - reserve_output, reserve=reserve_output) if reserve_output else ""
        super().__init__(
            _("上下文超出窗口：调用 {name!r} 需要 {total} tokens{reserved}，超过窗口上限 {limit} tokens").format(
                name=name, total=total, reserved=reserved, limit=limit)
        )


def _frozen_counts(name: str, value: object) -> Mapping[str, int]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping of bucket name to tokens (got {value!r})")
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class LedgerEntry:
    """One measured call: tokens per bucket (all four, in `BUCKETS` order), total, zone, limit.

    `name` is empty for a bare `measure` and set by `WindowLedger.record`.

    >>> measure({"task_state": "a" * 48, "tool_results": "b" * 2160}, FakeTokenizer(), 8000).total
    552

    Used by the context-ledger notebook.
    """

    tokens: Mapping[str, int] = field(hash=False)
    total: int
    zone: Zone
    limit: int
    name: str = ""
    reserve_output: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", _frozen_counts("tokens", self.tokens))
        require_str(self.name, "name")
        require_int(self.reserve_output, "reserve_output", minimum=0)


def _check_buckets(buckets: object) -> Mapping[str, str]:
    if not isinstance(buckets, Mapping):
        raise ValueError(f"buckets must be a mapping of bucket name to text (got {buckets!r})")
    for key, text in buckets.items():
        if key not in BUCKETS:
            raise ValueError(f"unknown bucket {key!r} (expected one of {', '.join(BUCKETS)})")
        if not isinstance(text, str):
            raise ValueError(f"bucket {key!r} must hold a str (got {text!r})")
    return buckets


def _check_tokenizer(tokenizer: object) -> Tokenizer:
    # A str has a .count method too, so it would pass the Protocol check.
    if isinstance(tokenizer, (str, bytes)) or not isinstance(tokenizer, Tokenizer):
        raise ValueError(f"tokenizer must have a count(text) method (got {tokenizer!r})")
    return tokenizer


def measure(
    buckets: Mapping[str, str], tokenizer: Tokenizer, limit: int, *, reserve_output: int = 0
) -> LedgerEntry:
    """Return the counts of one call: tokens per bucket, total and zone. Changes nothing.

    Buckets left out count as 0 tokens (the tokenizer is not asked about
    them: one that counts "" as 1 token still gives 0); an unknown bucket name raises
    ValueError naming it. The total is the sum of the four bucket counts.
    The zone is that of total + `reserve_output` (the tokens kept for the
    answer, i.e. max_tokens; 0 measures the prompt alone): a prompt of 7,000
    tokens with 1,000 reserved fills an 8,000-token window exactly (danger),
    with 1,001 reserved it is over.

    The lesson's peak call: 48 characters of instructions and 2,160 characters
    of search results -> 12 + 540 = 552 tokens of 8,000, safe.

    >>> entry = measure({"task_state": "t" * 48, "tool_results": "r" * 2160}, FakeTokenizer(), 8000)
    >>> dict(entry.tokens), entry.total, entry.zone
    ({'system': 0, 'task_state': 12, 'tool_results': 540, 'history': 0}, 552, <Zone.SAFE: 'safe'>)

    Used by the context-ledger notebook (the learner writes it).
    """
    _check_buckets(buckets)
    _check_tokenizer(tokenizer)
    require_int(limit, "limit", minimum=1)
    require_int(reserve_output, "reserve_output", minimum=0)
    tokens = {}
    for bucket in BUCKETS:
        if bucket not in buckets:
            tokens[bucket] = 0  # a bucket left out holds no text: 0 tokens, whatever the tokenizer says of ""
            continue
        count = tokenizer.count(buckets[bucket])
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"tokenizer.count must return an int >= 0 (got {count!r} for bucket {bucket!r})")
        tokens[bucket] = count
    total = sum(tokens.values())
    return LedgerEntry(
        tokens=tokens, total=total, zone=zone(total + reserve_output, limit), limit=limit,
        reserve_output=reserve_output,
    )


@dataclass(frozen=True)
class LedgerSummary:
    """What a ledger adds up to over its calls.

    calls: number of entries; peak: the largest call total, `peak_name` the
    first call that reached it ("" when there are no calls) and `peak_zone`
    its zone; calls_over: entries in the OVER zone; bucket_tokens: tokens per
    bucket summed over all calls; total_tokens: their sum; bucket_shares: each
    bucket's tokens / total_tokens (all 0.0 when total_tokens is 0).

    The lesson's six calls: 6 calls, peak 552 of 8,000 (safe), 0 over,
    buckets 0 / 88 / 1,080 / 277 tokens -> shares 0.0 %, 6.1 %, 74.7 %, 19.2 %.

    Used by the context-ledger notebook; formatted by the tables module.
    """

    calls: int
    peak: int
    peak_name: str
    peak_zone: Zone
    calls_over: int
    limit: int
    bucket_tokens: Mapping[str, int] = field(hash=False)
    total_tokens: int
    bucket_shares: Mapping[str, float] = field(hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bucket_tokens", _frozen_counts("bucket_tokens", self.bucket_tokens))
        object.__setattr__(self, "bucket_shares", _frozen_counts("bucket_shares", self.bucket_shares))


def summarize(entries: Sequence[LedgerEntry], limit: int) -> LedgerSummary:
    """Return the `LedgerSummary` of `entries` against a `limit`-token window.

    >>> s = summarize([measure({"history": "h" * 400}, FakeTokenizer(), 8000)], 8000)
    >>> s.calls, s.peak, s.peak_zone, s.bucket_shares["history"]
    (1, 100, <Zone.SAFE: 'safe'>, 1.0)

    Used by the context-ledger notebook (through `WindowLedger.summary`).
    """
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
        raise ValueError(f"entries must be a list or tuple of LedgerEntry (got {entries!r})")
    for i, entry in enumerate(entries):
        if not isinstance(entry, LedgerEntry):
            raise ValueError(f"entries[{i}] must be a LedgerEntry (got {entry!r})")
    require_int(limit, "limit", minimum=1)
    bucket_tokens = {bucket: sum(e.tokens.get(bucket, 0) for e in entries) for bucket in BUCKETS}
    total_tokens = sum(bucket_tokens.values())
    shares = {
        bucket: (bucket_tokens[bucket] / total_tokens if total_tokens else 0.0) for bucket in BUCKETS
    }
    peak_entry = max(entries, key=lambda e: e.total, default=None)  # max keeps the first of equals
    peak = peak_entry.total if peak_entry else 0
    return LedgerSummary(
        calls=len(entries),
        peak=peak,
        peak_name=peak_entry.name if peak_entry else "",
        peak_zone=zone(peak + (peak_entry.reserve_output if peak_entry else 0), limit),
        calls_over=sum(1 for e in entries if zone(e.total + e.reserve_output, limit) is Zone.OVER),
        limit=limit,
        bucket_tokens=bucket_tokens,
        total_tokens=total_tokens,
        bucket_shares=shares,
    )


class WindowLedger:
    """Records one `LedgerEntry` per call and sums them up; optionally refuses over-window calls.

    With ``enforce=True``, a call over the window is still recorded (the
    ledger is an account of every attempt) and then `ContextOverflowError`
    is raised -- the simulated counterpart of the API rejecting the request.
    With ``reserve_output=n`` (the max_tokens of the calls), every zone counts
    the prompt plus n reserved output tokens, and an enforcing ledger also
    refuses a call whose prompt fits but leaves less than n tokens to answer.

    >>> ledger = WindowLedger()
    >>> for name, buckets in lesson_calls():
    ...     _ = ledger.record(name, **buckets)
    >>> s = ledger.summary()
    >>> s.calls, s.peak, s.peak_zone.value, s.calls_over
    (6, 552, 'safe', 0)

    Used by the context-ledger notebook.
    """

    def __init__(
        self,
        window_limit_tokens: int = DEFAULT_WINDOW_LIMIT_TOKENS,
        tokenizer: Tokenizer = FakeTokenizer(),  # frozen and stateless, safe to share
        enforce: bool = False,
        reserve_output: int = 0,
    ) -> None:
        require_int(window_limit_tokens, "window_limit_tokens", minimum=1)
        require_int(reserve_output, "reserve_output", minimum=0)
        _check_tokenizer(tokenizer)
        if not isinstance(enforce, bool):
            raise ValueError(f"enforce must be a bool (got {enforce!r})")
        self.window_limit_tokens = window_limit_tokens
        self.tokenizer = tokenizer
        self.enforce = enforce
        self.reserve_output = reserve_output
        self._entries: list[LedgerEntry] = []

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Return the recorded entries, oldest first (a tuple: the ledger's own list stays private)."""
        return tuple(self._entries)

    def record(self, name: str, **buckets: str) -> LedgerEntry:
        """Measure one call, append its entry and return it; raise if enforcing and over the window.

        >>> WindowLedger().record("research_1", task_state="t" * 48, tool_results="r" * 2160).total
        552
        """
        require_str(name, "name")
        measured = measure(buckets, self.tokenizer, self.window_limit_tokens, reserve_output=self.reserve_output)
        entry = replace(measured, name=name)
        self._entries.append(entry)
        if self.enforce and entry.zone is Zone.OVER:
            raise ContextOverflowError(
                name, entry.total + self.reserve_output, self.window_limit_tokens, self.reserve_output
            )
        return entry

    def summary(self) -> LedgerSummary:
        """Return the `LedgerSummary` of every call recorded so far."""
        return summarize(self._entries, self.window_limit_tokens)

    def __repr__(self) -> str:
        return (
            f"WindowLedger(window_limit_tokens={self.window_limit_tokens}, "
            f"tokenizer={self.tokenizer!r}, enforce={self.enforce}, reserve_output={self.reserve_output}, "
            f"calls={len(self._entries)})"
        )


def join_buckets(buckets: Mapping[str, str]) -> str:
    """Return the prompt a call would send: non-empty bucket texts in `BUCKETS` order, blank-line separated.

    >>> join_buckets({"history": "earlier findings", "task_state": "summarize them"})
    'summarize them\\n\\nearlier findings'

    Used by the context-ledger notebook.
    """
    _check_buckets(buckets)
    return BUCKET_SEPARATOR.join(buckets[b] for b in BUCKETS if buckets.get(b))


def measured_call(ledger: WindowLedger | None, name: str, buckets: Mapping[str, str]) -> str:
    """Return the prompt for one call; record it in `ledger` when one is given.

    The prompt is `join_buckets(buckets)` whether or not a ledger is given:
    measuring never changes what is sent. With ``ledger=None`` (the ledger
    switched off) nothing is measured and nothing is recorded. An enforcing
    ledger may raise `ContextOverflowError` instead of returning.

    >>> ledger = WindowLedger()
    >>> buckets = {"task_state": "plan it"}
    >>> measured_call(ledger, "plan", buckets) == measured_call(None, "plan", buckets) == "plan it"
    True
    >>> len(ledger.entries)
    1

    Used by the context-ledger notebook.
    """
    prompt = join_buckets(buckets)
    if ledger is not None:
        if not isinstance(ledger, WindowLedger):
            raise ValueError(f"ledger must be a WindowLedger or None (got {ledger!r})")
        ledger.record(name, **buckets)
    return prompt


# ---------------------------------------------------------------------------
# The lesson's six calls (invented texts; see `lesson_calls`)
# ---------------------------------------------------------------------------
# A research assistant answers one question in six calls: plan, two parallel
# researchers, summarize, review, report. Search results are invented (the
# sources live on example.com); each text's length was chosen so that
# FakeTokenizer (len // 4) gives the per-call counts listed in `lesson_calls`.
# Names say which call and which bucket a text fills: _<CALL>_TASK is a call's task_state,
# _<CALL>_RESULTS its tool_results, _<CALL>_HISTORY its history; _SOURCE_* is one search
# result (tagged [S1]..[S8] in its text); _*_ANSWER and _*_FINDINGS are what an earlier call
# wrote, carried into a later call's history.

_PLAN_TASK = (
    "任务：为下面的研究问题制定检索计划，拆成三个子问题，每个子问题给两个搜索关键词，按 JSON 列表输出。\n"  # data
    "研究问题：长上下文里，放在中间的信息为什么更容易被模型忽略？"  # data
)
_RESEARCH_1_TASK = (
    "子问题 1：位置效应在公开实验里到底有多大？只依据下面的检索结果回答，每条结论后都注明来源编号。"  # data
)
_RESEARCH_2_TASK = (
    "子问题 2：工程上有哪些缓解位置效应的做法？只依据下面的检索结果回答，每条结论后都注明来源编号。"  # data
)

_SOURCE_POSITION_BIAS = (
    "[S1] Positional bias in long-context question answering -- example.com/papers/position-bias\n"
    "retrieved for: lost in the middle; rank 1 of 8; score 0.91\n"
    "The authors place one relevant passage among 20 distractor passages and move it from the first "
    "slot to the last. Accuracy follows a U shape: highest when the passage comes first, second highest "
    "when it comes last, and lowest when it sits in the middle of the input. Extending the context "
    "window did not remove the dip; models with larger windows showed the same curve at a similar depth. "
    "The effect was weaker for a model tuned on long documents, but it was still clearly there in all runs."
)
_SOURCE_MIDDLE_DIP = (
    "[S2] 长文档问答中的“中间塌陷”现象 -- example.com/blog/middle-dip\n"  # data
    "retrieved for: 中间塌陷 长上下文; rank 2 of 8; score 0.88\n"  # data
    "作者用 50 篇文档做检索增强问答，把含答案的文档依次放在第 1、10、25、40、50 位。"  # data
    "答案在开头或结尾时正确率明显更高，放在中间时最低；文档总数减到 10 篇后，差距明显缩小。"  # data
    "作者的解释是：注意力更容易落在提示词的两端，中间的材料被“稀释”了。"  # data
    "作者也承认，实验只用了一个模型和一种提示词模板，结论能否推广到别的模型还要再验证；"  # data
    "他打算下个月补做多模型对比，并公开全部提示词和评分脚本，"  # data
    "方便别人复现这个实验，也欢迎读者提交自己的测试结果。"  # data
)
_SOURCE_NEEDLE_TESTS = (
    "[S3] Needle-in-a-haystack is not enough -- example.com/notes/needle-tests\n"
    "retrieved for: needle in a haystack; rank 3 of 8; score 0.84\n"
    "Single-fact retrieval tests saturate quickly: most recent models find one planted sentence at any "
    "depth. Tasks that need two or more facts combined, or facts paraphrased rather than copied, still "
    "degrade with length and with depth. The post argues that a flat needle score hides the problem "
    "and recommends multi-hop probes at several depths before trusting a long prompt. "
    "Distractors that look like the answer hurt far more than random filler text does."
)
_SOURCE_DEPTH_REPLICATION = (
    "[S7] Measuring recall by depth: a replication -- example.com/papers/depth-replication\n"
    "retrieved for: recall by depth; rank 4 of 8; score 0.80\n"
    "A replication with four open models and three closed ones, 10 to 100 documents per prompt. "
    "Every model showed lower accuracy for answers placed between 30 % and 70 % of the context than "
    "for answers near either end. The size of the dip varied from 5 to 25 points across models and "
    "grew with the number of documents. Closed-book accuracy is reported as a baseline: for two "
    "models, a mid-context answer scored below it, so the documents made things worse than none."
)
_SOURCE_LAYOUT_GUIDE = (
    "[S4] 工程实践：关键信息放两端 -- example.com/guide/long-prompt-layout\n"  # data
    "retrieved for: 长提示词 布局; rank 1 of 8; score 0.90\n"  # data
    "指南建议把长资料放在提示词前部，把问题和最关键的指令放在最后；"  # data
    "对超过几万 token 的资料，先检索、再把最相关的几段放在问题旁边。"  # data
    "文中还提醒：把资料包在标签里并标明来源，模型更容易区分指令和材料，也便于引用。"  # data
    "指南给出的经验是：与其把二十篇资料全部塞进去，不如只放最相关的五篇，"  # data
    "并把每篇的出处写清楚（来自团队内部评测）。"  # data
)
_SOURCE_REORDER_CHUNKS = (
    "[S5] Reordering retrieved chunks -- example.com/papers/reorder-chunks\n"
    "retrieved for: context reorder; rank 2 of 8; score 0.87\n"
    "Instead of passing retrieved chunks in score order, the system puts the highest-scoring chunks "
    "at both ends of the context and the weakest ones in the middle. On three QA benchmarks this "
    "recovered part of the accuracy lost to position, at no extra token cost at all. Gains were smaller "
    "when fewer than five chunks were retrieved, and vanished when the answer chunk was ranked low "
    "by the retriever in the first place: reordering cannot rescue what retrieval missed. "
    "The code is about 20 lines."
)
_SOURCE_COMPRESS_THEN_ASK = (
    "[S6] 压缩与摘要对位置效应的影响 -- example.com/blog/compress-then-ask\n"  # data
    "retrieved for: 压缩 摘要 位置效应; rank 3 of 8; score 0.81\n"  # data
    "先把长资料压缩成要点再提问，上下文变短，中间塌陷随之减轻；"  # data
    "但摘要会漏掉细节，漏掉的事实之后再也找不回来。作者建议保留原文路径，需要时按需读取。"  # data
    "作者还比较了两种摘要方式：一次性压缩整份资料，和按章节分段压缩。"  # data
    "分段压缩保留的细节更多，但调用次数也更多，总成本大约是前者的两倍。"  # data
)
_SOURCE_QUESTION_TWICE = (
    "[S8] Ask the question twice -- example.com/notes/question-at-both-ends\n"
    "retrieved for: question placement; rank 4 of 8; score 0.77\n"
    "A cheap trick from a practitioner write-up: state the question once before the documents and "
    "once after them. The model then reads the documents already knowing what to look for. In the "
    "author's tests this helped most for prompts above 30k tokens and cost only a few dozen tokens. "
    "The write-up warns that it does not help when the documents contradict each other; in that case "
    "the prompt should say which source to trust and why. It also suggests numbering the documents "
    "and asking the model to cite the numbers, which makes wrong citations easy to spot "
    "in a later review step."
)

_RESEARCH_1_RESULTS = "\n\n".join(
    [_SOURCE_POSITION_BIAS, _SOURCE_MIDDLE_DIP, _SOURCE_NEEDLE_TESTS, _SOURCE_DEPTH_REPLICATION])
_RESEARCH_2_RESULTS = "\n\n".join(
    [_SOURCE_LAYOUT_GUIDE, _SOURCE_REORDER_CHUNKS, _SOURCE_COMPRESS_THEN_ASK, _SOURCE_QUESTION_TWICE])
_SUMMARIZE_TASK = (
    "任务：把两位研究员的发现合并成一份摘要，去掉重复的结论，保留全部来源编号，"  # data
    "并标出两份发现互相矛盾或证据不足的地方。"  # data
)
_SUMMARIZE_RESULTS = _SOURCE_MIDDLE_DIP
_PLAN_ANSWER = (
    '计划：["位置效应有多大", "工程上怎么缓解", "缓解的代价"]，'  # data
    "关键词：lost in the middle、context reorder。"  # data
)
_RESEARCH_1_FINDINGS = (
    "研究员 1 的发现：\n"  # data
    "1. 位置效应真实存在，正确率呈 U 形：答案在开头时最高，在结尾时次之，在中间时最低 [S1][S2][S7]。\n"  # data
    "2. 窗口变大并不能消除它，长文档微调只能减弱一部分 [S1]；文档越多，中间的落差越大 [S2][S7]。\n"  # data
    "3. 单个事实的“大海捞针”测试会掩盖问题，多跳或改写过的事实仍会随长度和深度明显退化 [S3]。\n"  # data
    "4. 有两个模型在答案居中时，甚至不如完全不给资料：资料放错位置，比完全不放还要糟 [S7]。\n"  # data
    "5. 未解决：[S2] 只测了一个模型，能否推广还不清楚；[S7] 没有给出各模型的具体名字，无法对照。"  # data
)
_RESEARCH_2_FINDINGS = (
    "研究员 2 的发现：\n"  # data
    "1. 关键信息放两端，问题和最重要的指令放在最后；资料宁少勿多，只放最相关的几篇 [S4]。\n"  # data
    "2. 检索结果按得分重排，把最强的片段放在两端；但检索没召回的，重排也救不回来 [S5]。\n"  # data
    "3. 先压缩再提问能减轻塌陷，但要保留原文路径，以便按需找回细节；分段压缩更细，但成本约翻倍 [S6]。\n"  # data
    "4. 问题在资料前后各写一遍，成本只有几十个 token；给资料编号并要求引用编号 [S8]。\n"  # data
    "5. 未解决：几种做法叠加时效果能否相加，没有来源测过；也没有来源系统地比较过它们的成本。"  # data
)
_SUMMARIZE_HISTORY = _PLAN_ANSWER + "\n\n" + _RESEARCH_1_FINDINGS + "\n\n" + _RESEARCH_2_FINDINGS
_SUMMARY_ANSWER = (
    "摘要：中间的信息最容易被忽略，正确率呈 U 形，窗口变大也不能消除，资料越多落差越大 [S1][S2][S7]。"  # data
    "缓解办法：关键信息放两端、资料宁少勿多 [S4]，检索结果重排 [S5]，"  # data
    "压缩时保留原文路径 [S6]，问题前后各写一遍 [S8]。"  # data
    "代价方面，分段压缩的调用成本约为一次性压缩的两倍 [S6]，其余做法几乎不增加 token。"  # data
)
_REVIEW_ANSWER = (
    "审阅意见：[S2] 只有一篇博客实验，应注明“单一来源”；“不能消除”说得过满，建议改为“没有消除”；"  # data
    "计划里的第三个子问题（缓解的代价）在摘要中没有回答，请补上 [S6] 的成本数据，并注明出处来源。"  # data
)
_REVIEW_TASK = (
    "任务：审阅下面的摘要，对照研究计划，检查每个子问题是否都回答了、"  # data
    "每条结论是否都有来源支持，列出缺证据或说过头的地方。"  # data
)
_REVIEW_HISTORY = _PLAN_ANSWER + "\n" + _SUMMARY_ANSWER
_REPORT_TASK = (
    "任务：根据摘要和审阅意见写最终研究报告，先给出一句话结论，再列证据和局限，"  # data
    "每条证据后注明来源编号，全文不要超过 600 个汉字。"  # data
)
_REPORT_HISTORY = _SUMMARY_ANSWER + "\n" + _REVIEW_ANSWER


def lesson_calls() -> list[tuple[str, dict[str, str]]]:
    """Return the six calls of the lesson's research run: (name, buckets) in call order.

    The lesson quotes only the totals (buckets 0 / 88 / 1,080 / 277 tokens,
    peak 552 of 8,000); the per-call split below is *derived* -- invented
    texts whose FakeTokenizer counts reproduce those totals:

    ==========  ======  ==========  ============  =======  =====
    call        system  task_state  tool_results  history  total
    ==========  ======  ==========  ============  =======  =====
    plan             0          20             0        0     20
    research_1       0          12           540        0    552
    research_2       0          12           460        0    472
    summarize        0          14            80      150    244
    review           0          14             0       60     74
    report           0          16             0       67     83
    total            0          88         1,080      277  1,445
    ==========  ======  ==========  ============  =======  =====

    The system bucket is empty because the assistant sends one prompt string
    per call, with no separate system message.

    >>> [name for name, _ in lesson_calls()]
    ['plan', 'research_1', 'research_2', 'summarize', 'review', 'report']

    Used by the context-ledger notebook.
    """
    return [
        ("plan", {"system": "", "task_state": _PLAN_TASK, "tool_results": "", "history": ""}),
        ("research_1", {"system": "", "task_state": _RESEARCH_1_TASK, "tool_results": _RESEARCH_1_RESULTS,
                        "history": ""}),
        ("research_2", {"system": "", "task_state": _RESEARCH_2_TASK, "tool_results": _RESEARCH_2_RESULTS,
                        "history": ""}),
        ("summarize", {"system": "", "task_state": _SUMMARIZE_TASK, "tool_results": _SUMMARIZE_RESULTS,
                       "history": _SUMMARIZE_HISTORY}),
        ("review", {"system": "", "task_state": _REVIEW_TASK, "tool_results": "", "history": _REVIEW_HISTORY}),
        ("report", {"system": "", "task_state": _REPORT_TASK, "tool_results": "", "history": _REPORT_HISTORY}),
    ]


@dataclass(frozen=True)
class LongHaul:
    """A single-window research run that reads one source after another and never clears anything.

    Every call carries the resident `system` and `task_state` texts; after
    source k the window also holds k source excerpts (`tool_results`) and k
    findings the model wrote about them (`history`). Sizes are in tokens as
    `FakeTokenizer` counts them. The ledger lesson quotes three facts of such
    a run: source 5 already uses 5,065 of 8,000 tokens (caution), and the run
    dies at source 11. The defaults below are the reconstruction's choice
    (derived) that reproduces all three: 2,465 + 520 x k tokens after source k.

    >>> h = LongHaul()
    >>> h.system + h.task_state + 5 * (h.source + h.finding)
    5065
    """

    system: int = 2000      # tokens: standing instructions, sent with every call
    task_state: int = 465   # tokens: the plan and the current instruction
    source: int = 450       # tokens: one source excerpt read into the window
    finding: int = 70       # tokens: the model's notes on that source

    def __post_init__(self) -> None:
        for name in ("system", "task_state", "source", "finding"):
            require_int(getattr(self, name), name, minimum=0)


def _filler(label: str, tokens: int) -> str:
    """Return an ASCII text of exactly 4 x `tokens` characters that starts with `label`."""
    size = 4 * tokens
    if size == 0:
        return ""
    text = (label + " " + "lorem ipsum " * (size // 12 + 1))[: size - 1]
    return text + "\n"


def long_haul_calls(sources: int = 11, haul: LongHaul = LongHaul()) -> list[tuple[str, dict[str, str]]]:
    """Return one call per source of a `LongHaul` run: (name, buckets), names "S01", "S02", ...

    Texts are invented filler whose FakeTokenizer counts are exact; each
    bucket's count after source k is its per-source size times k.

    >>> calls = long_haul_calls(5)
    >>> measure(calls[-1][1], FakeTokenizer(), 8000).total
    5065

    Used by the context-ledger notebook.
    """
    require_int(sources, "sources", minimum=1)
    if not isinstance(haul, LongHaul):
        raise ValueError(f"haul must be a LongHaul (got {haul!r})")
    system = _filler("[system]", haul.system)
    task_state = _filler("[task]", haul.task_state)
    calls = []
    for k in range(1, sources + 1):
        calls.append((f"S{k:02d}", {
            "system": system,
            "task_state": task_state,
            "tool_results": "".join(_filler(f"[S{i:02d}]", haul.source) for i in range(1, k + 1)),
            "history": "".join(_filler(f"[finding S{i:02d}]", haul.finding) for i in range(1, k + 1)),
        }))
    return calls
