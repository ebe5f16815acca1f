"""A teaching assistant grades by hand in the Formgrader while an autograde run writes the same gradebook.

The Formgrader is nbgrader's, in JupyterLab started as `make formgrader` starts it
(``labserver.start_formgrader``), on a course folder of its own. The teaching assistant is this
test, sending what the Formgrader's page sends when she saves: ``PUT /formgrader/api/grade/<id>``
(a manual score) and ``PUT /formgrader/api/comment/<id>`` (a comment), and reading back with
``GET``. The run is ``python -m ctx_course grade`` in a process of its own.

The class: six learners hand in 02-remaining with two written answers and the stub of its code
(no auto point), and it is graded once, so that the written answers wait in the Formgrader. Then
they hand in the model code (three auto points each, same written answers) and a second run
grades the class again, while the teaching assistant grades, again and again, the two written
answers of the learner the run is grading and writing at that moment (its progress line says
whom): each time she reads a cell back (it must still hold what she saved there last), saves a new
score and a new comment for it, and checks what the server answered. Once the run is over she
reads every cell once more. Every save is then checked kept, through the Formgrader's API, the
gradebook and ``grades.csv`` (of a ``--feedback-only`` run), and every autograde row written.
Twice: into the course's SQLite gradebook and into a PostgreSQL database (the test process's
throw-away server, ``tests/postgres_server.py``). Without the submission's lock
(``submission_lock.py``) about one save in twenty was lost or overwritten.

Then two closer looks on the same gradebooks: a save made while a run holds a submission waits and
lands after it; and a run that finds the SQLite gradebook locked by another writer for longer than
SQLite waits tries again and grades everyone.
"""
from __future__ import annotations

import csv
import inspect
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from postgres_server import binaries

from conftest import REMAINING_MODEL, REPO, class_builder
from labserver import Server, start_formgrader

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]

ASSIGNMENT, NOTEBOOK = "02-remaining", "remaining"
STUDENTS = ("ada", "ben", "cai", "dan", "eli", "fen")
ANSWERS = {"q_cache_fields": "只看 input_tokens 会低估占用。", "q_why_early": "压缩本身也要占窗口。"}
MAX_MANUAL = {"q_cache_fields": 2.0, "q_why_early": 1.0}  # the cells' points in solutions/02-remaining
AUTO_POINTS = 3.0  # check_remaining, scored by the model code
STUB = "raise NotImplementedError()"
ROUND_LIMIT = 2000  # rounds of the class at most (a run that never ends fails the test, it does not hang it)
RUN_TIMEOUT = 900  # seconds


def score(round_: int, position: int, cell: str) -> float:
    """The score the teaching assistant gives in round ``round_`` to the answer at ``position``: a quarter
    point step that differs from one round to the next, within the cell's points."""
    steps = int(MAX_MANUAL[cell] * 4) + 1
    return ((round_ + position) % steps) / 4


def comment(round_: int, student: str, cell: str) -> str:
    return f"第 {round_} 轮：{student} 的 {cell}。"


@dataclass
class Cell:
    """One written answer as the teaching assistant sees it: its grade and comment ids, what she saved last."""

    student: str
    name: str
    grade_id: str
    comment_id: str
    score: float | None = None
    comment: str | None = None


@dataclass
class Session:
    """What happened while the teaching assistant graded beside the run."""

    saves: int = 0  # scores saved (each with a comment)
    saves_while_grading: dict[str, int] = field(default_factory=dict)  # learner: saves while the run was on her
    mismatches: list[str] = field(default_factory=list)  # a cell that did not hold her last save, a bad answer
    slowest: float = 0.0  # seconds of the slowest save (score and comment): reported, not asserted


def _course(folder: Path, db_url: str | None) -> Path:
    """A course folder: the repository's nbgrader_config.py (``db_url`` appended) and 02-remaining's sources."""
    (folder / "solutions").mkdir(parents=True)
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    if db_url is not None:
        config += f"\nc.CourseDirectory.db_url = {db_url!r}\n"
    (folder / "nbgrader_config.py").write_text(config, encoding="utf-8")
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, folder / "solutions" / ASSIGNMENT)
    return folder


