"""The policy interface of the capstone: a workload, what a policy sees, what it may do.

What this covers:
    * A ``Workload``: every turn's tool and result size (``Step``), the questions the task
      will ask (``(turn, fact_turn)``), the model's window and threshold, and the sizes and
      prices of a turn, a placeholder, a note and a summary.
    * What a policy sees after each turn is appended: a read-only ``ContextView`` (the
      context's size and zone, the turns still in it as ``TurnRecord``, the notes, the
      summary's facts, the protected tools).
    * What a policy may return: ``None``, one action or a list of them. ``Clear`` replaces
      tool results by placeholders (noting the facts it names), ``Compact`` folds all but
      the newest turns into one summary, ``Protect`` stops a tool's results from being
      cleared.
    * The four strategies of the long-task notebook as policies (``BUILTIN_POLICIES``).

What it leaves out: running a policy (``ctx_reference.sim.simulate_policy`` does, and prices
its requests), scoring one (``ctx_reference.policy_score``), and generating workloads
(``ctx_reference.workloads``). As in ``sim``, sizes are fixed numbers, not tokenized text.

Vocabulary:
    turn        -- 1-based; turn t appends user + tool_call + result + answer tokens.
    fact        -- every tool result carries one, the fact of its turn; ``needed`` facts are
                   asked for again later.
    rewrite     -- a Clear or a Compact: it changes earlier parts of the context, so the
                   request of that turn is a cache miss (Protect is not a rewrite).
    live turn   -- a turn not yet folded into the summary (it has a TurnRecord in the view).

All sizes are tokens. The defaults are the long-task notebook's numbers.
Used by the capstone notebook and the leaderboard.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from ctx_reference._validate import require_int, require_real
from ctx_reference.ledger import Zone, zone

__all__ = [
    "ANSWER_TOKENS", "BASE_TOKENS", "BUILTIN_POLICIES", "CACHE_READ", "CACHE_WRITE", "KEEP_TURNS",
    "NOTE_TOKENS", "PLACEHOLDER_TOKENS", "SUMMARY_TOKENS", "THRESHOLD_TOKENS", "TOOL_CALL_TOKENS",
    "USER_TOKENS", "WINDOW_TOKENS", "Action", "Clear", "ClearOldest", "Compact", "CompactOld",
    "ContextView", "Policy", "Protect", "Step", "TurnRecord", "Workload", "keep_everything",
]

# ---------------------------------------------------------------------------
# The per-turn sizes and prices every workload defaults to (the long-task lesson's; tokens).
BASE_TOKENS = 8_000  # system prompt + tool definitions, sent with every request
USER_TOKENS = 200  # one user message per turn
TOOL_CALL_TOKENS = 100  # one tool call per turn
ANSWER_TOKENS = 300  # one assistant answer per turn
WINDOW_TOKENS = 100_000  # the context window of the simulated model
THRESHOLD_TOKENS = 60_000  # manage the context only once it is larger than this
KEEP_TURNS = 5  # the newest turns that management never touches
PLACEHOLDER_TOKENS = 10  # stub left where a tool result was cleared (rebuild's choice)
SUMMARY_TOKENS = 2_000  # size of a compaction summary
NOTE_TOKENS = 30  # one note per cleared fact, clear_notes (rebuild's choice)
CACHE_WRITE = 1.25  # × base input price, per token written to the cache
CACHE_READ = 0.1  # × base input price, per token read from the cache (rebuild's choice)


# ---------------------------------------------------------------------------
# A workload.


@dataclass(frozen=True)
class Step:
    """One turn of a workload: the tool it calls, its result's size, whether its fact matters.

    Every tool result carries one fact (the fact of that turn). ``needed`` is the agent's guess,
    made when it reads the result, that the task will ask for it again; a policy sees it. The
    ``questions`` of a workload are what is really asked: a question may ask for a fact whose
    ``needed`` is False (a wrong guess, see ``ctx_reference.workloads.with_wrong_hints``).
    """

    tool: str
    result: int
    needed: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError(f"tool must be a non-empty str (got {self.tool!r})")
        require_int(self.result, "result", minimum=0)
        if not isinstance(self.needed, bool):
            raise ValueError(f"needed must be True or False (got {self.needed!r})")


@dataclass(frozen=True)
class Workload:
    """A task, a model and prices: what a policy is run on.

    ``steps[t - 1]`` is turn ``t``; ``questions`` lists ``(turn, fact_turn)`` pairs, in turn
    order: at ``turn``, after management, the task needs the fact of ``fact_turn``. Every
    turn appends ``user + tool_call + result + answer`` tokens. ``threshold`` is the model's
    suggested point to start managing; ``window`` is the hard limit. ``placeholder``,
    ``note_tokens``, ``summary_tokens`` and ``summary_capacity`` are what clearing, a note
    and a compaction cost or keep (as in ``ctx_reference.sim.SimParams``).

    >>> w = Workload("tiny", (Step("read", 3_000), Step("grep", 400, needed=True)), ((2, 2),))
    >>> w.turns, w.turn_tokens(2)              # 200 + 100 + 400 + 300
    (2, 1000)
    """

    name: str
    steps: tuple[Step, ...]
    questions: tuple[tuple[int, int], ...] = ()
    base: int = BASE_TOKENS
    user: int = USER_TOKENS
    tool_call: int = TOOL_CALL_TOKENS
    answer: int = ANSWER_TOKENS
    window: int = WINDOW_TOKENS
    threshold: int = THRESHOLD_TOKENS
    placeholder: int = PLACEHOLDER_TOKENS
    note_tokens: int = NOTE_TOKENS
    summary_tokens: int = SUMMARY_TOKENS
    summary_capacity: int | None = None
    cache_write: float = CACHE_WRITE
    cache_read: float = CACHE_READ

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty str (got {self.name!r})")
        if not isinstance(self.steps, tuple) or not all(isinstance(s, Step) for s in self.steps):
            raise ValueError(f"steps must be a tuple of Step (got {self.steps!r})")
        for name in ("base", "user", "tool_call", "answer", "threshold", "placeholder",
                     "note_tokens", "summary_tokens"):
            require_int(getattr(self, name), name, minimum=0)
        require_int(self.window, "window", minimum=1)
        if self.summary_capacity is not None:
            require_int(self.summary_capacity, "summary_capacity", minimum=0)
        if self.threshold > self.window:
            raise ValueError(f"threshold must be <= window ({self.window!r}) "
                             f"(got {self.threshold!r})")
        for name in ("cache_write", "cache_read"):
            value = getattr(self, name)
            require_real(value, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0 (got {value!r})")
        if not isinstance(self.questions, tuple):
            raise ValueError(f"questions must be a tuple of (turn, fact_turn) "
                             f"(got {self.questions!r})")
        last = 0
        for q in self.questions:
            if (not isinstance(q, tuple) or len(q) != 2
                    or any(isinstance(v, bool) or not isinstance(v, int) for v in q)
                    or not 1 <= q[1] <= q[0] <= len(self.steps) or q[0] < last):
                raise ValueError(f"questions must be (turn, fact_turn) pairs in turn order with "
                                 f"1 <= fact_turn <= turn <= {len(self.steps)} (got {q!r})")
            last = q[0]

    @property
    def turns(self) -> int:
        """Return the number of turns."""
        return len(self.steps)

    def turn_tokens(self, turn: int) -> int:
        """Return what turn ``turn`` (1-based) appends: user + tool_call + result + answer."""
        return self.user + self.tool_call + self.steps[turn - 1].result + self.answer


# ---------------------------------------------------------------------------
# What a policy sees.


class TurnRecord(NamedTuple):
    """One turn still in the context (not folded into the summary), as a policy sees it.

    result_tokens -- size of its tool result in full; tokens -- what the turn occupies now
    (the result replaced by a placeholder once cleared); noted -- its fact sits in a note;
    protected -- its tool's results may not be cleared. An immutable named tuple.
    """

    turn: int
    tool: str
    result_tokens: int
    tokens: int
    needed: bool
    cleared: bool = False
    noted: bool = False
    protected: bool = False


_VIEW_FIELDS = ("turn", "tokens", "window", "threshold", "oldest_in_full", "summary_upto",
                "protected_tools", "rewrites", "base", "placeholder", "note_tokens",
                "summary_tokens", "turns", "summary_capacity")


class ContextView(tuple):
    """The context after turn ``turn`` was appended, as the simulation knows it (read-only).

    turn, turns       -- this turn (1-based) and the task's length.
    tokens            -- the context now; window, threshold -- the model's limit and its
                         suggested point to start managing.
    zone              -- the ledger's zone of ``tokens`` in the window (``ledger.zone``).
    records           -- the turns not folded into the summary, oldest first (TurnRecord).
    oldest_in_full    -- the oldest of them whose tool result is still in full (turn + 1: none).
    notes             -- the turns whose fact is in a note.
    summary_upto      -- the last turn folded into the summary (0: no summary yet);
    summary_facts     -- the facts the summary still holds.
    protected_tools   -- tools whose results may not be cleared.
    rewrites          -- rewrites so far; base, placeholder, note_tokens, summary_tokens --
                         the sizes a policy needs to weigh an action.
    summary_capacity  -- how many facts a summary keeps (the newest ones; None: all of them).

    ``records``, ``notes`` and ``summary_facts`` are built when first read, and can be read
    only while the policy runs (a policy that keeps a view for later keeps what it read, e.g.
    ``list(view.records)``): the simulation does not copy the whole context every turn for
    policies that never look, and closes the view when the policy returns. A view is a tuple
    of the fields above, in that order, with one property per field.
    """

    if TYPE_CHECKING:  # the properties of these fields are attached below the class
        turn: int
        tokens: int
        window: int
        threshold: int
        oldest_in_full: int
        summary_upto: int
        protected_tools: tuple[str, ...]
        rewrites: int
        base: int
        placeholder: int
        note_tokens: int
        summary_tokens: int
        turns: int
        summary_capacity: int | None

    def __new__(cls, fields: tuple, source: tuple | None = None) -> ContextView:
        view = tuple.__new__(cls, fields)
        view.__dict__["_source"] = source
        return view

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ContextView is read-only (tried to set {name!r})")

    def __getnewargs__(self) -> tuple[tuple, tuple | None]:
        """Return the arguments that build this view again: its fields and what its records are read from."""
        return (tuple(self), self.__dict__.get("_source"))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(_VIEW_FIELDS, self))
        return f"ContextView({shown})"

    def _closed_error(self, name: str) -> ValueError:
        return ValueError(f"{name} of a ContextView can only be read while the policy runs; "
                          f"keep list(view.{name}) instead of the view (got turn {self[0]})")

    @property
    def records(self) -> tuple[TurnRecord, ...]:
        """Return the turns not folded into the summary, oldest first."""
        cached = self.__dict__.get("_records")
        if cached is None:
            source = self.__dict__["_source"]
            if source is None:
                raise self._closed_error("records")
            cached = self.__dict__["_records"] = tuple(source[0][source[1]:source[2]])
        return cached

    @property
    def notes(self) -> tuple[int, ...]:
        """Return the turns whose fact is in a note, in the order they were written."""
        cached = self.__dict__.get("_notes")
        if cached is None:
            source = self.__dict__["_source"]
            if source is None:
                raise self._closed_error("notes")
            cached = self.__dict__["_notes"] = tuple(source[3])
        return cached

    @property
    def summary_facts(self) -> tuple[int, ...]:
        """Return the facts (turns) the summary still holds, oldest first."""
        cached = self.__dict__.get("_summary_facts")
        if cached is None:
            source = self.__dict__["_source"]
            if source is None:
                raise self._closed_error("summary_facts")
            cached = self.__dict__["_summary_facts"] = tuple(source[4])
        return cached

    @property
    def zone(self) -> Zone:
        """Return the ledger's zone of ``tokens`` in the window."""
        return zone(self[1], self[2])

    def _close(self) -> None:
        self.__dict__["_source"] = None


