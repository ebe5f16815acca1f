"""Reference implementation of the context-engineering workbook.

Every public name is importable from here; each lives in the module of its lesson idea:
``tokens`` (estimating and counting tokens), ``window`` (what fits, what is left), ``recall``
(the toy model of long-context degradation), ``assemble`` (a request under a budget), ``trim``
(head and tail of tool output), ``sim`` (clearing, notes and compaction over a long task).
"""
from .assemble import Assembly, BudgetError, Item, assemble, lesson_items
from .recall import LOST_IN_THE_MIDDLE, RecallModel, answer_position, retrieved_recall, stuff_vs_retrieve, stuffed_recall
from .sim import STRATEGIES, QuestionOutcome, SimParams, SimResult, request_cost, select_to_clear, simulate
from .tokens import FakeTokenizer, Tokenizer, estimate_tokens
from .trim import omission_marker, save_full_output, trim_and_save, trim_lines, trim_with_reference
from .window import MODEL_TABLE, Outcome, Window, model_limits, remaining

__all__ = [
    "Assembly", "BudgetError", "FakeTokenizer", "Item", "LOST_IN_THE_MIDDLE", "MODEL_TABLE",
    "Outcome", "QuestionOutcome", "RecallModel", "STRATEGIES", "SimParams", "SimResult",
    "Tokenizer", "Window", "answer_position", "assemble", "estimate_tokens", "lesson_items",
    "model_limits", "omission_marker", "remaining", "request_cost", "retrieved_recall",
    "save_full_output", "select_to_clear", "simulate", "stuff_vs_retrieve", "stuffed_recall",
    "trim_and_save", "trim_lines", "trim_with_reference",
]
