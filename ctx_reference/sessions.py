"""State across sessions: what a long task keeps when one context window is not enough.

What the model covers: a task that runs over several sessions, each of which starts from a fresh
context. Nothing the model saw in an earlier session survives unless it was written outside the
context: a progress file (what is done, what comes next, the decisions taken and the attempts
that failed) and the code itself, whose commit log the next session can read. Each session's work
leaves a list of `Record`s; at its end a hand-off writes the progress file, and the next session
restores its starting context from that file. `simulate_sessions` compares three hand-offs:

- ``"none"``: nothing is written; the next session knows only what the commit log shows.
- ``"progress"``: a progress file under a token budget (`write_progress` chooses the records,
  `restore` reads them back).
- ``"transcript"``: the whole transcript of every earlier session is pasted into the next one.

What it leaves out: what a model does with what it knows (a known failed attempt is assumed not
to be retried, an unknown one to be retried); the contents of the work itself; real tokenizers
(`estimate_tokens` prices every line).

Vocabulary:
- session: 1-based; a fresh context window. turn: 1-based, counted over the whole task.
- record: one line of state -- kind ``done`` (a finished step, also committed), ``next`` (the
  step to take next), ``decision`` (a choice and its reason) or ``failed`` (an attempt that did
  not work, and why).
- progress file: one header line and one line per record, ``[kind] t<turn>: <text>``.
- starting context: the tokens a session begins with (base + what the hand-off brought in).
- known: a record is known to a session if it is in its starting context, or, for ``done``
  records, among the newest `git_log_lines` commits.

Used by notebook 10 (sessions).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ctx_reference._validate import require_callable, require_int, require_str
from ctx_reference.tokens import estimate_tokens

__all__ = [
    "KINDS",
    "KIND_PRIORITY",
    "HANDOFFS",
    "PROGRESS_HEADER",
    "Record",
    "SessionParams",
    "SessionStart",
    "SessionsResult",
    "format_record",
    "record_tokens",
    "parse_record",
    "render_progress",
    "write_progress",
    "restore",
    "session_records",
    "simulate_sessions",
]

#: The kinds of record, in the order a progress file lists them.
KINDS = ("next", "failed", "decision", "done")
#: Which kinds a budget-limited hand-off keeps first (highest first): the next step, then what
#: failed (nothing else records it), then decisions, then finished steps (the commit log has them).
KIND_PRIORITY = ("next", "failed", "decision", "done")
#: The hand-offs `simulate_sessions` knows.
HANDOFFS = ("none", "progress", "transcript")
#: First line of every progress file.
PROGRESS_HEADER = "# progress"

_LINE = re.compile(r"^\[(next|failed|decision|done)\] t(\d+): (.+)$")


@dataclass(frozen=True)
class Record:
    """One line of state: kind, the turn it comes from (1-based) and its text.

    >>> format_record(Record("failed", 7, "缓存加锁：死锁"))
    '[failed] t7: 缓存加锁：死锁'
    """

    kind: str
    turn: int
    text: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {self.kind!r})")
        require_int(self.turn, "turn", minimum=1)
        require_str(self.text, "text")
        if not self.text.strip() or "\n" in self.text or self.text != self.text.strip():
            raise ValueError(f"text must be one non-blank line without surrounding spaces (got {self.text!r})")


def format_record(record: Record) -> str:
    """Return the progress-file line of `record`: ``[kind] t<turn>: <text>``.

    >>> format_record(Record("next", 20, "给导出接口加分页"))
    '[next] t20: 给导出接口加分页'
    """
    if not isinstance(record, Record):
        raise ValueError(f"record must be a Record (got {record!r})")
    return f"[{record.kind}] t{record.turn}: {record.text}"


def record_tokens(record: Record) -> int:
    """Return what `record`'s line costs in a progress file: `estimate_tokens` of the line.

    >>> record_tokens(Record("next", 20, "给导出接口加分页"))  # ceil(12 / 4) + 8
    11
    """
    return estimate_tokens(format_record(record))


def parse_record(line: str) -> Record:
    """Return the `Record` written on one progress-file line; ValueError for any other line.

    >>> parse_record("[done] t3: 登录接口加了限流")
    Record(kind='done', turn=3, text='登录接口加了限流')
    """
    require_str(line, "line")
    match = _LINE.match(line.strip())
    if match is None:
        raise ValueError(f"line is not a progress record (got {line!r})")
    return Record(match.group(1), int(match.group(2)), match.group(3))


def render_progress(records: Sequence[Record]) -> str:
    """Return the progress file: the header, then one line per record grouped by `KINDS`, oldest first.

    >>> print(render_progress([Record("done", 1, "建表"), Record("next", 2, "写接口")]))
    # progress
    [next] t2: 写接口
    [done] t1: 建表
    """
    checked = _check_records(records)
    ordered = sorted(checked, key=lambda r: (KINDS.index(r.kind), r.turn))
    return "\n".join([PROGRESS_HEADER] + [format_record(r) for r in ordered])


def write_progress(records: Sequence[Record], budget: int) -> list[Record]:
    """Return the records a progress file of `budget` tokens keeps, in their input order.

    Only the newest ``next`` record is a candidate (older next steps have been acted on).
    Candidates are taken by `KIND_PRIORITY` (next, failed, decision, done), newest turn first
    within a kind (ties keep input order); a record goes in if its line (`record_tokens`) still
    fits in what is left of the budget, otherwise it is skipped and smaller ones may still fit.
    The header line is not counted. The input is not changed.

    Budget 25: the 11-token next step and the 11-token failed attempt fit; the 8-token done step
    does not fit in the 3 tokens left.

    >>> rs = [Record("done", 1, "建好用户表"), Record("failed", 2, "缓存加锁：死锁"),
    ...       Record("next", 3, "给导出接口加分页")]
    >>> [r.kind for r in write_progress(rs, 25)]
    ['failed', 'next']

    Used by notebook 10 (the learner writes it).
    """
    checked = _check_records(records)
    require_int(budget, "budget", minimum=0)
    nexts = [i for i, r in enumerate(checked) if r.kind == "next"]
    newest_next = max(nexts, key=lambda i: (checked[i].turn, -i)) if nexts else None
    candidates = [i for i, r in enumerate(checked) if r.kind != "next" or i == newest_next]
    order = sorted(candidates, key=lambda i: (KIND_PRIORITY.index(checked[i].kind), -checked[i].turn, i))
    left, kept = budget, set()
    for i in order:
        cost = record_tokens(checked[i])
        if cost <= left:
            kept.add(i)
            left -= cost
    return [r for i, r in enumerate(checked) if i in kept]


def restore(progress_text: str) -> list[Record]:
    """Return the records of a progress file, in file order; ValueError naming a malformed line.

    Blank lines and lines starting with ``#`` are skipped.

    >>> restore("# progress\\n[next] t20: 写导出接口\\n\\n[done] t3: 建表")
    [Record(kind='next', turn=20, text='写导出接口'), Record(kind='done', turn=3, text='建表')]

    Used by notebook 10 (the learner writes it).
    """
    require_str(progress_text, "progress_text")
    records = []
    for number, line in enumerate(progress_text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            records.append(parse_record(stripped))
        except ValueError:
            raise ValueError(f"progress_text line {number} is not a record (got {line!r})") from None
    return records


def _check_records(records: object) -> list[Record]:
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise ValueError(f"records must be a list of Record (got {records!r})")
    for i, record in enumerate(records):
        if not isinstance(record, Record):
            raise ValueError(f"records[{i}] must be a Record (got {record!r})")
    return list(records)


@dataclass(frozen=True)
class SessionParams:
    """The multi-session task (all sizes in tokens).

    A session runs `turns_per_session` turns of `turn_tokens` each on top of `base` (the
    3,600-token turn and the 8,000-token base are those of notebook 06's long task), so one
    session's work needs base + 20 × 3,600 = 80,000 of a 100,000 window: a second session's
    worth never fits in the same window. Each turn finishes a step (`p_done`), fails an
    attempt (`p_failed`) or takes a decision (`p_decision`), or leaves nothing worth keeping;
    each session ends with one ``next`` record. `seed` fixes the workload.
    """

    sessions: int = 4
    turns_per_session: int = 20
    base: int = 8_000
    turn_tokens: int = 3_600
    window: int = 100_000
    handoff_budget: int = 400
    git_log_lines: int = 5
    p_done: float = 0.45
    p_failed: float = 0.2
    p_decision: float = 0.15
    seed: int = 2026

    def __post_init__(self) -> None:
        require_int(self.sessions, "sessions", minimum=2)
        for name in ("turns_per_session", "turn_tokens", "window"):
            require_int(getattr(self, name), name, minimum=1)
        for name in ("base", "handoff_budget", "git_log_lines", "seed"):
            require_int(getattr(self, name), name, minimum=0)
        for name in ("p_done", "p_failed", "p_decision"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number between 0 and 1 (got {value!r})")
        if self.p_done + self.p_failed + self.p_decision > 1:
            raise ValueError(
                f"p_done + p_failed + p_decision must be <= 1 "
                f"(got {self.p_done} + {self.p_failed} + {self.p_decision})"
            )

    @property
    def session_tokens(self) -> int:
        """Tokens one session's own work adds to its context: turns_per_session × turn_tokens."""
        return self.turns_per_session * self.turn_tokens


_MODULES = ("登录", "订单", "导出", "搜索", "通知", "支付", "报表", "权限", "缓存", "日志")  # data
_DONE = ("接口写完并通过测试", "补上了边界用例", "重构成纯函数", "加了超时和重试", "修好了并发下的重复提交")  # data
_FAILED = ("直接加全局锁：压测时死锁", "用内存缓存：多实例之间不一致", "改成异步：测试不稳定",  # data
           "升级依赖库：和旧接口不兼容", "按时间排序分页：翻页时漏数据")  # data
_DECISION = ("用游标分页，因为数据会在翻页时变化", "错误码统一放进一个枚举，方便前端对照",  # data
             "时间一律存 UTC，显示时再转换", "先写失败的测试再修，防止回归", "配置从环境变量读，不进仓库")  # data
_NEXT = ("把{m}模块的剩余接口补完", "给{m}模块加集成测试", "排查{m}模块的慢查询", "清理{m}模块的旧代码")  # data


def session_records(params: SessionParams = SessionParams()) -> list[list[Record]]:
    """Return the records each session leaves, one list per session (turns numbered over the task).

    Deterministic for a given `params.seed` (one ``random.Random`` for the whole workload).

    >>> [rs[-1].kind for rs in session_records()]  # every session ends with its next step
    ['next', 'next', 'next', 'next']
    """
    if not isinstance(params, SessionParams):
        raise ValueError(f"params must be a SessionParams (got {params!r})")
    rng = random.Random(params.seed)
    out = []
    for session in range(1, params.sessions + 1):
        records = []
        first = (session - 1) * params.turns_per_session + 1
        for turn in range(first, first + params.turns_per_session):
            draw = rng.random()
            module = rng.choice(_MODULES)
            if draw < params.p_done:
                records.append(Record("done", turn, f"{module}：{rng.choice(_DONE)}"))  # data
            elif draw < params.p_done + params.p_failed:
                records.append(Record("failed", turn, f"{module}：{rng.choice(_FAILED)}"))  # data
            elif draw < params.p_done + params.p_failed + params.p_decision:
                records.append(Record("decision", turn, f"{module}：{rng.choice(_DECISION)}"))  # data
        last = first + params.turns_per_session - 1
        records.append(Record("next", last, rng.choice(_NEXT).format(m=rng.choice(_MODULES))))
        out.append(records)
    return out


@dataclass(frozen=True)
class SessionStart:
    """How session `session` (2, 3, …) starts.

    start_tokens: its starting context; status: ``"ok"`` (room for a session's work),
    ``"crowded"`` (it fits, but less than a session's work is left) or ``"overflow"`` (the
    starting context alone exceeds the window: the request is rejected and the session knows
    nothing); known / total: per kind, how many records of the earlier sessions it knows and how
    many there are (for ``next``, only the latest one counts).
    """

    session: int
    start_tokens: int
    status: str
    known: Mapping[str, int] = field(hash=False)
    total: Mapping[str, int] = field(hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "known", MappingProxyType(dict(self.known)))
        object.__setattr__(self, "total", MappingProxyType(dict(self.total)))

    @property
    def retried(self) -> int:
        """Failed attempts this session does not know about, and so may try again."""
        return self.total["failed"] - self.known["failed"]


@dataclass(frozen=True)
class SessionsResult:
    """One `SessionStart` per session after the first, and the progress files written (for ``"progress"``)."""

    handoff: str
    starts: tuple[SessionStart, ...]
    progress_files: tuple[str, ...] = ()


def simulate_sessions(
    handoff: str,
    params: SessionParams = SessionParams(),
    *,
    write_progress: Callable[[Sequence[Record], int], Sequence[Record]] = write_progress,
    restore: Callable[[str], Sequence[Record]] = restore,
) -> SessionsResult:
    """Return how every session after the first starts under `handoff` (one of `HANDOFFS`).

    ``"progress"``: at the end of each session, `write_progress` chooses, from the records the
    session knew at its start plus its own, those that fit in `params.handoff_budget`; the file is
    `render_progress` of them, and the next session's starting context is base + the file's tokens,
    its knowledge what `restore` reads back. Records left out are gone for good (except ``done``
    records still in the commit log). ``"none"``: base only. ``"transcript"``: base + every earlier
    session's work (`session_tokens` each). Pass your own `write_progress` / `restore` to test them.

    With the defaults, the transcript hand-off is crowded at session 2 (8,000 + 72,000 = 80,000
    leaves 20,000 of a 100,000 window) and overflows at session 3 (152,000).

    >>> [s.status for s in simulate_sessions("transcript").starts]
    ['crowded', 'overflow', 'overflow']
    """
    if handoff not in HANDOFFS:
        raise ValueError(f"handoff must be one of {', '.join(HANDOFFS)} (got {handoff!r})")
    if not isinstance(params, SessionParams):
        raise ValueError(f"params must be a SessionParams (got {params!r})")
    require_callable(write_progress, "write_progress")
    require_callable(restore, "restore")

    per_session = session_records(params)
    starts, files = [], []
    carried: list[Record] = []       # what the progress file hands to the next session
    for session in range(2, params.sessions + 1):
        earlier = [r for rs in per_session[: session - 1] for r in rs]
        previous = per_session[session - 2]
        if handoff == "progress":
            chosen = list(write_progress(list(carried) + list(previous), params.handoff_budget))
            text = render_progress(chosen)
            files.append(text)
            carried = list(restore(text))
            context = carried
            start = params.base + estimate_tokens(text)
        elif handoff == "transcript":
            context = earlier
            start = params.base + (session - 1) * params.session_tokens
        else:
            context = []
            start = params.base
        status = _status(start, params)
        if status == "overflow":
            context = []
        starts.append(_knowledge(session, start, status, earlier, context, params, handoff))
    return SessionsResult(handoff, tuple(starts), tuple(files))


def _status(start: int, params: SessionParams) -> str:
    if start > params.window:
        return "overflow"
    if start + params.session_tokens > params.window:
        return "crowded"
    return "ok"


def _knowledge(session: int, start: int, status: str, earlier: list[Record], context: Sequence[Record],
               params: SessionParams, handoff: str) -> SessionStart:
    in_context = {(r.kind, r.turn, r.text) for r in context}
    done = [r for r in earlier if r.kind == "done"]
    # The code and its commits survive whatever the hand-off: the newest commits are readable.
    logged = done[len(done) - params.git_log_lines:] if params.git_log_lines else []
    in_log = {(r.kind, r.turn, r.text) for r in logged}
    latest_next = [r for r in earlier if r.kind == "next"][-1:]
    if status == "overflow":          # the request is rejected: the session never starts
        in_context, in_log = set(), set()
    known, total = {}, {}
    for kind in KINDS:
        pool = latest_next if kind == "next" else [r for r in earlier if r.kind == kind]
        total[kind] = len(pool)
        known[kind] = sum(1 for r in pool if (r.kind, r.turn, r.text) in in_context
                          or (kind == "done" and (r.kind, r.turn, r.text) in in_log))
    return SessionStart(session, start, status, known, total)
