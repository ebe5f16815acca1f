"""Reference implementation of the context-engineering workbook.

Every public name is importable from here; each lives in the module of its lesson idea:
``tokens`` (estimating and counting tokens), ``window`` (what fits, what is left), ``recall``
(the toy model of long-context degradation), ``assemble`` (a request under a budget), ``trim``
(head and tail of tool output), ``sim`` (clearing, notes and compaction over a long task),
``policy`` (the capstone's interface: what a context policy sees and may do), ``render`` (a
structured system prompt and its lint), ``evaldiff`` (what a prompt change fixed and broke),
``ledger`` (a per-call context ledger with zones), ``sessions`` (state handed from one session
to the next).
"""
from .assemble import Assembly, BudgetError, Item, assemble, lesson_items
from .evaldiff import Case, Result, diff, lesson_cases, pass_rates, run_eval
from .ledger import (
    ContextOverflowError,
    LedgerEntry,
    LedgerSummary,
    WindowLedger,
    Zone,
    measure,
    summarize,
    zone,
    zones_for,
)
from .policy import BUILTIN_POLICIES, Clear, Compact, ContextView, Protect, Step, TurnRecord, Workload
from .recall import (
    LOST_IN_THE_MIDDLE,
    RecallModel,
    answer_position,
    retrieved_recall,
    stuff_vs_retrieve,
    stuffed_recall,
)
from .render import PromptSpec, lint, render
from .sessions import Record, SessionParams, SessionsResult, SessionStart, simulate_sessions
from .sim import (
    STRATEGIES,
    QuestionOutcome,
    SimParams,
    SimResult,
    lesson_workload,
    request_cost,
    select_to_clear,
    simulate,
    simulate_policy,
)
from .tokens import FakeTokenizer, Tokenizer, estimate_tokens
from .trim import omission_marker, save_full_output, trim_and_save, trim_lines, trim_with_reference
from .window import MODEL_TABLE, Outcome, Window, model_family, model_limits, remaining

__all__ = [
    "Case", "ContextOverflowError", "LedgerEntry", "LedgerSummary", "PromptSpec", "Result",
    "WindowLedger", "Zone", "diff", "lesson_cases", "lint", "measure", "pass_rates", "render",
    "run_eval", "summarize", "zone", "zones_for",
    "Assembly", "BudgetError", "FakeTokenizer", "Item", "LOST_IN_THE_MIDDLE", "MODEL_TABLE",
    "Outcome", "QuestionOutcome", "RecallModel", "STRATEGIES", "SimParams", "SimResult",
    "Tokenizer", "Window", "answer_position", "assemble", "estimate_tokens", "lesson_items",
    "model_family", "model_limits", "omission_marker", "remaining", "request_cost", "retrieved_recall",
    "save_full_output", "select_to_clear", "simulate", "stuff_vs_retrieve", "stuffed_recall",
    "trim_and_save", "trim_lines", "trim_with_reference",
    "Record", "SessionParams", "SessionStart", "SessionsResult", "simulate_sessions",
    "BUILTIN_POLICIES", "Clear", "Compact", "ContextView", "Protect", "Step", "TurnRecord", "Workload",
    "lesson_workload", "simulate_policy",
]
