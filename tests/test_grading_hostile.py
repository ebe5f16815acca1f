"""Submissions that never finish: a timed-out cell costs that cell, a hung kernel costs that submission.

A small class of notebook 02 (check_remaining: 3 points), graded with a 5-second cell limit:
``ok`` hands in the model function; ``loop`` defines the model function and then loops forever
in the same cell; ``stubborn`` loops forever and swallows the interrupt nbgrader sends;
``printer`` hands in a right function that prints its arguments, hoping to read the hidden
tests' inputs in the feedback; ``where`` prints the folder and mode its code runs in. The
roster lists loop, stubborn and ``absent`` (who hands in nothing), not ok, printer and where.
"""
from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from ctx_course.grading.grader import Grader
from ctx_course.grading.records import Student

from conftest import REPO, class_builder

pytestmark = pytest.mark.heavy

TIMEOUT = 3  # seconds per cell
ASSIGNMENT = "02-remaining"

LOOP = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10


while True:
    pass
'''

PRINTER = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    print("输入：", (window, read, write, input, max_tokens))
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''

WHERE = '''
import os

print("folder:", os.getcwd())
print("files:", sorted(os.listdir()))
print("mode:", os.environ.get("NBGRADER_EXECUTION"))


def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''

# The arguments only 02's hidden tests use, as PRINTER prints them (the release shows none of
# them; the hidden test of a negative left repeats a visible case, so it is not listed).
HIDDEN_INPUTS = (
    "(100000, 0, 0, 0, 0)",
    "(1000, 0, 0, 900, 0)",
    "(1000, 0, 0, 901, 0)",
    "(2005, 0, 0, 1805, 0)",
    "(2005, 0, 0, 1804, 0)",
)

STUBBORN = '''
import time

while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass
'''


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, released_remaining):
    """The five submissions built from a fresh release, graded once with a 3 s cell limit, two at once."""
    tmp = tmp_path_factory.mktemp("hostile")
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", timeout=TIMEOUT, jobs=2)
    released = released_remaining
    source = REPO / "solutions" / ASSIGNMENT / "remaining.ipynb"
    for student, code in (("ok", build.MODEL), ("loop", LOOP), ("stubborn", STUBBORN), ("printer", PRINTER),
                          ("where", WHERE)):
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        work = build.Work(code={"remaining": code})
        (folder / "remaining.ipynb").write_text(build.submission(released, source, work), encoding="utf-8")
    grader.collect(tmp / "incoming")
    grader.register([Student("loop"), Student("stubborn"), Student("absent")])
    report = grader.grade()
    return grader, report, {r.student: r for r in report.results}


def test_a_timed_out_cell_does_not_stop_the_notebook(hostile):
    """loop's solution cell is stopped after 3 s; `remaining` was defined before the loop, so the
    check cell after it still runs and scores 3 of 3."""
    _, _, results = hostile
    loop = results["loop"]
    assert (loop.graded, loop.auto_score, loop.max_auto_score) == (True, 3, 3)
    assert loop.notes == ("1 cell(s) stopped after the 3 s time limit",)


def test_a_hung_kernel_costs_only_its_own_submission(hostile):
    """stubborn ignores the interrupt: its submission is reported, ok is still graded 3 of 3."""
    _, report, results = hostile
    assert [r.student for r in report.failed] == ["stubborn"]
    assert results["stubborn"].reason.startswith("a cell ran past the 3 s limit and ignored the interrupt")
    assert (results["ok"].graded, results["ok"].auto_score) == (True, 3)


def test_gradebook_holds_the_graded_submissions(hostile):
    """After the run the gradebook has ok's and loop's 3 points; stubborn has no autograded copy."""
    grader, _, _ = hostile
    with Gradebook(grader.db_url) as gb:
        assert gb.find_submission(ASSIGNMENT, "ok").code_score == 3
        assert gb.find_submission(ASSIGNMENT, "loop").code_score == 3
    assert not (grader.work / "autograded" / "stubborn" / ASSIGNMENT).exists()
    assert not grader.feedback_path("stubborn", ASSIGNMENT)


def test_students_off_the_roster_are_graded_and_named(hostile):
    """ok, printer and where are not on the roster: graded anyway and listed in the report."""
    _, report, _ = hostile
    assert report.not_on_roster == ("ok", "printer", "where")


def test_roster_student_without_submission_is_exported_as_not_submitted(hostile):
    """absent handed nothing in: status `not submitted`, 0 of 3 auto points, 0 of 6 in all."""
    grader, _, _ = hostile
    with (grader.work / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"absent", "loop", "ok", "printer", "stubborn", "where"}
    absent = rows["absent"]
    assert (absent["status"], absent["auto_score"], absent["max_auto_score"], absent["score"], absent["max_score"]) == (
        "not submitted", "0", "3", "0", "6"
    )
    assert rows["stubborn"]["status"] == "not graded" and rows["stubborn"]["score"] == ""


def test_printed_arguments_of_hidden_tests_never_reach_the_kernel(hostile):
    """printer scores 3 of 3; its kernel never ran a hidden call, so neither its autograded
    notebook (what the kernel printed) nor its feedback shows a hidden call's arguments, while
    both show the visible case (1000000, 800000, 50000, 20000, 64000)."""
    grader, _, results = hostile
    assert (results["printer"].auto_score, results["printer"].max_auto_score) == (3, 3)
    autograded = (grader.work / "autograded" / "printer" / ASSIGNMENT / "remaining.ipynb").read_text(encoding="utf-8")
    [page] = grader.feedback_path("printer", ASSIGNMENT)
    feedback = html.unescape(page.read_text(encoding="utf-8"))
    for text in (autograded, feedback):
        assert "(1000000, 800000, 50000, 20000, 64000)" in text
        assert [args for args in HIDDEN_INPUTS if args in text] == []


def test_student_code_runs_in_a_scratch_copy_in_autograde_mode(hostile):
    """The kernel (launched ahead of time) runs in a scratch copy of its own submission, a
    folder outside the working folder holding just remaining.ipynb, with
    NBGRADER_EXECUTION=autograde."""
    grader, _, results = hostile
    assert results["where"].auto_score == 3
    nb = json.loads((grader.work / "autograded" / "where" / ASSIGNMENT / "remaining.ipynb").read_text(encoding="utf-8"))
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"])
    folder = Path(re.search(r"folder: (.*)\n", printed).group(1))
    assert folder.is_absolute() and grader.work.resolve() not in folder.parents
    assert "files: ['remaining.ipynb']\n" in printed
    assert "mode: autograde\n" in printed
