"""A disk that fills up during a grading run: the run stops with one line naming the folder, what was graded kept.

Covers: ``is_disk_full`` (does an error, or one it was raised from, say that a disk or a quota is
full: ``ENOSPC``/``EDQUOT``, SQLite's "database or disk is full", PostgreSQL's ``disk_full``),
``says_disk_full`` (the same for the text of an error nbgrader reports instead of raising), and
``DiskFull``, the run's stop: its message is one line naming the folder whose disk is full, and
``stops_on_full_disk(work, db_url)``, which turns such an error into it, and ``quiet_full_disk_log``,
which keeps nbgrader's traceback of such an error out of a grading worker's stderr (the console).

Why stopping is right: once the working folder's disk is full, every later submission would fail
the same way, one line each, and the grades CSV could not be written either. What was written
before stays as it was: each submission's gradebook rows are committed whole (SQLite rolls back a
transaction it could not finish), the grades CSV is replaced only when the new one is whole
(``csv_files.py``), and the manifest records only submissions written whole, so the next run,
with room again, grades the rest.

Leaves out: making room (the instructor's call), and a disk that fills in a worker's scratch
folder on another machine (that submission's line says why it was not graded).

Vocabulary: the *folder* named is the run's working folder when the file that could not be
written is in it, else the folder of that file (or of the SQLite gradebook).
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})  # no space left; disk quota exceeded
FULL_BELOW = 1 << 20  # bytes: a disk with less than this free is full (SQLite's "disk I/O error" on it is that)
POSTGRES_DISK_FULL = "53100"  # SQLSTATE of PostgreSQL's disk_full
# The logger nbgrader's gradebook reports a failed commit on, with its traceback, before raising the error.
NBGRADER_LOG = "tornado.application"
# How the text of an error (a traceback nbgrader returns instead of raising) says the same.
FULL_WORDS = tuple(f"[Errno {number}]" for number in sorted(FULL_ERRNOS)) + ("database or disk is full",)


class DiskFull(RuntimeError):
    """The disk of the run's working folder (or gradebook) is full: the run stopped; the message is one line."""


def is_disk_full(exc: BaseException | None, *folders: str | os.PathLike) -> bool:
    """Return whether ``exc``, or an error it was raised from or wraps, says a disk or quota is full.

    SQLite sometimes reports a write that found no room as a "disk I/O error": that one counts
    when one of ``folders`` (the gradebook's) is on a disk with less than FULL_BELOW free.

    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> is_disk_full(OSError(errno.EACCES, "Permission denied"))
    False
    """
    errors = list(_chain(exc))
    if any(_says_full(error) for error in errors):
        return True
    io_error = any(isinstance(error, sqlite3.Error) and "disk I/O error" in str(error) for error in errors)
    return io_error and any(_free(folder) < FULL_BELOW for folder in folders)


def gradebook_folders(db_url: str) -> tuple[Path, ...]:
    """Return the folder of a SQLite gradebook, as a 1-tuple, or () for a database on a server.

    >>> gradebook_folders("sqlite:////srv/grading/gradebook.db")
    (PosixPath('/srv/grading'),)
    >>> gradebook_folders("postgresql://grader@db.example.org/course")
    ()
    """
    prefix = "sqlite:///"
    return (Path(db_url[len(prefix):]).parent,) if db_url.startswith(prefix) else ()


def says_disk_full(text: str) -> bool:
    """Return whether the text of an error (a traceback nbgrader returned) says a disk or quota is full.

    >>> says_disk_full("OSError: [Errno 28] No space left on device: 'grading/release/x.ipynb'")
    True
    >>> says_disk_full("KeyError: 'remaining'")
    False
    """
    return any(words in text for words in FULL_WORDS)


