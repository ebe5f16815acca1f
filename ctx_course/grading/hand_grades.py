"""Keep the hand grades of a submission through a regrade, unless the answer they grade changed.

nbgrader's ``SaveAutoGrades`` marks every cell that has a manual score "needs manual grading"
again each time a submission is autograded: a rerun, ``--force``, a resubmission or a corrected
hidden test would send a whole class back to the formgrader. When a grading run writes a
submission's rows, this module takes a *snapshot* of its hand grades (manual score, extra credit,
the "graded" state, the manual comment) with a digest of the answer each one was given for (read
from the autograded notebook the grader saw in the formgrader), and puts the "graded" state back
after the rows. A hand grade whose answer is now different is *reopened*: its score and comment
stay (the grader sees them), it is marked "needs manual grading", and the run's summary lists it.

Hand grading while a run writes the same gradebook. The snapshot, the rows and the put-back are
one transaction that holds the submission (``submission_lock.py``), so the state put back is the
state the rows found. The rule, with nbgrader's own (a manual score overrides the auto score):
**every save made in the formgrader is kept.** A run never writes a manual score, extra credit or
manual comment; it writes the auto scores and comments and the "needs manual grading" flag, and
leaves that flag as the grader left it unless the answer changed. A save that comes while the run
writes the submission waits for the transaction (milliseconds) and lands after it, so it wins:
its score and comment stay, and the cell is graded, even one the run had just reopened (the
formgrader shows the autograded notebook as it was when its page was loaded: after a run, reload
the page to see the new answer).

Covers: ``answer_digests`` (pure: the answer each grade cell of a notebook grades, as a digest),
``notebook_answers`` and ``file_answers`` (those digests for a folder, or for the files a run
received), ``take_snapshot`` and ``put_back`` (inside the transaction), and ``HandGrades``, which
joins them around one submission. When a regrade fails, its autograded notebook is removed (as
nbgrader leaves none), and with it the answer the hand grades were given for: the snapshot then
waits in ``<work>/hand_grades/<student>/<assignment>.json``, and the next run of that submission
takes the answers' digests from it.

Leaves out: the grading itself (``grader.py``), the rows (``gradebook_writer.py``), and grading by
hand (the formgrader).

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

# Where the snapshot of a submission whose regrade failed waits (under the grading run's work folder).
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


def file_answers(files: dict[str, bytes]) -> dict[str, dict[str, str]]:
    """Return ``answer_digests`` of every notebook among ``files`` ({relative path: bytes}) at the top level.

    The same as ``notebook_answers`` of the folder those files would make (``write_files``).
    """
    answers = {}
    for relative in sorted(files):
        path = Path(relative)
        if len(path.parts) != 1 or path.suffix != ".ipynb":
            continue
        try:
            cells = json.loads(files[relative].decode("utf-8")).get("cells", [])
        except (UnicodeDecodeError, ValueError, AttributeError):
            continue
        answers[path.stem] = answer_digests(cells)
    return answers


def take_snapshot(gb: Gradebook, student: str, assignment: str, answers: dict[str, dict[str, str]]) -> list[HandGrade]:
    """Return the hand grades of a submission, with the digests of the answers they grade (``answers``)."""
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return []
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
    gb: Gradebook, student: str, assignment: str, grades: list[HandGrade], answers: dict[str, dict[str, str]] | None
) -> tuple[str, ...]:
    """Put the "graded" state of the hand grades back after the rows; return the cells reopened.

    ``answers`` are the digests of the answers now (of the new autograded notebooks), None when
    the autograde failed. A grade whose answer has the digest it had keeps its state; one whose
    answer changed needs manual grading. Scores, extra credit and comments are not written: the
    rows never change them. Nothing is committed (the caller's transaction, ``locked_submission``).
    """
    reopened = []
    for hand in grades:
        try:
            grade = gb.find_grade(hand.cell, hand.notebook, assignment, student)
        except MissingEntry:  # the cell is no longer graded: nothing to keep
            continue
        now = None if answers is None else answers.get(hand.notebook, {}).get(hand.cell)
        changed = bool(hand.answer) and now is not None and now != hand.answer
        grade.needs_manual_grade = True if changed else hand.needs_manual_grade
        if changed:
            reopened.append(hand.cell)
    gb.db.flush()
    return tuple(sorted(set(reopened)))


class HandGrades:
    """Keep one submission's hand grades through one write of its rows: ``before()``, the rows, ``after()``.

    ``before`` and ``after`` run in the transaction that holds the submission; ``settle`` after
    it is committed. Example::

        hand = HandGrades(gb, "ada", "02-remaining", autograded, work / "hand_grades")
        with locked_submission(gb, "ada", "02-remaining"):
            hand.before()
            ...  # the rows of ada's 02-remaining, autograded again
            reopened = hand.after(file_answers(files))  # ("q_why_early",) if ada changed that answer
        hand.settle(graded=True)
    """

    def __init__(self, gb: Gradebook, student: str, assignment: str, autograded: Path, snapshots: Path):
        self.gb = gb
        self.student, self.assignment = student, assignment
        self.autograded = Path(autograded)
        self.pending = Path(snapshots) / student / f"{assignment}.json"
        self.grades: list[HandGrade] = []

    def seen(self) -> dict[str, dict[str, str]]:
        """Return the digests of the answers the hand grades were given for: the autograded notebook's, or
        those of the snapshot a failed regrade left, where it has them."""
        answers = notebook_answers(self.autograded)
        if self.pending.is_file():
            for hand in json.loads(self.pending.read_text(encoding="utf-8")):
                if hand.get("answer"):
                    answers.setdefault(hand["notebook"], {})[hand["cell"]] = hand["answer"]
        return answers

    def before(self) -> None:
        """Take the snapshot: the hand grades as the gradebook holds them now, with the answers they grade."""
        self.grades = take_snapshot(self.gb, self.student, self.assignment, self.seen())

    def after(self, answers: dict[str, dict[str, str]] | None) -> tuple[str, ...]:
        """Put the "graded" states back; return the cells reopened (``answers``: None if the autograde failed)."""
        if not self.grades:
            return ()
        return put_back(self.gb, self.student, self.assignment, self.grades, answers)

    def settle(self, graded: bool) -> None:
        """Once committed: forget the snapshot if graded, else keep it (the autograded notebook is about to go)."""
        if graded:
            self.pending.unlink(missing_ok=True)
        elif self.grades and not self.pending.is_file():
            self.pending.parent.mkdir(parents=True, exist_ok=True)
            partial = self.pending.with_suffix(".tmp")
            partial.write_text(json.dumps([asdict(g) for g in self.grades], ensure_ascii=False), encoding="utf-8")
            os.replace(partial, self.pending)
