"""A PostgreSQL gradebook server that goes down while a class is being graded.

The server is a throw-away cluster (``tests/postgres_server.py``), the test process's (conftest.py).
The class is notebook-02 submissions that each take a few seconds (the model answer followed by a
sleep, and the stub); a run into a database of its own that saw no outage gives the grades both
cases must end with.
As soon as the first submission's grades are in the database the server is stopped:

- *an outage*: it is left down for a few seconds (longer than one submission takes, shorter than
  the run's patience, ``reconnect.PATIENCE``) and started again: the run reconnects and grades
  everything, to the grades of a run that saw no outage;
- *a server that stays away*: the run (in this process, its patience cut to a few seconds) stops
  with one ``error:`` line naming the gradebook; nothing it had written is lost, and once the
  server is back a second run grades the rest, to the same grades.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from postgres_server import binaries
from test_grading_dask import MODEL, NAPPER

from ctx_course.cli import main
from ctx_course.grading import reconnect
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_STUB as STUB
from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed (.ci/run installs it)"),
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

STUDENTS = {
    "ada": NAPPER.format(seconds=3), "ben": STUB, "cai": NAPPER.format(seconds=3),
    "dan": NAPPER.format(seconds=3), "eli": MODEL, "fen": STUB,
}
OUTAGE = 8  # seconds the server is down: longer than one submission takes to grade


def _course(folder: Path, db_url: str) -> Path:
    """A course folder: the repository's nbgrader_config.py with ``db_url`` appended, and solutions/."""
    import shutil

    folder.mkdir(parents=True)
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    (folder / "nbgrader_config.py").write_text(config + f"\nc.CourseDirectory.db_url = {db_url!r}\n",
                                                encoding="utf-8")
    shutil.copytree(REPO / "solutions", folder / "solutions")
    return folder


def _grade(course: Path, incoming: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(course), "--submissions", str(incoming),
               *extra]
    return subprocess.Popen(command, cwd=course, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _graded(url: str) -> set[str]:
    """The students whose 02-remaining submission has grades in the database (read with psycopg2)."""
    import psycopg2

    dsn = url.split("://", 1)[1]
    user, rest = dsn.split("@/", 1)
    name, host = rest.split("?host=")
    try:
        with psycopg2.connect(dbname=name, user=user, host=host) as conn, conn.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT s.student_id FROM submitted_assignment s JOIN submitted_notebook n "
                "ON n.assignment_id = s.id JOIN grade g ON g.notebook_id = n.id WHERE g.auto_score IS NOT NULL"
            )
            return {row[0] for row in cursor.fetchall()}
    except psycopg2.Error:
        return set()


@pytest.fixture(scope="module")
def calm(tmp_path_factory, make_class, postgres):
    """The class's folder and the grades.csv of a run into a database of its own that saw no outage."""
    tmp = tmp_path_factory.mktemp("pg-calm")
    incoming = make_class(tmp / "incoming", STUDENTS)
    calm = _grade(_course(tmp / "calm", postgres.create_database("calm")), incoming, "--jobs", "1")
    output = calm.communicate(timeout=900)[0]
    assert calm.returncode == 0, output[-3000:]
    return incoming, (tmp / "calm" / "grading" / "grades.csv").read_text()


@contextlib.contextmanager
def _class_and_server(tmp: Path, calm, postgres, name: str):
    """Yield (server, the class's folder, grades.csv of a calm run, a course folder on the server, its URL)."""
    incoming, calm_csv = calm
    url = postgres.create_database(name)
    yield postgres, incoming, calm_csv, _course(tmp / "course", url), url


def _wait_for_a_first_result(url: str, running) -> set[str]:
    """Wait until the gradebook holds a graded submission (or the run ended); return who is graded."""
    deadline = time.monotonic() + 600
    while not _graded(url) and running() and time.monotonic() < deadline:
        time.sleep(0.2)
    return _graded(url)


def _second_run(course: Path, incoming: Path) -> tuple[int, str, str]:
    second = _grade(course, incoming, "--jobs", "1")
    output = second.communicate(timeout=900)[0]
    return second.returncode, output, (course / "grading" / "grades.csv").read_text()


