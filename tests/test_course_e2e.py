"""End to end: every assignment generated, submitted twice, autograded by the grader, read back from the gradebook."""
from __future__ import annotations

import shutil

import pytest
from nbgrader.api import Gradebook

from ctx_course.config import assignments
from ctx_course.grading.grader import Grader

from conftest import LESSONS, REPO, SOLUTIONS, notebooks

pytestmark = pytest.mark.heavy

PERFECT = "model-answer"
UNTOUCHED = "blank-release"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A temporary course: every assignment handed in by two students (the model solutions and the
    committed release untouched) and graded in one run in this process, kernels launched ahead."""
    tmp = tmp_path_factory.mktemp("course")
    for aid in assignments(REPO):
        for student, folder in ((PERFECT, SOLUTIONS / aid), (UNTOUCHED, LESSONS / aid)):
            shutil.copytree(folder, tmp / "incoming" / student / aid)
    grader = Grader(REPO, work=tmp / "work", jobs=1)
    grader.collect(tmp / "incoming")
    submissions = sorted((student, aid) for aid in assignments(REPO) for student in (PERFECT, UNTOUCHED))
    results = grader.grade(submissions).results
    return grader, results


def test_every_autograde_run_succeeds(graded):
    """Both students are graded on every assignment; none fails."""
    _, results = graded
    assert len(results) == 2 * len(assignments(REPO))
    assert {(r.student, r.assignment): r.log for r in results if not r.graded} == {}


def test_model_answer_gets_full_autograded_marks(graded):
    """The model solution scores every autograded point of every assignment (hidden tests
    included, their digests compared by the grader outside the kernel)."""
    grader, _ = graded
    with Gradebook(grader.db_url) as gb:
        for aid in assignments(REPO):
            sub = gb.find_submission(aid, PERFECT)
            assert sub.max_code_score > 0, aid
            assert sub.code_score == sub.max_code_score, aid


def test_untouched_release_gets_zero_autograded_points(graded):
    """The released stubs, submitted unchanged, score no autograded point."""
    grader, _ = graded
    with Gradebook(grader.db_url) as gb:
        for aid in assignments(REPO):
            sub = gb.find_submission(aid, UNTOUCHED)
            assert sub.max_code_score > 0, aid
            assert sub.code_score == 0, aid


def test_course_has_every_notebook():
    """The course under test is the whole workbook: one source notebook per assignment."""
    assert len(notebooks(SOLUTIONS)) == len(assignments(REPO)) >= 1
