"""The lines a grading run prints, and the command line's one-line refusals of bad input."""
from __future__ import annotations

import json

import nbformat
import pytest

from ctx_course.cli import main
from ctx_course.grading.records import ClassReport, GradeResult
from ctx_course.grading.report import CSV_COLUMNS, format_outcome, format_result, format_start, format_summary

from conftest import REPO


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- lines printed by the CLI


def _result(**kw):
    base = dict(student="ada", assignment="02-remaining", graded=True, auto_score=3.0, max_auto_score=3.0)
    return GradeResult(**{**base, **kw})


def test_progress_line_of_a_graded_submission():
    """Score 3 of 3, 3 manual points pending, 1.2 s: one line with all three."""
    line = format_result(3, 15, _result(manual_pending=3.0, seconds=1.24))
    assert line == "[3/15] ada      02-remaining     … 3/3 autograded, 3 to grade by hand  (1.2 s)"


def test_progress_line_prints_a_quoted_submission_as_inert_text():
    """A reason and a note quoting \\r and ESC sequences print without any control character."""
    result = GradeResult("eve", "02-remaining", False, reason="bad \r\x1b[2K[9/9] ok")
    graded = GradeResult("eve", "02-remaining", True, 3, 3, notes=("id \x1b[31mred\x07",))
    for line in (format_outcome(result), format_outcome(graded)):
        assert all(ch.isprintable() for ch in line)
    assert format_outcome(result) == "NOT GRADED: bad   [2K[9/9] ok"


def test_progress_line_of_a_failed_submission_gives_the_reason():
    """A failed submission's line ends with NOT GRADED and its reason."""
    result = _result(graded=False, reason="missing notebook recall.ipynb")
    assert format_outcome(result) == "NOT GRADED: missing notebook recall.ipynb"


def test_progress_line_names_what_nbgrader_restored():
    """Notes follow the score in brackets."""
    text = format_outcome(_result(notes=("deleted check cells restored: check_x",)))
    assert text.endswith("[deleted check cells restored: check_x]")


def test_progress_head_is_printed_before_grading():
    """The head shows index/total, student and assignment, then an ellipsis."""
    assert format_start(1, 2, "ben", "05-trim-lines") == "[1/2] ben      05-trim-lines    …"


def test_summary_names_the_failures(tmp_path):
    """Two results, one failed: 'Graded 1 of 2', then the failed one by name with its reason."""
    report = ClassReport(
        results=(_result(), _result(student="eve", graded=False, reason="broken")),
        seconds=3.0,
        work=tmp_path,
        grades_csv=tmp_path / "grades.csv",
        feedback=1,
        phases={"prepare": 0.5, "autograde": 2.0, "feedback": 0.4, "export": 0.1},
    )
    lines = format_summary(report).splitlines()
    assert lines[0].startswith("Graded 1 of 2 submission(s) in 3.0 s (autograde 2.0 s, 2.0 s per submission")
    assert lines[1:3] == ["Could not grade 1:", "  eve 02-remaining: broken"]


def test_csv_columns():
    """The grades CSV has fourteen columns, identity first, scores, then lateness last."""
    assert CSV_COLUMNS == (
        "student_id", "last_name", "first_name", "email", "assignment", "status",
        "auto_score", "max_auto_score", "manual_score", "max_manual_score", "score", "max_score",
        "late_hours", "late_penalty",
    )


# ---- CLI: bad input exits with 2 and one line


def test_cli_refuses_a_missing_submissions_folder(tmp_path, capsys):
    """--submissions pointing nowhere: exit 2, one 'error:' line on stderr."""
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path), "--submissions", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: --submissions") and err.count("\n") == 1


def test_cli_refuses_a_bad_roster(tmp_path, capsys):
    """A roster without an id column: exit 2, no traceback."""
    roster = _write(tmp_path / "r.csv", "name\nada\n")
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--roster", str(roster)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "'id' column" in err


def test_cli_example_excludes_explicit_paths(tmp_path, capsys):
    """--example together with --roster: exit 2."""
    status = main(["grade", "--root", str(REPO), "--example", "--roster", "x.csv", "--work", str(tmp_path)])
    assert status == 2 and "--example" in capsys.readouterr().err


def test_cli_refuses_a_root_without_config(tmp_path, capsys):
    """A root without nbgrader_config.py: exit 2."""
    status = main(["grade", "--root", str(tmp_path)])
    assert status == 2 and "nbgrader_config.py" in capsys.readouterr().err


def test_cli_refuses_a_zero_timeout(tmp_path, capsys):
    """--timeout 0: exit 2 naming timeout."""
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--timeout", "0"])
    assert status == 2 and "timeout" in capsys.readouterr().err


def test_cli_refuses_zero_jobs(tmp_path, capsys):
    """--jobs 0: exit 2 naming jobs and echoing 0."""
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--jobs", "0"])
    err = capsys.readouterr().err
    assert status == 2 and "jobs" in err and "(got 0)" in err


def test_cli_without_submissions_folder_says_so(tmp_path, capsys):
    """A working folder without submitted/: exit 2 and a hint to collect first."""
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w")])
    assert status == 2 and "collect first" in capsys.readouterr().err


def test_release_still_parses():
    """The release subcommand is still there (help exits 0)."""
    with pytest.raises(SystemExit) as stop:
        main(["release", "--help"])
    assert stop.value.code == 0


def test_example_submissions_are_valid_notebooks_except_the_broken_one():
    """Every example submission except eve's broken 02 is a valid notebook."""
    folder = REPO / "examples" / "class" / "submitted"
    broken = folder / "eve" / "02-remaining" / "remaining.ipynb"
    for path in sorted(folder.glob("*/*/*.ipynb")):
        if path == broken:
            with pytest.raises(json.JSONDecodeError):
                json.loads(path.read_text(encoding="utf-8"))
        else:
            nbformat.validate(nbformat.read(path, as_version=4))


def test_summary_shows_paths_relative_to_the_current_folder(tmp_path):
    """With base = the working folder's parent, the summary names grading/feedback and grading/grades.csv."""
    work = tmp_path / "grading"
    report = ClassReport(results=(_result(),), seconds=1.0, work=work, grades_csv=work / "grades.csv", feedback=1,
                         phases={"prepare": 0.1, "autograde": 0.8, "feedback": 0.1, "export": 0.0})
    lines = format_summary(report, base=tmp_path).splitlines()
    assert lines[-2:] == ["Feedback: 1 notebook(s) under grading/feedback", "Grades:   grading/grades.csv"]