@pytest.fixture(scope="module")
def outage(tmp_path_factory, calm, postgres):
    """A run whose gradebook server is down for OUTAGE seconds after the first submission; then a second run."""
    with _class_and_server(tmp_path_factory.mktemp("pg-outage"), calm, postgres, "outage") as (server, incoming,
                                                                                                calm_csv, course, url):
        first = _grade(course, incoming, "--jobs", "1")
        before = _wait_for_a_first_result(url, lambda: first.poll() is None)
        server.outage(OUTAGE)
        first_output = first.communicate(timeout=900)[0]
        after_first = _graded(url)
        yield {"calm_csv": calm_csv, "first": (first.returncode, first_output), "before": before,
               "after_first": after_first, "second": _second_run(course, incoming)}


def test_the_server_went_down_mid_run(outage):
    """The outage began after the first submission was written and before the last one was graded."""
    assert outage["before"], outage["first"][1]
    assert outage["before"] != set(STUDENTS)


def test_the_run_reconnects_and_grades_everyone(outage):
    """An outage shorter than the run's patience: the first run grades every submission (status 0), with
    no traceback and no error line, and its grades are those of a run without outage."""
    assert OUTAGE < reconnect.PATIENCE
    status, output = outage["first"]
    assert status == 0, output[-3000:]
    assert "Traceback" not in output and "error:" not in output
    assert outage["after_first"] == set(STUDENTS)


def test_nothing_written_before_the_outage_is_lost(outage):
    """Every submission whose grades were in the database before the outage still has them after the first run."""
    assert outage["before"] <= outage["after_first"]


def test_a_second_run_gives_the_grades_of_a_run_without_outage(outage):
    """After the second run, grades.csv equals, byte for byte, that of a run that saw no outage."""
    status, output, csv = outage["second"]
    assert status == 0, output[-3000:]
    assert csv == outage["calm_csv"]


@pytest.fixture(scope="module")
def gone(tmp_path_factory, calm, postgres):
    """A run whose gradebook server stops for good after the first submission; then a second run."""
    with _class_and_server(tmp_path_factory.mktemp("pg-gone"), calm, postgres, "gone") as (server, incoming,
                                                                                            calm_csv, course, url):
        run = {}

        def first():
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # no --work: it means SQLite
                run["status"] = main(["grade", "--root", str(course), "--submissions", str(incoming),
                                      "--jobs", "1"])
            run["stdout"], run["stderr"] = out.getvalue(), err.getvalue()

        patience, reconnect.PATIENCE = reconnect.PATIENCE, 3.0
        here = os.getcwd()
        os.chdir(course)  # the course's grading/ folder, as the instructor's command finds it
        try:
            thread = threading.Thread(target=first)
            thread.start()
            before = _wait_for_a_first_result(url, thread.is_alive)
            server.outage_begin()
            thread.join(timeout=900)
        finally:
            reconnect.PATIENCE = patience
            os.chdir(here)
            if not server.running():  # back for the second run (and for whatever else uses the server)
                server.outage_end()
        yield {"run": run, "before": before, "after_first": _graded(url), "calm_csv": calm_csv,
               "second": _second_run(course, incoming)}


def test_a_server_that_stays_away_stops_the_run_with_one_line(gone):
    """Status 1, one `error:` line on stderr naming the gradebook and what to do, no traceback; every progress
    line ended before it."""
    run = gone["run"]
    assert gone["before"] and gone["before"] != set(STUDENTS)
    assert run["status"] == 1, run
    lines = run["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the gradebook postgresql"), run["stderr"]
    assert "run the same command again" in lines[0]
    assert "Traceback" not in run["stdout"] + run["stderr"]
    assert run["stdout"].endswith("\n")


def test_a_second_run_after_the_server_is_back_grades_the_rest(gone):
    """What the stopped run had written is still there, and the second run ends with the grades of a calm run."""
    assert gone["before"] <= gone["after_first"]
    status, output, csv = gone["second"]
    assert status == 0, output[-3000:]
    assert csv == gone["calm_csv"]
