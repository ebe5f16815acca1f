"""What this kernel's checks have seen: which exercises were checked, and which rules the last check broke.

Covers: the rules a check's failed cases break (``failed_rules``, a pure function of the cases,
their outcomes and the exercise's ``RULES``), the record a kernel keeps of every check it ran
(``record``, ``attempt``), whether the course runs under a grader (``grading``), and ``forget``
(a fresh kernel's record, for tests).

Leaves out: what is shown from the record (``hints.py`` chooses a hint from it, ``model_answers.py``
opens a model answer only after a check ran).

Vocabulary: an *attempt* is what the record holds for one exercise: how many times its check ran
in this kernel on a function that was tried (a stub still raising ``NotImplementedError`` is not)
and the rules its last run broke, in the order of the failing cases. The record
lives as long as the kernel: a restarted kernel has run no check.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the checks import this module: names for the annotations only
    from .checks.rules import Rule
    from .checks.runner import CheckCase, Outcome

GRADING = "NBGRADER_EXECUTION"
"""Set by nbgrader (``validate``, ``autograde``) and by the course's grader in every process that runs a notebook."""


@dataclass(frozen=True)
class Attempt:
    """How often an exercise's check ran in this kernel, and the rules (names) its last run broke."""

    runs: int
    failed: tuple[str, ...] = ()


def failed_rules(cases: Sequence[CheckCase], outcomes: Sequence[Outcome], rules: Sequence[Rule]) -> tuple[str, ...]:
    """Return the names of the rules the failed outcomes break, each once, in the order of the failing cases.

    A visible case breaks the rules whose ``visible`` names its label (in the table's order); the
    outcome of the generated cases, which follows the visible ones, names its rule itself. A case
    no rule names adds nothing. Example: a ``remaining`` whose only failing case is the one about
    a negative margin gives ``("negative-when-over",)``.
    """
    found: list[str] = []
    for index, outcome in enumerate(outcomes):
        if outcome.passed or outcome.pending:
            continue
        if index < len(cases):
            found += [rule.name for rule in rules if cases[index].label in rule.visible]
        elif outcome.rule is not None:
            found.append(outcome.rule)
    return tuple(dict.fromkeys(found))


_RECORD: dict[str, Attempt] = {}


def record(exercise: str, failed: Sequence[str]) -> Attempt:
    """Note in this kernel's record that ``exercise``'s check ran and broke ``failed``; return the new attempt."""
    before = _RECORD.get(exercise, Attempt(0))
    _RECORD[exercise] = Attempt(before.runs + 1, tuple(failed))
    return _RECORD[exercise]


def attempt(exercise: str) -> Attempt:
    """Return this kernel's attempt at ``exercise`` (``runs`` 0: its check has not run here)."""
    return _RECORD.get(exercise, Attempt(0))


def forget() -> None:
    """Empty this kernel's record, as a restarted kernel has it."""
    _RECORD.clear()


def grading(environ: Mapping[str, str] | None = None) -> bool:
    """Return True when the notebook runs under a grader (nbgrader's validate or autograde, the course's judge).

    >>> grading({"NBGRADER_EXECUTION": "autograde"}), grading({})
    (True, False)
    """
    return bool((os.environ if environ is None else environ).get(GRADING))


__all__ = ["Attempt", "attempt", "failed_rules", "forget", "grading", "record"]
