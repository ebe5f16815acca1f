"""The roster and the submitted folders of a grading run.

Covers: reading a roster CSV (``read_roster``), the folder names a student or an assignment may
have (``valid_id``), copying submissions into the working folder (``collect``) and listing the
submissions found there (``find_submissions``).

Leaves out: grading them (``grader.py``). A *submission* is one student's folder for one
assignment, ``<student>/<assignment>/``.
"""
from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

from .records import RosterError, Student

# What ``nbgrader submit`` writes beside the notebooks, by which ``release_feedback`` finds a learner's page.
SECRET_FILE = "submission_secret.txt"
# Roster columns, as in `nbgrader db student import`: `id` is required, the rest optional.
ROSTER_ID = "id"
ROSTER_FIELDS = ("first_name", "last_name", "email", "lms_user_id")


def read_roster(path: str | os.PathLike) -> list[Student]:
    """Return the students of a roster CSV with columns id, first_name, last_name, email.

    Like ``nbgrader db student import``: ``id`` is required, empty cells become None, other
    columns are ignored. Example: a file ``id,first_name,last_name,email`` /
    ``ada,Ada,Lovelace,ada@example.org`` gives ``[Student("ada", "Ada", "Lovelace", "ada@example.org")]``.
    """
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster must be a CSV file (got {str(path)!r})")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or ROSTER_ID not in [k.strip() for k in reader.fieldnames]:
            raise RosterError(
                f"roster {str(path)!r} must have a header with an {ROSTER_ID!r} column (got {reader.fieldnames!r})"
            )
        students, seen = [], set()
        for number, row in enumerate(reader, start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
            student_id = row.get(ROSTER_ID, "")
            if not valid_id(student_id):
                raise RosterError(
                    f"roster {str(path)!r} line {number}: id must be a plain folder name (got {student_id!r})"
                )
            if student_id in seen:
                raise RosterError(f"roster {str(path)!r} line {number}: id {student_id!r} appears twice")
            seen.add(student_id)
            students.append(Student(student_id, **{k: row.get(k) or None for k in ROSTER_FIELDS}))
    return students


# Characters nbgrader's path patterns read as wildcards: an id holding one could select another's files.
GLOB_CHARACTERS = frozenset("*?[]")


def valid_id(name: str) -> bool:
    """Return whether ``name`` can be a student or assignment folder.

    Non-empty, no separator, no dot first, no surrounding space, no control character and no
    glob character (``kim[2]`` would make nbgrader's patterns select ``kim2``'s files).
    """
    return (
        bool(name) and name == name.strip() and not name.startswith(".") and "/" not in name and "\\" not in name
        and not GLOB_CHARACTERS & set(name) and all(ch.isprintable() for ch in name)
    )


def _check_folder_id(name: str, what: str) -> None:
    """Raise ValueError naming a folder whose name cannot be a student or assignment id (dot folders are skipped)."""
    if not name.startswith(".") and not valid_id(name):
        raise ValueError(
            f"{what} must be a plain folder name, without glob characters (* ? [ ]), separators or "
            f"control characters (got {name!r}); rename the folder"
        )


def collect(source: str | os.PathLike, submitted: str | os.PathLike) -> list[tuple[str, str]]:
    """Copy ``<source>/<student>/<assignment>/`` folders into ``submitted`` and return the pairs copied.

    Like ``nbgrader collect``: a submission already in ``submitted`` is replaced by the new copy.
    Copying a folder onto itself does nothing. Example:
    ``collect("examples/class/submitted", "grading/example/submitted")``.
    """
    source, submitted = Path(source).resolve(), Path(submitted).resolve()
    if not source.is_dir():
        raise ValueError(f"submissions must be a folder of <student>/<assignment>/ folders (got {str(source)!r})")
    pairs = find_submissions(source)
    if source == submitted:
        return pairs
    for student, assignment in pairs:
        target = submitted / student / assignment
        if target.is_symlink():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        # A link in a submission would make this copy read the grader's files: links are left out.
        shutil.copytree(source / student / assignment, target, ignore=_links)
    return pairs


def _links(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


def find_submissions(submitted: str | os.PathLike) -> list[tuple[str, str]]:
    """Return the (student, assignment) pairs that have a folder under ``submitted``, sorted.

    A link is never followed (a student or assignment "folder" that is a link to another folder
    is not a submission); a folder named like no id can be raises ValueError naming it.
    """
    submitted = Path(submitted)
    if not submitted.is_dir():
        return []
    pairs = []
    for student in sorted(submitted.iterdir()):
        if student.is_symlink() or not student.is_dir() or student.name.startswith("."):
            continue
        _check_folder_id(student.name, "student id")
        for assignment in sorted(student.iterdir()):
            if assignment.is_symlink() or not assignment.is_dir() or assignment.name.startswith("."):
                continue
            _check_folder_id(assignment.name, f"assignment folder of student {student.name!r}")
            pairs.append((student.name, assignment.name))
    return sorted(pairs)


def outside_exchange(graded: list[tuple[str, str]], submitted: str | os.PathLike) -> tuple[str, ...]:
    """Name the graded (student, assignment) pairs that nbgrader's ``release_feedback`` cannot return to their learner.

    A submission made with ``nbgrader submit`` carries ``timestamp.txt`` and
    ``submission_secret.txt``; one copied in with ``--submissions`` has neither, and its learner
    has no secret to find the page by. Named only for assignments that others handed in through
    the exchange (a class graded wholly from an LMS download is not flagged); ``submitted`` is the
    run's submitted folder. Example: ``("cai 02-remaining",)``.
    """
    has_secret = {(s, a): (Path(submitted) / s / a / SECRET_FILE).is_file() for s, a in graded}
    through_exchange = {a for (_, a), secret in has_secret.items() if secret}
    return tuple(f"{s} {a}" for (s, a), secret in sorted(has_secret.items()) if not secret and a in through_exchange)


def links_in(folder: str | os.PathLike) -> list[str]:
    """Return the paths (relative to ``folder``) of the links inside it, sorted; none are followed."""
    folder = Path(folder)
    found = []
    for path, dirs, files in os.walk(folder):
        for name in dirs + files:
            if os.path.islink(os.path.join(path, name)):
                found.append(os.path.relpath(os.path.join(path, name), folder))
    return sorted(found)
