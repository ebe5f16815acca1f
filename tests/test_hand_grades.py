"""Hand grades stay put: a rerun, --force or a resubmission keeps every manual score, comment and "graded" state.

Grades are given by hand the way the formgrader saves them: the bodies of nbgrader's own
``GradeHandler.put`` and ``CommentHandler.put`` (its API handlers, unwrapped from their web
decorators) run against the gradebook, with the JSON the formgrader page sends.
"""

from __future__ import annotations

import csv
import inspect
import json
import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.server_extensions.formgrader.apihandlers import CommentHandler, GradeHandler

from ctx_course.grading.grader import Grader
from ctx_course.grading.hand_grades import answer_digests
from ctx_course.grading.report import format_summary

from conftest import REPO, class_builder

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]

ASSIGNMENT = "02-remaining"
ANSWERS = {"q_cache_fields": "只看 input_tokens 会低估占用。", "q_why_early": "压缩本身也要占窗口。"}


class FormgraderPage:
    """Stands in for the web request: the formgrader page's JSON body, and the gradebook the server opened."""

    def __init__(self, gradebook, body):
        self.gradebook, self.body, self.written = gradebook, body, None

    def get_json_body(self):
        return self.body

    def write(self, text):
        self.written = json.loads(text)


def formgrader_save(db_url: str, student: str, cell: str, *, score=None, comment=None) -> None:
    """Save a hand grade (and a comment) for one cell of ``student``'s 02-remaining as the formgrader does."""
    with Gradebook(db_url) as gb:
        grade = gb.find_grade(cell, "remaining", ASSIGNMENT, student)
        if score is not None:
            inspect.unwrap(GradeHandler.put)(
                FormgraderPage(gb, {"manual_score": score, "extra_credit": None}), grade.id
            )
        if comment is not None:
            comment_id = gb.find_comment(cell, "remaining", ASSIGNMENT, student).id
            inspect.unwrap(CommentHandler.put)(FormgraderPage(gb, {"manual_comment": comment}), comment_id)


def hand_state(db_url: str, student: str) -> dict[str, tuple]:
    """Return {cell: (manual_score, needs_manual_grade, manual_comment)} of the free-response cells."""
    with Gradebook(db_url) as gb:
        return {
            cell: (
                gb.find_grade(cell, "remaining", ASSIGNMENT, student).manual_score,
                gb.find_grade(cell, "remaining", ASSIGNMENT, student).needs_manual_grade,
                gb.find_comment(cell, "remaining", ASSIGNMENT, student).manual_comment,
            )
            for cell in ANSWERS
        }


@pytest.fixture(scope="module")
def build(released_remaining):
    """Return a function writing one submission of 02-remaining (model code, given answers) to a folder."""
    builder = class_builder()
    released = released_remaining

    def write(folder: Path, student: str, answers: dict[str, str]) -> None:
        target = folder / student / ASSIGNMENT
        target.mkdir(parents=True, exist_ok=True)
        work = builder.Work(code={"remaining": builder.MODEL}, answers=answers)
        text = builder.submission(released, REPO / "solutions" / ASSIGNMENT / "remaining.ipynb", work)
        (target / "remaining.ipynb").write_text(text, encoding="utf-8")

    return write


@pytest.fixture(scope="module")
def graded_by_hand(tmp_path_factory, build):
    """ada and ben hand in the model code and two written answers; both are autograded, then graded by hand."""
    tmp = tmp_path_factory.mktemp("hand")
    for student in ("ada", "ben"):
        build(tmp / "incoming", student, ANSWERS)
    grader = Grader(REPO, work=tmp / "work", sandbox=False, jobs=1)
    grader.collect(tmp / "incoming")
    first = grader.grade()
    assert all(r.graded for r in first.results)
    for student in ("ada", "ben"):
        formgrader_save(grader.db_url, student, "q_cache_fields", score=1.5, comment="少说了缓存写入。")
        formgrader_save(grader.db_url, student, "q_why_early", score=1.0, comment="好。")
    return tmp, grader


EXPECTED = {
    "q_cache_fields": (1.5, False, "少说了缓存写入。"),
    "q_why_early": (1.0, False, "好。"),
}


def test_formgrader_save_marks_cells_graded(graded_by_hand):
    """The formgrader's save path records the scores and comments and marks both cells graded."""
    _, grader = graded_by_hand
    assert hand_state(grader.db_url, "ada") == EXPECTED


def test_forced_rerun_keeps_hand_grades(graded_by_hand):
    """A rerun with --force autogrades ada again and keeps her manual scores, comments and "graded" state."""
    tmp, grader = graded_by_hand
    report = grader.grade([("ada", ASSIGNMENT)], force=True)
    assert report.results[0].graded and not report.results[0].skipped
    assert hand_state(grader.db_url, "ada") == EXPECTED
    assert report.results[0].manual_pending == 0
    rows = {r["student_id"]: r for r in csv.DictReader((tmp / "work" / "grades.csv").open(encoding="utf-8"))}
    assert (rows["ada"]["status"], rows["ada"]["score"]) == ("graded", "5.5")  # 3 auto + 1.5 + 1


