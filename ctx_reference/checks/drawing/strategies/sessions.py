"""Strategies of notebook 10's exercises ``write_progress(records, budget)`` and ``restore(progress_text)``.

``write_progress``: the text's domain is a list of ``Record`` (any of the four kinds, turns ≥ 1,
one-line texts) and a budget of tokens ≥ 0 ("``records`` is a list of ``Record`` …, and ``budget``
is the progress file's token budget (an integer; the heading line does not count)"). The
strategies draw short lists (one record sometimes twice, as the same object) of the four kinds,
turns of every magnitude up to 1,000 (``_wide.magnitudes``; 1 to 4 weighted, so that equal turns
are common, within a kind and among ``next`` records) and texts of any characters that end no line
(CJK, ASCII, emoji, accented letters, ``#`` and colons weighted; those cost 4 to 9 tokens),
budgets of 0, budgets that are exactly the cost of some of the records (an exact fit, the header
not counted) or one token less, budgets too small for the first candidates but not for later
ones, and one list of more than 256 records whose newest ``next`` comes last. Narrower than the
text: at most six records a list but for that one (the rules rank and skip; more records only
repeat what six hold).

``restore``: the text's domain is any text, read line by line ("``progress_text`` is the text of
the whole progress file"; "first strip each line of leading and trailing whitespace; skip empty
lines and lines that begin with ``#``"; "the turn (an integer)"): lines that are blank (empty, or
any whitespace ``str.isspace`` accepts that ends no line: spaces, tabs, the no-break and
ideographic spaces …; a few spaces and tabs weighted), comments (``#`` at the start, after
indentation too), records ``[kind] t<turn>: <text>`` (turns of every magnitude up to 10**6, 1 to
130 weighted; texts of any characters that end no line, those holding colons, brackets, ``#``,
CJK, emoji, accented letters weighted), padded with such whitespace, joined by ``\\n`` or
``\\r\\n``, with or without the header and a final newline; and the malformed lines a learner's
parser may let through (a kind in another case or a prefix of one, junk before the bracket, a
missing space, colon or ``t``, a turn that is not a number, an empty text). Narrower than the
text: characters that end a line for ``str.splitlines`` (``\\x0b``, ``\\x1c``, ``\\u2028`` …)
stand only as line ends: where else a line ends, the text leaves open.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....sessions import KINDS, Record, format_record, record_tokens, restore, write_progress
from . import Call, call
from ._wide import LINE_ENDS, any_text, characters, magnitudes, weighted, whitespace, with_one_twice

_TURNS = weighted(range(1, 5), magnitudes(1, 1_000))  # small turns weighted: equal turns are common
# One-line texts without surrounding spaces (Record's own rule): any characters that end no line, the author's
# samples of 1 to 6 tokens (CJK, ASCII, emoji and accented letters) weighted.
_IN_A_LINE = characters().filter(lambda ch: ch not in LINE_ENDS)
_ONE_LINE = any_text(max_size=8, domain=_IN_A_LINE).map(str.strip).filter(bool)
_TEXTS = weighted(["写测试", "建好用户表", "ok", "fix it", "缓存加锁：死锁", "a: b", "[x] 不对", "用 # 号",
                   "🙂", "café", "返回 JSON: [code]", "t1: 又一条", "写"], _ONE_LINE)
_RECORDS = st.builds(Record, st.sampled_from(KINDS), _TURNS, _TEXTS)


def _cost(records) -> int:
    return sum(record_tokens(r) for r in records)


@st.composite
def _mixed(draw, records=_RECORDS, max_size=6) -> Call:
    """Up to six records of any kinds (one of them sometimes twice, the same object), and a budget from 0 to all
    of them."""
    rs = draw(with_one_twice(st.lists(records, max_size=max_size)))
    return call(rs, draw(st.integers(0, _cost(rs) + 2)))


@st.composite
def _one_kind(draw) -> Call:
    """Two to five records of one kind (ties of turns frequent), budget for about half of them."""
    kind = draw(st.sampled_from(KINDS[1:]))
    rs = draw(with_one_twice(st.lists(st.builds(Record, st.just(kind), _TURNS, _TEXTS), min_size=2, max_size=5)))
    return call(rs, draw(st.integers(0, _cost(rs))))


@st.composite
def _several_nexts(draw) -> Call:
    """Two to four next records (equal turns frequent) among up to three others, budget enough for all."""
    nexts = draw(st.lists(st.builds(Record, st.just("next"), _TURNS, _TEXTS), min_size=2, max_size=4))
    others = draw(st.lists(_RECORDS, max_size=3))
    rs = draw(st.permutations(nexts + others))
    return call(list(rs), draw(st.sampled_from([_cost(rs), 1_000])))


@st.composite
def _exact_budget(draw) -> Call:
    """A budget that is exactly the cost of some of the records (an exact fit), or one token less."""
    rs = draw(st.lists(_RECORDS, min_size=1, max_size=5))
    some = draw(st.lists(st.sampled_from(rs), min_size=1, max_size=len(rs), unique_by=id))
    return call(rs, max(0, _cost(some) - draw(st.sampled_from([0, 0, 1]))))


@st.composite
def _tight(draw) -> Call:
    """A budget smaller than the first candidates' cost but enough for a cheaper record after them."""
    big = draw(st.lists(st.builds(Record, st.sampled_from(KINDS[:3]), _TURNS,
                                  st.sampled_from(["缓存加锁：死锁", "返回 JSON: [code]", "建好用户表"])),
                        min_size=1, max_size=3))
    small = draw(st.lists(st.builds(Record, st.sampled_from(KINDS), _TURNS, st.sampled_from(["写", "ok", "🙂"])),
                          min_size=1, max_size=3))
    rs = list(draw(st.permutations(big + small)))
    return call(rs, draw(st.integers(0, max(record_tokens(r) for r in big))))


