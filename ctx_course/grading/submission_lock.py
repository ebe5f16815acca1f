"""One submission's rows held by a grading run while it writes them, so that a hand grade saved meanwhile waits.

A grading run writes one submission in one transaction: the hand grades read (the snapshot of
``hand_grades.py``), the autograde rows written and the "needs manual grading" flags put back.
``locked_submission`` makes that transaction hold the submission for its whole length, on both
kinds of gradebook:

- **SQLite** has one lock, the database's: the transaction starts with ``BEGIN IMMEDIATE``, which
  takes the write lock at once (a deferred transaction would take it at its first write, after
  the snapshot was read). Every other writer, the Formgrader's save included, waits for it in
  SQLite's busy handler (Python's ``sqlite3`` waits 5 s by default); the transaction lasts a few
  milliseconds, so none waits long. Readers are not held up.
- **PostgreSQL**: a transaction-level advisory lock of the submission (another grading run
  sharing the gradebook, writing the same submission, waits for it), then ``SELECT … FOR UPDATE``
  of the submission's rows: its ``submitted_assignment`` row, its notebooks, grades and comments.
  The Formgrader's save is an ``UPDATE`` of one grade or comment row: it waits for the lock and
  is applied after the run's commit, on the row as the run left it.

Another database (nbgrader takes any SQLAlchemy URL) gets the one transaction and no lock.

Either way a hand grade saved while the run writes the submission lands after the run's rows and
stays (the rule, and what a run never writes, is in ``hand_grades.py``). A transaction that fails
is rolled back whole; a lock that could not be had (SQLite's "database is locked" after its
wait, a PostgreSQL deadlock) is an ``OperationalError``, which the caller retries
(``reconnect.py``).

Leaves out: what is written (``gradebook_writer.py``, ``hand_grades.py``); the Formgrader, which is
nbgrader's and takes no lock of its own but the database's.

Vocabulary: a *submission* is one student's submission of one assignment in the gradebook.
"""
from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

from nbgrader.api import Assignment, Comment, Grade, Gradebook, SubmittedAssignment, SubmittedNotebook
from sqlalchemy import select, text

# Any number the course's runs agree on: the first key of every submission's PostgreSQL advisory lock
# (pg_advisory_xact_lock(int, int); the one-key lock of config.CREATE_LOCK is a space of its own).
SUBMISSION_LOCKS = 7_216_002


def lock_key(course: str, assignment: str, student: str) -> int:
    """Return the second key of a submission's advisory lock: a signed 32-bit digest of its names.

    Two submissions that share a key only wait for each other; they are not mixed.

    >>> lock_key("context-engineering", "02-remaining", "ada") == lock_key("context-engineering", "02-remaining", "ada")
    True
    >>> -2**31 <= lock_key("context-engineering", "02-remaining", "ada") < 2**31
    True
    """
    digest = hashlib.sha256("\0".join((course, assignment, student)).encode()).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


@contextlib.contextmanager
def locked_submission(gb: Gradebook, student: str, assignment: str) -> Iterator[None]:
    """Run the block in one transaction of ``gb`` holding ``student``'s ``assignment``; commit it at the end.

    What the session held is committed first, and every object it had loaded is read again inside
    the lock. An exception in the block rolls the transaction back and is raised again. The block
    must not commit (nbgrader's ``add_submission`` and ``update_or_create_submission`` do: create a
    missing submission before the lock).
    """
    session = gb.db
    session.commit()
    try:
        connection = session.connection()
        dialect = connection.dialect.name
        if dialect == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        elif dialect == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(:space, :key)"),
                            {"space": SUBMISSION_LOCKS, "key": lock_key(gb.course_id, assignment, student)})
            _lock_rows(gb, student, assignment)
        session.expire_all()  # anything loaded before the lock is read again under it
        yield
        session.commit()
    except BaseException:
        session.rollback()
        raise


def _lock_rows(gb: Gradebook, student: str, assignment: str) -> None:
    """``SELECT … FOR UPDATE`` the submission's row, its notebooks, grades and comments (none if it has none)."""
    session = gb.db
    submission = session.execute(
        select(SubmittedAssignment.id)
        .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
        .where(Assignment.name == assignment, SubmittedAssignment.student_id == student)
        .with_for_update(of=SubmittedAssignment)
    ).scalar_one_or_none()
    if submission is None:
        return
    notebooks = select(SubmittedNotebook.id).where(SubmittedNotebook.assignment_id == submission)
    session.execute(notebooks.order_by(SubmittedNotebook.id).with_for_update()).all()
    for table in (Grade, Comment):  # in one order (by id), as every run takes them
        session.execute(
            select(table.id).where(table.notebook_id.in_(notebooks)).order_by(table.id).with_for_update()
        ).all()
