"""What runs on a Dask worker: a SubmissionGrader of its own, the proof that it can grade, the tasks.

Covers: ``GradingWorker`` (the plugin: a worker's SubmissionGrader, kernel pool, feedback reader), ``this_worker``,
``readiness``, and the tasks ``grade_submission``, ``render_feedback`` and ``abandon_kernel``.

``GradingWorker`` holds one worker's ``SubmissionGrader`` (``autograde.py``), made the first time
it is needed, says once why the worker cannot grade (``refusal``: ``readiness``, run on every
worker before it gets work: can bubblewrap sandbox kernels here, is the course the
coordinator's), and lends a kernel pool to tasks that run notebooks outside grading
(``kernel_pool``: the leaderboard's). The tasks: ``grade_submission`` (autograde one submission
from its files against the assignment as the coordinator prepared it, and send back
``GradedSubmission``), ``render_feedback`` (on a worker of the coordinator's machine: render one
assignment's feedback pages from the coordinator's gradebook and autograded folder, which it
only reads), ``abandon_kernel``.

A worker writes nothing but its own scratch folders: the real gradebook, the autograded folder,
the manifest and the feedback pages are written by the coordinator alone (``grader.py``,
``gradebook_writer.py``). Student code runs only in the worker's sandboxed kernels, never in the
worker process.

Leaves out: starting workers and handing them submissions (``engine.py``), grading itself
(``autograde.py``).

Vocabulary: the *coordinator* is the process that runs ``python -m ctx_course grade``; a *worker*
is a Dask worker process (one task at a time) on this machine or another.
"""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from distributed import WorkerPlugin, get_worker
from nbgrader.apps import NbGraderAPI

from ..sandbox.kernels import KERNEL_FOLDER_PREFIX, KernelPool
from ..scratch_folders import owned_folder, remove_abandoned
from .autograde import ROOT_VARIABLE, SCRATCH_PREFIX, GradingSettings, SubmissionGrader, grading_config, grading_pool
from .diagnosis import last_error
from .disk_space import quiet_full_disk_log
from .fingerprint import course_fingerprint, fingerprint_difference
from .gradebook_writer import read_files
from .records import GradedSubmission, GradeResult, PreparedAssignment

# The name the worker plugin is registered under.
PLUGIN_NAME = "ctx-course-grading"


def readiness(settings: GradingSettings) -> str | None:
    """Return one line saying why this machine cannot grade for the coordinator, or None when it can."""
    from ..sandbox.policy import sandbox_problem

    root = settings.course_root()
    if not (root / "nbgrader_config.py").is_file():
        return f"no course at {root} (set {ROOT_VARIABLE} to its folder on this machine)"
    if settings.sandbox and (problem := sandbox_problem()) is not None:
        return problem
    return fingerprint_difference(settings.fingerprint, course_fingerprint(root))


