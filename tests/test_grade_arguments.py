"""``grade`` checks every argument and its value before it looks for bubblewrap, the gradebook or a cluster.

Each test runs the command line in this process with a PATH on which there is no ``bwrap`` (only the
virtual environment's programs), as on a machine without bubblewrap: a bad argument is still the one
line that names it, with exit status 2, and no gradebook is made.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ctx_course.cli import main

from conftest import REPO


@pytest.fixture
def no_bubblewrap(monkeypatch):
    """PATH holds only the virtual environment's programs: ``bwrap`` cannot be found."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    assert shutil.which("bwrap") is None


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _class(tmp_path: Path) -> Path:
    """A folder of one submission (its notebook need not be valid: nothing is graded)."""
    _write(tmp_path / "in" / "ada" / "02-remaining" / "remaining.ipynb", "{}")
    return tmp_path / "in"


# (extra arguments, what the line must hold: the option and the value it echoes)
BAD = {
    "zero jobs": (["--jobs", "0"], ["--jobs", "(got 0)"]),
    "negative jobs": (["--jobs", "-3"], ["--jobs", "(got -3)"]),
    "zero timeout": (["--timeout", "0"], ["--timeout", "(got 0)"]),
    "memory in words": (["--memory-limit", "lots"], ["--memory-limit", "'lots'"]),
    "memory too small": (["--memory-limit", "1M"], ["--memory-limit", "at least 64M", "'1M'"]),
    "zero cpu": (["--cpu-limit", "0"], ["--cpu-limit", "'0'"]),
    "fractional cpu": (["--cpu-limit", "1.5"], ["--cpu-limit", "'1.5'"]),
    "cluster without port": (["--cluster", "localhost"], ["--cluster", "'localhost'"]),
    "cluster of another scheme": (["--cluster", "http://127.0.0.1:8786"], ["--cluster", "'http://127.0.0.1:8786'"]),
    "missing deadlines": (["--deadlines", "{tmp}/nowhere.toml"], ["--deadlines", "nowhere.toml"]),
    "missing roster": (["--roster", "{tmp}/nobody.csv"], ["--roster", "nobody.csv"]),
}


@pytest.mark.parametrize(("extra", "named"), BAD.values(), ids=BAD.keys())
def test_a_bad_value_is_one_line_naming_it_without_bubblewrap(tmp_path, capsys, no_bubblewrap, extra, named):
    """Exit 2 and one `error:` line that names the option and echoes its value; nothing of bubblewrap, no gradebook."""
    argv = ["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(_class(tmp_path)),
            *(word.format(tmp=tmp_path) for word in extra)]
    err = _refusal(capsys, argv)
    assert all(part in err for part in named), err
    assert not (tmp_path / "w" / "gradebook.db").exists()


def _error(capsys, argv: list[str]) -> str:
    """Run ``argv``; assert exit status 2 and one `error:` line on stderr; return the line."""
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    return err


def _refusal(capsys, argv: list[str]) -> str:
    """``_error``, and the line says nothing of bubblewrap."""
    err = _error(capsys, argv)
    assert "bubblewrap" not in err
    return err


def test_a_student_folder_named_like_no_id_is_refused_before_bubblewrap(tmp_path, capsys, no_bubblewrap):
    """A submitted folder kim[2]: the line names it; nothing was copied into the working folder."""
    _write(tmp_path / "in" / "kim[2]" / "02-remaining" / "remaining.ipynb", "{}")
    err = _refusal(capsys, ["grade", "--root", str(REPO), "--work", str(tmp_path / "w"),
                            "--submissions", str(tmp_path / "in")])
    assert "'kim[2]'" in err
    assert not (tmp_path / "w" / "submitted").exists()


def test_folders_that_are_not_what_they_should_be_are_named(tmp_path, capsys, no_bubblewrap):
    """--submissions nowhere, --work a file, --root without nbgrader_config.py, no submitted/ at all: one line each."""
    folder = str(_class(tmp_path))
    a_file = _write(tmp_path / "a-file", "x")
    cases = [
        (["--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "none")],
         "--submissions"),
        (["--root", str(REPO), "--work", str(a_file), "--submissions", folder],
         f"--work must be a folder (got {str(a_file)!r})"),
        (["--root", str(tmp_path), "--submissions", folder], "nbgrader_config.py"),
        (["--root", str(REPO), "--work", str(tmp_path / "empty")], "collect first"),
        (["--root", str(REPO), "--example", "--roster", "x.csv", "--work", str(tmp_path / "w")], "--example"),
    ]
    for argv, named in cases:
        assert named in _refusal(capsys, ["grade", *argv]), argv


def test_a_bad_deadlines_file_is_named_before_bubblewrap(tmp_path, capsys, no_bubblewrap):
    """A due date without a time zone: the line names the file and the entry."""
    deadlines = _write(tmp_path / "deadlines.toml", '[due]\n"02-remaining" = 2026-03-02T23:59:00\n')
    err = _refusal(capsys, ["grade", "--root", str(REPO), "--work", str(tmp_path / "w"),
                            "--submissions", str(_class(tmp_path)), "--deadlines", str(deadlines)])
    assert "deadlines.toml" in err and "02-remaining" in err


def test_good_arguments_then_meet_the_missing_bubblewrap(tmp_path, capsys, no_bubblewrap):
    """The same command with good values gets as far as the sandbox: one line saying bubblewrap is not installed."""
    err = _error(capsys, ["grade", "--root", str(REPO), "--work", str(tmp_path / "w"),
                          "--submissions", str(_class(tmp_path)), "--jobs", "1", "--timeout", "30"])
    assert err.startswith("error: cannot sandbox student code: bubblewrap (bwrap) is not installed"), err
    assert not (tmp_path / "w" / "gradebook.db").exists()

