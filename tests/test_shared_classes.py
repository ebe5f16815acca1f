"""A class shared by the session is graded once, by the first process that asks, and read by every other."""
from __future__ import annotations

import multiprocessing
from pathlib import Path

from shared_classes import RECORD


class _Factory:
    """What ``graded_once`` reads of pytest's ``tmp_path_factory``: the session's temporary folder."""

    def __init__(self, base: Path):
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def _build(log: Path):
    def build(folder: Path) -> Path:
        with log.open("a", encoding="utf-8") as handle:  # one line per build, whichever process made it
            handle.write("built\n")
        folder.mkdir(parents=True)
        return folder
    return build


def _ask(graded_once, base: Path, log: Path, answers) -> None:
    shared = graded_once(_Factory(base), "empty", _build(log), "--jobs", "1")
    answers.put((shared.status, shared.output, str(shared.work)))


def test_two_processes_asking_at_once_grade_the_class_once(tmp_path, monkeypatch, grade_once):
    """Two processes ask for the same class at the same moment: one build and one run, the same record for both."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    log = tmp_path / "builds.log"
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    askers = [context.Process(target=_ask, args=(grade_once, tmp_path, log, answers)) for _ in range(2)]
    for asker in askers:
        asker.start()
    got = [answers.get(timeout=300) for _ in askers]
    for asker in askers:
        asker.join(timeout=60)
    assert [asker.exitcode for asker in askers] == [0, 0]
    assert log.read_text(encoding="utf-8") == "built\n"
    assert got[0] == got[1]
    status, output, work = got[0]
    assert status == 0 and "No submissions found." in output
    assert Path(work) == tmp_path / "shared-class-empty" / "work"


def test_a_class_left_half_graded_is_graded_again(tmp_path, monkeypatch, grade_once):
    """A process that died while grading left the folders but no record: the next caller starts afresh."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    folder = tmp_path / "shared-class-empty"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "half-written").write_text("x", encoding="utf-8")
    log = tmp_path / "builds.log"
    shared = grade_once(_Factory(tmp_path), "empty", _build(log), "--jobs", "1")
    assert log.read_text(encoding="utf-8") == "built\n"
    assert not (folder / "work" / "half-written").exists() and (folder / RECORD).is_file()
    assert shared.status == 0
    grade_once(_Factory(tmp_path), "empty", _build(log), "--jobs", "1")
    assert log.read_text(encoding="utf-8") == "built\n"  # the record stands: no second build


def test_under_xdist_the_class_lives_beside_the_workers_folders(tmp_path, monkeypatch):
    """With pytest-xdist each worker's temporary folder is its own: the shared class goes in the folder above."""
    from shared_classes import session_folder

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert session_folder(_Factory(tmp_path / "popen-gw1")) == tmp_path
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert session_folder(_Factory(tmp_path)) == tmp_path