# More records than CPython's small-int cache holds (indices above 256), the newest next step last; a
# budget of 13 keeps it (6 tokens) and one done step (4), so that the expected list reads in one line.
_LONG = st.just(call([Record("next", 1, "写")] + [Record("done", 1, "写")] * 256 + [Record("next", 2, "写测试")],
                     13))

# ---- restore -------------------------------------------------------------------------------------

_BLANKS = weighted(["", " ", "\t", "   ", " \t "], whitespace(0, 4, inline=True))
_COMMENTS = st.sampled_from(["# progress", "#", "# 下面是决定", "  # 缩进的注释", "\t#[done] t1: 注释掉的", "##"])
_PADS = weighted([" ", "  ", "\t", " \t"], whitespace(1, 3, inline=True))
_RECORD_TEXTS = weighted(["写测试", "a", "错误码格式: E 加四位数字", "返回 JSON: [code] 不对", "用 # 号分隔",
                          "🙂 完成", "café ok", "[done] t2: 不是新的一行", "a  b", "x:y"],
                         _ONE_LINE)
_LINE_RECORDS = st.builds(Record, st.sampled_from(KINDS), weighted(range(1, 131), magnitudes(1, 10**6)), _RECORD_TEXTS)


def _text(lines: list[str], newline: str, final: bool) -> str:
    return newline.join(lines) + (newline if final and lines else "")


@st.composite
def _file(draw, bad: st.SearchStrategy[str] | None = None, pads: st.SearchStrategy[str] | None = None,
          min_records: int = 0) -> Call:
    """A progress file: optional header, records, blank and comment lines, joined by \\n or \\r\\n."""
    parts = draw(st.lists(st.one_of(_LINE_RECORDS.map(format_record), _BLANKS, _COMMENTS), max_size=6))
    parts += [format_record(draw(_LINE_RECORDS)) for _ in range(min_records)]
    pads = st.just("") if pads is None else pads
    lines = [draw(pads) + line + draw(pads) if line.startswith("[") else line for line in parts]
    if draw(st.booleans()):
        lines.insert(0, "# progress")
    if bad is not None:
        lines.insert(draw(st.integers(0, len(lines))), draw(bad))
    return call(_text(lines, draw(st.sampled_from(["\n", "\n", "\r\n"])), draw(st.booleans())))


_NO_RECORDS = st.builds(lambda lines, newline: call(newline.join(lines)),
                        st.lists(st.one_of(_BLANKS, _COMMENTS), max_size=4), st.sampled_from(["\n", "\r\n"]))

_MALFORMED = st.sampled_from([
    "TODO: 写测试", "[done] 1: 写测试", "[done] t1 写测试", "[done] tx: 写测试", "[done] t1:", "[done] t1: ",
    "[done]t1: 写测试", "[done] t1:写测试", "done t1: 写测试", "[done] t: 写测试", "x[done] t1: 写测试",
    "- [done] t1: 写测试", "[done] t1.5: 写测试", "[done] t-1: 写测试", "[done]  t1: 写测试", "[done] T1: 写测试",
    "随便写的一句话", "[] t1: 写测试",
])
_WRONG_KINDS = st.sampled_from([
    "[Done] t1: 写测试", "[NEXT] t2: 写测试", "[todo] t1: 写测试", "[nex] t1: 写测试", "[nexts] t1: 写测试",
    "[don] t3: 写测试", "[ done] t1: 写测试", "[done ] t1: 写测试", "[fail] t1: 写测试", "[decisions] t1: 写测试",
])


ORACLES = {"write_progress": write_progress, "restore": restore}

STRATEGIES = {
    "write_progress": {
        "mixed-kinds": _mixed(),
        "one-kind": _one_kind(),
        "several-nexts": _several_nexts(),
        "exact-budgets": _exact_budget(),
        "tight-budgets": _tight(),
        "long-list": _LONG,
    },
    "restore": {
        "well-formed": _file(),
        "padded-lines": _file(pads=_PADS, min_records=1),
        "no-records": _NO_RECORDS,
        "malformed-line": _file(bad=_MALFORMED),
        "wrong-kind": _file(bad=_WRONG_KINDS),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases for write_progress (a case costs about 0.2 ms in a
#: check cell) and about 9,000 for restore (about 0.03 ms) (``benchmarks/bench_checks.py``).
EXAMPLES = {"write_progress": 500, "restore": 1800}
