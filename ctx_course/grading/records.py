"""The records of a grading run: who is on the roster, what grading a submission gave, what a run did.

Covers: ``Student`` (one row of the roster), ``GradeResult`` (one submission's outcome),
``Lateness`` (how late a submission was and what it cost), ``ClassReport`` (one run's outcome),
``PreparedAssignment`` (what a submission is graded against, as plain data), ``NotebookRows``
and ``GradedSubmission`` (what grading one submission gives, as plain data),
``RosterError`` (a roster that cannot be read) and ``WorkerRefused`` (a grading worker that
cannot grade).

Leaves out: how they are made (``grader.py``, ``autograde.py``), printed or exported (``report.py``). This module
imports nothing of the package, so every other module can use the records.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Student:
    """One row of the roster."""

    id: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    lms_user_id: str | None = None


@dataclass(frozen=True)
class Lateness:
    """How late one submission was and what it cost: ``penalty`` in points, ``share`` of its score."""

    due: dt.datetime  # UTC, with the extension
    submitted: dt.datetime | None  # UTC, from timestamp.txt
    seconds_late: float
    extended: bool
    penalty: float
    share: float


@dataclass(frozen=True)
class GradeResult:
    """What grading one student's submission of one assignment gave.

    ``graded`` False means nbgrader could not grade it and ``reason`` says why in one line.
    ``auto_score``/``max_auto_score`` are the points of the autograded check cells;
    ``manual_pending`` the points of free-response cells still to grade in the formgrader.
    ``notes`` flag what nbgrader repaired (an edited or deleted read-only cell it restored,
    a cell stopped by the timeout). ``late`` says how late it was (``deadlines.toml``);
    ``regrade`` names the hand-graded cells whose answer changed and wait for the formgrader again.
    """

    student: str
    assignment: str
    graded: bool
    auto_score: float = 0.0
    max_auto_score: float = 0.0
    manual_pending: float = 0.0
    reason: str = ""
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    log: str = field(default="", repr=False, compare=False)
    late: Lateness | None = None
    regrade: tuple[str, ...] = ()
    skipped: bool = field(default=False, compare=False)  # unchanged since the last run: read back, not run


@dataclass(frozen=True)
class ClassReport:
    """The outcome of one grading run: one result per submission, and where things were written."""

    results: tuple[GradeResult, ...]
    seconds: float
    work: Path
    grades_csv: Path | None = None
    feedback: int = 0
    not_on_roster: tuple[str, ...] = ()
    phases: dict[str, float] = field(default_factory=dict, compare=False)
    sandboxed: bool = True
    stopped_by: str | None = None  # "SIGTERM" or "SIGINT" when the run was asked to stop
    stop_status: int = 0  # 128 + the signal's number, the exit status of a stopped run
    # "student assignment" of graded submissions that release_feedback cannot return (Grader.outside_exchange)
    outside_exchange: tuple[str, ...] = ()

    @property
    def skipped(self) -> int:
        """How many submissions were unchanged since the last run and only read back."""
        return sum(r.skipped for r in self.results)

    @property
    def failed(self) -> tuple[GradeResult, ...]:
        """The submissions that could not be graded."""
        return tuple(r for r in self.results if not r.graded)


@dataclass(frozen=True)
class PreparedAssignment:
    """An assignment as the coordinator prepared it, for a SubmissionGrader to grade against.

    ``rows`` is its definition in the coordinator's gradebook ({table: rows}, from
    ``assignment_rows.read_definition``); ``release`` the files of its release folder
    (relative path to bytes), whose notebooks the separate evaluation reads.
    """

    rows: dict[str, tuple[dict, ...]]
    release: dict[str, bytes]


@dataclass(frozen=True)
class NotebookRows:
    """What autograding gave one notebook of a submission, as rows to write into a gradebook.

    ``grades`` holds (cell name, auto score, needs manual grade) and ``comments`` (cell name,
    auto comment); ``submitted`` is False for a notebook the student did not hand in (nbgrader
    scores its cells 0 and leaves its comments and late penalty alone).
    """

    name: str
    submitted: bool
    late_submission_penalty: float | None = None
    grades: tuple[tuple[str, float | None, bool], ...] = ()
    comments: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class GradedSubmission:
    """What grading one submission gives (``autograde.SubmissionGrader``): plain data, nothing written yet.

    ``result`` is its GradeResult (graded or not, and ``reason`` when not; the scores and notes
    are read back by the coordinator once it has written the rows). When nbgrader got
    as far as recording the submission (``in_gradebook``, also for most that it could not
    grade), ``timestamp`` (the submission's, or None) and ``notebooks`` (its rows) are what the
    coordinator writes into the gradebook; when graded, ``files`` (the autograded folder:
    relative path to bytes) too. ``worker``
    names the worker that graded it; ``refusal`` says why that worker cannot grade at all
    (bubblewrap refused there, its course differs), which stops the run.
    """

    result: GradeResult
    in_gradebook: bool = False
    timestamp: object = None
    notebooks: tuple[NotebookRows, ...] = ()
    files: dict[str, bytes] = field(default_factory=dict, repr=False)
    worker: str = ""
    refusal: str = ""


class RosterError(ValueError):
    """The roster CSV cannot be read: the message names the file and the row."""


class WorkerRefused(RuntimeError):
    """A grading worker cannot grade for this coordinator: the message names it and says why, in one line."""
