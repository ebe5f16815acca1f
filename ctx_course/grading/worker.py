"""What runs on a Dask worker: grading one submission against a scratch gradebook, and proving it can.

Covers: ``WorkerSettings`` (how the coordinator grades: sandbox, limits, time limit, its course
folder), ``GradingWorker`` (the worker plugin holding one worker's ``Grader``, built the first
time it is needed, with a scratch working folder and gradebook of its own), ``readiness`` (run on
every worker before it gets work: can bubblewrap sandbox kernels here, is the course the
coordinator's), and the tasks sent to workers: ``grade_submission`` (autograde one submission
from its files and send back the autograded notebooks and the gradebook rows as plain data) and
``worker_problem`` (why this worker cannot grade, checked once).

A worker writes nothing but its own scratch folder: the real gradebook, the autograded folder,
the manifest and the feedback are written by the coordinator alone (``grader.py``,
``gradebook_writer.py``). Student code runs only in the worker's sandboxed kernels, never in the
worker process.

Leaves out: starting workers and handing them submissions (``engine.py``).

Vocabulary: the *coordinator* is the process that runs ``python -m ctx_course grade``; a *worker*
is a Dask worker process (one task at a time) on this machine or another.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin, get_worker

from .fingerprint import course_fingerprint, fingerprint_difference
from .records import GradedSubmission, GradeResult, NotebookRows

# The name the worker plugin is registered under.
PLUGIN_NAME = "ctx-course-grading"
# Where a worker finds the course when it is not at the coordinator's path (another machine).
ROOT_VARIABLE = "CTX_COURSE_ROOT"


@dataclass(frozen=True)
class WorkerSettings:
    """How the coordinator grades, for every worker to grade alike (plain data, sent to workers).

    ``root`` is the coordinator's course folder (a worker uses ``$CTX_COURSE_ROOT`` instead when
    set); ``hidden`` the folders no kernel may see besides the worker's own (the coordinator's
    working folder, when the worker runs on the same machine); ``make_grader`` the class a worker
    builds its grader with (the coordinator passes ``Grader``, so this module never imports it;
    sent by reference, as pickle sends a class).
    """

    root: str
    timeout: int | None = None
    prelaunch: bool = True
    sandbox: bool = True
    memory_limit: int | None = None
    cpu_limit: int | None = None
    hidden: tuple[str, ...] = ()
    fingerprint: dict[str, str] = field(default_factory=dict)
    make_grader: Callable[..., Any] | None = None

    def course_root(self) -> Path:
        """Return the course folder on this machine."""
        return Path(os.environ.get(ROOT_VARIABLE) or self.root)


def readiness(settings: WorkerSettings) -> str | None:
    """Return one line saying why this machine cannot grade for the coordinator, or None when it can."""
    from ..sandbox.policy import sandbox_problem

    root = settings.course_root()
    if not (root / "nbgrader_config.py").is_file():
        return f"no course at {root} (set {ROOT_VARIABLE} to its folder on this machine)"
    if settings.sandbox and (problem := sandbox_problem()) is not None:
        return problem
    return fingerprint_difference(settings.fingerprint, course_fingerprint(root))


class GradingWorker(WorkerPlugin):
    """The state of one worker: its Grader (scratch working folder, its own gradebook and kernels)."""

    def __init__(self, settings: WorkerSettings):
        self.settings = settings
        self.grader = None
        self.prepared: set[str] = set()
        self.scratch: Path | None = None
        self.name = ""

    def setup(self, worker) -> None:
        self.name = str(worker.address)
        self.scratch = Path(tempfile.mkdtemp(prefix="ctx-worker-"))

    def teardown(self, worker) -> None:
        if self.grader is not None and self.grader.pool is not None:
            self.grader.pool.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def make_grader(self):
        """Return this worker's Grader, made the first time (a scratch folder, one job, the coordinator's limits)."""
        if self.grader is None:
            import warnings

            from nbformat.warnings import MissingIDFieldWarning
            from sqlalchemy.exc import SAWarning

            warnings.filterwarnings("ignore", category=SAWarning)
            warnings.filterwarnings("ignore", category=MissingIDFieldWarning)
            s = self.settings
            if s.make_grader is None:
                raise RuntimeError("WorkerSettings.make_grader is not set: this worker cannot grade notebooks")
            self.grader = s.make_grader(
                s.course_root(), work=self.scratch / "work", timeout=s.timeout, prelaunch=s.prelaunch,
                sandbox=s.sandbox, memory_limit=s.memory_limit, cpu_limit=s.cpu_limit, jobs=1, hidden=s.hidden,
                deadlines=False,  # the coordinator applies the deadlines
            )
        return self.grader

    def grade(self, student: str, assignment: str, files: dict[str, bytes], more: bool) -> GradedSubmission:
        """Autograde one submission from its files against this worker's scratch gradebook."""
        grader = self.make_grader()
        if assignment not in self.prepared:
            problems = grader.prepare([assignment])
            if problems:
                failed = GradeResult(student, assignment, False, reason=problems[assignment])
                return GradedSubmission(failed, worker=self.name)
            self.prepared.add(assignment)
        folder = grader._dir("submitted", student, assignment)
        _clear(grader, student, assignment)
        for relative, data in files.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        notebooks = sum(name.endswith(".ipynb") and "/" not in name for name in files)
        grader.pool.plan(None if more else notebooks)
        try:
            result = grader.autograde(student, assignment)
            rows = _rows(grader, student, assignment, folder)
            files = _read_tree(grader._dir("autograded", student, assignment)) if result.graded else {}
            if rows is None:
                return GradedSubmission(result, files=files, worker=self.name)
            return GradedSubmission(result, True, *rows, files=files, worker=self.name)
        finally:
            _clear(grader, student, assignment)

    def abandon(self) -> None:
        """Kill the kernel of the notebook running here (the coordinator was asked to stop)."""
        if self.grader is not None and self.grader.pool is not None:
            self.grader.pool.abandon()


