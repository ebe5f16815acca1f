"""What runs on a Dask worker: grading one submission against a scratch gradebook, and proving it can.

Covers: ``WorkerSettings`` (how the coordinator grades: sandbox, limits, time limit, its course
folder), ``GradingWorker`` (the worker plugin holding one worker's ``Grader``, built the first
time it is needed, with a scratch working folder and gradebook of its own), ``readiness`` (run on
every worker before it gets work: can bubblewrap sandbox kernels here, is the course the
coordinator's), and the tasks sent to workers: ``grade_submission`` (autograde one submission
from its files, against the assignment as the coordinator prepared it (``PreparedAssignment``),
and send back the autograded notebooks and the gradebook rows as plain data),
``render_feedback`` (on a worker of the coordinator's machine: render one assignment's feedback
pages from the coordinator's gradebook and autograded folder, which it only reads) and
``worker_problem`` (why this worker cannot grade, checked once).

A worker writes nothing but its own scratch folder: the real gradebook, the autograded folder,
the manifest and the feedback pages are written by the coordinator alone (``grader.py``,
``gradebook_writer.py``). Student code runs only in the worker's sandboxed kernels, never in the
worker process.

Leaves out: starting workers and handing them submissions (``engine.py``).

Vocabulary: the *coordinator* is the process that runs ``python -m ctx_course grade``; a *worker*
is a Dask worker process (one task at a time) on this machine or another.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin, get_worker

from ..scratch_folders import owned_folder, remove_abandoned
from .assignment_rows import write_definition
from .diagnosis import last_error
from .fingerprint import course_fingerprint, fingerprint_difference
from .gradebook_writer import read_files, write_files
from .records import GradedSubmission, GradeResult, NotebookRows, PreparedAssignment

# The name the worker plugin is registered under.
PLUGIN_NAME = "ctx-course-grading"
# A worker's scratch folder, in the temporary folder: this prefix, the worker's process id, a dash.
SCRATCH_PREFIX = "ctx-worker-"
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
        self.reader = None  # a Grader reading the coordinator's gradebook, for rendering its feedback
        self.reader_source: tuple[str, str] | None = None
        self.prepared: dict[str, PreparedAssignment] = {}  # what the scratch folder holds, by assignment
        self.scratch: Path | None = None
        self.name = ""

    def setup(self, worker) -> None:
        self.name = str(worker.address)
        # Dask's profiler samples every thread's stack each 10 ms: on a grading worker, CPU taken from
        # grading (a LocalCluster starts without it; a `dask worker` started by hand stops it here).
        for callback in ("profile", "profile-cycle"):
            if (periodic := worker.periodic_callbacks.pop(callback, None)) is not None:
                periodic.stop()
        from ..sandbox.kernels import KERNEL_FOLDER_PREFIX

        for prefix in (SCRATCH_PREFIX, KERNEL_FOLDER_PREFIX):  # what workers killed on this machine left
            remove_abandoned(prefix)
        self.scratch = owned_folder(SCRATCH_PREFIX)

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
            if self.settings.make_grader is None:
                raise RuntimeError("WorkerSettings.make_grader is not set: this worker cannot grade notebooks")
            self.grader = self._new_grader(self.scratch / "work", prelaunch=self.settings.prelaunch)
        return self.grader

    def _new_grader(self, work: Path, prelaunch: bool):
        """Return a Grader of the coordinator's course and limits in ``work``: one job, the deadlines left to it."""
        s = self.settings
        return s.make_grader(s.course_root(), work=work, timeout=s.timeout, prelaunch=prelaunch, sandbox=s.sandbox,
                             memory_limit=s.memory_limit, cpu_limit=s.cpu_limit, jobs=1, hidden=s.hidden,
                             deadlines=False)

    def grade(self, student: str, assignment: str, files: dict[str, bytes], more: bool,
              prepared: PreparedAssignment) -> GradedSubmission:
        """Autograde one submission from its files against this worker's scratch gradebook.

        ``prepared`` is the assignment as the coordinator prepared it; its rows and release
        folder are written into the scratch folder when it does not hold them yet.
        """
        grader = self.make_grader()
        if self.prepared.get(assignment) != prepared:
            with grader.gradebook() as gb:
                write_definition(gb, prepared.rows)
            write_files(grader._dir("release", ".", assignment), prepared.release)
            self.prepared[assignment] = prepared
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
            files = read_files(grader._dir("autograded", student, assignment)) if result.graded else {}
            if rows is None:
                return GradedSubmission(result, files=files, worker=self.name)
            return GradedSubmission(result, True, *rows, files=files, worker=self.name)
        finally:
            _clear(grader, student, assignment)

    def render_feedback(self, assignment: str, db_url: str, autograded: str) -> dict[str, bytes]:
        """Render one assignment's feedback from the coordinator's gradebook and autograded folder.

        ``db_url`` is the coordinator's gradebook and ``autograded`` its autograded folder
        (nbgrader's absolute path pattern); both are only read (hand grades and lateness
        included). Writes into this worker's scratch folder only; returns
        {"<student>/<assignment>/<file>": bytes}.
        """
        if self.reader is None or self.reader_source != (db_url, autograded):
            self.reader = self._new_grader(self.scratch / "feedback-work", prelaunch=False)
            directories = self.reader.config.CourseDirectory
            directories.db_url, directories.autograded_directory = db_url, autograded
            directories.feedback_directory = str(self.scratch / "feedback")
            self.reader.api = type(self.reader.api)(config=self.reader.config)
            self.reader_source = (db_url, autograded)
        out = self.scratch / "feedback"
        shutil.rmtree(out, ignore_errors=True)
        outcome = self.reader.api.generate_feedback(assignment, force=True)
        if not outcome.get("success"):
            raise RuntimeError(last_error(outcome))
        return read_files(out)

    def abandon(self) -> None:
        """Kill the kernel of the notebook running here (the coordinator was asked to stop)."""
        if self.grader is not None and self.grader.pool is not None:
            self.grader.pool.abandon()


def grade_submission(student: str, assignment: str, files: dict[str, bytes], more: bool,
                     prepared: PreparedAssignment) -> GradedSubmission:
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
    return state.grade(student, assignment, files, more, prepared)


def render_feedback(assignment: str, db_url: str, autograded: str) -> dict[str, bytes]:
    """The task: render one assignment's feedback pages from the coordinator's gradebook (a worker of its machine)."""
    return get_worker().plugins[PLUGIN_NAME].render_feedback(assignment, db_url, autograded)


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
