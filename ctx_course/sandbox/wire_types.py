"""The workbook's own value types that cross the grading wire: the closed list, by class.

Covers: ``WIRE_TYPES``, every class of ``ctx_reference`` whose values an exercise's function takes
or returns (or raises) across the boundary between the grader and the learner's process, and
``registry()``, the codec's ``Registry`` of them. A learner's value of any other class is refused
with one line naming its type; a grader's object of any other class goes by reference.

Why a list and not a rule: what the grader rebuilds from a learner's answer must be a value of a
type someone chose to carry, read field by field, never a class the message names. Adding an
exercise whose function returns a new type means adding that type here (CONTRIBUTING.md).

Leaves out: the codec itself and how each form is written (``answerer.py``).
"""
from __future__ import annotations

from functools import cache

from ctx_reference.assemble import Assembly, BudgetError, Item
from ctx_reference.calibrate import LinearEstimate, Receipt
from ctx_reference.checks.ledger import CharTokenizer, PlusOneTokenizer
from ctx_reference.evaldiff import Case, Result
from ctx_reference.ledger import ContextOverflowError, LedgerEntry, Zone
from ctx_reference.policy import Clear, Compact, ContextView, Protect, Step, TurnRecord
from ctx_reference.render import PromptSpec
from ctx_reference.sessions import Record
from ctx_reference.sim import SimParams
from ctx_reference.tokens import FakeTokenizer
from ctx_reference.window import Outcome

from .answerer import Registry

#: What the learner's functions return or raise (read back on the grader's side), then what the
#: grader passes to them (read in the learner's process).
WIRE_TYPES: tuple[type, ...] = (
    Outcome, Zone, Item, Assembly, BudgetError, LedgerEntry, ContextOverflowError, Record,
    Clear, Compact, Protect,
    TurnRecord, ContextView, Step, SimParams, Case, Result, Receipt, LinearEstimate, PromptSpec,
    FakeTokenizer, CharTokenizer, PlusOneTokenizer,
)


@cache
def registry() -> Registry:
    """Return the codec's registry of ``WIRE_TYPES`` (built once per process)."""
    return Registry(WIRE_TYPES)


def type_names() -> list[str]:
    """Return the wire names of ``WIRE_TYPES`` (``"module:qualname"``), for the answer process's job."""
    return list(registry().by_name)
