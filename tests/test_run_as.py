"""``grade`` started by root says so in one line on stderr, names the command that runs it as the course's
account, and goes on; started by anyone else, or acknowledged, it says nothing."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctx_course.cli import main
from ctx_course.grading.run_as import ACKNOWLEDGED, course_owner, root_warning

from conftest import REPO

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the line is printed only when root runs grade")
NOBODY = 65534  # Debian's nobody and nogroup


def test_no_line_for_an_unprivileged_account():
    """uid 1001 grading a course it owns: no line."""
    assert root_warning(1001, "grader", "/srv/course") is None


def test_root_is_told_to_run_as_the_course_owner():
    """Root in a course owned by grader: one line, the risk and `sudo -u grader -H <python> -m ctx_course grade`."""
    line = root_warning(0, "grader", "/srv/course", "/opt/course/bin/python")
    assert line is not None and "\n" not in line
    assert line.startswith("warning: grading as root: ")
    assert "sudo -u grader -H /opt/course/bin/python -m ctx_course grade" in line
    assert 'docs/sandbox.md, "Who grading runs as"' in line


def test_root_owning_the_course_is_told_to_give_it_to_an_account():
    """Root in a course owned by root: the line gives the account to make and the chown of that folder."""
    line = root_warning(0, None, "/srv/course")
    assert "useradd -m grader && chown -R grader: /srv/course" in line
    assert "sudo -u grader -H python -m ctx_course grade" in line


@pytest.mark.parametrize(("value", "silent"), [("1", True), ("yes", True), ("", False), ("0", False), (" ", False)])
def test_only_a_set_acknowledgement_silences_the_line(value, silent):
    """CTX_GRADING_AS_ROOT=1 (or any word but 0) leaves the line out; empty or 0 does not."""
    assert (root_warning(0, "grader", "/srv/course", acknowledged=value) is None) == silent


@as_root
def test_the_course_owner_is_read_from_the_folder(tmp_path):
    """A folder of nobody's is nobody's course; a folder of root's has no course account."""
    course = tmp_path / "course"
    course.mkdir()
    assert course_owner(course) is None
    os.chown(course, NOBODY, NOBODY)
    assert course_owner(course) == "nobody"


@as_root
def test_root_gets_the_line_after_the_arguments_and_before_bubblewrap(tmp_path, capsys, monkeypatch):
    """As root, without bubblewrap: the warning first, then bubblewrap's line (exit 2, for bubblewrap alone);
    a bad argument stops the command before the warning (its one line only)."""
    monkeypatch.delenv(ACKNOWLEDGED)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    (tmp_path / "in").mkdir()
    argv = ["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in")]
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == root_warning(0, course_owner(REPO), str(REPO), sys.executable)
    assert lines[1].startswith("error: cannot sandbox student code: bubblewrap")
    assert main([*argv, "--jobs", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: --jobs must be a positive whole number (got 0)"]


@as_root
@pytest.mark.heavy
def test_the_line_does_not_stop_the_run(tmp_path, capsys, monkeypatch):
    """As root, an empty class is graded as ever (exit 0, "No submissions found."): the line only warns."""
    from ctx_course.sandbox.policy import sandbox_problem

    if sandbox_problem() is not None:
        pytest.skip(sandbox_problem())
    monkeypatch.delenv(ACKNOWLEDGED)
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in")])
    out, err = capsys.readouterr()
    assert status == 0 and "No submissions found." in out
    assert err.splitlines()[0].startswith("warning: grading as root: ")