for _index, _name in enumerate(_VIEW_FIELDS):
    setattr(ContextView, _name, property(itemgetter(_index), doc=f"The view's {_name}."))
del _index, _name


# ---------------------------------------------------------------------------
# What a policy may do.


def _turn_list(value: object, field_name: str) -> tuple[int, ...]:
    """Return ``value`` as a tuple of distinct int turns >= 1, or raise naming ``field_name``."""
    if not isinstance(value, (list, tuple, range)):
        raise ValueError(f"{field_name} must be a list or tuple of turns (got {value!r})")
    turns = tuple(value)
    for t in turns:
        if isinstance(t, bool) or not isinstance(t, int) or t < 1:
            raise ValueError(f"{field_name} must hold int turns >= 1 (got {t!r} in {value!r})")
    if len(set(turns)) != len(turns):
        raise ValueError(f"{field_name} names a turn twice (got {value!r})")
    return turns


@dataclass(frozen=True)
class Clear:
    """Action: replace the tool results of ``turns`` by placeholders; note the facts of ``notes``.

    ``notes`` must be a subset of ``turns`` (a fact is noted as its result is cleared).

    >>> Clear([3, 1], notes=[1]).turns
    (3, 1)
    >>> Clear([1], notes=[2])
    Traceback (most recent call last):
    ValueError: Clear.notes must be a subset of Clear.turns (got notes=(2,), turns=(1,))
    """

    turns: tuple[int, ...]
    notes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        turns = _turn_list(self.turns, "Clear.turns")
        notes = _turn_list(self.notes, "Clear.notes")
        if not turns:
            raise ValueError(f"Clear.turns must name at least one turn (got {self.turns!r})")
        if not set(notes) <= set(turns):
            raise ValueError(f"Clear.notes must be a subset of Clear.turns "
                             f"(got notes={notes!r}, turns={turns!r})")
        object.__setattr__(self, "turns", turns)
        object.__setattr__(self, "notes", notes)


