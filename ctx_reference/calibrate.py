"""Reconciling the token estimate with real counts: error by kind of text, and rates fitted from receipts.

What the model covers: the ledger measures before a call with an estimate; after the call the
API's usage receipt says how many tokens the prompt really had. Setting the two side by side
("对账") says by how much the estimate is off, and for which kind of text, and a least-squares
fit over the receipts corrects the estimate's coefficients. The estimate here is linear in two
counts of a text: ASCII characters (English, code, JSON punctuation) and non-ASCII characters
(Chinese): ``tokens ~ per_ascii * ascii + per_non_ascii * non_ascii``. The workbook's
`estimate_tokens` is this estimate with 1/4 and 1 (rounded up).

The workbook's own sample texts, of four kinds (`KINDS`): Chinese prose, English prose, code,
JSON tool output; each kind has `FIT_TEXTS` (the texts the receipts are of) and `HELD_OUT_TEXTS`
(texts of the same kinds that no fit sees). `RECEIPT_TOKENS` and `HELD_OUT_TOKENS` are the real
counts of those texts under the two real rulers of `ctx_reference.rulers`, recorded as data so
that the exercise and its grading need no tokenizer (tests recount them when the tokenizers are
installed).

What it leaves out: per-message overhead of chat templates (a few tokens per message: fit an
intercept per call if you need it), images, and weighting receipts by how much they cost.

Vocabulary:
    receipt        -- (text, prompt_tokens): a text that was sent and the tokens the API billed.
    relative error -- (estimate - real) / real; negative: the estimate undercounts, so the
                      ledger's alarm rings late.
    rates          -- (per_ascii, per_non_ascii): tokens per ASCII and per non-ASCII character.

Used by notebook 09-context-ledger (section "对账：校准估算").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ctx_reference._validate import require_int, require_real, require_str
from ctx_reference.i18n import N_
from ctx_reference.ledger import BUCKETS, LongHaul, lesson_calls, long_haul_calls
from ctx_reference.tables import Labels
from ctx_reference.tokens import ASCII_LIMIT, FakeTokenizer, Tokenizer

__all__ = [
    "KINDS",
    "KIND_LABELS",
    "FIT_TEXTS",
    "HELD_OUT_TEXTS",
    "RECEIPT_TOKENS",
    "HELD_OUT_TOKENS",
    "Receipt",
    "LinearEstimate",
    "char_counts",
    "relative_error",
    "error_by_kind",
    "lesson_bucket_texts",
    "usage_receipts",
    "held_out_receipts",
    "receipt_error_by_kind",
    "fit_rates",
    "chinese_long_haul_calls",
]

#: The kinds of text, in the order tables show them.
KINDS = ("zh_prose", "en_prose", "code", "json")
#: How tables and plots name each kind, in the reader's language (the lesson's buckets keep their own names).
#: Results are keyed by the kinds themselves (``"zh_prose"``); only what is shown goes through these labels.
KIND_LABELS = Labels({"zh_prose": N_("中文"), "en_prose": N_("英文"), "code": N_("代码"), "json": N_("JSON 工具输出")})

_DIGITS = 6  # decimals the rates are rounded to before a count is rounded up (0.1 * 30 is 3.0000000000000004)

# ---------------------------------------------------------------------------------------------
# The workbook's sample texts (invented for it). JSON texts are built from dicts so that the
# text is exactly what a tool would print.
# ---------------------------------------------------------------------------------------------

_ZH_FIT = (
    "上下文窗口像一张有限的书桌：资料、指令和历史记录都要摆在上面。桌面摆满以后，新来的材料只能挤掉旧的，"  # data
    "或者干脆放不下。所以在把请求发出去之前，先估一估这一轮要占多大地方，比事后收到一条拒绝消息要体面得多。"  # data
    "估算不必精确到个位，但要知道它往哪个方向偏：偏少，警报就会响得太晚。",  # data
    "我们让助手读完三份会议纪要，再写一页周报。第一份纪要很长，记录了每个人的发言；第二份只有决定事项；"  # data
    "第三份夹杂着许多表格。助手最后写出的周报漏掉了第二份里的一个截止日期，原因不是它读不懂，"  # data
    "而是那一段被埋在两份长材料的中间。后来我们把决定事项单独放在提示词的末尾，这个问题就没有再出现。",  # data
    "缓存命中的前提是前缀一字不差。系统提示词里哪怕只多了一个空格、换了一个时间戳，后面所有内容都得重新计费。"  # data
    "因此，经常变化的部分要放在最后，稳定的部分放在最前面，并且保持排序固定。"  # data
    "这条规则听起来琐碎，但在每天调用上万次的服务里，它省下的钱相当可观。",  # data
)
_ZH_HELD_OUT = (
    "评测集不是越大越好。一百条精心挑选、覆盖各种边界情况的用例，往往比一万条随手收集的日志更能说明问题。"  # data
    "每次改动提示词之后，都要把修好的和改坏的分别列出来，而不是只看总的通过率：通过率不变，"  # data
    "可能是修好了五条、又改坏了五条。",  # data
    "长任务里最容易丢的是那些早就说过、后来再没提起的约束，比如“报告不要超过两页”或者“只引用公开资料”。"  # data
    "压缩摘要时，摘要模型往往觉得这些话不重要，就把它们删掉了。"  # data
    "一个简单的办法是把这类约束写进一个单独的笔记文件，"  # data
    "每次压缩后原样放回上下文。",  # data
)
_EN_FIT = (
    "Before a request leaves the process, the ledger splits the prompt into four buckets and counts each one. "
    "Nothing is trimmed or rewritten; the ledger only writes down where the tokens went. When a call crosses "
    "sixty percent of the window, the agent still has room to compact calmly; at eighty-five percent it should "
    "finish the current step and stop starting new work.",
    "Our first retrieval pipeline returned the ten best chunks in score order. Accuracy dropped whenever the "
    "answer sat in the fourth or fifth chunk, because those ended up in the middle of a long prompt. Moving the "
    "two strongest chunks to the ends of the context fixed most of the failures without adding a single token.",
    "A tokenizer is a lookup table learned from data. Frequent words become single tokens, rare words are split "
    "into pieces, and characters the training data rarely saw may cost several tokens each. That is why two "
    "models can disagree about the size of the same prompt, and why an estimate should be checked against real "
    "usage now and then.",
)
_EN_HELD_OUT = (
    "Prompt caching rewards stable prefixes. Put the long, unchanging instructions first, keep their order "
    "fixed, and append the parts that change on every call at the very end. A timestamp near the top of the "
    "system prompt quietly turns every request into a cache miss.",
    "When an eval shows the same pass rate before and after a prompt change, look at the individual cases. "
    "Five cases may have been fixed while five others broke, and the users who relied on the broken ones will "
    "notice long before the dashboard does.",
)
_CODE_FIT = (
    'def trim_lines(text: str, head: int, tail: int) -> str:\n'
    '    lines = text.splitlines()\n'
    '    if head + tail >= len(lines):\n'
    '        return text\n'
    '    skipped = len(lines) - head - tail\n'
    '    marker = f"... [{skipped} lines omitted] ..."\n'
    '    return "\\n".join(lines[:head] + [marker] + lines[len(lines) - tail:])\n',
    'class Budget:\n'
    '    """Tokens left for one request."""\n'
    '\n'
    '    def __init__(self, window: int, reserve: int = 1_000) -> None:\n'
    '        if reserve >= window:\n'
    '            raise ValueError(f"reserve must be < window (got {reserve!r})")\n'
    '        self.window = window\n'
    '        self.reserve = reserve\n'
    '\n'
    '    def fits(self, used: int) -> bool:\n'
    '        return used + self.reserve <= self.window\n',
    'export async function fetchPage(url: string, maxBytes = 65_536): Promise<string> {\n'
    '  const response = await fetch(url, { headers: { "user-agent": "ledger-demo/0.1" } });\n'
    '  if (!response.ok) {\n'
    '    throw new Error(`HTTP ${response.status} for ${url}`);\n'
    '  }\n'
    '  const body = await response.text();\n'
    '  return body.length > maxBytes ? body.slice(0, maxBytes) : body;\n'
    '}\n',
)
_CODE_HELD_OUT = (
    'for name, buckets in calls:\n'
    '    entry = ledger.record(name, **buckets)\n'
    '    if entry.zone is Zone.CAUTION:\n'
    '        notes.append(f"{name}: {entry.total:,} tokens, time to compact")\n'
    '    elif entry.zone is Zone.OVER:\n'
    '        raise RuntimeError(f"{name} does not fit")\n',
    "SELECT student_id, assignment, SUM(score) AS total\n"
    "FROM grades\n"
    "WHERE status = 'graded' AND assignment LIKE '0%'\n"
    "GROUP BY student_id, assignment\n"
    "ORDER BY total DESC, student_id\n"
    "LIMIT 20;\n",
)


def _json(value: object, indent: int | None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


_JSON_FIT = (
    _json({"query": "长上下文 位置效应", "results": [  # data
        {"rank": 1, "title": "Positional bias in long-context QA",
         "url": "https://example.com/papers/position-bias", "score": 0.91},
        {"rank": 2, "title": "长文档问答中的中间塌陷",  # data
         "url": "https://example.com/blog/middle-dip", "score": 0.88},
    ], "took_ms": 184}, indent=2),
    _json({"path": "reports/2026-11", "entries": [
        {"name": "summary.md", "size": 4213, "modified": "2026-11-28T09:14:02Z"},
        {"name": "raw_results.csv", "size": 981544, "modified": "2026-11-28T09:13:57Z"},
        {"name": "figures", "type": "dir"},
    ], "truncated": False}, indent=None),
    _json({"events": [
        {"id": "evt_0192", "title": "季度复盘", "start": "2026-12-03T14:00:00+08:00",  # data
         "end": "2026-12-03T15:30:00+08:00", "attendees": ["lin@example.com", "zhou@example.com"]},
        {"id": "evt_0193", "title": "Design sync", "start": "2026-12-04T10:00:00+08:00",
         "end": "2026-12-04T10:45:00+08:00", "attendees": []},
    ], "next_page": None}, indent=2),
)
_JSON_HELD_OUT = (
    _json({"status": "ok", "rows": [
        {"sku": "A-1042", "name": "机械键盘", "stock": 17, "price": 399.0},  # data
        {"sku": "B-2210", "name": "USB-C hub", "stock": 0, "price": 129.5},
    ], "currency": "CNY"}, indent=2),
    _json({"error": {"code": "context_length_exceeded",
                     "message": "This request uses 131,204 tokens; the limit is 128,000.", "param": "messages"},
           "request_id": "req_7f3a9c"}, indent=None),
)

#: The texts the usage receipts are of, by kind.
FIT_TEXTS: Mapping[str, tuple[str, ...]] = {
    "zh_prose": _ZH_FIT, "en_prose": _EN_FIT, "code": _CODE_FIT, "json": _JSON_FIT,
}
#: Texts of the same kinds that no fit sees.
HELD_OUT_TEXTS: Mapping[str, tuple[str, ...]] = {
    "zh_prose": _ZH_HELD_OUT, "en_prose": _EN_HELD_OUT, "code": _CODE_HELD_OUT, "json": _JSON_HELD_OUT,
}

#: Real token counts of FIT_TEXTS (kind by kind, in order) under each real ruler, recorded with
#: tiktoken from the verified data files (tests/test_calibrate.py recounts them).
RECEIPT_TOKENS: Mapping[str, Mapping[str, tuple[int, ...]]] = {
    "o200k_base": {"zh_prose": (110, 109, 94), "en_prose": (71, 60, 65), "code": (84, 93, 98), "json": (132, 99, 175)},
    "Qwen": {"zh_prose": (94, 94, 79), "en_prose": (71, 60, 66), "code": (84, 94, 101), "json": (130, 121, 215)},
}
#: Real token counts of HELD_OUT_TEXTS, recorded the same way.
HELD_OUT_TOKENS: Mapping[str, Mapping[str, tuple[int, ...]]] = {
    "o200k_base": {"zh_prose": (89, 90), "en_prose": (52, 49), "code": (67, 46), "json": (102, 53)},
    "Qwen": {"zh_prose": (72, 75), "en_prose": (52, 49), "code": (65, 47), "json": (110, 61)},
}


@dataclass(frozen=True)
class Receipt:
    """One usage receipt: the text that was sent and the prompt tokens the API reported for it.

    >>> Receipt("hello world", 2).prompt_tokens
    2
    """

    text: str
    prompt_tokens: int

    def __post_init__(self) -> None:
        require_str(self.text, "text")
        require_int(self.prompt_tokens, "prompt_tokens", minimum=0)


@dataclass(frozen=True)
class LinearEstimate:
    """A `Tokenizer` that estimates ``ceil(per_ascii * ASCII chars + per_non_ascii * other chars)``.

    ``LinearEstimate(0.25, 1.0)`` is the workbook's estimate counted over the whole text.

    >>> LinearEstimate(0.25, 1.0).count("token 预算")  # 6 * 0.25 + 2 * 1 = 3.5 -> 4
    4
    >>> LinearEstimate(0.1, 0.0).count("a" * 30)  # exactly 3, not 3.0000000000000004 -> 4
    3
    """

    per_ascii: float
    per_non_ascii: float

    def __post_init__(self) -> None:
        for name in ("per_ascii", "per_non_ascii"):
            value = require_real(getattr(self, name), name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0 (got {getattr(self, name)!r})")

    def count(self, text: str) -> int:
        """Return the estimated tokens of ``text``, rounded up."""
        ascii_chars, non_ascii_chars = char_counts(text)
        tokens = round(self.per_ascii * ascii_chars + self.per_non_ascii * non_ascii_chars, _DIGITS)
        return math.ceil(tokens)


def char_counts(text: str) -> tuple[int, int]:
    """Return (ASCII characters, non-ASCII characters) of ``text``: the estimate's two features.

    >>> char_counts("token 预算")
    (6, 2)
    """
    require_str(text, "text")
    ascii_chars = sum(1 for ch in text if ord(ch) < ASCII_LIMIT)
    return ascii_chars, len(text) - ascii_chars


def relative_error(estimated: int, real: int) -> float:
    """Return (estimated - real) / real: negative when the estimate undercounts.

    >>> relative_error(38, 50), relative_error(60, 50)
    (-0.24, 0.2)
    """
    require_int(estimated, "estimated", minimum=0)
    require_int(real, "real", minimum=1)
    return (estimated - real) / real


def _check_ruler(ruler: object, name: str) -> Tokenizer:
    if isinstance(ruler, (str, bytes)) or not isinstance(ruler, Tokenizer):
        raise ValueError(f"{name} must have a count(text) method (got {ruler!r})")
    return ruler


def _check_texts_by_kind(texts_by_kind: object) -> Mapping[str, Sequence[str]]:
    if not isinstance(texts_by_kind, Mapping) or not texts_by_kind:
        raise ValueError(f"texts_by_kind must be a non-empty mapping of kind to texts (got {texts_by_kind!r})")
    for kind, texts in texts_by_kind.items():
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ValueError(f"texts_by_kind[{kind!r}] must be a non-empty list of texts (got {texts!r})")
        for text in texts:
            require_str(text, f"a text of {kind!r}")
    return texts_by_kind


def error_by_kind(
    texts_by_kind: Mapping[str, Sequence[str]], estimate: Tokenizer, real: Tokenizer
) -> dict[str, float]:
    """Return, per kind, the relative error of ``estimate``'s total over its texts against ``real``'s.

    Totals, not an average of ratios: a long text weighs more, as it does in a window.

    >>> from ctx_reference.tokens import FakeTokenizer
    >>> error_by_kind({"zh": ["上下文工程" * 8]}, FakeTokenizer(), LinearEstimate(0.0, 1.0))
    {'zh': -0.75}

    Used by notebook 09-context-ledger.
    """
    _check_texts_by_kind(texts_by_kind)
    _check_ruler(estimate, "estimate")
    _check_ruler(real, "real")
    errors = {}
    for kind, texts in texts_by_kind.items():
        real_total = sum(real.count(text) for text in texts)
        if real_total == 0:
            raise ValueError(f"the texts of {kind!r} have 0 real tokens: no relative error")
        errors[kind] = relative_error(sum(estimate.count(text) for text in texts), real_total)
    return errors


def lesson_bucket_texts() -> dict[str, tuple[str, ...]]:
    """Return the non-empty bucket texts of the lesson's six calls, by bucket (the empty `system` left out).

    >>> {bucket: len(texts) for bucket, texts in lesson_bucket_texts().items()}
    {'task_state': 6, 'tool_results': 3, 'history': 3}
    """
    texts: dict[str, list[str]] = {bucket: [] for bucket in BUCKETS}
    for _, buckets in lesson_calls():
        for bucket in BUCKETS:
            if buckets.get(bucket):
                texts[bucket].append(buckets[bucket])
    return {bucket: tuple(found) for bucket, found in texts.items() if found}


def _receipts(texts: Mapping[str, tuple[str, ...]], tokens: Mapping[str, Mapping[str, tuple[int, ...]]],
              ruler_name: str) -> dict[str, list[Receipt]]:
    if ruler_name not in tokens:
        raise ValueError(f"ruler_name must be one of {', '.join(tokens)} (got {ruler_name!r})")
    return {kind: [Receipt(text, count) for text, count in zip(texts[kind], tokens[ruler_name][kind], strict=True)]
            for kind in KINDS}


def usage_receipts(ruler_name: str) -> dict[str, list[Receipt]]:
    """Return the receipts of `FIT_TEXTS` under the real ruler ``ruler_name`` ("o200k_base" or "Qwen"), by kind.

    Plain recorded data: no tokenizer is needed.

    Used by notebook 09-context-ledger (the fitting exercise).
    """
    return _receipts(FIT_TEXTS, RECEIPT_TOKENS, ruler_name)


def held_out_receipts(ruler_name: str) -> dict[str, list[Receipt]]:
    """Return the receipts of `HELD_OUT_TEXTS` under ``ruler_name``, by kind (texts no fit sees)."""
    return _receipts(HELD_OUT_TEXTS, HELD_OUT_TOKENS, ruler_name)


def receipt_error_by_kind(receipts_by_kind: Mapping[str, Sequence[Receipt]], estimate: Tokenizer) -> dict[str, float]:
    """Return, per kind, the relative error of ``estimate``'s total against the receipts' total.

    >>> receipt_error_by_kind({"en": [Receipt("a" * 40, 8)]}, LinearEstimate(0.25, 1.0))
    {'en': 0.25}
    """
    _check_ruler(estimate, "estimate")
    if not isinstance(receipts_by_kind, Mapping) or not receipts_by_kind:
        raise ValueError(f"receipts_by_kind must be a non-empty mapping (got {receipts_by_kind!r})")
    errors = {}
    for kind, receipts in receipts_by_kind.items():
        _check_receipts(receipts, f"receipts_by_kind[{kind!r}]")
        real_total = sum(r.prompt_tokens for r in receipts)
        if real_total == 0:
            raise ValueError(f"the receipts of {kind!r} report 0 tokens: no relative error")
        errors[kind] = relative_error(sum(estimate.count(r.text) for r in receipts), real_total)
    return errors


def _check_receipts(receipts: object, name: str) -> Sequence[Receipt]:
    if isinstance(receipts, (str, bytes)) or not isinstance(receipts, Sequence) or not receipts:
        raise ValueError(f"{name} must be a non-empty list of Receipt (got {receipts!r})")
    for i, receipt in enumerate(receipts):
        if not isinstance(receipt, Receipt):
            raise ValueError(f"{name}[{i}] must be a Receipt (got {receipt!r})")
    return receipts


def fit_rates(receipts: Sequence[Receipt]) -> tuple[float, float]:
    """Return (per_ascii, per_non_ascii), the least-squares rates of ``tokens ~ a * ASCII + b * non-ASCII``.

    No intercept: an empty text has no tokens. The receipts must tell the two rates apart (not
    all of one script, not all in the same proportion), else ValueError.

    Worked by hand: 40 ASCII characters billed 10 tokens, 10 Chinese characters 15, and both
    together 25: the fit is exact, 0.25 and 1.5.

    >>> fit_rates([Receipt("a" * 40, 10), Receipt("中" * 10, 15), Receipt("a" * 40 + "中" * 10, 25)])
    (0.25, 1.5)

    Used by notebook 09-context-ledger (the learner writes it).
    """
    _check_receipts(receipts, "receipts")
    features = np.array([char_counts(r.text) for r in receipts], dtype=float)
    tokens = np.array([r.prompt_tokens for r in receipts], dtype=float)
    if np.linalg.matrix_rank(features) < 2:
        raise ValueError(
            f"receipts must include texts with ASCII and texts with non-ASCII characters in different "
            f"proportions to tell the two rates apart (got {len(receipts)} receipt(s) that do not)"
        )
    (per_ascii, per_non_ascii), *_ = np.linalg.lstsq(features, tokens, rcond=None)
    return round(float(per_ascii), 12) + 0.0, round(float(per_non_ascii), 12) + 0.0


def chinese_long_haul_calls(sources: int = 11, haul: LongHaul | None = None) -> list[tuple[str, dict[str, str]]]:
    """Return `long_haul_calls` written in Chinese: each bucket is Chinese prose of as many characters as
    `FakeTokenizer` counts tokens in the original, so the workbook's estimate (one token per Chinese
    character) counts exactly the lesson's sizes: 5,065 tokens at source 5, over 8,000 at source 11.

    The prose is the workbook's Chinese sample texts, repeated and cut to length.

    >>> from ctx_reference.tokens import estimate_tokens
    >>> sum(estimate_tokens(text) for text in chinese_long_haul_calls(5)[-1][1].values())
    5065

    Used by notebook 09-context-ledger (section "对账：校准估算").
    """
    prose = "".join(FIT_TEXTS["zh_prose"] + HELD_OUT_TEXTS["zh_prose"])
    fake = FakeTokenizer()

    def chinese(text: str) -> str:
        size = fake.count(text)
        return (prose * (size // len(prose) + 1))[:size]

    return [(name, {bucket: chinese(text) for bucket, text in buckets.items()})
            for name, buckets in long_haul_calls(sources, LongHaul() if haul is None else haul)]
