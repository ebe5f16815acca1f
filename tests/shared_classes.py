"""Classes graded once per test session and shared by every module that reads them.

Covers: ``graded_once``, which grades a class the first time any test process of the session asks
for it and hands every later caller, in any process, the same folder; ``SharedClass``, what a
caller gets (the submissions, the working folder the run wrote, its status and output). Callers
only read it: a test that would write into a graded class (a re-run, a leaderboard) copies its
working folder first (``shutil.copytree``), gradebook and all.

Under pytest-xdist every worker is a process of its own with a temporary folder of its own; the
classes live in the folder above them, which the session's workers share. The first process takes
a lock file (``fcntl.flock``) and grades; the others wait on the lock and then read what it wrote.
A class that could not be graded is recorded with its output, so every caller fails with the same
message instead of grading again.

Leaves out: what a class holds (``make_class`` in conftest.py builds its submissions) and what is
checked about it (the test modules).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO

RECORD = "run.json"  # in the class's folder, written last: its presence means the class is graded


@dataclass(frozen=True)
class SharedClass:
    """A class graded once for the session: read it, never write into it (copy ``work`` first)."""

    name: str
    incoming: Path  # <incoming>/<student>/<assignment>/<notebook>, as handed in
    work: Path  # the run's working folder: gradebook.db, grades.csv, autograded/, feedback/
    status: int
    output: str  # what the run printed (stdout and stderr)


def session_folder(tmp_path_factory) -> Path:
    """The folder every test process of this session shares (the parent of the xdist workers' own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def graded_once(tmp_path_factory, name: str, build: Callable[[Path], Path], *args: str) -> SharedClass:
    """Return the class ``name``, graded by ``python -m ctx_course grade … args`` the first time it is asked for.

    ``build(folder)`` writes the class's submissions into ``folder`` and returns it. The grading run is
    the instructor's command in a process of its own (``--root`` the repository, ``--work`` the class's
    own folder), so whichever test process grades it, the files are the same.
    """
    folder = session_folder(tmp_path_factory) / f"shared-class-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / RECORD).is_file():
                _grade(folder, build, args)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    return SharedClass(name, folder / "incoming", folder / "work", record["status"], record["output"])


def _grade(folder: Path, build: Callable[[Path], Path], args: tuple[str, ...]) -> None:
    for leftover in ("incoming", "work"):  # a process that died while grading left them half-written
        shutil.rmtree(folder / leftover, ignore_errors=True)
    incoming = build(folder / "incoming")
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(folder / "work"),
               "--submissions", str(incoming), *args]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    record = {"status": done.returncode, "output": done.stdout + done.stderr}
    (folder / RECORD).write_text(json.dumps(record), encoding="utf-8")