def grade_submission(student: str, assignment: str, files: dict[str, bytes], more: bool) -> GradedSubmission:
    """The task: autograde one submission on this worker; return what the coordinator writes.

    A worker that cannot grade (see ``readiness``) sends back a not-graded result that says
    why, with ``worker`` set, so that the coordinator stops the run.
    """
    worker = get_worker()
    state: GradingWorker = worker.plugins[PLUGIN_NAME]
    problem = worker_problem(state)
    if problem is not None:
        refused = GradeResult(student, assignment, False, reason=problem)
        return GradedSubmission(refused, worker=state.name, refusal=problem)
    return state.grade(student, assignment, files, more)


def abandon_kernel(dask_worker=None) -> None:
    """Run on every worker by the coordinator when it is asked to stop: kill the running kernel."""
    state = (dask_worker or get_worker()).plugins.get(PLUGIN_NAME)
    if state is not None:
        state.abandon()


def worker_problem(state: GradingWorker) -> str | None:
    """Return (once per worker, then remembered) why this worker cannot grade, or None."""
    if not hasattr(state, "problem"):
        state.problem = readiness(state.settings)
    return state.problem


def _clear(grader, student: str, assignment: str) -> None:
    """Remove one submission's folders and gradebook rows from the worker's scratch."""
    from nbgrader.api import MissingEntry

    for kind in ("submitted", "autograded", "feedback"):
        shutil.rmtree(grader._dir(kind, student, assignment), ignore_errors=True)
    with grader.gradebook() as gb:
        try:
            gb.remove_student(student)
        except MissingEntry:
            pass


def _rows(grader, student: str, assignment: str, folder: Path) -> tuple[object, tuple[NotebookRows, ...]] | None:
    """Return (timestamp, the rows of every notebook) of a submission in the scratch gradebook (None: it has none)."""
    from nbgrader.api import MissingEntry

    with grader.gradebook() as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        notebooks = tuple(
            NotebookRows(
                nb.name,
                submitted=(folder / f"{nb.name}.ipynb").is_file(),
                late_submission_penalty=nb.late_submission_penalty,
                grades=tuple(sorted((g.name, g.auto_score, bool(g.needs_manual_grade)) for g in nb.grades)),
                comments=tuple(sorted((c.name, c.auto_comment) for c in nb.comments)),
            )
            for nb in submission.notebooks
        )
        return submission.timestamp, notebooks


def _read_tree(folder: Path) -> dict[str, bytes]:
    """Return {relative path: bytes} of every file under ``folder``."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

