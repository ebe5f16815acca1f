"""The working folder's disk fills up in the middle of a grading run (``ctx_course/grading/disk_space.py``).

The working folder (``--work``), and with it the SQLite gradebook, is a small tmpfs that the test
mounts, so only root can run it. The first run grades a_model and b_mistake with room to spare.
Four more learners hand in; in the second run, as soon as the manifest records the first of them
(c_model), a file fills the disk to the last byte. The run must stop with one line naming the
folder, no traceback, leaving what was graded before as it was; a third run on the still-full disk
stops the same way; the fourth, with the filler gone, grades the rest. The four runs are made with
one job (in the grading process), then again on a fresh disk with two Dask workers.

Hand-worked scores (check_remaining is worth 3 points): the model answer passes, 3/3; the
mistake leaves out the cache fields, remaining(1,000,000, 800,000, 50,000, 20,000, 64,000) gives
916,000 instead of 66,000, and fails: 0/3.
"""
from __future__ import annotations

import csv
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from ctx_course.grading.disk_space import NBGRADER_LOG, DiskFull, is_disk_full, quiet_full_disk_log, stops_on_full_disk
from ctx_course.grading.reconnect import is_lost_connection, reconnecting
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO

pytestmark = pytest.mark.heavy

ASSIGNMENT = "02-remaining"
MISTAKE = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - input - max_tokens
    return left, left < window / 10