class GradingWorker(WorkerPlugin):
    """The state of one worker: its SubmissionGrader, a kernel pool, and the NbGraderAPI that renders feedback pages."""

    def __init__(self, settings: GradingSettings):
        self.settings = settings
        self.grader: SubmissionGrader | None = None
        self.problem: str | None = None
        self.checked = False
        self.reader: NbGraderAPI | None = None  # reads the coordinator's gradebook, for its feedback
        self.reader_source: tuple[str, str] | None = None
        self.feedback_scratch: Path | None = None
        self.pool: KernelPool | None = None  # lent to tasks that run notebooks outside grading
        self.pool_scratch: Path | None = None
        self.name = ""

    def setup(self, worker) -> None:
        self.name = str(worker.address)
        # Dask's profiler samples every thread's stack each 10 ms: on a grading worker, CPU taken from
        # grading (a LocalCluster starts without it; a `dask worker` started by hand stops it here).
        for callback in ("profile", "profile-cycle"):
            if (periodic := worker.periodic_callbacks.pop(callback, None)) is not None:
                periodic.stop()
        for prefix in (SCRATCH_PREFIX, KERNEL_FOLDER_PREFIX):  # what workers killed on this machine left
            remove_abandoned(prefix)
        quiet_full_disk_log()

    def teardown(self, worker) -> None:
        if self.grader is not None:
            self.grader.close()
        if self.pool is not None:
            self.pool.close()
        for folder in (self.feedback_scratch, self.pool_scratch):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def refusal(self) -> str | None:
        """Return (once per worker, then remembered) why this worker cannot grade, or None."""
        if not self.checked:
            self.problem, self.checked = readiness(self.settings), True
        return self.problem

    def submission_grader(self) -> SubmissionGrader:
        """Return this worker's SubmissionGrader, made the first time (the coordinator's limits)."""
        if self.grader is None:
            self.grader = SubmissionGrader(self.settings)
        return self.grader

    def kernel_pool(self) -> tuple[KernelPool, Path]:
        """Return this worker's kernel pool for notebooks run outside grading, and a scratch folder for them.

        Made the first time, as a SubmissionGrader makes its own (the coordinator's sandbox, limits
        and hidden folders), in a scratch folder of its own; no SubmissionGrader is made for it.
        """
        if self.pool is None or self.pool_scratch is None:
            self.pool_scratch = owned_folder(SCRATCH_PREFIX)
            self.pool = grading_pool(self.settings, self.pool_scratch / "work")[0]
        return self.pool, self.pool_scratch

    def render_feedback(self, assignment: str, db_url: str, autograded: str) -> dict[str, dict[str, bytes]]:
        """Render one assignment's feedback from the coordinator's gradebook and autograded folder.

        ``db_url`` is the coordinator's gradebook and ``autograded`` its autograded folder
        (nbgrader's absolute path pattern); both are only read (hand grades and lateness
        included). Writes into this worker's scratch folder only; returns {student: {file name: bytes}}.
        """
        if self.feedback_scratch is None:
            self.feedback_scratch = owned_folder(SCRATCH_PREFIX)
        out = self.feedback_scratch / "feedback"
        if self.reader is None or self.reader_source != (db_url, autograded):
            config = grading_config(self.settings.course_root(), work=self.feedback_scratch / "work",
                                    timeout=self.settings.timeout)
            directories = config.CourseDirectory
            directories.db_url, directories.autograded_directory = db_url, autograded
            directories.feedback_directory = str(out)
            self.reader, self.reader_source = NbGraderAPI(config=config), (db_url, autograded)
        shutil.rmtree(out, ignore_errors=True)
        outcome = self.reader.generate_feedback(assignment, force=True)
        if not outcome.get("success"):
            raise RuntimeError(last_error(outcome))
        pages: dict[str, dict[str, bytes]] = {}
        for relative, data in read_files(out).items():  # "<student>/<assignment>/<file>"
            student, _, rest = relative.partition("/")
            pages.setdefault(student, {})[rest.partition("/")[2]] = data
        return pages

    def abandon(self) -> None:
        """Kill the kernel of the notebook running here (the coordinator was asked to stop)."""
        if self.grader is not None:
            self.grader.abandon()
        if self.pool is not None:  # a notebook the leaderboard runs here
            self.pool.abandon()


def grade_submission(student: str, assignment: str, files: dict[str, bytes], more: bool,
                     prepared: PreparedAssignment) -> GradedSubmission:
    """The task: autograde one submission on this worker; return what the coordinator writes.

    A worker that cannot grade (see ``readiness``) sends back a not-graded result that says
    why, with ``worker`` set, so that the coordinator stops the run.
    """
    state = this_worker()
    problem = state.refusal()
    if problem is not None:
        refused = GradeResult(student, assignment, False, reason=problem)
        return GradedSubmission(refused, worker=state.name, refusal=problem)
    graded = state.submission_grader().grade(student, assignment, files, prepared, more=more)
    return replace(graded, worker=state.name)


def render_feedback(assignment: str, db_url: str, autograded: str) -> dict[str, dict[str, bytes]]:
    """The task: render one assignment's feedback pages from the coordinator's gradebook (a worker of its machine)."""
    return this_worker().render_feedback(assignment, db_url, autograded)


def abandon_kernel(dask_worker=None) -> None:
    """Run on every worker by the coordinator when it is asked to stop: kill the running kernel."""
    state = (dask_worker or get_worker()).plugins.get(PLUGIN_NAME)
    if isinstance(state, GradingWorker):
        state.abandon()


def this_worker() -> GradingWorker:
    """Return the GradingWorker of the worker running this task (registered by the engine)."""
    state = get_worker().plugins.get(PLUGIN_NAME)
    if not isinstance(state, GradingWorker):
        raise RuntimeError(f"this Dask worker has no {PLUGIN_NAME!r} plugin: it was not started by a grading run")
    return state
