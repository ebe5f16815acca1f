"""SIGKILL at five moments of `python -m ctx_course grade --jobs 2`: no process is left, and the next run grades
as a calm run does and removes what the killed one left in the temporary folder.

The class is three notebook-02 submissions whose answer cell, after the model answer, leaves a file
``in-cell`` in its HOME and sleeps a few seconds: a kernel's HOME is in its folder
(``ctx-kernel-<worker pid>-…/home``), so the file says, from outside, that this kernel is running
the cell, and the folder's name says which worker started it. A run's processes are found by its
mark, ``CTX_GRADING_RUN=ctx-run-<coordinator pid>-…`` in ``/proc/<pid>/environ``
(``ctx_course/scratch_folders.py``), bubblewrap's processes and what runs inside them included.

Every run has a temporary folder of its own (TMPDIR, short: the kernels' IPC sockets are under it).
A calm run grades the class once, in a working folder of its own: its grades.csv is the reference.
Each moment is found by watching the run, then SIGKILL goes to one process:

- ``preparing``: the coordinator, once its Dask cluster has a folder and a process of the run is up (the fork
  server, a worker), before any kernel has a folder;
- ``kernels-running``: the coordinator, once a kernel is in the sleeping cell;
- ``worker``: the Dask worker that started a kernel now in the sleeping cell;
- ``kernel``: that kernel itself (the ipykernel process inside bubblewrap);
- ``writing``: the coordinator, as soon as the first result line is printed.

A run whose coordinator was not killed goes on to its end. Then the same command runs again in the
same working folder with the same TMPDIR, where a live process's run folder has been put as well.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from ctx_course.sandbox.policy import PASSED_ENV, sandbox_problem
from ctx_course.scratch_folders import RUN_PREFIX, RUN_VARIABLE, grading_run, owned_folder

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

STUDENTS = ("a_first", "b_second", "c_third")
IN_CELL = MODEL + '''
import time
from pathlib import Path

(Path.home() / "in-cell").touch()
time.sleep(4)
'''
MOMENTS = ("preparing", "kernels-running", "worker", "kernel", "writing")
# Seconds to wait for a moment, for a run to end, and for the processes of a killed run to end.
MOMENT_WAIT, RUN_WAIT, EXIT_WAIT = 180, 400, 30
# The first result line: "[1/3] a_first  02-remaining     … 3/3 autograded  (7.2 s)", newline included.
FIRST_RESULT = re.compile(r"^\[1/3\] .*… .*\n", re.MULTILINE)


# ---- watching a run from /proc


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # gone, or not ours to read
        return b""


def marked(coordinator: int) -> dict[int, bytes]:
    """Return {pid: command line} of every process whose environment carries the mark of the run of ``coordinator``."""
    mark = f"{RUN_VARIABLE}={RUN_PREFIX}{coordinator}-".encode()
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        if any(item.startswith(mark) for item in _read(entry / "environ").split(b"\0")):
            found[int(entry.name)] = _read(entry / "cmdline").replace(b"\0", b" ")
    return found


def in_cell(tmpdir: Path) -> Path | None:
    """Return the folder of a kernel of the run that is in the sleeping cell, or None."""
    return next(iter(sorted(tmpdir.glob(f"{RUN_PREFIX}*/ctx-kernel-*/home/in-cell"))), None)


def kernel_in_cell(tmpdir: Path, coordinator: int) -> int | None:
    """Return the pid of the kernel (ipykernel, inside bubblewrap) of the run now in the sleeping cell, or None."""
    flag = in_cell(tmpdir)
    if flag is None:
        return None
    connection = str(flag.parent.parent / "run" / "kernel.json").encode()
    return next((pid for pid, command in marked(coordinator).items()
                 if b"ipykernel_launcher" in command and connection in command and not command.startswith(b"bwrap")),
                None)


def worker_in_cell(tmpdir: Path, coordinator: int) -> int | None:
    """Return the pid of the Dask worker whose kernel is in the sleeping cell (its folder names it), or None."""
    flag = in_cell(tmpdir)
    if flag is None:
        return None
    pid = int(flag.parent.parent.name[len("ctx-kernel-"):].split("-", 1)[0])
    return pid if pid in marked(coordinator) else None


def entries(tmpdir: Path) -> list[str]:
    """Return what ``tmpdir`` holds, one level into each run folder ("ctx-run-…/pymp-…"), sorted."""
    names = []
    for path in sorted(tmpdir.iterdir()):
        names.append(path.name)
        if path.name.startswith(RUN_PREFIX) and path.is_dir():
            names += [f"{path.name}/{inner.name}" for inner in sorted(path.iterdir())]
    return names


class Run:
    """``python -m ctx_course grade --jobs 2`` started with its own TMPDIR; its stdout collected as it comes."""

    def __init__(self, work: Path, incoming: Path, tmpdir: Path):
        command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(work),
                   "--submissions", str(incoming), "--jobs", "2", "--timeout", "60"]
        self.process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env={**os.environ, "TMPDIR": str(tmpdir)})
        self.text = ""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while chunk := self.process.stdout.read1(1024):
            self.text += chunk.decode("utf-8", "replace")

    def wait(self, seconds: float) -> int:
        try:
            status = self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:  # fails the tests below; leaves nothing running
            self.process.kill()
            status = self.process.wait()
        self.reader.join(timeout=10)
        return status


def target(moment: str, run: Run, tmpdir: Path) -> int | None:
    """Return the pid to kill if the run has reached ``moment`` now, else None."""
    coordinator = run.process.pid
    if moment == "preparing":  # the cluster has a folder and a process of the run is up; no kernel has a folder
        started = list(tmpdir.glob(f"{RUN_PREFIX}{coordinator}-*/ctx-dask-*")) and marked(coordinator)
        return coordinator if started and not list(tmpdir.glob(f"{RUN_PREFIX}*/ctx-kernel-*")) else None
    if moment == "kernels-running":
        return coordinator if in_cell(tmpdir) is not None else None
    if moment == "worker":
        return worker_in_cell(tmpdir, coordinator)
    if moment == "kernel":
        return kernel_in_cell(tmpdir, coordinator)
    return coordinator if FIRST_RESULT.search(run.text) else None  # "writing"


def kill_at(moment: str, run: Run, tmpdir: Path) -> tuple[int | None, int]:
    """Watch the run until ``moment``, SIGKILL its process then; return that pid (None: the moment never came)
    and how many processes carried the run's mark just before."""
    deadline = time.monotonic() + MOMENT_WAIT
    while time.monotonic() < deadline and run.process.poll() is None:
        pid = target(moment, run, tmpdir)
        if pid is not None:
            running = len(marked(run.process.pid))
            os.kill(pid, signal.SIGKILL)
            return pid, running
        time.sleep(0.05)
    return None, 0


