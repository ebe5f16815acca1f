"""`python -m ctx_course grade` as a whole run: stopping on a signal, reruns, and the sandbox switch.

The classes are small notebook-02 submissions built here from a fresh release: the model
answer, the model answer followed by a long sleep, or the model answer followed by an attempt
to kill the grader. Runs that receive a signal are started as a separate process.
"""
from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from ctx_course.cli import main
from ctx_course.grading.grader import Grader
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]
needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")

ASSIGNMENT = "02-remaining"


SLEEPER = MODEL + '''
import time

time.sleep(45)
'''

# remaining itself sleeps: the kernel's check cell and the grader's evaluation (a call of remaining
# in the learner's answer process) both wait on it.
CALL_SLEEPER = '''
import time


def remaining(window, read, write, input, max_tokens):
    time.sleep(45)
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''

KILLER = MODEL + '''
import os
import signal
from pathlib import Path

targets = {os.getppid()}
for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
    try:
        if b"ctx_course" in cmdline.read_bytes():
            targets.add(int(cmdline.parent.name))
    except OSError:
        pass
for pid in targets:
    try:
        os.kill(pid, signal.SIGTERM)
        print("sent SIGTERM to", pid)
    except OSError:
        pass
'''


def _rows(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _run_cli(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


class Reader:
    """Collect a child process's stdout as it comes (the progress head has no newline until its outcome)."""

    def __init__(self, process):
        self.text = ""
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process):
        while chunk := process.stdout.read1(1024):
            self.text += chunk.decode("utf-8", "replace")

    def wait_for(self, text: str, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if text in self.text:
                return True
            time.sleep(0.1)
        return False


def _start_grader(work: Path, incoming: Path, *extra: str, tmpdir: Path | None = None,
                  ) -> tuple[subprocess.Popen, Reader]:
    """Start ``python -m ctx_course grade`` (with ``tmpdir`` as its TMPDIR when given); return it and its reader."""
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(work),
               "--submissions", str(incoming), "--timeout", "50", *extra]
    env = {**os.environ, "TMPDIR": str(tmpdir)} if tmpdir is not None else None
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return process, Reader(process)


# ---- SIGTERM from outside


@pytest.fixture(scope="module")
def terminated(tmp_path_factory, make_class):
    """a_ok, b_sleeper and c_sleeper (each sleeps 45 s in its answer cell), d_after, on two Dask
    workers: SIGTERM sent to the grader one second after b_sleeper's line appeared (a_ok was
    graded, both workers busy with the sleepers, d_after waiting)."""
    tmp = tmp_path_factory.mktemp("terminated")
    incoming = make_class(tmp / "incoming", {"a_ok": MODEL, "b_sleeper": SLEEPER, "c_sleeper": SLEEPER,
                                             "d_after": MODEL})
    tmpdir = Path(tempfile.mkdtemp(prefix="t"))  # the run's temporary folder: empty, and short (IPC sockets)
    process, reader = _start_grader(tmp / "work", incoming, "--jobs", "2", tmpdir=tmpdir)
    started = reader.wait_for("[2/4] b_sleeper", 120)
    time.sleep(3)  # c_sleeper has started on the worker a_ok left
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    status = process.wait(timeout=120)
    seconds = time.monotonic() - signalled
    reader.thread.join(timeout=5)
    return {"started": started, "status": status, "out": reader.text, "work": tmp / "work", "seconds": seconds,
            "tmpdir": tmpdir}


@needs_sandbox
def test_sigterm_ends_the_run_with_status_143_and_says_so(terminated):
    """The run stops with status 143 (128 + 15) and its summary says it was stopped by SIGTERM."""
    assert terminated["started"]
    assert terminated["status"] == 143
    assert "STOPPED by SIGTERM" in terminated["out"]


@needs_sandbox
def test_sigterm_still_writes_grades_and_feedback_of_what_was_graded(terminated):
    """a_ok (graded before the signal) has its row (3 of 3) and its feedback; b_sleeper and
    c_sleeper (running) are `not graded`, abandoned; d_after's line says it was never started."""
    rows = _rows(terminated["work"] / "grades.csv")
    assert (rows["a_ok"]["status"], rows["a_ok"]["auto_score"]) == ("graded", "3")
    assert rows["b_sleeper"]["status"] == rows["c_sleeper"]["status"] == "not graded"
    assert (terminated["work"] / "feedback" / "a_ok" / ASSIGNMENT / "remaining.html").is_file()
    assert "b_sleeper 02-remaining     … NOT GRADED: abandoned: the run was stopped by SIGTERM" in terminated["out"]
    assert "c_sleeper 02-remaining     … NOT GRADED: abandoned: the run was stopped by SIGTERM" in terminated["out"]
    assert ("d_after  02-remaining     … NOT GRADED: the run was stopped by SIGTERM before it started"
            in terminated["out"])


@needs_sandbox
def test_sigterm_stops_the_sleeping_notebooks_at_once(terminated):
    """The sleepers would run 45 s more: the run ends well before (their kernels were killed on the workers)."""
    assert terminated["seconds"] < 40


@needs_sandbox
def test_sigterm_leaves_nothing_in_the_temporary_folder(terminated):
    """Once the stopped run has ended, its TMPDIR holds nothing: no scratch folder of a worker or a kernel,
    no dask-scratch-space."""
    assert terminated["status"] == 143
    left = sorted(p.name for p in terminated["tmpdir"].iterdir())
    shutil.rmtree(terminated["tmpdir"], ignore_errors=True)
    assert left == []


class Descendants:
    """Every process started under ``pid`` while the run goes on (polled from /proc), with its start time."""

    def __init__(self, pid: int):
        self.pid, self.seen, self.done = pid, set(), threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    @staticmethod
    def _stat(pid: int) -> tuple[int, int] | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return int(fields[1]), int(fields[19])  # parent pid, start time

    def _poll(self):
        while not self.done.is_set():
            family = {self.pid}
            for entry in Path("/proc").glob("[0-9]*"):
                stat = self._stat(int(entry.name))
                if stat is not None and stat[0] in family | {p for p, _ in self.seen}:
                    family.add(int(entry.name))
                    self.seen.add((int(entry.name), stat[1]))
            time.sleep(0.1)

    def alive(self) -> list[int]:
        """Return those of them still running (the same process: same start time)."""
        self.done.set()
        self.thread.join(timeout=5)
        return sorted(pid for pid, start in self.seen if (stat := self._stat(pid)) is not None and stat[1] == start)


@pytest.fixture(scope="module", params=["SIGTERM", "SIGINT"])
def stopped_in_a_call(request, tmp_path_factory, make_class):
    """e_sleeper's remaining sleeps 45 s in its kernel and in the grader's evaluation; one job; the signal is
    sent 5 s after its line appeared, while both wait."""
    tmp = tmp_path_factory.mktemp("call")
    incoming = make_class(tmp / "incoming", {"e_sleeper": CALL_SLEEPER})
    process, reader = _start_grader(tmp / "work", incoming, "--jobs", "1")
    family = Descendants(process.pid)
    started = reader.wait_for("[1/1] e_sleeper", 120)
    time.sleep(5)
    process.send_signal(getattr(signal, request.param))
    signalled = time.monotonic()
    try:
        status = process.wait(timeout=120)
    except subprocess.TimeoutExpired:  # the signal did not land: end the run, and fail the tests below
        process.kill()
        status = process.wait()
    seconds = time.monotonic() - signalled
    reader.thread.join(timeout=5)
    time.sleep(1)  # a sandbox's processes end as their parent goes
    return {"started": started, "status": status, "seconds": seconds, "out": reader.text, "signal": request.param,
            "left": family.alive(), "seen": len(family.seen)}


@needs_sandbox
def test_a_signal_ends_a_run_waiting_on_a_learners_call_within_10_s(stopped_in_a_call):
    """The run stops within 10 s of the signal although the learner's call would sleep 45 s more, with
    the signal's status (128 + its number) and its line."""
    run = stopped_in_a_call
    assert run["started"], run["out"][-2000:]
    number = getattr(signal, run["signal"])
    assert (run["status"], run["seconds"] < 10) == (128 + number, True), (run["seconds"], run["out"][-2000:])
    assert f"STOPPED by {run['signal']}" in run["out"]


@needs_sandbox
def test_a_stopped_run_leaves_no_process_behind(stopped_in_a_call):
    """No process the run started (kernel, answer process, their sandboxes) is running after it ended."""
    assert stopped_in_a_call["seen"] >= 2 and stopped_in_a_call["left"] == []


# ---- SIGTERM from a student's cell


@needs_sandbox
def test_a_student_cell_cannot_kill_the_grader(tmp_path, make_class):
    """a_killer sends SIGTERM to its parent and to every process whose command line names
    ctx_course: the run goes on, b_after is graded, exit status 0."""
    incoming = make_class(tmp_path / "incoming", {"a_killer": KILLER, "b_after": MODEL})
    process, reader = _start_grader(tmp_path / "work", incoming)
    status = process.wait(timeout=180)
    reader.thread.join(timeout=5)
    assert status == 0, reader.text
    assert "STOPPED" not in reader.text
    rows = _rows(tmp_path / "work" / "grades.csv")
    assert (rows["a_killer"]["auto_score"], rows["b_after"]["auto_score"]) == ("3", "3")


# ---- reruns


@pytest.fixture(scope="module")
def reruns(tmp_path_factory, make_class):
    """Four runs over the same folder: first, again unchanged, again after one notebook changed, --force
    (one job: what is skipped is decided before any worker would start)."""
    tmp = tmp_path_factory.mktemp("reruns")
    incoming = make_class(tmp / "incoming", {"ada": MODEL, "cai": "raise NotImplementedError()"})
    args = ["grade", "--root", str(REPO), "--work", str(tmp / "work"), "--submissions", str(incoming), "--jobs", "1"]
    runs = []
    for step in ("first", "unchanged", "one-changed", "force"):
        if step == "one-changed":
            notebook = incoming / "ada" / ASSIGNMENT / "remaining.ipynb"
            notebook.write_text(notebook.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        status, out, _ = _run_cli(args + (["--force"] if step == "force" else []))
        runs.append({"status": status, "out": out, "csv": (tmp / "work" / "grades.csv").read_bytes()})
    return runs


def test_a_rerun_skips_unchanged_submissions_and_says_how_many(reruns):
    """The second run runs no notebook: both lines say unchanged, the summary says 2 skipped."""
    out = reruns[1]["out"]
    assert out.count("(unchanged since the last run)") == 2
    assert "Skipped 2 unchanged since the last run" in out


def test_a_rerun_regrades_a_changed_submission(reruns):
    """After ada's notebook changed, only ada runs again: 1 skipped."""
    out = reruns[2]["out"]
    assert "Skipped 1 unchanged since the last run" in out
    assert [line for line in out.splitlines() if "(unchanged since the last run)" in line][0].startswith("[2/2] cai")


def test_force_regrades_everything(reruns):
    """--force runs both notebooks again: no line says unchanged, nothing skipped."""
    assert "unchanged" not in reruns[3]["out"]


def test_reruns_give_a_byte_identical_grades_csv(reruns):
    """All four runs (skipping, partly skipping, forced) write exactly the same grades.csv bytes."""
    assert len({run["csv"] for run in reruns}) == 1
    assert all(run["status"] == 0 for run in reruns)


# ---- the sandbox switch


def test_missing_bwrap_stops_grading_with_one_line(tmp_path, make_class, monkeypatch):
    """Without bwrap on PATH: exit status 2, one stderr line naming `apt install bubblewrap`, no grades.csv."""
    incoming = make_class(tmp_path / "incoming", {"ada": MODEL})
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    status, out, err = _run_cli(["grade", "--root", str(REPO), "--work", str(tmp_path / "work"),
                                       "--submissions", str(incoming)])
    assert status == 2
    assert err.count("\n") == 1 and "bubblewrap" in err and "apt install bubblewrap" in err
    assert not (tmp_path / "work" / "grades.csv").exists()


def test_refused_bwrap_stops_grading_with_one_line(tmp_path, make_class, monkeypatch):
    """A bwrap that cannot create namespaces: exit status 2, one stderr line quoting its complaint."""
    incoming = make_class(tmp_path / "incoming", {"ada": MODEL})
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    status, _, err = _run_cli(["grade", "--root", str(REPO), "--work", str(tmp_path / "work"),
                                     "--submissions", str(incoming)])
    assert status == 2
    assert err.count("\n") == 1
    assert "No permissions to creating new namespace" in err and "apt install bubblewrap" in err


def test_no_sandbox_grades_with_a_warning_in_the_summary(tmp_path, make_class):
    """--no-sandbox grades (3 of 3, exit 0) and the summary warns that student code ran with your privileges."""
    incoming = make_class(tmp_path / "incoming", {"ada": MODEL})
    status, out, _ = _run_cli(
        ["grade", "--root", str(REPO), "--work", str(tmp_path / "work"), "--submissions", str(incoming), "--no-sandbox"]
    )
    assert status == 0
    assert "3/3 autograded" in out
    assert "WARNING: --no-sandbox: student code ran with your privileges" in out


@needs_sandbox
def test_a_cell_past_the_cpu_limit_is_stopped_and_reported(tmp_path, make_class):
    """spin loops forever under a 2 s CPU-time limit (cell limit 30 s): its kernel is killed by
    the limit and the submission is reported, naming the limit."""
    incoming = make_class(tmp_path / "incoming", {"spin": "while True:\n    pass"})
    grader = Grader(REPO, work=tmp_path / "work", timeout=30, cpu_limit=2)
    grader.collect(incoming)
    [result] = grader.grade().results
    assert not result.graded
    assert result.reason.startswith("the kernel died while running the notebook (past the 2 s CPU-time limit")