def _hand_in(folder: Path, released: Path, code: str) -> Path:
    """Every learner's 02-remaining with ``code`` and the written ANSWERS, under ``folder``."""
    builder = class_builder()
    source = REPO / "solutions" / ASSIGNMENT / "remaining.ipynb"
    for student in STUDENTS:
        target = folder / student / ASSIGNMENT
        target.mkdir(parents=True)
        work = builder.Work(code={"remaining": code}, answers=ANSWERS)
        (target / "remaining.ipynb").write_text(builder.submission(released, source, work), encoding="utf-8")
    return folder


def _grade(course: Path, *extra: str) -> subprocess.Popen:
    """Start ``python -m ctx_course grade`` on the course (in one process; the sandbox is not what is tried here)."""
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(course), "--jobs", "1", "--no-sandbox",
               *extra]
    return subprocess.Popen(command, cwd=course, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _db_url(course: Path) -> str:
    from ctx_course.config import load_course_config

    return load_course_config(course).CourseDirectory.db_url


def _cells(db_url: str) -> list[Cell]:
    """The written answers of the class, with the ids the Formgrader's page uses for them."""
    cells = []
    with Gradebook(db_url, "context-engineering") as gb:
        for student in STUDENTS:
            for name in ANSWERS:
                grade = gb.find_grade(name, NOTEBOOK, ASSIGNMENT, student)
                note = gb.find_comment(name, NOTEBOOK, ASSIGNMENT, student)
                cells.append(Cell(student, name, grade.id, note.id))
    return cells


def _read(formgrader: Server, cell: Cell) -> tuple[dict, dict]:
    """The cell's grade and comment as the Formgrader's API gives them."""
    return (formgrader.get_json(f"formgrader/api/grade/{cell.grade_id}"),
            formgrader.get_json(f"formgrader/api/comment/{cell.comment_id}"))


def _check(formgrader: Server, cell: Cell, session: Session, when: str) -> None:
    """Note it in ``session`` if the cell does not hold the last score and comment saved there."""
    grade, note = _read(formgrader, cell)
    held = (grade["manual_score"], grade["needs_manual_grade"], note["manual_comment"])
    if held != (cell.score, False, cell.comment):
        session.mismatches.append(f"{when}: {cell.student} {cell.name} holds {held}, "
                                  f"not the save {(cell.score, False, cell.comment)}")


def _save(formgrader: Server, cell: Cell, round_: int, position: int, session: Session) -> None:
    """Save a new score and comment for the cell as the Formgrader's page does; note a bad answer."""
    value, text = score(round_, position, cell.name), comment(round_, cell.student, cell.name)
    started = time.monotonic()
    status, body = formgrader.put_json(f"formgrader/api/grade/{cell.grade_id}",
                                       {"manual_score": value, "extra_credit": None})
    saved = json.loads(body) if status == 200 else {}
    status_comment, body_comment = formgrader.put_json(f"formgrader/api/comment/{cell.comment_id}",
                                                       {"manual_comment": text})
    saved_comment = json.loads(body_comment) if status_comment == 200 else {}
    session.slowest = max(session.slowest, time.monotonic() - started)
    if (saved.get("manual_score"), saved.get("needs_manual_grade"), saved_comment.get("manual_comment")) != (
            value, False, text):
        session.mismatches.append(f"save {round_} of {cell.student} {cell.name}: {status} {body[:200]!r}, "
                                  f"{status_comment} {body_comment[:200]!r}")
    cell.score, cell.comment = value, text
    session.saves += 1


class RunOutput(threading.Thread):
    """Read a run's output as it comes; ``current`` is the learner whose submission it grades and writes now.

    The run prints a progress line's head (``[2/6] ben      02-remaining     …``) before it grades a
    submission and its end once the submission's rows are written.
    """

    HEAD = re.compile(rf"\[\d+/\d+\] (\S+) +{ASSIGNMENT} +…")

    def __init__(self, run: subprocess.Popen):
        super().__init__(daemon=True)
        self.run_, self.text, self.current = run, "", None
        self.done = False  # every progress line is complete (the run writes no more rows)

    def run(self) -> None:
        while chunk := os.read(self.run_.stdout.fileno(), 4096):
            self.text += chunk.decode("utf-8", errors="replace")
            heads = self.HEAD.findall(self.text)
            self.current = heads[-1] if heads else None
            self.done = len(heads) == len(STUDENTS) and self.text.rstrip(" ").endswith("\n")


def _grade_beside_the_run(formgrader: Server, cells: list[Cell], run: subprocess.Popen) -> tuple[Session, str]:
    """Save scores and comments until the run ends; return what happened and the run's output.

    The teaching assistant grades the learner whose submission the run grades now (the first one
    before it starts), so that her saves meet the run's writes of the same rows.
    """
    session, output = Session(), RunOutput(run)
    output.start()
    rounds = 0
    while run.poll() is None and rounds < ROUND_LIMIT:
        student = output.current or STUDENTS[0]
        grading = output.current is not None and not output.done
        for position, cell in enumerate(cells):
            if cell.student != student:
                continue
            if cell.score is not None:
                _check(formgrader, cell, session, f"round {rounds}")
            _save(formgrader, cell, rounds, position, session)
            if grading:
                session.saves_while_grading[student] = session.saves_while_grading.get(student, 0) + 1
        rounds += 1
    if run.poll() is None:
        run.kill()
    run.wait(timeout=RUN_TIMEOUT)
    output.join(timeout=60)
    for position, cell in enumerate(cells):
        if cell.score is None:  # a learner graded before the teaching assistant came to her: graded now
            _save(formgrader, cell, rounds, position, session)
        _check(formgrader, cell, session, "after the run")
    return session, output.text


def _gradebook_state(db_url: str) -> tuple[dict, dict]:
    """{(student, cell): (manual_score, needs_manual_grade, manual_comment)} and {student: auto score}."""
    hand, auto = {}, {}
    with Gradebook(db_url, "context-engineering") as gb:
        for student in STUDENTS:
            for name in ANSWERS:
                grade = gb.find_grade(name, NOTEBOOK, ASSIGNMENT, student)
                note = gb.find_comment(name, NOTEBOOK, ASSIGNMENT, student)
                hand[(student, name)] = (grade.manual_score, grade.needs_manual_grade, note.manual_comment)
            auto[student] = gb.find_grade("check_remaining", NOTEBOOK, ASSIGNMENT, student).auto_score
    return hand, auto


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def graded_by_hand_while_autograding(request, tmp_path_factory, released_remaining):
    """The class graded once; then regraded while the teaching assistant grades by hand; then --feedback-only."""
    backend = request.param
    db_url = None
    if backend == "postgresql":
        if binaries() is None:
            pytest.skip("PostgreSQL is not installed (.ci/run installs it)")
        db_url = request.getfixturevalue("postgres").create_database("hand_live")
    tmp = tmp_path_factory.mktemp(f"hand-live-{backend}")
    course = _course(tmp / "course", db_url)
    formgrader = start_formgrader(course, tmp / "formgrader.log", wait=False, env={
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab-workspaces"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
    })
    runs: list[subprocess.Popen] = []
    try:
        first = _grade(course, "--submissions", str(_hand_in(tmp / "first", released_remaining, STUB)))
        runs.append(first)
        first_output = first.communicate(timeout=RUN_TIMEOUT)[0]
        formgrader.wait_ready()
        url = _db_url(course)
        cells = _cells(url)
        second = _grade(course, "--submissions", str(_hand_in(tmp / "second", released_remaining, REMAINING_MODEL)))
        runs.append(second)
        session, output = _grade_beside_the_run(formgrader, cells, second)
        hand, auto = _gradebook_state(url)
        shown = _grade(course, "--feedback-only")
        runs.append(shown)
        shown_output = shown.communicate(timeout=RUN_TIMEOUT)[0]
    finally:
        for run in runs:  # a run still going because the test failed half-way
            if run.poll() is None:
                run.kill()
                run.wait()
        formgrader.stop()
    print(f"\n{backend}: {session.saves} hand grades saved, {sum(session.saves_while_grading.values())} while "
          f"the run graded the same learner {session.saves_while_grading}; {len(session.mismatches)} not kept; "
          f"slowest save {session.slowest * 1000:.0f} ms")
    return {
        "url": url, "backend": backend, "course": course,
        "first": (first.returncode, first_output), "second": (second.returncode, output),
        "shown": (shown.returncode, shown_output), "session": session, "cells": cells, "hand": hand, "auto": auto,
        "csv": list(csv.DictReader((course / "grading" / "grades.csv").open(encoding="utf-8"))),
        "feedback": course / "grading" / "feedback", "log": (tmp / "formgrader.log").read_text(encoding="utf-8"),
    }


def test_both_runs_grade_the_whole_class(graded_by_hand_while_autograding):
    """The first run, the run beside the teaching assistant and the --feedback-only run each exit 0."""
    run = graded_by_hand_while_autograding
    for name in ("first", "second", "shown"):
        status, output = run[name]
        assert status == 0, (name, output[-3000:])


def test_the_teaching_assistant_saved_while_the_run_wrote_the_same_rows(graded_by_hand_while_autograding):
    """The run graded every learner, and the teaching assistant saved scores for a learner while the run
    was grading and writing that learner's submission (the two ran at the same time, on the same rows)."""
    session = graded_by_hand_while_autograding["session"]
    output = graded_by_hand_while_autograding["second"][1]
    assert RunOutput.HEAD.findall(output) == list(STUDENTS), output
    assert sum(session.saves_while_grading.values()) > 0


def test_every_hand_grade_saved_is_kept(graded_by_hand_while_autograding):
    """Each cell held the score and comment saved there last, every time the teaching assistant came back
    to it and after the run (through the Formgrader's API); every save was answered with what was saved."""
    session = graded_by_hand_while_autograding["session"]
    assert session.mismatches == []


def test_the_gradebook_holds_the_last_saves_and_every_autograde_row(graded_by_hand_while_autograding):
    """The gradebook holds, for each written answer, the last score and comment saved, graded; and every
    learner's check cell has the model code's three auto points (the stub had none)."""
    run = graded_by_hand_while_autograding
    expected = {(c.student, c.name): (c.score, False, c.comment) for c in run["cells"]}
    assert run["hand"] == expected
    assert run["auto"] == {student: AUTO_POINTS for student in STUDENTS}


def test_grades_csv_and_the_feedback_show_the_last_saves(graded_by_hand_while_autograding):
    """grades.csv (of --feedback-only) gives each learner 3 auto points plus her last two scores, status graded;
    her feedback page shows her last comments."""
    run = graded_by_hand_while_autograding
    rows = {r["student_id"]: r for r in run["csv"] if r["assignment"] == ASSIGNMENT}
    for student in STUDENTS:
        mine = [c for c in run["cells"] if c.student == student]
        manual = sum(c.score for c in mine)
        row = rows[student]
        assert (row["status"], float(row["auto_score"]), float(row["manual_score"]), float(row["score"])) == (
            "graded", AUTO_POINTS, manual, AUTO_POINTS + manual)
        page = (run["feedback"] / student / ASSIGNMENT / "remaining.html").read_text(encoding="utf-8")
        assert all(c.comment in page for c in mine)


def test_no_user_sees_a_locked_database_or_a_traceback(graded_by_hand_while_autograding):
    """Neither the run's output nor the Formgrader's log holds "database is locked" or a traceback."""
    run = graded_by_hand_while_autograding
    for text in (run["second"][1], run["shown"][1], run["log"]):
        assert "database is locked" not in text and "Traceback" not in text, text[-3000:]


class _Page:
    """Stands in for the web request of nbgrader's handler: the JSON body, the gradebook its server opened."""

    def __init__(self, gradebook, body):
        self.gradebook, self.body = gradebook, body

    def get_json_body(self):
        return self.body

    def write(self, text):
        pass


def test_a_save_during_the_locked_write_waits_and_lands_after_it(graded_by_hand_while_autograding):
    """A save made while a run holds ada's submission (snapshot taken, rows not yet written) does not land
    until the run commits, and then it stands: its score and comment, graded. nbgrader's own handler body
    saves, in a thread of its own, on a connection of its own; the run's side is write_submission's steps."""
    from nbgrader.server_extensions.formgrader.apihandlers import CommentHandler, GradeHandler

    from ctx_course.grading.hand_grades import HandGrades
    from ctx_course.grading.submission_lock import locked_submission

    url = graded_by_hand_while_autograding["url"]
    cell = next(c for c in graded_by_hand_while_autograding["cells"] if c.student == "ada")
    landed = threading.Event()

    def save() -> None:
        with Gradebook(url, "context-engineering") as formgrader:
            inspect.unwrap(GradeHandler.put)(_Page(formgrader, {"manual_score": 0.25, "extra_credit": None}),
                                             cell.grade_id)
            inspect.unwrap(CommentHandler.put)(_Page(formgrader, {"manual_comment": "锁后保存。"}), cell.comment_id)
        landed.set()

    saver = threading.Thread(target=save)
    with Gradebook(url, "context-engineering") as gb:
        hand = HandGrades(gb, "ada", ASSIGNMENT, Path("/nonexistent"), Path("/nonexistent"))
        with locked_submission(gb, "ada", ASSIGNMENT):
            hand.before()
            saver.start()
            landed_while_held = landed.wait(timeout=2)  # well within SQLite's 5 s busy wait
            grade = gb.find_grade(cell.name, NOTEBOOK, ASSIGNMENT, "ada")
            grade.needs_manual_grade = True  # as the rows do, before the put-back
            hand.after(None)
    saver.join(timeout=60)
    assert not landed_while_held and landed.is_set()
    hand_now, _ = _gradebook_state(url)
    assert hand_now[("ada", cell.name)] == (0.25, False, "锁后保存。")


def test_a_run_that_finds_the_sqlite_gradebook_locked_waits_and_writes(graded_by_hand_while_autograding):
    """Another writer holds the SQLite gradebook's write lock for 7 s (longer than SQLite's 5 s wait) while a
    forced run writes the class: the run waits, tries again and grades everyone, and never says "locked"."""
    run = graded_by_hand_while_autograding
    if run["backend"] != "sqlite":
        pytest.skip("a PostgreSQL gradebook has no lock of the whole database")
    rerun = _grade(run["course"], "--force")
    try:
        output = RunOutput(rerun)
        output.start()
        while rerun.poll() is None and RunOutput.HEAD.findall(output.text)[:2] != list(STUDENTS[:2]):
            time.sleep(0.05)
        other = sqlite3.connect(run["url"].removeprefix("sqlite:///"), isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            time.sleep(7)
            other.execute("COMMIT")
        finally:
            other.close()
        rerun.wait(timeout=RUN_TIMEOUT)
    finally:
        if rerun.poll() is None:
            rerun.kill()
            rerun.wait()
    output.join(timeout=60)
    assert rerun.returncode == 0, output.text[-3000:]
    assert RunOutput.HEAD.findall(output.text) == list(STUDENTS) and "NOT GRADED" not in output.text
    assert "locked" not in output.text and "Traceback" not in output.text
    assert _gradebook_state(run["url"])[1] == {student: AUTO_POINTS for student in STUDENTS}
