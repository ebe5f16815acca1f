"""Grading into a PostgreSQL gradebook on a real server, set through ``db_url`` in nbgrader_config.py.

The server is a throw-away cluster (``tests/postgres_server.py``), the test process's (conftest.py).
The class is the example class's 02-remaining and 05-trim-lines submissions. The reference is one
run into the default SQLite gradebook; against PostgreSQL, two runs at the same time from two
course folders, one per assignment (02 with two Dask workers, 05 in one process), share one database.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from postgres_server import binaries

from ctx_course.grading.report import export_grades

from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed (.ci/run installs it)"),
]

CLASS = REPO / "examples" / "class"
ASSIGNMENTS = ("02-remaining", "05-trim-lines")


def _course(folder: Path, db_url: str | None = None) -> Path:
    """A course folder: the repository's nbgrader_config.py (with ``db_url`` appended) and solutions/."""
    folder.mkdir(parents=True)
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    if db_url is not None:
        config += f"\nc.CourseDirectory.db_url = {db_url!r}\n"
    (folder / "nbgrader_config.py").write_text(config, encoding="utf-8")
    shutil.copytree(REPO / "solutions", folder / "solutions")
    return folder


def _incoming(folder: Path, assignments) -> Path:
    for student in sorted(p.name for p in (CLASS / "submitted").iterdir()):
        for aid in assignments:
            if (CLASS / "submitted" / student / aid).is_dir():
                shutil.copytree(CLASS / "submitted" / student / aid, folder / student / aid)
    return folder


def _grade(course: Path, incoming: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(course), "--submissions", str(incoming),
               "--roster", str(CLASS / "roster.csv"), *extra]
    return subprocess.Popen(command, cwd=course, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _failed(output: str) -> list[str]:
    return sorted(line.split("]", 1)[1].split("…")[0].split() for line in output.splitlines() if "NOT GRADED" in line)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, postgres):
    """The class graded into SQLite (one run) and into PostgreSQL (two runs at once, one per assignment)."""
    tmp = tmp_path_factory.mktemp("postgres")
    url = postgres.create_database("gradebook")  # on the test process's server (conftest.py), shared
    sqlite = _course(tmp / "sqlite")
    reference = _grade(sqlite, _incoming(tmp / "in-all", ASSIGNMENTS), "--jobs", "1")
    first = _grade(_course(tmp / "pg-02", url), _incoming(tmp / "in-02", ASSIGNMENTS[:1]), "--jobs", "2")
    second = _grade(_course(tmp / "pg-05", url), _incoming(tmp / "in-05", ASSIGNMENTS[1:]), "--jobs", "1")
    outputs = {name: p.communicate(timeout=900)[0] for name, p in
               (("sqlite", reference), ("pg-02", first), ("pg-05", second))}
    statuses = {"sqlite": reference.returncode, "pg-02": first.returncode, "pg-05": second.returncode}
    failed = [(s, a) for name in ("pg-02", "pg-05") for s, a in _failed(outputs[name])]
    # The whole gradebook as one CSV, after both runs (each run's own CSV was written at its end).
    from ctx_course.grading.records import GradeResult

    merged = export_grades(url, tmp / "pg-grades.csv", [GradeResult(s, a, False) for s, a in failed],
                           course_id="context-engineering")
    return {
        "outputs": outputs,
        "statuses": statuses,
        "sqlite_csv": (sqlite / "grading" / "grades.csv").read_text(encoding="utf-8"),
        "pg_csv": merged.read_text(encoding="utf-8"),
        "failed": failed,
        "tmp": tmp,
    }


def test_both_postgres_runs_grade_their_assignment(graded):
    """Each run exits 1 (eve's broken 02 notebook is the one failure, in the 02 run) and says so."""
    assert graded["statuses"] == {"sqlite": 1, "pg-02": 1, "pg-05": 0}, graded["outputs"]
    assert graded["failed"] == [("eve", "02-remaining")]


def test_postgres_gradebook_gives_the_grades_of_sqlite(graded):
    """grades.csv from the PostgreSQL gradebook, after both runs, is the SQLite run's, byte for byte
    (every student of the roster × every assignment; nothing lost when two runs wrote at once): one
    row per student and assignment, every submission but eve's broken 02 graded."""
    assert graded["pg_csv"] == graded["sqlite_csv"]
    students = len((CLASS / "roster.csv").read_text(encoding="utf-8").splitlines()) - 1
    folders = [s / a for s in (CLASS / "submitted").iterdir() for a in ASSIGNMENTS]
    handed_in = sum(folder.is_dir() for folder in folders)
    rows = [line for line in graded["pg_csv"].splitlines()[1:] if line.split(",")[4] in ASSIGNMENTS]
    assert len(rows) == 2 * students
    assert sum(",graded," in r or ",needs manual grading," in r for r in rows) == handed_in - 1


def test_postgres_runs_write_no_sqlite_gradebook(graded):
    """The db_url of nbgrader_config.py is used: neither PostgreSQL run made a gradebook.db."""
    assert not (graded["tmp"] / "pg-02" / "grading" / "gradebook.db").exists()
    assert not (graded["tmp"] / "pg-05" / "grading" / "gradebook.db").exists()


def test_creating_the_gradebook_adds_both_course_rows(postgres):
    """create_gradebook, under its lock, adds the course and nbgrader's default_course (which nbgrader's own steps
    open the gradebook as): no later opening adds a row, so two runs starting at once cannot both add one."""
    from nbgrader.api import Course, Gradebook

    from ctx_course.config import create_gradebook

    url = postgres.create_database("rows")
    create_gradebook(url, "context-engineering")
    with Gradebook(url, "context-engineering") as gb:
        assert sorted(course.id for course in gb.db.query(Course)) == ["context-engineering", "default_course"]
