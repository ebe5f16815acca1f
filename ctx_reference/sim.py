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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ctx_reference._validate import require_int, require_real

# ---------------------------------------------------------------------------
# The lesson's numbers (all sizes in tokens).
BASE_TOKENS = 8_000  # system prompt + tool definitions, sent with every request
USER_TOKENS = 200  # one user message per turn
TOOL_CALL_TOKENS = 100  # one tool call per turn
TOOL_RESULT_TOKENS = 3_000  # one tool result per turn (carries that turn's fact)
ANSWER_TOKENS = 300  # one assistant answer per turn
WINDOW_TOKENS = 100_000  # the context window of the simulated model
THRESHOLD_TOKENS = 60_000  # manage the context only once it is larger than this
KEEP_TURNS = 5  # the newest turns that management never touches
TURNS = 60  # length of the task
PLACEHOLDER_TOKENS = 10  # stub left where a tool result was cleared
SUMMARY_TOKENS = 2_000  # size of a compaction summary
NOTE_TOKENS = 30  # one note per cleared fact (clear_notes)
FIRST_QUESTION = 12  # the first question comes after this many full turns
QUESTION_EVERY = 4  # turns between two questions
FACT_LAG = 12  # a question at turn q asks for the fact of turn q - FACT_LAG
CACHE_WRITE = 1.25  # × base input price, per token written to the cache
CACHE_READ = 0.1  # × base input price, per token read from the cache


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
    summary_capacity: Optional[int] = None
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

    @property
    def turn_tokens(self) -> int:
        """Return the tokens one turn appends: user + tool_call + tool_result + answer."""
        return self.user + self.tool_call + self.tool_result + self.answer


# ---------------------------------------------------------------------------
# The two exercise hooks, in their reference versions.

ClearPolicy = Callable[[int, Sequence[int], int, SimParams], Sequence[int]]
CostFunction = Callable[[int, Optional[int], bool, SimParams], float]


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


