"""benchmarks/bench_grading.py refuses, in one line and before grading anything, a --baseline it cannot drive."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import REPO


def _bench_grading():
    """Return benchmarks/bench_grading.py loaded as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_grading", REPO / "benchmarks" / "bench_grading.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench_grading = _bench_grading()


@pytest.fixture
def course(tmp_path):
    """A folder that looks like a course (nbgrader_config.py, solutions/) and holds nothing else."""
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    (tmp_path / "solutions").mkdir()
    return tmp_path


def _write_grader(course, source: str) -> None:
    """Give the course folder a ctx_course package whose grading/grader.py is ``source``."""
    grading = course / "ctx_course" / "grading"
    grading.mkdir(parents=True)
    (course / "ctx_course" / "__init__.py").write_text("")
    (grading / "__init__.py").write_text("")
    (grading / "grader.py").write_text(source)


def test_a_missing_folder_is_named_as_missing(tmp_path):
    """A --baseline folder that does not exist is refused as such."""
    assert bench_grading.baseline_problem(tmp_path / "absent") == "it does not exist"


def test_a_folder_without_a_course_is_refused(tmp_path):
    """A folder without nbgrader_config.py is not a copy of the repository."""
    (tmp_path / "solutions").mkdir()
    assert bench_grading.baseline_problem(tmp_path) == (
        "no nbgrader_config.py there (it is not a copy of the repository)")


def test_a_version_before_the_grading_package_is_refused(course):
    """A course without ctx_course/grading/grader.py predates the grading package; the line says which commit to use."""
    assert bench_grading.baseline_problem(course) == (
        "no ctx_course/grading/grader.py there (it predates the grading package; "
        "use a copy of commit cfe0bc4 (2026-12-01) or later)")


def test_a_grader_that_cannot_be_imported_is_refused_with_its_error(course):
    """A grader.py that fails to import is refused with the error's own line, imported from that folder."""
    _write_grader(course, "raise ImportError('nbgrader 0.1 is too old')\n")
    assert bench_grading.baseline_problem(course) == (
        "its Grader cannot be imported: ImportError: nbgrader 0.1 is too old")


def test_a_grader_without_the_arguments_the_benchmark_passes_is_refused(course):
    """A Grader that takes no ``jobs`` and has no ``collect`` cannot be driven."""
    _write_grader(
        course,
        "class Grader:\n    def __init__(self, root, work=None):\n        pass\n\n    def grade(self):\n        pass\n")
    assert bench_grading.baseline_problem(course) == (
        "its Grader lacks what this benchmark uses: argument jobs, method collect")


def test_the_repository_itself_can_be_driven():
    """This checkout, as a baseline, has nothing wrong with it."""
    assert bench_grading.baseline_problem(REPO) is None


def test_the_command_stops_in_one_line_before_building_the_class(tmp_path):
    """``--baseline`` on a missing folder exits with one line naming the option and the folder."""
    with pytest.raises(SystemExit) as stopped:
        bench_grading.main(["--baseline", str(tmp_path / "absent")])
    assert str(stopped.value) == f"bench_grading: --baseline {tmp_path / 'absent'}: it does not exist"
