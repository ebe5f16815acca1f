"""Ride out a gradebook server that goes away for a while: retry on a lost connection, then stop in one line.

Covers: ``reconnecting(action, where)``, which runs ``action`` (a function that opens the gradebook
itself, does its work and closes it) and, when the database server cannot be reached or drops the
connection (SQLAlchemy's ``OperationalError``/``InterfaceError``, or a DBAPI error it marks as a lost
connection), runs it again after a pause, for up to ``patience`` seconds; then it raises
``GradebookUnreachable``, whose message is one line naming the gradebook and the last error.

Why it is safe to run an action again: every gradebook step of a grading run is idempotent (the
rows of a submission and its hand grades put back are one transaction, ``submission_lock.py``;
deadlines and ``grades.csv`` are recomputed from the gradebook), and a lost connection
rolls back what the step had not committed.

Leaves out: SQL errors that are not about the connection (a bad schema, a constraint): those are
raised at once, unchanged. A SQLite gradebook never loses its connection, but one that another
writer holds longer than SQLite waits ("database is locked") is an ``OperationalError`` too, and
is retried the same way.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from .disk_space import gradebook_folders, is_disk_full

T = TypeVar("T")

PATIENCE = 120.0  # seconds a run waits for its gradebook server to come back
FIRST_PAUSE = 0.5  # seconds before the first retry; each pause doubles, up to MAX_PAUSE
MAX_PAUSE = 8.0


class GradebookUnreachable(RuntimeError):
    """The gradebook's server stayed unreachable longer than the run waits; the message is one line."""


def is_lost_connection(exc: BaseException) -> bool:
    """Return whether ``exc`` says the database server cannot be reached or dropped the connection.

    >>> is_lost_connection(ValueError("no"))
    False
    """
    if is_disk_full(exc):  # SQLite's "database or disk is full" is an OperationalError too
        return False
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


def shown_url(db_url: str) -> str:
    """Return a database URL fit for a message: the password, if any, replaced by ``***``.

    >>> shown_url("postgresql://grader:secret@db.example.org/course")
    'postgresql://grader:***@db.example.org/course'
    >>> shown_url("sqlite:///grading/gradebook.db")
    'sqlite:///grading/gradebook.db'
    """
    parts = urlsplit(db_url)
    if parts.password is None:
        return db_url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def first_line(exc: BaseException) -> str:
    """Return the first non-empty line of an exception's message (SQLAlchemy's run over several)."""
    text = str(getattr(exc, "orig", None) or exc)
    return next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)


def reconnecting(
    action: Callable[[], T],
    db_url: str,
    *,
    patience: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Return ``action()``, run again after a pause while the gradebook's connection is lost.

    Raises ``GradebookUnreachable`` once ``patience`` seconds (default ``PATIENCE``) have passed
    since the first failure; any other exception is raised as it is.
    """
    patience = PATIENCE if patience is None else patience
    if patience < 0:
        raise ValueError(f"patience must be >= 0 seconds (got {patience!r})")
    started, pause = None, FIRST_PAUSE
    while True:
        try:
            return action()
        except Exception as exc:
            if not is_lost_connection(exc) or is_disk_full(exc, *gradebook_folders(db_url)):  # disk_space.py
                raise
            now = clock()
            started = now if started is None else started
            if now - started >= patience:
                raise GradebookUnreachable(
                    f"the gradebook {shown_url(db_url)} could not be reached for {patience:g} s "
                    f"({first_line(exc)}); what was graded is kept: run the same command again to grade the rest"
                ) from None
            sleep(min(pause, max(patience - (now - started), 0)))
            pause = min(pause * 2, MAX_PAUSE)