def request_cost(input_tokens: int, previous_input: Optional[int], rewrote: bool,
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


# ---------------------------------------------------------------------------
# The strategies: plain functions with one signature, kept in MANAGERS.


@dataclass(slots=True)
class ContextState:
    """The managed context of one run, as running totals; owned and updated by ``simulate``.

    tokens          -- size of the context now.
    first_uncleared -- turns >= this still hold their tool result in full (clearing goes
                       oldest first, so the uncleared results are always a run of turns).
    notes           -- how many notes the context holds (clear_notes).
    folded_upto     -- turns 1..folded_upto live only in the summary (0: no summary yet).
    held_from       -- the summary still holds the facts of turns held_from..folded_upto.
    lost_at         -- fact turn -> the turn whose rewrite removed that fact.
    """

    tokens: int
    first_uncleared: int = 1
    notes: int = 0
    folded_upto: int = 0
    held_from: int = 1
    lost_at: dict[int, int] = field(default_factory=dict)


Manager = Callable[[ContextState, int, SimParams, ClearPolicy], bool]


def manage_none(state: ContextState, turn: int, params: SimParams,
                clear_policy: ClearPolicy) -> bool:
    """Leave the context as it is; return False (no rewrite).

    >>> manage_none(ContextState(tokens=98_000), 25, SimParams(), select_to_clear)
    False
    """
    return False


def manage_clear(state: ContextState, turn: int, params: SimParams,
                 clear_policy: ClearPolicy) -> bool:
    """Clear the tool results ``clear_policy`` picks; return True if it cleared any.

    A cleared fact is gone from the context (``state.lost_at`` records when).

    >>> s = ContextState(tokens=62_000)           # turn 15: 8,000 + 15 × 3,600
    >>> manage_clear(s, 15, SimParams(), select_to_clear), s.tokens, s.first_uncleared
    (True, 32100, 11)

    Ten results cleared: 62,000 − 10 × (3,000 − 10) = 32,100.
    """
    return _clear(state, turn, params, clear_policy, with_notes=False)


def manage_clear_notes(state: ContextState, turn: int, params: SimParams,
                       clear_policy: ClearPolicy) -> bool:
    """As ``manage_clear``, but each cleared fact is first kept as a ``note_tokens`` note.

    >>> s = ContextState(tokens=62_000)
    >>> manage_clear_notes(s, 15, SimParams(), select_to_clear), s.tokens, s.notes
    (True, 32400, 10)

    62,000 − 10 × 2,990 + 10 × 30 = 32,400.
    """
    return _clear(state, turn, params, clear_policy, with_notes=True)


def manage_compact(state: ContextState, turn: int, params: SimParams,
                   clear_policy: ClearPolicy) -> bool:
    """Fold every turn but the newest ``keep`` into one summary; return True if it did.

    Only when the context is over the threshold and at least one turn not yet folded
    lies before the newest ``keep``. The context becomes base + summary + kept turns;
    with ``summary_capacity = c`` the summary holds only the newest ``c`` facts it covers.
    ``clear_policy`` is not used.

    >>> s = ContextState(tokens=62_000)           # turn 15
    >>> manage_compact(s, 15, SimParams(), select_to_clear), s.tokens, s.folded_upto
    (True, 28000, 10)

    8,000 + 2,000 + 5 × 3,600 = 28,000.
    """
    fold_to = turn - params.keep
    if state.tokens <= params.threshold or fold_to <= state.folded_upto:
        return False
    state.tokens = params.base + params.summary_tokens + params.keep * params.turn_tokens
    state.folded_upto = fold_to
    if params.summary_capacity is not None:
        held_from = max(state.held_from, fold_to - params.summary_capacity + 1)
        for fact in range(state.held_from, held_from):
            state.lost_at[fact] = turn
        state.held_from = held_from
    return True


MANAGERS: dict[str, Manager] = {
    "none": manage_none,
    "clear": manage_clear,
    "clear_notes": manage_clear_notes,
    "compact": manage_compact,
}
STRATEGIES = ("none", "clear", "clear_notes", "compact")


def _clear(state: ContextState, turn: int, params: SimParams, clear_policy: ClearPolicy,
           with_notes: bool) -> bool:
    """Apply ``clear_policy`` to ``state``; return True if it cleared at least one result."""
    uncleared = range(state.first_uncleared, turn + 1)
    chosen = clear_policy(state.tokens, uncleared, turn, params)
    count = _check_cleared(chosen, uncleared, turn)
    if count == 0:
        return False
    first = state.first_uncleared
    state.first_uncleared = first + count
    state.tokens -= count * (params.tool_result - params.placeholder)
    if with_notes:
        state.notes += count
        state.tokens += count * params.note_tokens
    else:
        for fact in range(first, first + count):
            state.lost_at[fact] = turn
    return True


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
# The harness.


@dataclass(frozen=True)
class QuestionOutcome:
    """One question of a run: asked at ``turn`` for the fact of ``fact_turn``.

    ``lost_turn`` is the turn whose rewrite removed that fact from the context (None if
    the context still held it when asked).
    """

    turn: int
    fact_turn: int
    lost_turn: Optional[int]

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
    overflow_turn: Optional[int]
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


def simulate(strategy: str, params: SimParams = SimParams(), *,
             clear_policy: ClearPolicy = select_to_clear,
             request_cost: CostFunction = request_cost) -> SimResult:
    """Return what ``params.turns`` turns cost and forget under ``strategy``.

    Each turn: append the turn, let the strategy manage the context, stop if the
    context exceeds the window (that request is not sent), answer the question due
    this turn, then send the request and pay for it.

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
    if not isinstance(strategy, str) or strategy not in MANAGERS:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)} "
                         f"(got {strategy!r})")
    if not isinstance(params, SimParams):
        raise ValueError(f"params must be a SimParams (got {params!r})")
    if not callable(clear_policy):
        raise ValueError(f"clear_policy must be callable (got {clear_policy!r})")
    if not callable(request_cost):
        raise ValueError(f"request_cost must be callable (got {request_cost!r})")

    manage = MANAGERS[strategy]
    turn_tokens = params.turn_tokens
    window = params.window
    fact_lag = params.fact_lag
    question_every = params.question_every
    next_question = params.first_question + 1

    state = ContextState(tokens=params.base)
    contexts: list[int] = []
    costs: list[float] = []
    rewrite_turns: list[int] = []
    questions: list[QuestionOutcome] = []
    previous: Optional[int] = None
    total = 0.0
    overflow_turn = None

    for turn in range(1, params.turns + 1):
        state.tokens += turn_tokens
        rewrote = manage(state, turn, params, clear_policy)
        if rewrote:
            rewrite_turns.append(turn)
        tokens = state.tokens
        if tokens > window:
            overflow_turn = turn
            break
        if turn == next_question:
            fact = turn - fact_lag
            questions.append(QuestionOutcome(turn, fact, state.lost_at.get(fact)))
            next_question += question_every
        cost = request_cost(tokens, previous, rewrote, params)
        if (isinstance(cost, bool) or not isinstance(cost, (int, float))
                or not 0 <= cost < math.inf):
            raise ValueError(f"request_cost must return a finite number >= 0 (got {cost!r} "
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
