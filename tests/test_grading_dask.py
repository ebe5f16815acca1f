"""Grading on Dask: the same grades whatever the workers, workers that die, and workers that may not grade.

The classes are small notebook-02 submissions built from a fresh release (the model answer, the
stub, the model answer followed by a sleep). The separately started cluster is a real
``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, started and stopped here.
"""
from __future__ import annotations

import contextlib
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

import psutil
import pytest

from ctx_course.cli import main
from ctx_course.grading.engine import check_cluster
from ctx_course.grading.grader import Grader
from ctx_course.grading.records import WorkerRefused
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

ASSIGNMENT = "02-remaining"
NAPPER = MODEL + "\nimport time\n\ntime.sleep({seconds})\n"
DASK = Path(sys.executable).with_name("dask")


class Cluster:
    """A `dask scheduler` and `dask worker` processes on 127.0.0.1, each in a process group of its own.

    Their dask-scratch-space is in ``folder``, not in the temporary folder."""

    def __init__(self, folder: Path, workers: int = 2, env: dict | None = None):
        self.file = folder / "scheduler.json"
        self.env = {"DASK_TEMPORARY_DIRECTORY": str(folder / "dask")}
        self.processes = [self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                     "--dashboard-address", "127.0.0.1:0")]
        deadline = time.monotonic() + 120
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for _ in range(workers):
            self.processes.append(self._start("worker", "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                                              "--memory-limit", "0", env=env))
        from distributed import Client

        with Client(scheduler_file=str(self.file), timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
            self.address = client.scheduler.address

    def _start(self, kind: str, *args: str, env: dict | None = None) -> subprocess.Popen:
        command = [str(DASK), kind, *args, "--scheduler-file", str(self.file)]
        return subprocess.Popen(command, env={**os.environ, **self.env, **(env or {})}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> list[int]:
        """Stop every process (workers first); return the pids of every process that was part of the cluster."""
        pids = {p.pid for p in self.processes}
        for process in self.processes:
            try:
                pids |= {child.pid for child in psutil.Process(process.pid).children(recursive=True)}
            except psutil.NoSuchProcess:
                pass
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        return sorted(pids)


def _alive(pids, grace: float = 30) -> list[int]:
    """The pids of the list that pgrep still finds after at most ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        found = subprocess.run(["pgrep", "-d", " ", "."], capture_output=True, text=True).stdout.split()
        alive = sorted(set(pids) & {int(p) for p in found})
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.5)


# ---- the same grades whatever runs them


@pytest.fixture(scope="module")
def three_ways(tmp_path_factory, remaining_class):
    """One class graded with --jobs 1 (the session's ``remaining_class``), --jobs 2 and on a separately
    started cluster of two workers.

    During the --jobs 2 run every call of the coordinator's own feedback rendering (``Grader.feedback``) is
    recorded, and the run's summary is kept."""
    tmp = tmp_path_factory.mktemp("three-ways")
    incoming = remaining_class.incoming
    works = {"one": remaining_class.work, "two": tmp / "two", "cluster": tmp / "cluster"}
    statuses, rendered_here, said = {"one": remaining_class.status}, [], io.StringIO()
    coordinators = Grader.feedback

    def recorded(self, assignment_ids):
        assignment_ids = list(assignment_ids)
        rendered_here.append(assignment_ids)
        return coordinators(self, assignment_ids)

    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(said):
        patch.setattr(Grader, "feedback", recorded)
        statuses["two"] = main(["grade", "--root", str(REPO), "--work", str(works["two"]),
                                "--submissions", str(incoming), "--jobs", "2"])
    cluster = Cluster(tmp)
    try:
        statuses["cluster"] = main(["grade", "--root", str(REPO), "--work", str(works["cluster"]),
                                    "--submissions", str(incoming), "--cluster", cluster.address])
    finally:
        pids = cluster.stop()
    csvs = {name: (work / "grades.csv").read_bytes() for name, work in works.items()}
    feedback = {name: _tree(work / "feedback") for name, work in works.items()}
    return {"csvs": csvs, "statuses": statuses, "pids": pids, "works": works, "feedback": feedback,
            "rendered_here": rendered_here, "said": said.getvalue()}


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_grades_csv_is_byte_identical_for_one_two_and_a_separate_cluster(three_ways):
    """--jobs 1, --jobs 2 and a `dask scheduler` with two `dask worker`s write the same grades.csv
    (ada and cai 3 of 3, ben and dan 0 of 3), and every run exits 0."""
    assert three_ways["statuses"] == {"one": 0, "two": 0, "cluster": 0}
    csvs = three_ways["csvs"]
    assert csvs["one"] == csvs["two"] == csvs["cluster"]
    scores = {line.split(",")[0]: line.split(",")[6] for line in csvs["one"].decode().splitlines()[1:]}
    assert scores == {"ada": "3", "ben": "0", "cai": "3", "dan": "0"}


def test_feedback_pages_are_byte_identical_for_one_two_and_a_separate_cluster(three_ways):
    """The pages the workers render from their scratch gradebooks are the ones --jobs 1 renders from the real one."""
    feedback = three_ways["feedback"]
    assert sorted(feedback["one"]) == [f"{s}/{ASSIGNMENT}/remaining.html" for s in ("ada", "ben", "cai", "dan")]
    assert feedback["one"] == feedback["two"] == feedback["cluster"]


def test_the_separate_cluster_leaves_no_process_behind(three_ways):
    """After the cluster is stopped, pgrep finds none of its processes (scheduler, workers, their children)."""
    assert len(three_ways["pids"]) >= 3
    assert _alive(three_ways["pids"]) == []


def test_workers_write_no_gradebook_of_the_coordinator(three_ways):
    """The cluster run's gradebook and autograded notebooks are in its own working folder, by the coordinator."""
    work = three_ways["works"]["cluster"]
    assert (work / "gradebook.db").is_file()
    assert sorted(p.parent.parent.name for p in (work / "autograded").glob(f"*/{ASSIGNMENT}/remaining.ipynb")) == [
        "ada", "ben", "cai", "dan"]


# ---- workers that die


def _kill_worker_grading(grader: Grader, student: str, times: int, done: threading.Event) -> list[int]:
    """Kill (SIGKILL) the worker process grading ``student``'s submission, ``times`` times, 2 s into its notebook."""
    killed = []
    while len(killed) < times and not done.is_set():
        engine = getattr(grader, "_engine", None)
        client = getattr(engine, "client", None)
        try:
            processing = client.processing() if client is not None else {}
        except Exception:
            processing = {}
        address = next((a for a, keys in processing.items() if any(student in str(k) for k in keys)), None)
        if address is None:
            time.sleep(0.2)
            continue
        time.sleep(2)
        pid = client.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
        while not done.is_set():  # until the scheduler has noticed: the task is no longer on that worker
            current = client.processing()
            if not any(student in str(k) for k in current.get(address, ())):
                break
            time.sleep(0.2)
    return killed


def _grade_while_killing(tmp: Path, make_class, times: int):
    incoming = make_class(tmp / "incoming", {"a_napper": NAPPER.format(seconds=8), "b_ok": MODEL})
    grader = Grader(REPO, work=tmp / "work", jobs=2)
    grader.collect(incoming)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=lambda: killed.extend(_kill_worker_grading(grader, "a_napper", times, done)))
    killer.start()
    try:
        report = grader.grade()
    finally:
        done.set()
        killer.join(timeout=30)
    return {r.student: r for r in report.results}, killed


def test_a_worker_dying_mid_notebook_has_its_submission_graded_elsewhere(tmp_path, make_class):
    """The worker grading a_napper is killed 2 s into the notebook: the submission is graded on
    another worker (3 of 3), b_ok too."""
    results, killed = _grade_while_killing(tmp_path, make_class, times=1)
    assert len(killed) == 1
    assert (results["a_napper"].graded, results["a_napper"].auto_score) == (True, 3)
    assert (results["b_ok"].graded, results["b_ok"].auto_score) == (True, 3)
    # the worker that replaced it removed the killed one's scratch folder and its kernels' folders
    assert list(Path(tempfile.gettempdir()).glob(f"ctx-worker-{killed[0]}-*")) == []
    assert list(Path(tempfile.gettempdir()).glob(f"ctx-kernel-{killed[0]}-*")) == []


def test_a_submission_that_kills_two_workers_is_not_graded_and_says_why(tmp_path, make_class):
    """Both workers that try a_napper are killed: it is `not graded`, the reason says two workers
    died grading it; b_ok is graded 3 of 3."""
    results, killed = _grade_while_killing(tmp_path, make_class, times=2)
    assert len(killed) == 2
    napper = results["a_napper"]
    assert not napper.graded
    assert napper.reason == "2 grading workers died while grading it (it was retried once elsewhere)"
    assert (results["b_ok"].graded, results["b_ok"].auto_score) == (True, 3)


# ---- workers that may not grade


def test_a_worker_with_another_copy_of_the_course_stops_the_run_with_one_line(tmp_path, make_class, capsys):
    """A worker whose course folder has one solution changed is refused before any submission
    is sent: exit 2, one `error:` line naming the worker and solutions/, nothing graded."""
    copy = tmp_path / "course"
    copy.mkdir()
    shutil.copy(REPO / "nbgrader_config.py", copy / "nbgrader_config.py")
    shutil.copytree(REPO / "solutions", copy / "solutions")
    notebook = copy / "solutions" / ASSIGNMENT / "remaining.ipynb"
    notebook.write_text(notebook.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    incoming = make_class(tmp_path / "incoming", {"ada": MODEL, "ben": MODEL})
    cluster = Cluster(tmp_path, workers=1, env={"CTX_COURSE_ROOT": str(copy)})
    try:
        status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "work"), "--submissions", str(incoming),
                       "--cluster", cluster.address])
    finally:
        pids = cluster.stop()
    err = capsys.readouterr().err
    assert status == 2
    [line] = err.strip().splitlines()
    assert line.startswith("error: worker tcp://127.0.0.1:") and "its copy of solutions/ differs" in line
    assert not (tmp_path / "work" / "autograded").exists()
    assert _alive(pids) == []


def test_a_run_on_two_workers_leaves_nothing_in_the_temporary_folder(tmp_path, make_class):
    """`grade --jobs 2` run with a fresh TMPDIR: it grades both submissions, exits 0, and leaves that folder
    empty (no worker's or kernel's scratch folder, no dask-scratch-space)."""
    incoming = make_class(tmp_path / "incoming", {"ada": MODEL, "ben": MODEL})
    tmpdir = Path(tempfile.mkdtemp(prefix="t"))  # a short path: a kernel's IPC socket lives under it
    command = [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(tmp_path / "work"),
               "--submissions", str(incoming), "--jobs", "2"]
    try:
        done = subprocess.run(command, cwd=REPO, env={**os.environ, "TMPDIR": str(tmpdir)}, capture_output=True,
                              text=True, timeout=600)
        left = sorted(p.name for p in tmpdir.iterdir())
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert "Graded 2 of 2 submission(s)" in done.stdout
    assert left == []


def test_a_refused_worker_is_named_by_the_engine(tmp_path, monkeypatch):
    """Without bubblewrap on the workers (PATH without bwrap there), the engine raises WorkerRefused
    naming the worker and bubblewrap."""
    from ctx_course.grading.autograde import GradingSettings
    from ctx_course.grading.engine import DaskEngine
    from ctx_course.grading.fingerprint import course_fingerprint

    settings = GradingSettings(root=str(REPO), fingerprint=course_fingerprint(REPO))
    engine = DaskEngine(settings, jobs=1)
    monkeypatch.setenv("PATH", str(tmp_path))  # the spawned workers inherit it: no bwrap there
    try:
        with pytest.raises(WorkerRefused, match=r"^worker tcp://127\.0\.0\.1:\d+ cannot grade: .*bubblewrap"):
            engine.start()
    finally:
        engine.close()


@pytest.mark.parametrize("address", ["tcp://192.0.2.10:8786", "ssh://host:22", "127.0.0.1", "tls://host"])
def test_unsafe_or_malformed_cluster_addresses_are_refused(address):
    """A tcp:// scheduler on another machine, another scheme, or no port: ValueError naming cluster and the value."""
    with pytest.raises(ValueError, match=r"^cluster must .*\(got '" + address.replace(".", r"\.") + "'\\)$"):
        check_cluster(address)


def test_a_killed_processs_folders_are_removed_by_the_next_one(tmp_path):
    """A folder whose process is gone is removed; a live process's, another prefix's and other names are kept."""
    from ctx_course.grading.autograde import SCRATCH_PREFIX
    from ctx_course.scratch_folders import owned_folder, remove_abandoned

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{SCRATCH_PREFIX}{dead.pid}-abc"
    kernel = tmp_path / f"ctx-kernel-{dead.pid}-abc"
    alive = owned_folder(SCRATCH_PREFIX, tmp_path)
    other = tmp_path / f"{SCRATCH_PREFIX}notapid-x"
    for folder in (gone, kernel, alive, other):
        (folder / "work").mkdir(parents=True, exist_ok=True)
    assert alive.name.startswith(f"{SCRATCH_PREFIX}{os.getpid()}-")
    assert remove_abandoned(SCRATCH_PREFIX, tmp_path) == [gone]
    assert not gone.exists() and alive.is_dir() and other.is_dir() and kernel.is_dir()
    assert remove_abandoned("ctx-kernel-", tmp_path) == [kernel]


def test_local_workers_render_the_feedback_pages(three_ways):
    """With --jobs 2 every page comes from the workers: the coordinator's own rendering is never called
    (the --jobs 2 run of three_ways), and the run counts a page for every student."""
    assert three_ways["rendered_here"] == []
    assert "Feedback: 4 notebook(s)" in three_ways["said"], three_ways["said"]
    work = three_ways["works"]["two"]
    assert sorted(p.parent.parent.name for p in (work / "feedback").glob(f"*/{ASSIGNMENT}/*.html")) == [
        "ada", "ben", "cai", "dan"]