def full_disk_line(exc: BaseException | None, work: str | os.PathLike, db_url: str = "") -> str:
    """Return the run's one line for a full disk: the folder, what could not be written, what to do.

    >>> full_disk_line(OSError(errno.ENOSPC, "No space left on device", "/srv/grading/manifest.tmp"), "/srv/grading")
    'the disk of /srv/grading is full (No space left on device, writing manifest.tmp); what was graded \
before is kept: make room there and run the same command again to grade the rest'
    """
    work = Path(work)
    written = _filename(exc)
    folder = work
    if written is not None:
        path = Path(written)
        folder = work if _inside(path, work) else path.parent
        written = str(path.relative_to(work)) if _inside(path, work) else str(path)
    elif db_url.startswith("sqlite:///") and not _inside(Path(db_url[len("sqlite:///"):]), work):
        folder = Path(db_url[len("sqlite:///"):]).parent
    reason = _reason(exc)
    if written is not None:
        reason += f", writing {written}"
    return (f"the disk of {folder} is full ({reason}); what was graded before is kept: "
            f"make room there and run the same command again to grade the rest")


@contextlib.contextmanager
def stops_on_full_disk(work: str | os.PathLike, db_url: str = "") -> Iterator[None]:
    """Run the block; an error saying the disk is full becomes ``DiskFull`` with ``full_disk_line``'s message.

    Meanwhile nbgrader's log of a commit that failed for a full disk is dropped: it is a traceback,
    and the error it reports is the one that stops the run, in one line.
    """
    folders = (work, *gradebook_folders(db_url))
    log, quiet = logging.getLogger(NBGRADER_LOG), _DropFullDisk(folders)
    log.addFilter(quiet)
    try:
        yield
    except DiskFull:
        raise
    except Exception as exc:
        if not is_disk_full(exc, *folders):
            raise
        raise DiskFull(full_disk_line(exc, work, db_url)) from None
    finally:
        log.removeFilter(quiet)


def quiet_full_disk_log() -> None:
    """Drop, for the rest of this process, nbgrader's log of a commit that failed for a full disk.

    For a grading worker, whose stderr is the coordinator's console: a gradebook it reads (for
    feedback pages) on a full disk makes nbgrader log a traceback there; the task's error goes to the
    coordinator, which stops the run in one line. Installed once however often it is called.
    """
    log = logging.getLogger(NBGRADER_LOG)
    if not any(isinstance(existing, _DropFullDisk) for existing in log.filters):
        log.addFilter(_DropFullDisk(()))


class _DropFullDisk(logging.Filter):
    """Drop the log records whose traceback is of an error saying the disk (of one of ``folders``) is full,
    or of SQLite's "disk I/O error", which a full disk also causes."""

    def __init__(self, folders: tuple[str | os.PathLike, ...]):
        super().__init__()
        self.folders = folders

    def filter(self, record: logging.LogRecord) -> bool:
        # SQLite's "disk I/O error" too: nbgrader raises it after logging, and the run reports it in one line
        error = record.exc_info[1] if record.exc_info else None
        return not (is_disk_full(error, *self.folders) or any(
            isinstance(e, sqlite3.Error) and "disk I/O error" in str(e) for e in _chain(error)))


def _says_full(error: BaseException) -> bool:
    if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
        return True
    if isinstance(error, sqlite3.Error):
        return (getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
                or "database or disk is full" in str(error))
    return getattr(error, "pgcode", None) == POSTGRES_DISK_FULL


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc``, then the errors it wraps (SQLAlchemy's ``orig``) or was raised from, each once."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        orig = getattr(exc, "orig", None)
        exc = orig if isinstance(orig, BaseException) else (exc.__cause__ or exc.__context__)


def _filename(exc: BaseException | None) -> str | None:
    """The file the first full-disk OSError of the chain could not write, if it names one."""
    for error in _chain(exc):
        if isinstance(error, OSError) and error.errno in FULL_ERRNOS and error.filename:
            return os.fsdecode(error.filename)
    return None


def _reason(exc: BaseException | None) -> str:
    for error in _chain(exc):
        if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
            return error.strerror or os.strerror(error.errno)
        if _says_full(error):
            return "the gradebook: " + (str(error).strip().splitlines() or ["database or disk is full"])[0]
    return os.strerror(errno.ENOSPC)


def _free(folder: str | os.PathLike) -> int:
    """Bytes free on the disk of ``folder`` (of its nearest existing parent); a very large number if unknown."""
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 1 << 62


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())
