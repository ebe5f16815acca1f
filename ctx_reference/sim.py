"""A long agent task under four context strategies: how big, how costly, what is forgotten.

What this covers:
    * One agent task of ``turns`` turns. Every turn appends a user message, a tool call,
      a tool result and an answer to the context; the tool result of turn ``t`` carries
      one fact (the "fact of turn t").
    * After each turn a *strategy* manages the context:
        - ``none``: nothing; the context grows until it no longer fits the window;
        - ``clear``: old tool results become short placeholders;
        - ``clear_notes``: as ``clear``, but each cleared fact is first written to a short
          note that stays in the context;
        - ``compact``: everything but the newest turns is folded into one summary.
    * Every turn sends one request whose input is the managed context. A request larger
      than the window is rejected and the run ends there.
    * Questions: from a given turn on, every few turns a question asks for the fact of an
      earlier turn; the fact is *lost* if a rewrite removed it from the context.
    * Cost, in *input equivalent* (tokens at the base input price): a request pays
      ``cache_write`` for every token written to the prompt cache and ``cache_read`` for
      every token read from it. Any rewrite of the context breaks the cache, so the
      request after a rewrite writes its whole input again.

What it leaves out: real tokenizers and real summaries (sizes are fixed numbers), output
tokens and their price, the cache's lifetime (it never expires between turns), the
minimum cacheable prefix, tool definitions, and the model's quality of recall for facts
that are still in the context (present means answered).

Vocabulary:
    turn            -- 1-based; turn t appends user + tool_call + tool_result + answer tokens.
    context         -- tokens of the managed context: base + the turns as they now stand
                       (+ notes, + summary).
    rewrite         -- a management step that changed earlier parts of the context (a
                       clearing or a compaction). The request of that turn is a cache miss.
    placeholder     -- the stub (in tokens) that replaces a cleared tool result.
    peak            -- the largest context actually sent.
    input equivalent-- the cost of all requests sent, in tokens at the base input price.
    overflow turn   -- the turn whose managed context exceeded the window (None if none).

All sizes are tokens. Costs are plain floats; round them only for display.

Exercise hooks (see ``simulate``): a notebook can pass its own clearing policy
(signature of ``select_to_clear``) and its own request cost (signature of
``request_cost``); the harness calls them and checks what they return.

Policies (see ``simulate_policy``): the general form, whose interface (``Workload``,
``ContextView``, the actions ``Clear``, ``Compact``, ``Protect`` and ``BUILTIN_POLICIES``)
lives in ``ctx_reference.policy``. The four strategies are four policies; ``simulate`` runs
the same four decisions on ``lesson_workload(params)``, from the numbers alone (no view is
built each turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, NamedTuple

from ctx_reference._validate import real_value, require_callable, require_int, require_real
from ctx_reference.policy import (
    ANSWER_TOKENS,
    BASE_TOKENS,
    BUILTIN_POLICIES,
    CACHE_READ,
    CACHE_WRITE,
    KEEP_TURNS,
    NOTE_TOKENS,
    PLACEHOLDER_TOKENS,
    SUMMARY_TOKENS,
    THRESHOLD_TOKENS,
    TOOL_CALL_TOKENS,
    USER_TOKENS,
    WINDOW_TOKENS,
    Action,
    Clear,
    ClearOldest,
    Compact,
    CompactOld,
    ContextView,
    Policy,
    Protect,
    Step,
    TurnRecord,
    Workload,
    keep_everything,
)

# The policy interface was first published from this module, and notebooks written against
# that release import it from here (``from ctx_reference.sim import BUILTIN_POLICIES, Clear,
# ...``): every name of ctx_reference.policy stays importable from sim.
__all__ = [
    "FACT_LAG", "FIRST_QUESTION", "QUESTION_EVERY", "STRATEGIES", "TOOL_RESULT_TOKENS", "TURNS",
    "ClearPolicy", "CostFunction", "QuestionOutcome", "SimParams", "SimResult",
    "lesson_workload", "request_cost", "select_to_clear", "simulate", "simulate_policy",
    # re-exported from ctx_reference.policy
    "ANSWER_TOKENS", "BASE_TOKENS", "BUILTIN_POLICIES", "CACHE_READ", "CACHE_WRITE", "KEEP_TURNS",
    "NOTE_TOKENS", "PLACEHOLDER_TOKENS", "SUMMARY_TOKENS", "THRESHOLD_TOKENS", "TOOL_CALL_TOKENS",
    "USER_TOKENS", "WINDOW_TOKENS", "Action", "Clear", "ClearOldest", "Compact", "CompactOld",
    "ContextView", "Policy", "Protect", "Step", "TurnRecord", "Workload", "keep_everything",
]

# ---------------------------------------------------------------------------
# The lesson's numbers (all sizes in tokens). The sizes of a turn, of a placeholder, a note
# and a summary, the window, the threshold, KEEP_TURNS and the prices are every workload's
# defaults, so they live in ctx_reference.policy: BASE_TOKENS 8,000, USER_TOKENS 200,
# TOOL_CALL_TOKENS 100, ANSWER_TOKENS 300, WINDOW_TOKENS 100,000, THRESHOLD_TOKENS 60,000,
# KEEP_TURNS 5, PLACEHOLDER_TOKENS 10, SUMMARY_TOKENS 2,000, NOTE_TOKENS 30, CACHE_WRITE 1.25,
# CACHE_READ 0.1 (PLACEHOLDER_TOKENS, NOTE_TOKENS and CACHE_READ are the rebuild's choice: the
# lesson gives no value for them). The task's own numbers:
TOOL_RESULT_TOKENS = 3_000  # one tool result per turn (carries that turn's fact)
TURNS = 60  # length of the task
FIRST_QUESTION = 12  # the first question comes after this many full turns
QUESTION_EVERY = 4  # turns between two questions
FACT_LAG = 12  # a question at turn q asks for the fact of turn q - FACT_LAG


@dataclass(frozen=True)
class SimParams:
    """The task, the window and the prices of one simulated run; defaults are the lesson's.

    >>> p = SimParams()
    >>> p.user + p.tool_call + p.tool_result + p.answer   # one turn
    3600
    >>> SimParams(keep=15).keep
    15

    ``summary_capacity`` is how many facts a compaction summary can hold (the newest
    ones it covers); ``None`` means all of them. ``clear_at_least`` is the smallest
    number of tokens a clearing must free to be worth breaking the cache for.
    Used by the long-task simulation notebook.
    """

    base: int = BASE_TOKENS
    user: int = USER_TOKENS
    tool_call: int = TOOL_CALL_TOKENS
    tool_result: int = TOOL_RESULT_TOKENS
    answer: int = ANSWER_TOKENS
    window: int = WINDOW_TOKENS
    threshold: int = THRESHOLD_TOKENS
    keep: int = KEEP_TURNS
    turns: int = TURNS
    placeholder: int = PLACEHOLDER_TOKENS
    summary_tokens: int = SUMMARY_TOKENS
    summary_capacity: int | None = None
    note_tokens: int = NOTE_TOKENS
    clear_at_least: int = 0
    first_question: int = FIRST_QUESTION
    question_every: int = QUESTION_EVERY
    fact_lag: int = FACT_LAG
    cache_write: float = CACHE_WRITE
    cache_read: float = CACHE_READ

    def __post_init__(self) -> None:
        for name in ("base", "user", "tool_call", "tool_result", "answer", "threshold",
                     "keep", "turns", "placeholder", "summary_tokens", "note_tokens",
                     "clear_at_least", "first_question", "fact_lag"):
            require_int(getattr(self, name), name, minimum=0)
        require_int(self.window, "window", minimum=1)
        require_int(self.question_every, "question_every", minimum=1)
        if self.summary_capacity is not None:
            require_int(self.summary_capacity, "summary_capacity", minimum=0)
        if self.threshold > self.window:
            raise ValueError(f"threshold must be <= window ({self.window!r}) "
                             f"(got {self.threshold!r})")
        if self.fact_lag > self.first_question:
            raise ValueError(f"fact_lag must be <= first_question ({self.first_question!r}), "
                             f"or the first question would ask for a turn before turn 1 "
                             f"(got {self.fact_lag!r})")
        for name in ("cache_write", "cache_read"):
            value = getattr(self, name)
            require_real(value, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0 (got {value!r})")

    def __repr__(self) -> str:
        """Return the call that builds these parameters, naming only what differs from the lesson's.

        >>> SimParams(keep=15, cache_read=0.0)
        SimParams(keep=15, cache_read=0.0)
        """
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if getattr(self, f.name) != f.default
                   or type(getattr(self, f.name)) is not type(f.default)]
        return f"SimParams({', '.join(changed)})"

    @property
    def turn_tokens(self) -> int:
        """Return the tokens one turn appends: user + tool_call + tool_result + answer."""
        return self.user + self.tool_call + self.tool_result + self.answer


# ---------------------------------------------------------------------------
# The two exercise hooks, in their reference versions.

ClearPolicy = Callable[[int, Sequence[int], int, SimParams], Sequence[int]]
CostFunction = Callable[[int, int | None, bool, SimParams], float]


def select_to_clear(context_tokens: int, uncleared_turns: Sequence[int], turn: int,
                    params: SimParams) -> list[int]:
    """Return the turns whose tool results to clear now (``[]``: leave the context alone).

    ``context_tokens`` is the context after this turn was appended (notes included),
    ``uncleared_turns`` the turns, oldest first, whose tool result is still in full,
    ``turn`` the current turn (1-based). Clear only when the context is over the
    threshold, only results older than the newest ``keep`` turns, and only if the tokens
    freed, ``count × (tool_result − placeholder)``, reach ``clear_at_least``.

    >>> p = SimParams()
    >>> select_to_clear(62_000, range(1, 16), 15, p)   # 8,000 + 15 × 3,600 = 62,000
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    >>> select_to_clear(58_400, range(1, 15), 14, p)   # not over 60,000 yet
    []
    >>> select_to_clear(62_000, range(1, 16), 15, SimParams(clear_at_least=40_000))
    []

    The last call would free 10 × 2,990 = 29,900 tokens, less than 40,000.
    Used by the long-task simulation notebook (exercise: write this policy).
    """
    if context_tokens <= params.threshold:
        return []
    newest_clearable = turn - params.keep
    candidates = [t for t in uncleared_turns if t <= newest_clearable]
    freed = len(candidates) * (params.tool_result - params.placeholder)
    if not candidates or freed < params.clear_at_least:
        return []
    return candidates


def request_cost(input_tokens: int, previous_input: int | None, rewrote: bool,
                 params: SimParams) -> float:
    """Return the cost of one request in input equivalent (tokens at the base input price).

    The first request (``previous_input is None``) and any request right after a rewrite
    write their whole input to the cache; otherwise the previous input is read from the
    cache and only the new tokens are written.

    >>> p = SimParams()
    >>> request_cost(11_600, None, False, p)      # 1.25 × 11,600
    14500.0
    >>> request_cost(15_200, 11_600, False, p)    # 0.1 × 11,600 + 1.25 × 3,600
    5660.0
    >>> request_cost(36_340, 62_000, True, p)     # a rewrite: 1.25 × 36,340
    45425.0

    Used by the long-task simulation notebook (exercise: write this cost).
    """
    if previous_input is None or rewrote:
        return params.cache_write * input_tokens
    return (params.cache_read * previous_input
            + params.cache_write * (input_tokens - previous_input))



STRATEGIES = ("none", "clear", "clear_notes", "compact")


def _check_cleared(chosen: object, uncleared: range, turn: int) -> int:
    """Return how many results ``chosen`` clears, or raise ValueError if it is not valid.

    Valid: a list, tuple or range of distinct int turns that are the oldest ``n`` of
    ``uncleared`` (in any order), ``n >= 0``.
    """
    if not isinstance(chosen, (list, tuple, range)):
        raise ValueError(f"clear_policy must return a list of turns "
                         f"(got {chosen!r} at turn {turn})")
    if not chosen:
        return 0
    for t in chosen:
        if isinstance(t, bool) or not isinstance(t, int):
            raise ValueError(f"clear_policy must return int turns (got {t!r} in {chosen!r} "
                             f"at turn {turn})")
        if t not in uncleared:
            raise ValueError(f"clear_policy returned turn {t!r} at turn {turn}, but only "
                             f"turns {_span(uncleared)} still hold a tool result to clear")
    count = len(chosen)
    if len(set(chosen)) != count:
        raise ValueError(f"clear_policy returned a turn twice (got {chosen!r} at turn {turn})")
    if max(chosen) != uncleared[0] + count - 1:
        raise ValueError(f"clear_policy must clear the oldest results first: at turn {turn} "
                         f"{count} result(s) means turns {_span(uncleared[:count])} "
                         f"(got {chosen!r})")
    return count


def _span(turns: range) -> str:
    """Return ``turns`` as 'a..b' (or 'none' when empty)."""
    return f"{turns[0]}..{turns[-1]}" if turns else "none"



# ---------------------------------------------------------------------------
# What a run measured.


@dataclass(frozen=True)
class QuestionOutcome:
    """One question of a run: asked at ``turn`` for the fact of ``fact_turn``.

    ``lost_turn`` is the turn whose rewrite removed that fact from the context (None if
    the context still held it when asked).
    """

    turn: int
    fact_turn: int
    lost_turn: int | None

    @property
    def lost(self) -> bool:
        """Return True if the fact was gone when the question came."""
        return self.lost_turn is not None


@dataclass(frozen=True)
class SimResult:
    """What one run measured; only requests actually sent count toward peak, cost, questions.

    peak             -- largest context sent (0 if no request was sent).
    rewrites         -- management steps that rewrote the context (a rewrite on the overflow
                        turn counts: it happened, its request was then rejected).
    input_equivalent -- total cost of the requests sent, in tokens at the base input price.
    overflow_turn    -- the turn whose context exceeded the window, or None.
    facts_asked      -- questions reached; facts_lost: those whose fact was gone.
    contexts         -- context of each request sent, in turn order (request i is turn i+1).
    rewrite_turns    -- the turns (1-based) where a rewrite happened.
    costs            -- cost of each request sent, same order as ``contexts``.
    questions        -- one QuestionOutcome per question reached.
    """

    peak: int
    rewrites: int
    input_equivalent: float
    overflow_turn: int | None
    facts_asked: int
    facts_lost: int
    contexts: tuple[int, ...]
    rewrite_turns: tuple[int, ...] = ()
    costs: tuple[float, ...] = ()
    questions: tuple[QuestionOutcome, ...] = ()

    @property
    def lost_questions(self) -> tuple[int, ...]:
        """Return the turns of the questions whose fact was lost."""
        return tuple(q.turn for q in self.questions if q.lost_turn is not None)



# ---------------------------------------------------------------------------
# The lesson's task as a workload, and its four strategies as quick deciders.


def lesson_workload(params: SimParams = SimParams()) -> Workload:
    """Return the 60-turn task of notebook 06 (or the task ``params`` describes) as a Workload.

    Every turn calls one tool with a ``tool_result``-token result; a question at turn ``q``
    (from ``first_question + 1``, every ``question_every``) needs the fact of ``q − fact_lag``.

    >>> w = lesson_workload()
    >>> w.turns, len(w.questions), w.questions[0], w.turn_tokens(1)
    (60, 12, (13, 1), 3600)
    """
    if not isinstance(params, SimParams):
        raise ValueError(f"params must be a SimParams (got {params!r})")
    # keep and clear_at_least belong to the strategies, not the task: leave them out of the key
    return _lesson_workload(*(getattr(params, name) for name in _TASK_FIELDS))


class _TaskFields(NamedTuple):
    """The fields of SimParams that describe the task (not the strategy), for lesson_workload."""

    base: int
    user: int
    tool_call: int
    tool_result: int
    answer: int
    window: int
    threshold: int
    turns: int
    placeholder: int
    summary_tokens: int
    summary_capacity: int | None
    note_tokens: int
    first_question: int
    question_every: int
    fact_lag: int
    cache_write: float
    cache_read: float



_TASK_FIELDS = _TaskFields._fields


@lru_cache(maxsize=256)
def _lesson_workload(*fields: Any) -> Workload:
    params = _TaskFields(*fields)
    questions = tuple((q, q - params.fact_lag)
                      for q in range(params.first_question + 1, params.turns + 1,
                                     params.question_every))
    needed = {fact for _, fact in questions}
    asked, plain = Step("tool", params.tool_result, True), Step("tool", params.tool_result)
    steps = tuple(asked if t in needed else plain for t in range(1, params.turns + 1))
    return Workload(
        name="lesson", steps=steps, questions=questions, base=params.base, user=params.user,
        tool_call=params.tool_call, answer=params.answer, window=params.window,
        threshold=params.threshold, placeholder=params.placeholder,
        note_tokens=params.note_tokens, summary_tokens=params.summary_tokens,
        summary_capacity=params.summary_capacity, cache_write=params.cache_write,
        cache_read=params.cache_read)



def _strategy_decider(strategy: str, params: SimParams, clear_policy: ClearPolicy) -> Callable:
    """Return decide(turn, tokens, oldest_in_full, summary_upto) -> the strategy's decision.

    The four strategies read only these numbers, so ``simulate`` runs them without building a
    ContextView each turn; their decisions are those of ``keep_everything``, ``CompactOld`` and
    the ``clear``/``clear_notes`` policy that asks ``clear_policy`` (a ``select_to_clear``-style
    hook, notebook 06's exercise, whose answer is checked unless it is the reference itself).
    """
    if strategy == "none":
        return lambda turn, tokens, full_from, summary_upto: None
    if strategy == "compact":
        keep, threshold, action = params.keep, params.threshold, Compact(params.keep)

        def compact(turn: int, tokens: int, full_from: int, summary_upto: int) -> Compact | None:
            if tokens <= threshold or turn - keep <= summary_upto:
                return None
            return action
        return compact
    notes = strategy == "clear_notes"
    trusted = clear_policy is select_to_clear   # returns the oldest run of turns by construction

    def clear(turn: int, tokens: int, full_from: int, summary_upto: int) -> Clear | None:
        uncleared = range(full_from, turn + 1)
        chosen = clear_policy(tokens, uncleared, turn, params)
        count = len(chosen) if trusted else _check_cleared(chosen, uncleared, turn)
        if count == 0:
            return None
        turns = tuple(uncleared[:count])
        return _trusted_clear(turns, turns if notes else ())
    return clear



def _trusted_clear(turns: tuple[int, ...], notes: tuple[int, ...]) -> Clear:
    """Return Clear(turns, notes) without re-checking turns already checked by ``_check_cleared``."""
    action = object.__new__(Clear)
    object.__setattr__(action, "turns", turns)
    object.__setattr__(action, "notes", notes)
    return action



# ---------------------------------------------------------------------------
# Running a policy.


def simulate(strategy: str, params: SimParams = SimParams(), *,
             clear_policy: ClearPolicy = select_to_clear,
             request_cost: CostFunction = request_cost) -> SimResult:
    """Return what ``params.turns`` turns cost and forget under ``strategy``.

    Each turn: append the turn, let the strategy manage the context, stop if the
    context exceeds the window (that request is not sent), answer the question due
    this turn, then send the request and pay for it. The strategy runs as a policy on
    ``lesson_workload(params)`` (see ``simulate_policy``).

    >>> r = simulate("compact")
    >>> r.peak, r.rewrites, round(r.input_equivalent), r.facts_lost, r.facts_asked
    (58400, 6, 668560, 0, 12)
    >>> r = simulate("none")
    >>> r.overflow_turn, r.peak                  # 8,000 + 26 × 3,600 = 101,600 > 100,000
    (26, 98000)

    ``clear_policy`` (used by ``clear`` and ``clear_notes``) has the signature of
    ``select_to_clear``; ``request_cost`` that of the module's ``request_cost``. A notebook
    passes its own versions to compare them with the reference.
    Used by the long-task simulation notebook.
    """
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)} "
                         f"(got {strategy!r})")
    if not isinstance(params, SimParams):
        raise ValueError(f"params must be a SimParams (got {params!r})")
    require_callable(clear_policy, "clear_policy")
    require_callable(request_cost, "request_cost")
    return _run(None, lesson_workload(params),
                lambda tokens, previous, rewrote: request_cost(tokens, previous, rewrote, params),
                _strategy_decider(strategy, params, clear_policy))


def simulate_policy(policy: Policy, workload: Workload) -> SimResult:
    """Return what ``policy`` costs and forgets on ``workload``.

    After each turn is appended the policy gets a ``ContextView`` and returns None (do
    nothing), one action (``Clear``, ``Compact``, ``Protect``) or a list of them, applied in
    order. Any Clear or Compact makes that turn a rewrite (one per turn at most). Then, as in
    ``simulate``: a context over the window ends the run; questions are answered; the request
    is paid (``cache_write`` × input after a rewrite or first, else reads + new writes).

    >>> from ctx_reference.policy import BUILTIN_POLICIES
    >>> r = simulate_policy(BUILTIN_POLICIES["clear"], lesson_workload())
    >>> r.peak, r.rewrites, r.facts_lost, round(r.input_equivalent)
    (59550, 15, 11, 1359425)
    """
    require_callable(policy, "policy")
    if not isinstance(workload, Workload):
        raise ValueError(f"workload must be a Workload (got {workload!r})")
    write, read = workload.cache_write, workload.cache_read

    def cost(tokens: int, previous: int | None, rewrote: bool) -> float:
        if previous is None or rewrote:
            return write * tokens
        return read * previous + write * (tokens - previous)

    return _run(policy, workload, cost)


def _run(  # noqa: C901 - the simulator's one turn loop: every action updates the same dozen locals
    policy: Policy | None, workload: Workload,
    cost_of: Callable[[int, int | None, bool], float],
    decide: Callable[[int, int, int, int], object] | None = None,
) -> SimResult:
    """Run ``policy`` on ``workload``; ``cost_of(input, previous, rewrote)`` prices a request.

    With ``decide`` (``simulate``'s strategies), ``decide(turn, tokens, oldest_in_full,
    summary_upto)`` decides instead of ``policy``, and no ContextView is built.
    """
    fixed = workload.user + workload.tool_call + workload.answer
    window = workload.window
    threshold = workload.threshold
    placeholder = workload.placeholder
    sizes = (workload.base, placeholder, workload.note_tokens, workload.summary_tokens,
             workload.turns, workload.summary_capacity)
    records: list[TurnRecord] = []
    live_from = 1                   # turns before this are folded into the summary
    full_from = 1                   # the oldest live turn whose result is still in full
    notes: dict[int, None] = {}     # noted turns, in insertion order
    summary_upto = 0
    summary_facts: list[int] = []   # the facts the summary holds, oldest first
    protected: dict[str, None] = {}
    protected_tools: tuple[str, ...] = ()
    lost_at: dict[int, int] = {}
    tokens = workload.base
    contexts: list[int] = []
    costs: list[float] = []
    rewrite_turns: list[int] = []
    questions: list[QuestionOutcome] = []
    pending = list(reversed(workload.questions))
    previous: int | None = None
    total = 0.0
    overflow_turn = None
    inf = math.inf

    for turn, step in enumerate(workload.steps, start=1):
        records.append(TurnRecord(turn, step.tool, step.result, fixed + step.result, step.needed,
                                  False, False, step.tool in protected))
        tokens += fixed + step.result
        if decide is not None:
            decision = decide(turn, tokens, full_from, summary_upto)
        else:
            view = ContextView((turn, tokens, window, threshold, full_from, summary_upto,
                                protected_tools, len(rewrite_turns)) + sizes,
                               (records, live_from - 1, turn, notes, summary_facts))
            decision = policy(view)  # type: ignore[misc]  # decide is None, so policy is not
            view._close()
            del view
        rewrote = False
        for action in _actions(decision, turn):
            if isinstance(action, Protect):
                protected[action.tool] = None
                protected_tools = tuple(protected)
                for i in range(live_from - 1, turn):
                    if records[i].tool == action.tool and not records[i].protected:
                        records[i] = records[i]._replace(protected=True)
                continue
            rewrote = True
            if isinstance(action, Clear):
                if decide is None:  # the strategies' clears are checked where they are made
                    _check_clear(action, records, live_from, turn)
                noted = set(action.notes)
                for t in action.turns:
                    record = records[t - 1]
                    records[t - 1] = TurnRecord(t, record.tool, record.result_tokens,
                                                fixed + placeholder, record.needed, True,
                                                t in noted, False)
                    tokens -= record.result_tokens - placeholder
                    if t in noted:
                        notes[t] = None
                        tokens += workload.note_tokens
                    else:
                        lost_at.setdefault(t, turn)
            else:  # Compact
                fold_to = _fold_to(action, live_from, turn)
                for record in records[live_from - 1:fold_to]:
                    if not record.cleared or record.noted:
                        summary_facts.append(record.turn)
                    notes.pop(record.turn, None)
                capacity = workload.summary_capacity
                if capacity is not None and len(summary_facts) > capacity:
                    cut = len(summary_facts) - capacity
                    for fact in summary_facts[:cut]:
                        lost_at.setdefault(fact, turn)
                    del summary_facts[:cut]
                summary_upto = fold_to
                live_from = fold_to + 1
                tokens = (workload.base + workload.summary_tokens
                          + sum(r.tokens for r in records[live_from - 1:])
                          + workload.note_tokens * len(notes))
        if rewrote:
            rewrite_turns.append(turn)
            full_from = max(full_from, live_from)
            while full_from <= turn and records[full_from - 1].cleared:
                full_from += 1
        if tokens > window:
            overflow_turn = turn
            break
        while pending and pending[-1][0] == turn:
            _, fact = pending.pop()
            questions.append(QuestionOutcome(turn, fact, lost_at.get(fact)))
        returned = cost_of(tokens, previous, rewrote)
        cost = real_value(returned)  # "a number": a Fraction, a Decimal or numpy's float counts by its value
        if cost is None or not 0 <= cost < inf:
            raise ValueError(f"request_cost must return a finite number >= 0 (got {returned!r} "
                             f"at turn {turn}: input_tokens={tokens}, "
                             f"previous_input={previous}, rewrote={rewrote})")
        total += cost
        costs.append(cost)
        contexts.append(tokens)
        previous = tokens

    return SimResult(
        peak=max(contexts, default=0),
        rewrites=len(rewrite_turns),
        input_equivalent=total,
        overflow_turn=overflow_turn,
        facts_asked=len(questions),
        facts_lost=sum(1 for q in questions if q.lost_turn is not None),
        contexts=tuple(contexts),
        rewrite_turns=tuple(rewrite_turns),
        costs=tuple(costs),
        questions=tuple(questions),
    )


def _check_clear(action: Clear, records: list[TurnRecord], live_from: int, turn: int) -> None:
    """Raise ValueError unless every turn ``action`` clears is live, in full and not protected."""
    for t in action.turns:
        if not live_from <= t <= turn:
            raise ValueError(f"Clear.turns: turn {t} is not in the context at turn "
                             f"{turn} (turns {live_from}..{turn} are) "
                             f"(got {action.turns!r})")
        record = records[t - 1]
        if record.cleared:
            raise ValueError(f"Clear.turns: the result of turn {t} is already "
                             f"cleared (got {action.turns!r} at turn {turn})")
        if record.protected:
            raise ValueError(f"Clear.turns: the result of turn {t} is protected "
                             f"({record.tool}) (got {action.turns!r} at turn {turn})")


def _fold_to(action: Compact, live_from: int, turn: int) -> int:
    """Return the last turn ``action`` folds into the summary, or raise if it folds nothing."""
    fold_to = turn - action.keep
    if fold_to < live_from:
        raise ValueError(f"Compact.keep: keeping {action.keep} turns at turn {turn} "
                         f"leaves nothing to fold (turns {live_from}..{turn} are in "
                         f"the context) (got {action.keep!r})")
    return fold_to


def _actions(decision: object, turn: int) -> tuple[Action, ...]:
    """Return the policy's decision as a tuple of actions, or raise ValueError naming it."""
    if decision is None:
        return ()
    if isinstance(decision, (Clear, Compact, Protect)):
        return (decision,)
    if isinstance(decision, (list, tuple)) and all(
            isinstance(a, (Clear, Compact, Protect)) for a in decision):
        return tuple(decision)
    raise ValueError(f"policy must return None, an action (Clear, Compact, Protect) or a list "
                     f"of actions (got {decision!r} at turn {turn})")