def test_a_rerun_on_dask_workers_keeps_the_hand_grades_and_shows_them(tmp_path, build):
    """A forced rerun on two Dask workers (whose scratch gradebooks know no hand grade) keeps ada's hand
    grade, and her page shows its comment."""
    for student in ("ada", "ben"):
        build(tmp_path / "incoming", student, ANSWERS)
    grader = Grader(REPO, work=tmp_path / "work", sandbox=False, jobs=1)
    grader.collect(tmp_path / "incoming")
    assert all(r.graded for r in grader.grade().results)
    formgrader_save(grader.db_url, "ada", "q_cache_fields", score=1.5, comment="少说了缓存写入。")
    page = tmp_path / "work" / "feedback" / "ada" / ASSIGNMENT / "remaining.html"
    assert "少说了缓存写入。" not in page.read_text(encoding="utf-8")
    report = Grader(REPO, work=tmp_path / "work", sandbox=False, jobs=2).grade(force=True)
    assert [(r.student, r.graded, r.skipped, r.reason) for r in report.results] == [
        ("ada", True, False, ""), ("ben", True, False, "")]
    assert "少说了缓存写入。" in page.read_text(encoding="utf-8")
    assert hand_state(grader.db_url, "ada")["q_cache_fields"] == (1.5, False, "少说了缓存写入。")


def test_resubmission_reopens_only_the_changed_answer(graded_by_hand, build):
    """ben resubmits with a new q_why_early: that cell needs grading again (score kept), q_cache_fields stays graded."""
    tmp, grader = graded_by_hand
    build(tmp / "again", "ben", {**ANSWERS, "q_why_early": "因为压缩要调用模型，得给它留地方。"})
    grader.collect(tmp / "again")
    report = grader.grade([("ben", ASSIGNMENT)])
    assert report.results[0].regrade == ("q_why_early",)
    state = hand_state(grader.db_url, "ben")
    assert state["q_cache_fields"] == EXPECTED["q_cache_fields"]
    assert state["q_why_early"] == (1.0, True, "好。")
    assert "To grade by hand again" in format_summary(report) and "ben 02-remaining: q_why_early" in format_summary(
        report
    )
    assert not (tmp / "work" / "hand_grades" / "ben" / f"{ASSIGNMENT}.json").exists()


def test_failed_regrade_keeps_hand_grades_and_the_snapshot(graded_by_hand):
    """An autograde that fails (the notebook became invalid JSON) leaves ada's hand grades as they were."""
    tmp, grader = graded_by_hand
    grader.grade([("ada", ASSIGNMENT)], force=True)
    notebook = tmp / "work" / "submitted" / "ada" / ASSIGNMENT / "remaining.ipynb"
    kept = notebook.read_text(encoding="utf-8")
    notebook.write_text(kept[:200], encoding="utf-8")
    try:
        report = grader.grade([("ada", ASSIGNMENT)])
        assert not report.results[0].graded
        assert hand_state(grader.db_url, "ada") == EXPECTED
        assert (tmp / "work" / "hand_grades" / "ada" / f"{ASSIGNMENT}.json").is_file()
    finally:
        notebook.write_text(kept, encoding="utf-8")
    report = grader.grade([("ada", ASSIGNMENT)])
    assert report.results[0].graded and report.results[0].regrade == ()
    assert hand_state(grader.db_url, "ada") == EXPECTED


def test_answer_digest_of_a_check_cell_follows_its_answer_cells():
    """A check cell's answer digest changes with the answer cells before it, not with later ones."""

    def cell(grade_id, source, *, grade=False, solution=False):
        return {
            "source": source,
            "metadata": {"nbgrader": {"grade_id": grade_id, "grade": grade, "solution": solution}},
        }

    first = answer_digests(
        [
            cell("a", "x = 1", solution=True),
            cell("check_a", "assert x", grade=True),
            cell("b", "y = 2", solution=True),
            cell("check_b", "assert y", grade=True),
        ]
    )
    edited = answer_digests(
        [
            cell("a", "x = 2", solution=True),
            cell("check_a", "assert x", grade=True),
            cell("b", "y = 2", solution=True),
            cell("check_b", "assert y", grade=True),
        ]
    )
    assert first["check_a"] != edited["check_a"]
    assert first["check_b"] == edited["check_b"]


def test_corrected_hidden_test_keeps_hand_grades(tmp_path, build):
    """A corrected hidden test regrades the class (new source digest) and keeps the hand grades."""
    root = tmp_path / "course"
    (root / "solutions").mkdir(parents=True)
    shutil.copy(REPO / "nbgrader_config.py", root)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, root / "solutions" / ASSIGNMENT)
    build(tmp_path / "incoming", "cai", ANSWERS)
    grader = Grader(root, work=tmp_path / "work", sandbox=False, jobs=1)
    grader.collect(tmp_path / "incoming")
    assert grader.grade().results[0].graded
    formgrader_save(grader.db_url, "cai", "q_cache_fields", score=1.5, comment="少说了缓存写入。")
    formgrader_save(grader.db_url, "cai", "q_why_early", score=1.0, comment="好。")
    source = root / "solutions" / ASSIGNMENT / "remaining.ipynb"
    text = source.read_text(encoding="utf-8")
    corrected = text.replace("# 什么都没用、超额为负数", "# 更正：什么都没用、超额为负数")
    assert corrected != text
    source.write_text(corrected, encoding="utf-8")
    grader = Grader(root, work=tmp_path / "work", sandbox=False, jobs=1)
    report = grader.grade()
    assert not report.results[0].skipped and report.results[0].graded
    assert hand_state(grader.db_url, "cai") == EXPECTED
