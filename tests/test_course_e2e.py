"""End to end through nbgrader's Python API: release, submit, autograde, read the gradebook."""
from __future__ import annotations

import shutil

import pytest
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI

from conftest import REPO, SOLUTIONS, notebooks
from ctx_course.config import assignments, load_course_config

PERFECT = "model-answer"
UNTOUCHED = "blank-release"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A temporary course: every assignment released, then submitted by two students and graded."""
    tmp = tmp_path_factory.mktemp("course")
    config = load_course_config(REPO, work=tmp / "work", release=tmp / "release")
    api = NbGraderAPI(config=config)
    cd = api.coursedir
    logs = {}
    for aid in assignments(REPO):
        result = api.generate_assignment(aid, force=True)
        assert result["success"], result.get("log")
        for student, folder in ((PERFECT, SOLUTIONS / aid), (UNTOUCHED, tmp / "release" / aid)):
            shutil.copytree(folder, cd.format_path(cd.submitted_directory, student, aid))
            logs[aid, student] = api.autograde(aid, student, force=True)
    return config, logs


def test_every_autograde_run_succeeds(graded):
    """nbgrader reports success for both students on every assignment."""
    _, logs = graded
    failed = {key: log.get("log", "") for key, log in logs.items() if not log["success"]}
    assert failed == {}


def test_model_answer_gets_full_autograded_marks(graded):
    """The model solution scores every autograded point of every assignment."""
    config, _ = graded
    with Gradebook(config.CourseDirectory.db_url) as gb:
        for aid in assignments(REPO):
            sub = gb.find_submission(aid, PERFECT)
            assert sub.max_code_score > 0, aid
            assert sub.code_score == sub.max_code_score, aid


def test_untouched_release_gets_zero_autograded_points(graded):
    """The released stubs, submitted unchanged, score no autograded point."""
    config, _ = graded
    with Gradebook(config.CourseDirectory.db_url) as gb:
        for aid in assignments(REPO):
            sub = gb.find_submission(aid, UNTOUCHED)
            assert sub.max_code_score > 0, aid
            assert sub.code_score == 0, aid


def test_course_has_every_notebook():
    """The course under test is the whole workbook: one source notebook per assignment."""
    assert len(notebooks(SOLUTIONS)) == len(assignments(REPO)) >= 1
