"""Exports an LMS imports: Canvas's gradebook CSV and a long CSV per cell, from the CLI and nbgrader's export."""

from __future__ import annotations

import contextlib
import csv
import io
import subprocess
import sys

import pytest

from ctx_course.cli import main
from ctx_course.grading.grader import Grader
from ctx_course.grading.records import Student

from conftest import REPO, class_builder

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]

ASSIGNMENT = "02-remaining"
ROSTER = [
    Student("ada", "Ada", "Lovelace", "ada@example.org", "1001"),
    Student("ben", "Ben", "Bitdiddle", None, "1002"),
    Student("cai", "Cai", "Lun"),  # no lms_user_id: Canvas cannot match her
]


def _run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def _csv(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, released_remaining):
    """ada and cai hand in the model answer of 02-remaining (3 of 3 auto points), ben the release untouched (0)."""
    tmp = tmp_path_factory.mktemp("export")
    build = class_builder()
    released = released_remaining
    for student, work in (
        ("ada", build.Work(code={"remaining": build.MODEL})),
        ("ben", build.Work()),
        ("cai", build.Work(code={"remaining": build.MODEL})),
    ):
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        text = build.submission(released, REPO / "solutions" / ASSIGNMENT / "remaining.ipynb", work)
        (folder / "remaining.ipynb").write_text(text, encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", sandbox=False, jobs=1)
    grader.collect(tmp / "incoming")
    grader.register(ROSTER)
    assert all(r.graded for r in grader.grade().results)
    return tmp


def test_canvas_csv_has_canvas_columns_and_points_possible(graded):
    """The Canvas CSV: Canvas's five identity columns, one column per assignment, then the Points Possible row (6)."""
    status, out, _ = _run(["export", "--format", "canvas", "--root", str(REPO), "--work", str(graded / "work")])
    assert status == 0
    rows = _csv(graded / "work" / "canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    assert rows[1] == ["    Points Possible", "", "", "", "", "6"]


def test_canvas_csv_matches_students_by_lms_id_and_lists_the_rest(graded):
    """In student order, ada (1001) has 3 points, ben (1002) 0; cai, without an LMS id, is left out and named."""
    status, out, _ = _run(["export", "--format", "canvas", "--root", str(REPO), "--work", str(graded / "work")])
    rows = _csv(graded / "work" / "canvas.csv")
    assert rows[2:] == [["Lovelace, Ada", "1001", "ada", "", "", "3"], ["Bitdiddle, Ben", "1002", "ben", "", "", "0"]]
    assert "Left out (no lms_user_id on the roster, Canvas could not match them): cai" in out


def test_canvas_ids_go_into_the_assignment_header(graded, tmp_path):
    """With --ids mapping 02-remaining to Canvas assignment 4242, its column is headed "02-remaining (4242)"."""
    ids = tmp_path / "ids.csv"
    ids.write_text("assignment,lms_id\n02-remaining,4242\n", encoding="utf-8")
    target = tmp_path / "canvas.csv"
    status, _, _ = _run(
        [
            "export",
            "--format",
            "canvas",
            "--root",
            str(REPO),
            "--work",
            str(graded / "work"),
            "--ids",
            str(ids),
            "--to",
            str(target),
        ]
    )
    assert status == 0
    assert _csv(target)[0][-1] == "02-remaining (4242)"


def test_long_csv_has_one_row_per_student_and_cell(graded):
    """The long CSV: 3 students × 3 graded cells of 02-remaining; ada's check cell 3 of 3, ben's 0 of 3."""
    status, _, _ = _run(["export", "--format", "long", "--root", str(REPO), "--work", str(graded / "work")])
    assert status == 0
    rows = _csv(graded / "work" / "cells.csv")
    assert rows[0] == ["student", "assignment", "notebook", "cell", "score", "max"]
    assert len(rows) == 1 + 3 * 3
    assert ["ada", ASSIGNMENT, "remaining", "check_remaining", "3", "3"] in rows
    assert ["ben", ASSIGNMENT, "remaining", "check_remaining", "0", "3"] in rows
    assert ["ada", ASSIGNMENT, "remaining", "q_why_early", "0", "1"] in rows


def test_nbgrader_export_uses_the_canvas_plugin(graded, tmp_path):
    """`nbgrader export --exporter=ctx_course.term.export.CanvasExportPlugin` writes the same file as the CLI."""
    target = tmp_path / "nbgrader-canvas.csv"
    db = graded / "work" / "gradebook.db"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "export",
            "--exporter=ctx_course.term.export.CanvasExportPlugin",
            f"--to={target}",
            f"--CourseDirectory.db_url=sqlite:///{db}",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    _run(["export", "--format", "canvas", "--root", str(REPO), "--work", str(graded / "work")])
    assert _csv(target) == _csv(graded / "work" / "canvas.csv")


def test_nbgrader_export_uses_the_long_plugin(graded, tmp_path):
    """`nbgrader export --exporter=ctx_course.term.export.LongExportPlugin` writes one row per student × cell."""
    target = tmp_path / "cells.csv"
    db = graded / "work" / "gradebook.db"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "export",
            "--exporter=ctx_course.term.export.LongExportPlugin",
            f"--to={target}",
            f"--CourseDirectory.db_url=sqlite:///{db}",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    assert len(_csv(target)) == 1 + 3 * 3


def test_export_without_a_gradebook_is_one_error_line(tmp_path):
    """Exporting from a folder that holds no gradebook: exit 2 and one `error:` line naming the path."""
    status, _, err = _run(["export", "--format", "canvas", "--root", str(REPO), "--work", str(tmp_path / "none")])
    assert status == 2
    assert err.startswith("error: no gradebook at ") and err.count("\n") == 1


def test_bad_ids_file_names_the_line(graded, tmp_path):
    """An --ids row whose lms_id is not a number: exit 2, one error line naming the line and the value."""
    ids = tmp_path / "ids.csv"
    ids.write_text("assignment,lms_id\n02-remaining,abc\n", encoding="utf-8")
    status, _, err = _run(
        ["export", "--format", "canvas", "--root", str(REPO), "--work", str(graded / "work"), "--ids", str(ids)]
    )
    assert status == 2
    assert err == "error: ids.csv line 2: lms_id must be Canvas's assignment number (got 'abc')\n"