def processes_left(coordinator: int) -> tuple[int, float]:
    """Wait up to EXIT_WAIT s for the run's processes to end; return how many are left and the seconds waited."""
    start = time.monotonic()
    while (left := len(marked(coordinator))) and time.monotonic() - start < EXIT_WAIT:
        time.sleep(0.1)
    return left, time.monotonic() - start


# ---- the runs


@pytest.fixture(scope="module")
def incoming(tmp_path_factory, make_class) -> Path:
    return make_class(tmp_path_factory.mktemp("incoming") / "class", {s: IN_CELL for s in STUDENTS})


@pytest.fixture(scope="module")
def calm(tmp_path_factory, incoming):
    """The class graded once without a kill: its status, output and grades.csv."""
    work = tmp_path_factory.mktemp("calm") / "work"
    tmpdir = Path(tempfile.mkdtemp(prefix="k"))
    try:
        run = Run(work, incoming, tmpdir)
        status = run.wait(RUN_WAIT)
        left = entries(tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return {"status": status, "out": run.text, "csv": (work / "grades.csv").read_bytes(), "left": left}


@pytest.fixture(scope="module", params=MOMENTS)
def killed(request, tmp_path_factory, incoming):
    """One moment: the run killed there (and let run to its end when its coordinator lives), then run again."""
    moment = request.param
    work = tmp_path_factory.mktemp(moment) / "work"
    tmpdir = Path(tempfile.mkdtemp(prefix="k"))
    try:
        run = Run(work, incoming, tmpdir)
        victim, running = kill_at(moment, run, tmpdir)
        status = run.wait(RUN_WAIT)
        left, waited = processes_left(run.process.pid)
        after_kill = entries(tmpdir)
        live = owned_folder(RUN_PREFIX, tmpdir)  # a live process's run folder (this one's), as another run's
        (live / "pymp-live").mkdir()
        start = time.monotonic()
        again = Run(work, incoming, tmpdir)
        again_status = again.wait(RUN_WAIT)
        seconds = time.monotonic() - start
        again_left, _ = processes_left(again.process.pid)
        after_rerun = entries(tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    ours = [name for name in after_kill if name.split("/")[0].startswith(f"{RUN_PREFIX}{run.process.pid}-")]
    print(f"\n{moment}: {running} process(es) of the run at the kill, {left} left {waited:.1f} s after it; "
          f"{len(ours)} entr(ies) left in the temporary folder ({', '.join(ours) or 'none'}); "
          f"{len(after_rerun) - 2} left after the next run, which took {seconds:.1f} s")
    return {"moment": moment, "victim": victim, "running": running, "coordinator": run.process.pid,
            "status": status, "out": run.text, "left": left, "after_kill": after_kill, "ours": ours,
            "live": live.name, "again_status": again_status, "again_out": again.text, "again_left": again_left,
            "csv": (work / "grades.csv").read_bytes(), "after_rerun": after_rerun}


def test_a_calm_run_grades_every_submission_and_leaves_an_empty_temporary_folder(calm):
    """The reference: exit 0, each of the three graded 3 of 3, nothing left in its TMPDIR."""
    assert calm["status"] == 0, calm["out"][-2000:]
    assert calm["out"].count("3/3 autograded") == 3
    assert calm["left"] == []


def test_each_moment_is_reached_and_its_process_killed(killed):
    """The watcher found the moment and killed a process: the coordinator for the three moments that kill it
    (then the run ends with SIGKILL's status, -9), a worker or a kernel of the run otherwise."""
    assert killed["victim"] is not None, killed["out"][-2000:]
    if killed["moment"] in ("worker", "kernel"):
        assert killed["victim"] != killed["coordinator"]
    else:
        assert (killed["victim"], killed["status"]) == (killed["coordinator"], -signal.SIGKILL)


def test_a_kill_leaves_no_process_of_the_run(killed):
    """Within 30 s of the kill (of the run's end, when the coordinator lived on), no process carries the run's
    mark: no worker, fork server, bubblewrap, kernel or answer process. Just before the kill, some did (the
    mark finds them)."""
    assert (killed["running"] > 0, killed["left"]) == (True, 0)


def test_a_killed_coordinator_leaves_its_run_folder(killed):
    """What the test below removes is there: a coordinator killed outright leaves its run folder, with Dask's
    folder in it. (A run that lived to its end removed its own: nothing of it is left.)"""
    if killed["moment"] in ("worker", "kernel"):
        assert killed["ours"] == []
    else:
        [folder, *inside] = killed["ours"]
        assert any(name.split("/")[1].startswith("ctx-dask-") for name in inside), killed["ours"]


def test_the_next_run_grades_as_a_calm_run(killed, calm):
    """The same command again exits 0 and writes the calm run's grades.csv, byte for byte."""
    assert killed["again_status"] == 0, killed["again_out"][-2000:]
    assert killed["csv"] == calm["csv"]


def test_the_next_run_removes_what_the_killed_run_left_and_nothing_of_a_live_run(killed):
    """After the next run the temporary folder holds only the live process's run folder, its pymp-* folder
    intact: the killed run's folder (pymp-* included) is gone, the next run's own too, and no process of it
    is left."""
    live = killed["live"]
    assert killed["after_rerun"] == [live, f"{live}/pymp-live"]
    assert killed["again_left"] == 0


# ---- the run's folder and mark


def test_grading_run_marks_and_moves_the_temporary_folder_for_the_block_only(tmp_path, monkeypatch):
    """Inside the block: CTX_GRADING_RUN names a new folder ctx-run-<this pid>-… of the temporary folder, which is
    TMPDIR and tempfile's folder; a dead process's run folder was removed, a live one's kept. After it: TMPDIR,
    tempfile's folder and the variable as before."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv(RUN_VARIABLE, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = tmp_path / f"{RUN_PREFIX}{dead.pid}-abc"
    (abandoned / "pymp-x").mkdir(parents=True)
    live = owned_folder(RUN_PREFIX, tmp_path)
    with grading_run() as folder:
        inside = (os.environ[RUN_VARIABLE], os.environ["TMPDIR"], tempfile.gettempdir())
        assert not abandoned.exists() and live.is_dir()
    assert folder.parent == tmp_path and folder.name.startswith(f"{RUN_PREFIX}{os.getpid()}-")
    assert inside == (folder.name, str(folder), str(folder))
    assert (os.environ["TMPDIR"], RUN_VARIABLE in os.environ, tempfile.tempdir) == (str(tmp_path), False, None)


def test_the_sandbox_passes_the_runs_mark_on():
    """The variable the run sets is one the sandbox passes on to a kernel (it clears every other)."""
    assert RUN_VARIABLE in PASSED_ENV
