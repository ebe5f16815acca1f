"""The coordinator's writes of what an engine graded: gradebook rows and the autograded folder.

Covers: ``write_rows``, which writes one submission's timestamp, grades, comments and late
penalties into the real gradebook (SQLite or PostgreSQL) exactly as nbgrader's autograde would
have, and ``write_files``, which replaces a submission's autograded folder with the files the
engine sent back. Only the coordinator writes the real gradebook, one submission after the
other: the gradebook has one writer, so no two writers ever race for it.

Also ``read_files``, the inverse of ``write_files``: a folder as the {relative path: bytes}
sent between the coordinator and a SubmissionGrader (submissions and the release one way,
autograded notebooks and feedback pages the other). A SubmissionGrader writes the release and the
submission it is sent into its scratch folder with ``write_files``.

nbgrader's own rule is kept: a cell graded by hand earlier (a manual score in the real
gradebook) is marked as needing a look again; a notebook the student did not hand in scores 0
and needs nothing.

Leaves out: grading (``autograde.py``), reading results back (``grader.py``).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook

from .records import GradedSubmission


def write_rows(gb: Gradebook, student: str, assignment: str, graded: GradedSubmission) -> None:
    """Write a graded submission's rows into ``gb`` (student and assignment must exist there)."""
    extra = {"timestamp": graded.timestamp} if graded.timestamp is not None else {}
    submission = gb.update_or_create_submission(assignment, student, **extra)
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
    gb.db.commit()


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
