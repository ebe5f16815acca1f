"""Why a submission could not be graded, and what nbgrader repaired in one it graded: one line each.

Covers: the reason a submission failed (``diagnose``: a missing or broken notebook, a cell past
the time limit, a dead kernel, else the telling line of nbgrader's log, ``last_error``); the notes
of a graded one (``tamper_notes``: read-only cells edited or deleted, which nbgrader restored;
``timeout_notes``: cells the time limit stopped); and whether a failure was a kernel that could
not start (``kernel_failed_to_start``), not the student's fault, so the run tries once more.

Leaves out: grading and the records it returns (``grader.py``, ``records.py``). Each line is for
the instructor (English), printed by ``report.py``.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearHiddenTests

from ..cells import source_text
from ..editions.translate import in_edition, submitted_edition
from .steps.metadata import release_cells, restore_metadata
from .steps.preprocessors import ANSI_ESCAPE

# What nbgrader's log says when a kernel could not start (a port taken by another process, say).
KERNEL_START_FAILURES = ("Address already in use", "Kernel died before replying to kernel_info")


def diagnose(folder: Path, expected: Sequence[str], outcome: dict, *, timeout: int, cpu_limit: int | None) -> str:
    """Return one line saying why nbgrader could not grade a submission.

    ``folder`` is the submission, ``expected`` the names of its assignment's notebooks (without
    ``.ipynb``), ``outcome`` what nbgrader returned; ``timeout`` and ``cpu_limit`` (None when the
    kernels were not sandboxed) are the limits a cell ran under.
    """
    present = sorted(p.name for p in folder.glob("*.ipynb"))
    wanted = [f"{name}.ipynb" for name in expected]
    if wanted and not set(wanted) & set(present):
        found = f" (found: {', '.join(present)})" if present else " (the folder holds no notebook)"
        return f"missing notebook {', '.join(wanted)}{found}"
    for name in wanted:
        path = folder / name
        if not path.is_file():
            continue
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return f"{name} is not valid notebook JSON ({short(exc)})"
        try:
            nbformat.read(path, as_version=nbformat.NO_CONVERT)
        except Exception as exc:
            return f"{name} is not a valid notebook ({short(exc)})"
    text = outcome.get("log", "") + outcome.get("error", "")
    if "became unresponsive" in text or "CellTimeoutError" in text:
        return (f"a cell ran past the {timeout} s limit and ignored the interrupt"
                " (an endless loop that catches KeyboardInterrupt?)")
    if "DeadKernelError" in text or "Kernel died" in text:
        if cpu_limit is not None:
            return (f"the kernel died while running the notebook"
                    f" (past the {cpu_limit} s CPU-time limit, or out of memory?)")
        return "the kernel died while running the notebook"
    return last_error(outcome)


def _as_released(source: str, cell, edition: str, root: Path | None) -> set[str]:
    """Return a read-only cell's source as each release of the submission's edition shows it (stripped)."""
    shown = {source.rstrip()}
    if edition != "zh_CN" and root is not None:
        one = {"metadata": {}, "cells": [{"id": cell.name, "cell_type": cell.cell_type, "source": source}]}
        translated = in_edition(one, root, cell.notebook.assignment.name, edition)["cells"][0]
        shown.add(source_text(translated["source"]).rstrip())
    return shown


def tamper_notes(gb: Gradebook, folder: Path, assignment: str, root: Path | None = None) -> tuple[str, ...]:
    """Name the read-only cells a student edited or deleted (nbgrader restored them).

    ``folder`` is the submission as handed in; the gradebook holds the cells as released. A
    submission of the English edition is compared with the English release (the catalogues under
    ``root``).
    """
    notes = []
    hider = ClearHiddenTests(enforce_metadata=False)
    for notebook in gb.find_assignment(assignment).notebooks:
        path = folder / f"{notebook.name}.ipynb"
        if not path.is_file():
            notes.append(f"{notebook.name}.ipynb missing: scored 0")
            continue
        cells = {}
        handed_in = json.loads(path.read_text(encoding="utf-8"))
        submitted = [c for c in handed_in.get("cells", []) if isinstance(c, dict)]
        edition = submitted_edition(handed_in)
        # what was graded: every cell's metadata as released, the last copy of a duplicated one
        notes += restore_metadata(submitted, release_cells(gb, notebook.name, assignment))
        for cell in submitted:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id:
                cells[grade_id] = source_text(cell.get("source", ""))
        edited, deleted = [], []
        check_cells = {c.name for c in notebook.grade_cells}
        answers = sorted(c.name for c in notebook.solution_cells if c.name not in cells)
        for source_cell in notebook.source_cells:
            if not source_cell.locked:
                continue
            released = nbformat.v4.new_code_cell(source_cell.source)
            hider._remove_hidden_test_region(released)
            if source_cell.name not in cells:
                if source_cell.name in check_cells:  # nbgrader puts deleted check cells back
                    deleted.append(source_cell.name)
            elif cells[source_cell.name].rstrip() not in _as_released(released.source, source_cell, edition, root):
                edited.append(source_cell.name)
        if edited:
            notes.append("edited read-only cells restored: " + ", ".join(sorted(edited)))
        if deleted:
            notes.append("deleted check cells restored: " + ", ".join(sorted(deleted)))
        if answers:
            notes.append("deleted answer cells restored: " + ", ".join(answers))
    return tuple(notes)


def timeout_notes(folder: Path, seconds: int) -> tuple[str, ...]:
    """Say how many cells of an autograded submission (``folder``) the ``seconds`` time limit stopped."""
    timed_out = 0
    for path in folder.glob("*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        timed_out += sum(
            o.get("ename") == "CellTimeoutError"
            for c in nb.get("cells", [])
            for o in c.get("outputs", [])
            if o.get("output_type") == "error"
        )
    if not timed_out:
        return ()
    return (f"{timed_out} cell(s) stopped after the {seconds} s time limit",)


def kernel_failed_to_start(outcome: dict) -> bool:
    """Return whether an nbgrader outcome failed because a kernel could not start (not the student's fault).

    Example: ``kernel_failed_to_start({"success": False, "log": "OSError: Address already in use"})``
    is True; the grading run then autogrades that submission once more.
    """
    text = outcome.get("log", "") + outcome.get("error", "")
    return any(sign in text for sign in KERNEL_START_FAILURES)


def short(exc: Exception, limit: int = 120) -> str:
    """Return the first line of ``exc``'s message (its type's name if it has none), at most ``limit`` characters."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def last_error(outcome: dict) -> str:
    """Return the most telling error line of an nbgrader log: the last `SomeError: message` line."""
    text = ANSI_ESCAPE.sub("", outcome.get("log", "") + "\n" + outcome.get("error", ""))
    generic = ("NbGraderException", "Please see the")
    candidates = [
        line.strip()
        for line in text.splitlines()
        if re.match(r"^\s*[\w.]*(Error|Exception|Exit)\b.*:", line) and not any(g in line for g in generic)
    ]
    if candidates:
        return short(Exception(candidates[-1]), 200)
    errors = [line[len("[ERROR] "):] for line in text.splitlines() if line.startswith("[ERROR]")]
    return short(Exception(errors[0] if errors else "nbgrader reported a failure"), 200)
