"""Bad input to the exchange gets one clear line, and nothing already submitted is lost.

nbgrader's own commands, run as the class's members (real OS users as root, see classroom.py),
with the course's exchange classes (ctx_course/exchange.py) that nbgrader_config.py and
hub/learner/nbgrader_config.py plug in; and ``python -m ctx_course hub-check`` for a hub that
does not answer.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from classroom import COURSE_ID, open_classroom

from conftest import REPO
from labserver import free_port

# Scheduled first like the files that grade (it runs a dozen nbgrader commands, a few seconds each).
pytestmark = pytest.mark.heavy

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"


@pytest.fixture(scope="module")
def room():
    """A class with one learner; 02-remaining released, fetched by ada and submitted once."""
    room = open_classroom(("ada",))
    try:
        room.nbgrader(room["instructor"], "release_assignment", ASSIGNMENT)
        room.nbgrader(room["ada"], "fetch_assignment", ASSIGNMENT)
        room.nbgrader(room["ada"], "submit", ASSIGNMENT, student=True)
        yield room
    finally:
        room.close()


def _inbound(room) -> list[str]:
    return sorted(p.name for p in (room.exchange / COURSE_ID / "inbound").iterdir())


def _said(done, phrase: str) -> list[str]:
    """The lines of a command's output that hold ``phrase``; the command must not have printed a traceback."""
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text[-3000:]
    return [line for line in text.splitlines() if phrase in line]


def test_invalid_notebook_is_refused_and_the_earlier_submission_stays(room):
    """Submitting a notebook that is not valid JSON exits non-zero with one line naming the file and the fix;
    the inbound folder and ada's cache still hold only her earlier submission."""
    ada = room["ada"]
    before = _inbound(room)
    cache = ada.home / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID
    cached = sorted(p.name for p in cache.iterdir())
    broken = room.base / "broken.ipynb"
    text = (REPO / "lessons" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8")
    broken.write_text(text[: len(text) // 2], encoding="utf-8")  # cut in the middle, as a crashed save leaves it
    room.hand_in(ada, broken, ada.home / ASSIGNMENT / NOTEBOOK)
    done = room.nbgrader(ada, "submit", ASSIGNMENT, student=True, check=False)
    lines = _said(done, "is not valid notebook JSON")
    assert done.returncode != 0
    assert len(lines) == 1 and NOTEBOOK in lines[0] and "earlier submission still counts" in lines[0], lines
    assert _inbound(room) == before and len(before) == 1
    assert sorted(p.name for p in cache.iterdir()) == cached


def test_control_valid_notebook_is_submitted(room):
    """Control: the same learner's valid notebook is submitted (the check refuses only broken files)."""
    ada = room["ada"]
    room.hand_in(ada, REPO / "lessons" / ASSIGNMENT / NOTEBOOK, ada.home / ASSIGNMENT / NOTEBOOK)
    before = _inbound(room)
    room.nbgrader(ada, "submit", ASSIGNMENT, student=True)
    assert len(_inbound(room)) == len(before) + 1


def test_unreleased_assignment_names_the_released_ones(room):
    """Fetching an assignment never released exits non-zero with one line naming it and the released ones."""
    done = room.nbgrader(room["ada"], "fetch_assignment", "03-recall", check=False)
    lines = _said(done, "has not been released")
    assert done.returncode != 0
    assert len(lines) == 1 and "'03-recall'" in lines[0] and f"released: {ASSIGNMENT}" in lines[0], lines


def test_missing_exchange_root_is_named_with_its_fix(room):
    """A learner whose exchange root does not exist is told which folder and the command that creates it."""
    missing = room.base / "no-such-exchange"
    done = room.nbgrader(room["ada"], "fetch_assignment", ASSIGNMENT, check=False, exchange=missing)
    lines = _said(done, str(missing))
    assert done.returncode != 0
    assert len(lines) == 1 and "does not exist" in lines[0] and f"install -d -m 0777 {missing}" in lines[0], lines


def test_unwritable_exchange_root_is_named_with_its_fix(room):
    """A learner whose exchange root they cannot write is told so, with its mode and the fix; nothing is submitted."""
    if not room.real_users and os.geteuid() == 0:
        pytest.skip(f"{room.isolation} (root may write anywhere)")
    closed = room.base / "closed-exchange"
    closed.mkdir(mode=0o755)
    closed.chmod(0o755 if room.real_users else 0o555)
    done = room.nbgrader(room["ada"], "submit", ASSIGNMENT, student=True, check=False, exchange=closed)
    lines = _said(done, str(closed))
    assert done.returncode != 0
    assert len(lines) == 1 and "not writable by" in lines[0] and "install -d -m 0777" in lines[0], lines
    assert list(closed.iterdir()) == []


def test_unreachable_hub_is_one_error_line(tmp_path):
    """hub-check against a port nothing listens on exits with 2 and one error: line saying how to fix it."""
    url = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run([sys.executable, "-m", "ctx_course", "hub-check", "--url", url, "--exchange", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: no JupyterHub answers at {url}")
    assert "docs/jupyterhub.md" in done.stderr


def test_hub_check_names_an_unusable_exchange(tmp_path):
    """hub-check's exchange check is the exchange's own: a missing root is one error: line (the hub part aside)."""
    from ctx_course.exchange import root_problem

    missing = tmp_path / "missing"
    assert root_problem(missing).startswith(f"the exchange root {missing} does not exist")
    assert root_problem(tmp_path) is None
    assert root_problem(missing, create=True) is None  # the instructor's release may create it
