"""The coordinator's writes of what an engine graded: gradebook rows and the autograded folder.

Covers: ``write_submission``, which writes one graded submission as a whole: its timestamp, grades,
comments and late penalties into the real gradebook (SQLite or PostgreSQL) exactly as nbgrader's
autograde would have, its hand grades kept (``hand_grades.py``), in one transaction that holds the
submission (``submission_lock.py``), then its autograded folder; ``write_rows``, the rows alone
(inside that transaction), and ``write_files``, which replaces a folder with the files the engine
sent back. Only the coordinator writes rows of a grading run, one submission after the other;
the Formgrader may save hand grades into the same gradebook meanwhile, and a save that comes while
a submission is written waits for its transaction and lands after it (the rule is in
``hand_grades.py``).

Also ``read_files``, the inverse of ``write_files``: a folder as the {relative path: bytes}
sent between the coordinator and a SubmissionGrader (submissions and the release one way,
autograded notebooks and feedback pages the other). A SubmissionGrader writes the release and the
submission it is sent into its scratch folder with ``write_files``.

nbgrader's own rule is kept: a cell graded by hand earlier (a manual score in the real
gradebook) is marked as needing a look again; a notebook the student did not hand in scores 0
and needs nothing. The hand grades then put back the "graded" state where the answer is the one
that was graded.

The order of the writes is the one a crash at any point leaves right: the transaction first (all
of it or nothing), then, graded, the snapshot of a failed regrade forgotten and the autograded
folder replaced; not graded, the snapshot kept and the autograded and feedback folders removed. A
run stopped between the commit and the folder regrades the submission (its manifest entry is
not written yet) and finds the autograded notebook the hand grades were given for.

Leaves out: grading (``autograde.py``), reading results back (``grader.py``).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc

from .hand_grades import HandGrades, file_answers
from .records import GradedSubmission
from .submission_lock import locked_submission


def write_submission(
    gb: Gradebook,
    student: str,
    assignment: str,
    graded: GradedSubmission,
    *,
    autograded: Path,
    feedback: Path,
    snapshots: Path,
) -> tuple[str, ...]:
    """Write a graded submission (rows, hand grades kept, autograded folder); return the cells reopened.

    ``autograded`` and ``feedback`` are the submission's folders, ``snapshots`` the folder of the
    snapshots of failed regrades. Not graded: the rows nbgrader recorded are written, the hand
    grades kept as they were, both folders removed (nbgrader leaves no autograded copy of a
    failure), and nothing is reopened.
    """
    if graded.in_gradebook:
        add_missing_submission(gb, student, assignment, graded)
    answers = file_answers(graded.files) if graded.result.graded else None
    hand = HandGrades(gb, student, assignment, autograded, snapshots)
    with locked_submission(gb, student, assignment):
        hand.before()  # the rows reopen every hand-graded cell, as nbgrader does: put back after
        if graded.in_gradebook:
            write_rows(gb, student, assignment, graded)
        reopened = hand.after(answers)
    hand.settle(graded.result.graded)
    if not graded.result.graded:
        for folder in (autograded, feedback):
            shutil.rmtree(folder, ignore_errors=True)
        return ()
    write_files(autograded, graded.files)
    return reopened


def add_missing_submission(gb: Gradebook, student: str, assignment: str, graded: GradedSubmission) -> None:
    """Add the submission to ``gb`` if it has none yet (nbgrader commits it: before the lock is taken)."""
    try:
        gb.find_submission(assignment, student)
    except MissingEntry:
        extra = {"timestamp": graded.timestamp} if graded.timestamp is not None else {}
        gb.add_submission(assignment, student, **extra)


def write_rows(gb: Gradebook, student: str, assignment: str, graded: GradedSubmission) -> None:
    """Write a graded submission's rows into ``gb``, uncommitted (its submission must exist there).

    The timestamp is set as nbgrader's ``update_or_create_submission`` sets it (which would commit).
    """
    submission = gb.find_submission(assignment, student)
    if graded.timestamp is not None:
        submission.timestamp = parse_utc(graded.timestamp)
    notebooks = {nb.name: nb for nb in submission.notebooks}
    for rows in graded.notebooks:
        notebook = notebooks[rows.name]
        grades = {g.name: g for g in notebook.grades}
        for name, auto_score, needs_manual in rows.grades:
            grade = grades[name]
            grade.auto_score = auto_score
            grade.needs_manual_grade = bool(needs_manual or (rows.submitted and grade.manual_score is not None))
        if rows.submitted:
            notebook.late_submission_penalty = rows.late_submission_penalty
            comments = {c.name: c for c in notebook.comments}
            for name, auto_comment in rows.comments:
                comments[name].auto_comment = auto_comment
    gb.db.flush()


def read_files(folder: Path) -> dict[str, bytes]:
    """Return {relative path: bytes} of every file under ``folder`` ({} when there is no such folder)."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Replace ``folder`` with the files given ({relative path: bytes})."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    for relative, data in files.items():
        target = folder / relative
        if folder.resolve() not in target.resolve().parents:
            raise ValueError(f"files must stay inside {folder} (got {relative!r})")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
