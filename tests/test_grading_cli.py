"""`python -m ctx_course grade`: what it prints and its exit status, on a two-submission class."""
from __future__ import annotations

import contextlib
import io
import shutil

import pytest

from ctx_course.cli import main

from conftest import REPO

pytestmark = pytest.mark.heavy

CLASS = REPO / "examples" / "class" / "submitted"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """First cai's untouched 02 alone, then the same folder with eve's broken 02 added, then
    --feedback-only over both."""
    tmp = tmp_path_factory.mktemp("cli")
    incoming = tmp / "incoming"
    shutil.copytree(CLASS / "cai" / "02-remaining", incoming / "cai" / "02-remaining")
    roster = tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email\ncai,Cai,Wen,\neve,Eve,Moreau,\n", encoding="utf-8")
    args = ["grade", "--root", str(REPO), "--work", str(tmp / "work"), "--submissions", str(incoming),
            "--roster", str(roster), "--jobs", "1"]
    outputs = []
    for step in ("clean", "with-broken", "feedback-only"):
        if step == "with-broken":
            shutil.copytree(CLASS / "eve" / "02-remaining", incoming / "eve" / "02-remaining")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args + (["--feedback-only"] if step == "feedback-only" else []))
        outputs.append((status, out.getvalue(), err.getvalue()))
    return tmp, outputs


def test_all_graded_exits_with_0(runs):
    """One untouched submission: exit 0, one progress line with 0/3, a summary 'Graded 1 of 1'."""
    _, outputs = runs
    status, out, _ = outputs[0]
    lines = out.splitlines()
    assert status == 0
    assert lines[0].startswith("[1/1] cai      02-remaining     … 0/3 autograded")
    assert lines[1].startswith("Graded 1 of 1 submission(s) in ")


def test_a_failed_submission_exits_with_1_and_is_listed(runs):
    """cai graded again, eve's broken notebook listed by name with its reason: exit 1."""
    _, outputs = runs
    status, out, _ = outputs[1]
    lines = out.splitlines()
    assert status == 1
    assert lines[1].startswith(
        "[2/2] eve      02-remaining     … NOT GRADED: remaining.ipynb is not valid notebook JSON")
    assert "Could not grade 1:" in lines
    assert any(line.startswith("  eve 02-remaining: remaining.ipynb is not valid notebook JSON") for line in lines)


def test_grades_and_feedback_are_written_to_the_working_folder(runs):
    """--work receives grades.csv (2 students × 1 assignment + header = 3 lines) and cai's feedback."""
    tmp, _ = runs
    assert len((tmp / "work" / "grades.csv").read_text(encoding="utf-8").splitlines()) == 3
    assert (tmp / "work" / "feedback" / "cai" / "02-remaining" / "remaining.html").is_file()
    assert not (REPO / "grading" / "submitted" / "cai").exists()


def test_feedback_only_reads_the_gradebook_back(runs):
    """--feedback-only runs no notebook: cai's 0/3 comes back from the gradebook, eve (never
    autograded) is listed as not graded, exit 1."""
    _, outputs = runs
    status, out, _ = outputs[2]
    lines = out.splitlines()
    assert status == 1
    assert lines[0].startswith("[1/2] cai      02-remaining     … 0/3 autograded")
    assert lines[1] == "[2/2] eve      02-remaining     … NOT GRADED: not autograded yet (run without --feedback-only)"