'''
FIRST = {"a_model": MODEL, "b_mistake": MISTAKE}
LATER = {"c_model": MODEL, "d_mistake": MISTAKE, "e_model": MODEL, "f_model": MODEL}
SCORES = {"a_model": "3", "b_mistake": "0", "c_model": "3", "d_mistake": "0", "e_model": "3", "f_model": "3"}
DISK = "64m"  # the tmpfs: room for the class, the gradebook and the feedback pages
FILL_WHEN = "c_model/" + ASSIGNMENT  # the manifest entry after which the disk fills
MANIFEST = "manifest.json"  # what the grader has written whole, by submission


@pytest.fixture(scope="module", params=["1", "2"], ids=["one job", "two Dask workers"])
def jobs(request) -> str:
    """The runs grade in this process, then again on a local Dask cluster of two workers."""
    return request.param


@pytest.fixture(scope="module")
def small_disk(tmp_path_factory, jobs):
    """A tmpfs of DISK mounted for the module (unmounted afterwards); skips, saying why, where it cannot be."""
    if sandbox_problem() is not None:
        pytest.skip(f"the runs grade in the sandbox: {sandbox_problem()}")
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem for the working folder needs root (mount -t tmpfs)")
    folder = tmp_path_factory.mktemp("disk") / "work"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK},mode=0755", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.fixture(scope="module")
def runs(small_disk, tmp_path_factory, make_class, jobs):
    """The four runs; returns each one's status, output and what the working folder held after it."""
    work, tmp = small_disk, tmp_path_factory.mktemp("full-disk")
    scratch = Path(tempfile.mkdtemp(prefix="t"))  # the runs' temporary folder; short: kernels' IPC sockets live in it
    try:
        yield _runs(work, tmp, scratch, make_class, jobs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _runs(work: Path, tmp: Path, scratch: Path, make_class, jobs: str) -> dict:
    """The four runs of the module docstring, in order, into ``work`` with ``scratch`` as their temporary folder."""
    incoming = make_class(tmp / "first", FIRST)
    seen = {"first": _grade(work, incoming, jobs, scratch)}
    seen["first"]["kept"] = _kept(work)
    incoming = make_class(tmp / "all", {**FIRST, **LATER})

    filler = work / "filler"
    watcher = threading.Thread(target=_fill_when_recorded, args=(work, filler), daemon=True)
    watcher.start()
    seen["filled"] = _grade(work, incoming, jobs, scratch)
    watcher.join(timeout=60)
    seen["filled"]["kept"] = _kept(work)
    seen["filled"]["filler"] = filler.is_file()
    seen["still full"] = _grade(work, incoming, jobs, scratch)
    seen["still full"]["kept"] = _kept(work)
    filler.unlink(missing_ok=True)
    seen["room again"] = _grade(work, incoming, jobs, scratch)
    print(f"\nfull disk, --jobs {jobs}: " + " | ".join(f"{run}: status {seen[run]['status']}, "
                                                       f"{seen[run]['err'].strip()[-300:] or 'no error'}"
                                                       for run in ("filled", "still full", "room again")))
    return seen


def test_first_run_grades_with_room(runs):
    """Control: with room on the disk the first run grades both learners (status 0) and writes grades.csv."""
    first = runs["first"]
    assert first["status"] == 0, first["err"][-2000:]
    assert set(first["kept"]["grades"]) == {"a_model", "b_mistake"}


@pytest.mark.parametrize("run", ["filled", "still full"])
def test_full_disk_stops_the_run_with_one_line_naming_the_folder(runs, small_disk, run):
    """A run that meets the full disk (mid-run, then again from the start) stops with status 1 and one line on
    stderr, which names the working folder and says the disk is full; no traceback anywhere."""
    seen = runs[run]
    assert runs["filled"]["filler"], "the disk was never filled"
    lines = [line for line in seen["err"].splitlines() if line.strip()]
    assert seen["status"] == 1, seen["out"][-2000:] + seen["err"][-2000:]
    # The run's own line is the only one from Python; a Dask worker ended in the middle of its kernel may leave one
    # line of libzmq's teardown (C, written to the inherited stderr), which is not the run's to print or drop.
    ours = [line for line in lines if not re.fullmatch(r".* \(src/\w+\.cpp:\d+\)", line)]
    assert len(ours) == 1 and len(lines) - len(ours) <= 1, seen["err"][-2000:]
    assert lines[-1].startswith(f"error: the disk of {small_disk} is full"), lines[-1]
    assert "Traceback" not in seen["out"] + seen["err"]


def test_full_disk_stops_before_the_rest(runs):
    """The run that met the full disk had graded c_model (the disk filled once the manifest recorded it) and then
    stopped at once: no submission after it is reported as not graded one after the other, and no summary is
    printed as if the run had ended."""
    filled = runs["filled"]
    assert FILL_WHEN in filled["kept"]["manifest"]
    assert "c_model  02-remaining     … 3/3 autograded" in filled["out"], filled["out"][-2000:]
    assert "NOT GRADED" not in filled["out"], filled["out"][-2000:]
    assert "Graded " not in filled["out"] and "Grades:" not in filled["out"], filled["out"][-2000:]


@pytest.mark.parametrize("run", ["filled", "still full"])
def test_what_was_graded_before_is_kept(runs, run):
    """grades.csv and the feedback pages of the first run are left byte for byte as they were by a run that met
    the full disk, and the manifest still records everything graded before it."""
    first, later = runs["first"]["kept"], runs[run]["kept"]
    assert later["grades_bytes"] == first["grades_bytes"]
    assert later["feedback"] == first["feedback"]
    assert set(first["manifest"]) <= set(later["manifest"])


def test_temporary_folder_is_left_empty(runs, jobs):
    """After the next run with room, nothing any run left is in the temporary folder (a run removes what stopped
    ones left); with one job, the run stopped by the full disk already removed its own scratch folders."""
    assert runs["room again"]["left"] == []
    if jobs == "1":  # on Dask, the workers closed in the middle of a task may leave theirs to the next run
        assert runs["filled"]["left"] == []


def test_next_run_with_room_grades_the_rest(runs):
    """With the filler removed, the next run exits 0, reads back what was graded (a and b, and what the filled run
    recorded: c, and with two workers perhaps d, graded while the disk was being filled) and grades the rest:
    grades.csv has the hand-worked score of all six."""
    last, recorded = runs["room again"], runs["still full"]["kept"]["manifest"]
    assert last["status"] == 0, last["out"][-2000:] + last["err"][-2000:]
    assert FILL_WHEN in recorded and len(recorded) < len(SCORES), sorted(recorded)
    assert f"Skipped {len(recorded)} unchanged since the last run" in last["out"], last["out"][-2000:]
    rows = _rows(last["work"] / "grades.csv")
    assert {student: row["auto_score"] for student, row in rows.items()} == SCORES
    assert all(row["max_auto_score"] == "3" for row in rows.values())


def test_gradebook_keeps_the_rows_written_before_the_disk_filled(runs):
    """The gradebook written on the full disk is whole: after the last run every submission is in it once, with
    its score (the rows of a, b and c were written before the disk filled, and kept)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{runs['room again']['work'] / 'gradebook.db'}", "context-engineering") as gb:
        got = {s.student.id: f"{s.code_score:g}" for s in gb.assignment_submissions(ASSIGNMENT)}
    assert got == SCORES


# ---- the errors that say so (no mount needed)


def _full_gradebook(path: Path):
    """A SQLite gradebook that cannot grow past three pages, and a step that needs more (SQLite's "disk is full")."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE grade (id INTEGER PRIMARY KEY, comment BLOB)")

    def step():
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA max_page_count = 3")
            connection.exec_driver_sql("INSERT INTO grade (comment) VALUES (?)", (b"x" * 100_000,))

    return engine, step


def test_sqlite_disk_full_is_not_retried_as_a_lost_connection(tmp_path):
    """SQLite's "database or disk is full" (an OperationalError, as a lost connection is) is a full disk, not a
    lost connection: the gradebook step is not retried, the error comes out at once."""
    engine, step = _full_gradebook(tmp_path / "gradebook.db")
    pauses = []
    try:
        with pytest.raises(Exception) as caught:
            reconnecting(step, f"sqlite:///{tmp_path / 'gradebook.db'}", sleep=pauses.append)
    finally:
        engine.dispose()
    assert "database or disk is full" in str(caught.value)
    assert is_disk_full(caught.value) and not is_lost_connection(caught.value)
    assert pauses == []


def test_full_gradebook_stops_in_one_line_naming_its_folder(tmp_path):
    """In a run's block, the full gradebook becomes DiskFull: one line naming the folder (here the working folder,
    which holds the gradebook) and saying that what was graded is kept."""
    engine, step = _full_gradebook(tmp_path / "gradebook.db")
    try:
        with pytest.raises(DiskFull) as caught, stops_on_full_disk(tmp_path, f"sqlite:///{tmp_path / 'gradebook.db'}"):
            step()
    finally:
        engine.dispose()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"the disk of {tmp_path} is full (the gradebook: database or disk is full)"), message
    assert "what was graded before is kept" in message


def test_a_workers_log_of_a_full_gradebook_is_dropped_and_others_kept(tmp_path):
    """On a worker (``quiet_full_disk_log``, installed once however often called), nbgrader's logged traceback of a
    commit that failed for a full disk does not reach the console; the log of any other error still does."""
    import io
    import logging

    engine, step = _full_gradebook(tmp_path / "gradebook.db")
    log, seen = logging.getLogger(NBGRADER_LOG), io.StringIO()
    handler = logging.StreamHandler(seen)
    log.addHandler(handler)
    before = list(log.filters)
    try:
        quiet_full_disk_log()
        quiet_full_disk_log()
        added = [f for f in log.filters if f not in before]
        for error_step in (step, lambda: int("not a number")):
            try:
                error_step()
            except Exception as exc:
                log.error("Rolling back session due to database error %s", exc, exc_info=True)
    finally:
        log.removeHandler(handler)
        for added_filter in [f for f in log.filters if f not in before]:
            log.removeFilter(added_filter)
        engine.dispose()
    assert len(added) == 1
    assert "database or disk is full" not in seen.getvalue()
    assert "invalid literal for int()" in seen.getvalue()


def test_other_errors_pass_through_unchanged(tmp_path):
    """Control: an error that is not about space (a permission refused) leaves the block as it was raised."""
    with pytest.raises(PermissionError), stops_on_full_disk(tmp_path):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "grades.csv"))


# --------------------------------------------------------------------------------------------


def _grade(work: Path, incoming: Path, jobs: str, scratch: Path) -> dict:
    """Run ``python -m ctx_course grade`` into ``work`` with ``jobs`` jobs and ``scratch`` as its temporary folder;
    return its status, its output and what that folder held afterwards."""
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(work),
               "--submissions", str(incoming), "--jobs", jobs]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TMPDIR": str(scratch)})
    left = sorted(p.name for p in scratch.iterdir())
    return {"status": done.returncode, "out": done.stdout, "err": done.stderr, "work": work, "left": left}


def _fill_when_recorded(work: Path, filler: Path, patience: float = 300) -> None:
    """Wait until the manifest records FILL_WHEN, then fill the disk of ``work`` to the last byte with ``filler``."""
    end = time.monotonic() + patience
    while time.monotonic() < end:
        try:
            if FILL_WHEN in json.loads((work / "manifest.json").read_text(encoding="utf-8")):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    else:
        return
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):  # until not one byte more fits
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)


def _kept(work: Path) -> dict:
    """What the working folder holds that a run must not lose: grades.csv, the feedback pages, the manifest."""
    feedback = work / "feedback"
    pages = {str(p.relative_to(feedback)): p.read_bytes() for p in sorted(feedback.rglob("*.html"))} \
        if feedback.is_dir() else {}
    try:
        manifest = json.loads((work / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    grades = work / "grades.csv"
    return {"grades_bytes": grades.read_bytes() if grades.is_file() else None,
            "grades": _rows(grades) if grades.is_file() else {}, "feedback": pages, "manifest": manifest}



def _rows(path: Path) -> dict[str, dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}
