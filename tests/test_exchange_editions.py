"""Both editions through nbgrader's exchange: one release, each learner fetches their own, one class graded.

The instructor releases 02-remaining once (``lessons/`` with the English notebooks of
``lessons-en/`` beside them, ``ctx_course/exchange.py``); ada fetches the Chinese edition; eli,
whose commands run with ``COURSE_EDITION=en`` (the hub sets it from the roster), fetches the
English one under the same file name. Both hand in the model answers in their own edition and
submit; the instructor collects and grades the class with ``python -m ctx_course grade``: 3/3 each
(check_remaining is worth 3 points; the model answers pass every check), and each learner's
feedback speaks their edition. As root each person is a system user of their own (``classroom.py``).
"""
from __future__ import annotations

import csv
import html
import re

import nbformat
import pytest
from classroom import COURSE_ID, open_classroom

from ctx_course.exchange import EDITION_FOLDER, learner_edition

from conftest import REPO, SOLUTIONS, class_builder

pytestmark = pytest.mark.heavy

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"


def test_an_edition_that_does_not_exist_is_named():
    assert learner_edition({}) == "zh_CN" and learner_edition({"COURSE_EDITION": "en"}) == "en"
    with pytest.raises(ValueError, match=r"COURSE_EDITION must be one of zh_CN, en \(got 'fr'\)"):
        learner_edition({"COURSE_EDITION": "fr"})


@pytest.fixture(scope="module")
def trip():
    """The round trip with ada (Chinese) and eli (English); the class is removed afterwards, also on failure."""
    room = open_classroom(("ada", "eli"))
    try:
        teacher, ada, eli = room["instructor"], room["ada"], room["eli"]
        eli.edition = "en"
        build = class_builder()
        source = next((SOLUTIONS / ASSIGNMENT).glob("*.ipynb"))
        model = build.Work(code={c.metadata.nbgrader["grade_id"]: build.MODEL
                                 for c in nbformat.read(source, as_version=4).cells
                                 if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")})
        seen = {"release": room.nbgrader(teacher, "release_assignment", ASSIGNMENT)}
        seen["outbound"] = sorted(p.relative_to(room.exchange / COURSE_ID / "outbound" / ASSIGNMENT).as_posix()
                                  for p in (room.exchange / COURSE_ID / "outbound" / ASSIGNMENT).rglob("*"))
        for learner, release in ((ada, "lessons"), (eli, "lessons-en")):
            room.nbgrader(learner, "fetch_assignment", ASSIGNMENT)
            fetched = learner.home / ASSIGNMENT / NOTEBOOK
            seen[learner.role] = fetched.read_bytes()
            seen[learner.role + "_files"] = sorted(p.name for p in (learner.home / ASSIGNMENT).iterdir())
            answers = room.base / f"{learner.role}-answers.ipynb"
            answers.write_text(build.submission(REPO / release / ASSIGNMENT / NOTEBOOK, source, model),
                               encoding="utf-8")
            room.hand_in(learner, answers, fetched)
            room.nbgrader(learner, "submit", ASSIGNMENT, student=True)
        room.nbgrader(teacher, "collect", ASSIGNMENT, "--update")
        seen["grade"] = room.run(teacher, [str(room.python), "-m", "ctx_course", "grade", "--jobs", "1"],
                                 cwd=room.course)
        with (room.course / "grading" / "grades.csv").open(encoding="utf-8") as handle:
            seen["grades"] = {row["student_id"]: (row["auto_score"], row["max_auto_score"])
                              for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT}
        seen["feedback"] = {
            learner.role: html.unescape(re.sub(r"<[^>]*>", "", next(
                (room.course / "grading" / "feedback" / learner.name / ASSIGNMENT).glob("*.html")).read_text(
                    encoding="utf-8")))
            for learner in (ada, eli)}
        seen["names"] = {"ada": ada.name, "eli": eli.name}
        yield seen
    finally:
        room.close()


def test_the_release_holds_both_editions(trip):
    assert trip["outbound"] == [EDITION_FOLDER, f"{EDITION_FOLDER}/{NOTEBOOK}", NOTEBOOK]


def test_each_learner_fetches_their_edition_under_the_same_name(trip):
    """ada's notebook is the Chinese release, eli's the English one, byte for byte; neither keeps the editions'
    folder."""
    assert trip["ada"] == (REPO / "lessons" / ASSIGNMENT / NOTEBOOK).read_bytes()
    assert trip["eli"] == (REPO / "lessons-en" / ASSIGNMENT / NOTEBOOK).read_bytes()
    assert trip["ada_files"] == trip["eli_files"] == [NOTEBOOK]


def test_the_mixed_class_is_graded_as_one(trip):
    """Both model answers score 3 of 3, in one grading run of one assignment."""
    names = trip["names"]
    assert trip["grades"] == {names["ada"]: ("3", "3"), names["eli"]: ("3", "3")}


def test_each_learners_feedback_speaks_their_edition(trip):
    assert "全部 7 个检查通过。" in trip["feedback"]["ada"]
    assert "All 7 checks passed." in trip["feedback"]["eli"]
