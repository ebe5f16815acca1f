"""`make test` checks its system packages first: where bubblewrap is missing it stops with one line."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO

PREFLIGHT = REPO / "scripts" / "preflight.sh"
NOBODY = 65534  # the uid and gid of Debian's `nobody`
DEBIAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # an ordinary user's PATH on a fresh Debian machine


def _path_without(tmp_path: Path, *hidden: str, path: str | None = None) -> str:
    """Return a PATH of one folder linking every command of ``path`` (this PATH) except ``hidden``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for entry in (path or os.environ["PATH"]).split(os.pathsep):
        if not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            target = Path(entry) / name
            if name in hidden or (folder / name).exists() or not os.access(target, os.X_OK):
                continue
            (folder / name).symlink_to(target)
    return str(folder)


def _readable_copy(folder: Path) -> Path:
    """Copy the preflight into ``folder`` as a checkout with its .venv, for a user who cannot read this one.

    The checkout may live in a private home (mode 0700); the copy's ``.venv/bin/python`` only marks
    the environment as made, as in the checkout the test stands for.
    """
    script = folder / "course" / "scripts" / "preflight.sh"
    script.parent.mkdir(parents=True)
    shutil.copy2(PREFLIGHT, script)
    python = folder / "course" / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n", encoding="utf-8")
    python.chmod(0o755)
    for path in (folder / "course", *folder.joinpath("course").rglob("*")):
        if path.is_dir():
            path.chmod(0o755)
    return script


def _run(path: str, as_nobody: bool = False, script: Path = PREFLIGHT) -> subprocess.CompletedProcess:
    command = [str(script)]
    if as_nobody:
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    env = {"PATH": path, "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def test_preflight_passes_where_bubblewrap_works():
    """With bubblewrap installed and allowed (as on this machine), the preflight says nothing."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed here")
    done = _run(os.environ["PATH"])
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run the preflight as the user nobody")
def test_a_user_without_bubblewrap_gets_one_line_naming_it_and_its_install_command():
    """As an ordinary user (nobody) without bwrap: exit 1, one stderr line naming bubblewrap and the command."""
    with tempfile.TemporaryDirectory() as folder:  # pytest's tmp_path is not readable by nobody
        os.chmod(folder, 0o755)
        done = _run(_path_without(Path(folder), "bwrap", path=DEBIAN_PATH), as_nobody=True,
                    script=_readable_copy(Path(folder)))
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: make test needs the system package(s) bubblewrap")
    assert lines[0].endswith("install them with: sudo apt-get install bubblewrap")


@pytest.mark.skipif(os.geteuid() != 0, reason="the install branch is taken only by root")
def test_root_without_apt_get_names_the_package_instead_of_installing(tmp_path):
    """As root but without apt-get on PATH, nothing is installed: the same one line, exit 1."""
    done = _run(_path_without(tmp_path, "bwrap", "apt-get"))
    assert done.returncode == 1
    assert "installing" not in done.stderr
    assert done.stderr.splitlines() == [
        "error: make test needs the system package(s) bubblewrap, not found on this machine; "
        "install them with: sudo apt-get install bubblewrap"
    ]


def test_make_test_runs_the_preflight_before_the_suite():
    """The Makefile's test target depends on preflight, listed before the environment it builds."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "\ntest: preflight $(STAMP)\n" in makefile
    assert "scripts/preflight.sh" in makefile