@dataclass(frozen=True)
class Compact:
    """Action: fold every turn but the newest ``keep`` (and their notes) into one summary.

    >>> Compact(5).keep
    5
    >>> Compact(-1)
    Traceback (most recent call last):
    ValueError: Compact.keep must be >= 0 (got -1)
    """

    keep: int

    def __post_init__(self) -> None:
        require_int(self.keep, "Compact.keep", minimum=0)


@dataclass(frozen=True)
class Protect:
    """Action: from now on the results of ``tool`` may not be cleared (not a rewrite).

    >>> Protect("read_file").tool
    'read_file'
    """

    tool: str

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError(f"Protect.tool must be a non-empty str (got {self.tool!r})")



Action = Clear | Compact | Protect
Policy = Callable[[ContextView], object]


# ---------------------------------------------------------------------------
# The four strategies as policies.


def keep_everything(view: ContextView) -> None:
    """The ``none`` strategy: never act.

    >>> keep_everything(None) is None
    True
    """
    return None


@dataclass(frozen=True)
class ClearOldest:
    """The ``clear`` (``notes=False``) and ``clear_notes`` strategies as a policy.

    Over the threshold, clear every result older than the newest ``keep`` turns that is not
    cleared or protected yet, if the tokens freed (each result minus its placeholder) reach
    ``clear_at_least``; with ``notes`` each cleared fact goes to a note.
    """

    keep: int = KEEP_TURNS
    clear_at_least: int = 0
    notes: bool = False

    def __post_init__(self) -> None:
        require_int(self.keep, "keep", minimum=0)
        require_int(self.clear_at_least, "clear_at_least", minimum=0)

    def __call__(self, view: ContextView) -> Clear | None:
        """Return the Clear action for ``view``, or None."""
        if view.tokens <= view.threshold:
            return None
        newest = view.turn - self.keep
        chosen = tuple(r.turn for r in view.records
                       if r.turn <= newest and not r.cleared and not r.protected)
        freed = sum(r.result_tokens - view.placeholder for r in view.records
                    if r.turn in chosen)
        if not chosen or freed < self.clear_at_least:
            return None
        return Clear(chosen, notes=chosen if self.notes else ())


@dataclass(frozen=True)
class CompactOld:
    """The ``compact`` strategy as a policy: over the threshold, fold all but ``keep`` turns."""

    keep: int = KEEP_TURNS

    def __post_init__(self) -> None:
        require_int(self.keep, "keep", minimum=0)

    def __call__(self, view: ContextView) -> Compact | None:
        """Return Compact(keep) when over the threshold with something to fold, else None."""
        if view.tokens <= view.threshold or view.turn - self.keep <= view.summary_upto:
            return None
        return Compact(self.keep)


BUILTIN_POLICIES: dict[str, Policy] = {
    "none": keep_everything,
    "clear": ClearOldest(),
    "clear_notes": ClearOldest(notes=True),
    "compact": CompactOld(),
}
