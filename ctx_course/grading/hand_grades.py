"""Keep the hand grades of a submission through a regrade, unless the answer they grade changed.

nbgrader's ``SaveAutoGrades`` marks every cell that has a manual score "needs manual grading"
again each time a submission is autograded: a rerun, ``--force``, a resubmission or a corrected
hidden test would send a whole class back to the formgrader. Around each autograde, this
module takes a *snapshot* of the hand grades (manual score, extra credit, the "graded" state,
the manual comment) with a digest of the answer each one was given for (read from the
autograded notebook the grader saw in the formgrader), and puts them back afterwards. A hand
grade whose answer is now different is *reopened*: its score and comment stay (the grader sees
them), it is marked "needs manual grading", and the run's summary lists it.

Covers: ``answer_digests`` (pure: the answer each grade cell of a notebook grades, as a digest),
``take_snapshot`` and ``put_back`` (the gradebook before and after one autograde), and
``HandGrades``, which joins them around one submission. While a submission is regraded its
snapshot waits in ``<work>/hand_grades/<student>/<assignment>.json``: a run stopped half-way, or
an autograde that failed, leaves it there, and the next run starts from it.

Leaves out: the grading itself (``grader.py``), and grading by hand (the formgrader).

Vocabulary: a *hand grade* is a grade cell's record that a person changed in the formgrader (a
manual score or extra credit) and its comment; the *answer* of a free-response cell is the cell
itself, the answer of a check cell is the answer cells between it and the check cell before it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from ..cells import source_text

# Where the snapshot of a submission being regraded waits (under the grading run's work folder).
SNAPSHOTS = "hand_grades"


@dataclass(frozen=True)
class HandGrade:
    """One grade cell's hand grade: what the formgrader stored, and the answer it was given for.

    ``answer`` is the digest of that answer ("" when it is unknown: the autograded notebook the
    grader saw is gone).
    """

    notebook: str
    cell: str
    manual_score: float | None
    extra_credit: float | None
    needs_manual_grade: bool
    manual_comment: str | None
    answer: str


def answer_digests(cells: list[dict]) -> dict[str, str]:
    """Return, for each grade cell of a notebook's cells (nbformat dicts), the digest of its answer.

    A free-response cell (grade and solution) answers itself; a check cell (grade only) checks the
    answer cells since the check cell before it. Example: cells ``[answer "x = 1", check]`` give
    ``{"check": sha256("x = 1")}``; change the answer and the check's digest changes.
    """
    digests, since_check = {}, []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if not grade_id:
            continue
        source = source_text(cell.get("source", ""))
        if meta.get("solution"):
            since_check.append(source)
        if meta.get("grade"):
            answer = [source] if meta.get("solution") else since_check
            digests[grade_id] = hashlib.sha256("\0".join(s.strip() for s in answer).encode()).hexdigest()
            if not meta.get("solution"):
                since_check = []
    return digests


def notebook_answers(folder: Path) -> dict[str, dict[str, str]]:
    """Return ``answer_digests`` of every notebook in ``folder``, by notebook name ({} if absent)."""
    answers = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        answers[path.stem] = answer_digests(cells)
    return answers


def take_snapshot(gb: Gradebook, student: str, assignment: str, autograded: Path) -> list[HandGrade]:
    """Return the hand grades of a submission, with the digests of the answers in ``autograded``."""
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return []
    answers = notebook_answers(autograded)
    grades = []
    for notebook in submission.notebooks:
        comments = {c.name: c.manual_comment for c in notebook.comments}
        for grade in notebook.grades:
            if grade.manual_score is None and grade.extra_credit is None and not comments.get(grade.name):
                continue
            grades.append(
                HandGrade(
                    notebook.name,
                    grade.name,
                    grade.manual_score,
                    grade.extra_credit,
                    bool(grade.needs_manual_grade),
                    comments.get(grade.name),
                    answers.get(notebook.name, {}).get(grade.name, ""),
                )
            )
    return grades


def put_back(
    gb: Gradebook, student: str, assignment: str, grades: list[HandGrade], autograded: Path
) -> tuple[str, ...]:
    """Put the hand grades back after an autograde; return the cells reopened because their answer changed.

    A grade whose answer (now in ``autograded``) has the digest it had keeps its score, comment
    and state; one whose answer changed keeps its score and comment and needs manual grading.
    With no autograded notebook (the autograde failed) every grade is put back as it was.
    """
    answers = notebook_answers(autograded)
    reopened = []
    for hand in grades:
        try:
            grade = gb.find_grade(hand.cell, hand.notebook, assignment, student)
        except MissingEntry:  # the cell is no longer graded: nothing to keep
            continue
        now = answers.get(hand.notebook, {}).get(hand.cell)
        changed = bool(hand.answer) and now is not None and now != hand.answer
        grade.manual_score = hand.manual_score
        grade.extra_credit = hand.extra_credit
        grade.needs_manual_grade = True if changed else hand.needs_manual_grade
        if hand.manual_comment is not None:
            try:
                gb.find_comment(hand.cell, hand.notebook, assignment, student).manual_comment = hand.manual_comment
            except MissingEntry:
                pass
        if changed:
            reopened.append(hand.cell)
    gb.db.commit()
    return tuple(sorted(set(reopened)))


class HandGrades:
    """Keep one submission's hand grades through one autograde (``before()``, autograde, ``after()``).

    Example::

        hand = HandGrades(open_gradebook, "ada", "02-remaining", autograded, work / "hand_grades")
        hand.before()
        ...  # nbgrader autogrades ada's 02-remaining
        reopened = hand.after()  # ("q_why_early",) if ada changed that answer since it was graded
    """

    def __init__(self, gradebook, student: str, assignment: str, autograded: Path, snapshots: Path):
        self.gradebook = gradebook  # a function returning a Gradebook (a context manager)
        self.student, self.assignment = student, assignment
        self.autograded = Path(autograded)
        self.pending = Path(snapshots) / student / f"{assignment}.json"
        self.grades: list[HandGrade] = []

    def before(self) -> None:
        """Take the snapshot (or the one an interrupted run left) and keep it on disk until ``after``."""
        if self.pending.is_file():
            self.grades = [HandGrade(**g) for g in json.loads(self.pending.read_text(encoding="utf-8"))]
            return
        with self.gradebook() as gb:
            self.grades = take_snapshot(gb, self.student, self.assignment, self.autograded)
        if self.grades:
            self.pending.parent.mkdir(parents=True, exist_ok=True)
            partial = self.pending.with_suffix(".tmp")
            partial.write_text(json.dumps([asdict(g) for g in self.grades], ensure_ascii=False), encoding="utf-8")
            os.replace(partial, self.pending)

    def after(self) -> tuple[str, ...]:
        """Put the hand grades back; return the cells reopened. The snapshot is kept if the autograde failed."""
        if not self.grades:
            return ()
        graded = any(self.autograded.glob("*.ipynb"))
        with self.gradebook() as gb:
            reopened = put_back(gb, self.student, self.assignment, self.grades, self.autograded)
        if graded:
            self.pending.unlink(missing_ok=True)
        return reopened
