"""Grades out of the gradebook for an LMS: Canvas's gradebook import CSV, and a long CSV of every cell.

Canvas's gradebook import reads the columns of its own gradebook export: ``Student`` (sortable
name), ``ID`` (Canvas's user id), ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column
per assignment headed ``Name (id)``; a second row ``Points Possible`` gives each assignment's
points. Students are matched by the roster's ``lms_user_id`` (Canvas's user id, in ``ID``); a
student without one cannot be matched and is left out and listed. An assignment column without a
Canvas id (``--ids`` maps ours to Canvas's) makes Canvas create a new assignment on import.
A score is the total after the late penalty (grades.csv's ``score``); an assignment not handed in
is 0.

The long CSV has one row per student × graded cell (``student, assignment, notebook, cell, score,
max``), for any other LMS or a spreadsheet.

Covers: ``canvas_rows`` and ``long_rows`` (the rows, from an open gradebook),
``read_lms_ids``, ``export_grades_for_lms`` (what ``python -m ctx_course export`` runs), and the
nbgrader export plugins ``CanvasExportPlugin`` and ``LongExportPlugin``
(``nbgrader export --exporter=ctx_course.term.export.CanvasExportPlugin --to canvas.csv``).

Leaves out: talking to Canvas (LTI grade passback, its REST API): the CSV is uploaded by hand
(Grades → Import).

Vocabulary: a *Canvas id* is the number Canvas gives a user or an assignment (in its URLs).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from ..config import load_course_config, work_folder
from ..grading.csv_files import write_csv

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # as Canvas's own export writes it
LONG_COLUMNS = ("student", "assignment", "notebook", "cell", "score", "max")
FORMATS = ("canvas", "long")


@dataclass(frozen=True)
class CanvasExport:
    """The Canvas CSV's rows (header and Points Possible first), and the students it could not match."""

    rows: list[list[str]]
    unmatched: tuple[str, ...]


def canvas_rows(gb: Gradebook, lms_ids: Mapping[str, str] | None = None) -> CanvasExport:
    """Return the rows of a Canvas gradebook import for every student and assignment of the gradebook.

    Example: ada (lms_user_id 1001) with 2.4 of 6 in 02-remaining gives the header
    ``Student,ID,SIS User ID,SIS Login ID,Section,02-remaining``, ``    Points Possible,,,,,6`` and
    ``"Lovelace, Ada",1001,ada,,,2.4``.
    """
    lms_ids = lms_ids or {}
    assignments = sorted(gb.assignments, key=lambda a: (a.duedate is None, a.duedate or 0, a.name))
    header = [*CANVAS_IDENTITY] + [
        f"{a.name} ({lms_ids[a.name]})" if a.name in lms_ids else a.name for a in assignments
    ]
    rows = [header, [POINTS_POSSIBLE, "", "", "", ""] + [_number(a.max_score) for a in assignments]]
    unmatched = []
    for student in sorted(gb.students, key=lambda s: s.id):
        if not student.lms_user_id:
            unmatched.append(student.id)
            continue
        name = ", ".join(n for n in (student.last_name, student.first_name) if n) or student.id
        scores = []
        for assignment in assignments:
            try:
                submission = gb.find_submission(assignment.name, student.id)
            except MissingEntry:
                scores.append("0")
                continue
            scores.append(_number(float(submission.score or 0) - float(submission.late_submission_penalty or 0)))
        rows.append([name, student.lms_user_id, student.id, "", ""] + scores)
    return CanvasExport(rows, tuple(unmatched))


def long_rows(gb: Gradebook) -> list[list[str]]:
    """Return the long CSV's rows: a header, then one row per student × graded cell of each submission.

    Example row: ``ada,02-remaining,remaining,check_remaining,3,3``.
    """
    rows = [list(LONG_COLUMNS)]
    for assignment in sorted(gb.assignments, key=lambda a: a.name):
        for submission in sorted(assignment.submissions, key=lambda s: s.student.id):
            for notebook in sorted(submission.notebooks, key=lambda n: n.name):
                for grade in sorted(notebook.grades, key=lambda g: g.name):
                    rows.append(
                        [
                            submission.student.id,
                            assignment.name,
                            notebook.name,
                            grade.name,
                            _number(grade.score),
                            _number(grade.max_score),
                        ]
                    )
    return rows


def read_lms_ids(path: str | os.PathLike) -> dict[str, str]:
    """Return {assignment: Canvas id} from a CSV with columns ``assignment,lms_id``; ValueError names bad rows."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--ids must be a CSV file with columns assignment,lms_id (got {str(path)!r})")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or not {"assignment", "lms_id"} <= set(reader.fieldnames):
            raise ValueError(f"{path.name} must have the columns assignment,lms_id (got {reader.fieldnames!r})")
        ids = {}
        for number, row in enumerate(reader, start=2):
            lms_id = (row["lms_id"] or "").strip()
            if not lms_id.isdigit():
                raise ValueError(
                    f"{path.name} line {number}: lms_id must be Canvas's assignment number (got {lms_id!r})"
                )
            ids[(row["assignment"] or "").strip()] = lms_id
    return ids


def export_grades_for_lms(
    db_url: str, course_id: str, fmt: str, path: str | os.PathLike, lms_ids: Mapping[str, str] | None = None
) -> tuple[Path, tuple[str, ...]]:
    """Write the export ``fmt`` ("canvas" or "long") of a gradebook to ``path``; return it and the students left out."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    with Gradebook(db_url, course_id) as gb:
        if fmt == "canvas":
            export = canvas_rows(gb, lms_ids)
            return write_csv(export.rows, path), export.unmatched
        return write_csv(long_rows(gb), path), ()


def gradebook_location(root: str | os.PathLike, work: str | os.PathLike | None = None) -> tuple[str, str, Path]:
    """Return the gradebook's URL, the course id and the work folder; ValueError if a SQLite gradebook is missing."""
    root = Path(root).resolve()
    config = load_course_config(root, work=work)
    folder = work_folder(root, config)
    db_url = config.CourseDirectory.db_url
    if db_url.startswith("sqlite:///") and not Path(db_url[len("sqlite:///") :]).is_file():
        raise ValueError(f"no gradebook at {db_url[len('sqlite:///') :]} (grade first, or pass --work)")
    return db_url, config.CourseDirectory.course_id, folder


class CanvasExportPlugin(ExportPlugin):
    """Canvas's import CSV: ``nbgrader export --exporter=ctx_course.term.export.CanvasExportPlugin --to c.csv``."""

    ids = Unicode("", help="CSV with columns assignment,lms_id: Canvas's id of each assignment").tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        export = canvas_rows(gradebook, read_lms_ids(self.ids) if self.ids else None)
        write_csv(export.rows, self.to or "canvas.csv")
        if export.unmatched:
            self.log.warning("Left out (no lms_user_id on the roster): %s", ", ".join(export.unmatched))


class LongExportPlugin(ExportPlugin):
    """One row per student × cell: ``nbgrader export --exporter=ctx_course.term.export.LongExportPlugin``."""

    def export(self, gradebook: Gradebook) -> None:
        write_csv(long_rows(gradebook), self.to or "cells.csv")


def _number(value) -> str:
    return "" if value is None else f"{round(float(value), 6):g}"
