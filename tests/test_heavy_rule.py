"""Every test that grades a class is marked heavy by itself, and one that is not cannot grade (tests/conftest.py).

This module is not heavy: each test here tries to grade in a way a test might, and is stopped.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from ctx_course.grading.grader import AUDIT_EVENT, Grader

from conftest import REPO, GradesUnmarked, is_grade_command, uses_a_graded_class

# Two files whose tests that take a graded class from a fixture (the two deadlines runs, the shared class) are heavy.
GRADING_FILES = ("tests/test_deadlines.py", "tests/test_shared_classes.py")


def test_grading_in_this_process_is_refused_to_a_test_that_is_not_heavy(tmp_path, request):
    """Grader.grade, here, raises GradesUnmarked naming this test before it writes anything."""
    grader = Grader(REPO, work=tmp_path / "work", sandbox=False, jobs=1, deadlines=False)
    with pytest.raises(GradesUnmarked, match=request.node.name):
        grader.grade()
    assert not (tmp_path / "work" / "grades.csv").exists()


def test_the_grade_command_is_refused_before_it_starts(tmp_path):
    """Starting `python -m ctx_course grade` raises GradesUnmarked in Popen: no process is started."""
    with pytest.raises(GradesUnmarked, match="not marked heavy"):
        subprocess.Popen([sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(tmp_path)])
    assert not (tmp_path / "gradebook.db").exists()
    with pytest.raises(GradesUnmarked):
        sys.audit(AUDIT_EVENT, str(REPO), str(tmp_path), True)


def test_other_commands_are_left_alone():
    """The help of grade, and every other command, is no grading run."""
    assert not is_grade_command([sys.executable, "-m", "ctx_course", "grade", "--help"])
    assert not is_grade_command(["python", "-m", "ctx_course", "release"])
    assert not is_grade_command(["python", "-m", "pytest", "tests/test_deadlines.py"])
    assert is_grade_command(f"{sys.executable} -m ctx_course grade --jobs 1")


def test_no_test_of_this_session_uses_a_graded_class_without_being_heavy(request):
    """Among the tests this session runs, each one that uses a class-grading fixture is marked heavy."""
    unmarked = [item.nodeid for item in request.session.items
                if uses_a_graded_class(item) and item.get_closest_marker("heavy") is None]
    assert unmarked == []


@pytest.mark.heavy  # a collection in a process of its own: seconds
def test_the_tests_that_take_a_graded_class_are_left_out_of_make_quick():
    """`make quick`'s selection of the two files: the 16 tests of the late policy, the deadlines file and where the
    shared class lives; not the 8 of the two deadlines runs nor the 2 that grade the shared class."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-n", "0",
                           "-m", "not heavy and not notebook", *GRADING_FILES],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    quick = [line for line in done.stdout.splitlines() if "::" in line]
    assert len(quick) == 16, quick
    graded = ("late_submission", "on_time_and_extended", "gradebook_holds", "summary_and_feedback",
              "two_processes_asking", "left_half_graded")
    assert not [test for test in quick if any(name in test for name in graded)]
    assert "tests/test_shared_classes.py::test_under_xdist_the_class_lives_beside_the_workers_folders" in quick
