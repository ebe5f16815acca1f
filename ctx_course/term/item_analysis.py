"""Item analysis of a graded class: the share that passed each check cell, and what each hidden test caught.

Read from what grading left, never by running anything: the check cells' grades from the
gradebook, and, for the hidden tests, the verdict the grader wrote into each check cell's
metadata (``behaviour.VERDICT_KEY``) of the instructor's autograded notebooks
(``<work>/autograded/<student>/<assignment>/``). A check cell scores all or nothing, so *passed*
means full points. A hidden test (one hidden ``expect_digest`` call, named by its label,
``cells.hidden_checks``) *caught* a submission when it is the one the check cell failed on: the
grader runs the cell top to bottom and records the label of the hidden check it stopped at. The
hidden tests before it passed, those after it are unknown; a check cell that passed passed every
hidden test; one that failed in its visible checks, or in a hidden line that is no labelled
check, tells nothing about its hidden tests. So a hidden test's ``passed`` is a lower bound and
``caught`` is exact.

Covers: ``check_items`` (pure per-cell tally), ``hidden_outcomes`` (pure: which hidden tests one
check cell passed, failed or left unknown), ``item_analysis`` (the class, from a work folder),
``write_items_csv`` and ``items_figure`` (the CSV and the figure, drawn by
``ctx_reference.plots.plot_item_analysis`` with the bundled font).

Leaves out: free-response cells (graded by hand); hidden ``assert`` lines, which have no label (a
failure there counts for the check cell only); notebooks autograded before the verdict was kept
in the cell (their hidden tests count as unknown).

Vocabulary: an *item* is one check cell or one hidden test; *submissions* counts the graded
submissions that have that cell.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook

from ..cells import hidden_checks
from ..grading.csv_files import write_csv
from ..grading.steps.behaviour import VERDICT_KEY

CSV_COLUMNS = (
    "kind",
    "assignment",
    "notebook",
    "cell",
    "hidden_test",
    "submissions",
    "passed",
    "failed",
    "unknown",
    "share_passed",
)
CHECK, HIDDEN = "check cell", "hidden test"


@dataclass(frozen=True)
class Item:
    """One check cell (``hidden_test`` "") or one hidden test of it, and how the class did on it."""

    kind: str
    assignment: str
    notebook: str
    cell: str
    hidden_test: str
    submissions: int
    passed: int
    failed: int
    unknown: int = 0

    @property
    def share_passed(self) -> float:
        """Share of the submissions that passed (0 when there are none)."""
        return self.passed / self.submissions if self.submissions else 0.0


def hidden_outcomes(labels: Sequence[str], first_failed: str, passed: bool) -> dict[str, str]:
    """Return {label: "passed" | "failed" | "unknown"} for the hidden tests of one graded check cell.

    ``labels`` are the cell's hidden tests in source order (from the instructor's cell),
    ``first_failed`` the label of the one the grader's run of the cell stopped at ("" for none),
    ``passed`` whether it scored full points. Example: labels a, b, c and ``first_failed`` b give
    ``{"a": "passed", "b": "failed", "c": "unknown"}``.
    """
    labels = list(labels)
    if passed:
        return dict.fromkeys(labels, "passed")
    outcome = dict.fromkeys(labels, "unknown")
    if first_failed in labels:
        index = labels.index(first_failed)
        outcome.update(dict.fromkeys(labels[:index], "passed"), **{first_failed: "failed"})
    return outcome


def check_items(grades: Iterable[tuple[str, str, str, bool]]) -> list[Item]:
    """Return one check-cell Item per (assignment, notebook, cell) of ``(assignment, notebook, cell, passed)`` rows.

    Example: ``[("02", "nb", "check", True), ("02", "nb", "check", False)]`` gives one Item with
    2 submissions, 1 passed (share 0.5).
    """
    tally: dict[tuple[str, str, str], list[int]] = {}
    for assignment, notebook, cell, passed in grades:
        counts = tally.setdefault((assignment, notebook, cell), [0, 0])
        counts[0 if passed else 1] += 1
    return [Item(CHECK, a, n, c, "", p + f, p, f) for (a, n, c), (p, f) in sorted(tally.items())]


def item_analysis(db_url: str, course_id: str, work: str | os.PathLike, assignments: Sequence[str] = ()) -> list[Item]:
    """Return the Items of every check cell and hidden test of a graded class (optionally of some assignments).

    Check cells come first in course order; each is followed by its hidden tests.
    """
    work = Path(work)
    rows: list[tuple[str, str, str, bool]] = []  # (assignment, notebook, check cell, passed)
    hidden: dict[tuple[str, str, str, str], dict[str, int]] = {}  # (…, hidden test) -> outcome -> count
    with Gradebook(db_url, course_id) as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            if assignments and assignment.name not in assignments:
                continue
            for notebook in assignment.notebooks:
                checks = {
                    c.name: c
                    for c in notebook.grade_cells
                    if c.cell_type == "code" and not _is_answer(notebook, c.name)
                }
                labels = {
                    c.name: [label for label, _, _ in hidden_checks(c.source or "")]
                    for c in notebook.source_cells
                    if c.name in checks
                }
                for submission_notebook in notebook.submissions:
                    student = submission_notebook.student.id
                    cells = _autograded_cells(work, student, assignment.name, notebook.name)
                    for grade in submission_notebook.grades:
                        if grade.name not in checks or grade.auto_score is None:
                            continue
                        passed = grade.auto_score >= (grade.max_score or 0)
                        rows.append((assignment.name, notebook.name, grade.name, passed))
                        cell = cells.get(grade.name)
                        if cell is None:
                            continue
                        verdict = cell.get("metadata", {}).get(VERDICT_KEY)
                        if not isinstance(verdict, dict):  # autograded before verdicts were kept
                            verdict = {}
                        first_failed = verdict.get("hidden_test", "")
                        if not isinstance(first_failed, str):
                            first_failed = ""
                        outcomes = hidden_outcomes(labels.get(grade.name, []), first_failed, passed)
                        for label, outcome in outcomes.items():
                            key = (assignment.name, notebook.name, grade.name, label)
                            hidden.setdefault(key, {"passed": 0, "failed": 0, "unknown": 0})[outcome] += 1
    items = []
    for check in check_items(rows):
        items.append(check)
        for (a, n, c, label), counts in hidden.items():
            if (a, n, c) == (check.assignment, check.notebook, check.cell):
                items.append(
                    Item(
                        HIDDEN,
                        a,
                        n,
                        c,
                        label,
                        sum(counts.values()),
                        counts["passed"],
                        counts["failed"],
                        counts["unknown"],
                    )
                )
    return items


def write_items_csv(items: Sequence[Item], path: str | os.PathLike) -> Path:
    """Write the items as a CSV (columns CSV_COLUMNS); return the path."""
    rows = (
        [i.kind, i.assignment, i.notebook, i.cell, i.hidden_test, i.submissions, i.passed, i.failed,
         i.unknown if i.kind == HIDDEN else "", f"{i.share_passed:.3f}"]
        for i in items
    )
    return write_csv(rows, path, header=CSV_COLUMNS)


def items_figure(items: Sequence[Item], most: int = 12):
    """Return the figure: each check cell's share passed (hardest first), the hidden tests that caught most."""
    from ctx_reference.i18n import _
    from ctx_reference.plots import plot_item_analysis

    checks = sorted((i for i in items if i.kind == CHECK), key=lambda i: (i.share_passed, i.assignment, i.cell))
    caught = sorted(
        (i for i in items if i.kind == HIDDEN and i.failed), key=lambda i: (-i.failed, i.assignment, i.cell)
    )
    return plot_item_analysis(
        [(f"{i.assignment} {i.cell}", i.share_passed) for i in checks],
        [(_("{cell}：{label}").format(cell=i.cell, label=i.hidden_test), i.failed) for i in caught[:most]],
    )


# --------------------------------------------------------------------------------------------
# Small helpers


def _is_answer(notebook, name: str) -> bool:
    return any(cell.name == name for cell in notebook.solution_cells)


def _autograded_cells(work: Path, student: str, assignment: str, notebook: str) -> dict[str, dict]:
    path = work / "autograded" / student / assignment / f"{notebook}.ipynb"
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return {}
    return {
        c["metadata"]["nbgrader"]["grade_id"]: c
        for c in cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    }
