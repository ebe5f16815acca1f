"""Grade one submission: its files in a scratch folder with a scratch gradebook, plain data back.

Covers: ``GradingSettings`` (how the coordinator grades, sent to workers), ``grading_config`` (nbgrader's Config),
``grading_pool`` (a grader's kernel pool), ``SubmissionGrader`` (one submission in, a ``GradedSubmission`` out).

``GradingSettings`` is plain data: the course folder, sandbox, limits, time limit. A
``SubmissionGrader`` owns one NbGraderAPI, one kernel pool, one set of reference builds and one
set of evaluations (``steps/evaluations.py``) in a scratch folder of its own, and turns one
submission (its files, and the assignment as the coordinator prepared it:
``PreparedAssignment``) into a ``GradedSubmission``:
the rows nbgrader wrote into the scratch gradebook, the autograded notebooks, and why it could
not be graded when it could not. Both engines (``engine.py``) use it the same way: the in-process
engine in the coordinator, the Dask worker plugin (``worker.py``) on every worker.

A SubmissionGrader writes nothing but its scratch folder: the real gradebook, its hand grades,
the autograded folder, the notes read back (edited cells, timeouts) and the feedback pages are the
coordinator's (``grader.py``, ``gradebook_writer.py``). Student code runs only in the sandboxed
kernels and answer processes of its pool, never in this process.

Leaves out: which submissions to grade and what is done with the result (``grader.py``), the
nbgrader steps themselves (``steps/preprocessors.py``, ``steps/metadata.py``, ``steps/behaviour.py``).

Vocabulary: the *scratch folder* is ``<temporary folder>/ctx-worker-<pid>-<random>/``, removed by
``close()`` (or, after a kill, by the next grader that starts on the machine); its ``work/`` is
laid out as a grading run's working folder (``submitted/``, ``autograded/``, ``release/``,
``gradebook.db``).
"""
from __future__ import annotations

import os
import shutil
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from ..config import create_gradebook, load_course_config, work_folder
from ..sandbox.execute import PrelaunchedExecute
from ..sandbox.kernels import KERNEL_FOLDER_PREFIX, KERNEL_LOG_LEVEL, KernelPool, course_pool
from ..sandbox.policy import SandboxPolicy, sandbox_limits
from ..scratch_folders import owned_folder, remove_abandoned
from .assignment_rows import write_definition
from .diagnosis import diagnose, kernel_failed_to_start
from .gradebook_writer import read_files, write_files
from .records import GradedSubmission, GradeResult, NotebookRows, PreparedAssignment
from .steps.evaluations import Evaluations
from .steps.feedback_page import FeedbackExporter
from .steps.preprocessors import (
    AUTOGRADE_PREPROCESSORS,
    EXPORTER_PREPROCESSORS,
    FEEDBACK_PREPROCESSORS,
    SANITIZE_PREPROCESSORS,
)
from .steps.reference_build import ReferenceBuilds
from .submissions import links_in

# Where the grading run keeps the release it generates to fill the gradebook (never lessons/).
SCRATCH_RELEASE = "release"
# Where a grader keeps the builds of ctx_reference without each notebook's exercises.
BUILDS = "reference-builds"
# A grader's scratch folder, in the temporary folder: this prefix, the process id, a dash.
SCRATCH_PREFIX = "ctx-worker-"
# Where a Dask worker finds the course when it is not at the coordinator's path (another machine).
ROOT_VARIABLE = "CTX_COURSE_ROOT"


@dataclass(frozen=True)
class GradingSettings:
    """How the coordinator grades, for every SubmissionGrader to grade alike (plain data, sent to workers).

    ``root`` is the coordinator's course folder (a worker uses ``$CTX_COURSE_ROOT`` instead when
    set); ``hidden`` the folders no kernel may see besides the grader's own (the coordinator's
    working folder); ``fingerprint`` the digest of the coordinator's course (``fingerprint.py``).
    """

    root: str
    timeout: int | None = None
    prelaunch: bool = True
    sandbox: bool = True
    memory_limit: int | None = None
    cpu_limit: int | None = None
    hidden: tuple[str, ...] = ()
    fingerprint: dict[str, str] = field(default_factory=dict)

    def course_root(self) -> Path:
        """Return the course folder on this machine."""
        return Path(os.environ.get(ROOT_VARIABLE) or self.root)


def grading_config(
    root: str | os.PathLike = ".",
    *,
    work: str | os.PathLike | None = None,
    timeout: int | None = None,
    pool: KernelPool | None = None,
    policy: SandboxPolicy | None = None,
    builds: ReferenceBuilds | None = None,
    evaluations: Evaluations | None = None,
) -> Config:
    """Return the course's nbgrader Config with the grading run's preprocessors and scratch release.

    The release that fills the gradebook goes to ``<work>/release``, never to the committed
    ``lessons/``; with a ``pool``, notebooks run in kernels launched ahead of time. ``policy``,
    ``builds`` and ``evaluations`` go to the steps that score check cells (``steps/behaviour.py``;
    without ``evaluations``, a set of its own).
    Example: ``grading_config(".", work=tmp, timeout=5)``.
    """
    root = Path(root).resolve()
    config = load_course_config(root, work=work, timeout=timeout)
    work_dir = work_folder(root, config)
    config.CourseDirectory.release_directory = str(work_dir / SCRATCH_RELEASE)
    config.Autograde.autograde_preprocessors = list(AUTOGRADE_PREPROCESSORS)
    if pool is not None:
        config.Autograde.autograde_preprocessors = [
            PrelaunchedExecute if step is Execute else step for step in AUTOGRADE_PREPROCESSORS
        ]
        config.PrelaunchedExecute.pool = pool
    # The learner's functions are evaluated in a process of their own, in the same sandbox.
    config.ScoreFromBehaviour.policy = policy
    config.ScoreFromBehaviour.builds = builds
    # The evaluations StartEvaluation starts and ScoreFromBehaviour scores (``steps/evaluations.py``).
    config.ScoreFromBehaviour.evaluations = evaluations if evaluations is not None else Evaluations()
    config.Autograde.sanitize_preprocessors = list(SANITIZE_PREPROCESSORS)
    config.GenerateFeedback.preprocessors = list(FEEDBACK_PREPROCESSORS)
    config.GenerateFeedback.exporter_class = FeedbackExporter  # HTMLExporter's page, for less CPU
    # The feedback page shows nothing of the learner's that could run (``steps/inert.py``), whatever the notebook.
    config.HTMLExporter.preprocessors = list(EXPORTER_PREPROCESSORS)
    # Each kernel would print a transport warning to the terminal; keep only its errors.
    config.Execute.extra_arguments = [KERNEL_LOG_LEVEL]
    # No cell records when it ran: an autograded notebook is the same bytes on every run.
    config.Execute.record_timing = False
    return config


def grading_pool(settings: GradingSettings, work: Path) -> tuple[KernelPool, int | None]:
    """Return the KernelPool of a grader working in ``work`` as ``settings`` say, and its kernels' CPU limit.

    Every kernel in the sandbox with the settings' limits (or the course's), the settings' hidden
    folders hidden, launched ahead unless ``prelaunch`` is off; the CPU limit is None without the
    sandbox. Raises SandboxUnavailable when the sandbox cannot be had here.
    """
    root = settings.course_root()
    sandboxed, memory, cpu = sandbox_limits(load_course_config(root, work=work), sandbox=settings.sandbox,
                                            memory_limit=settings.memory_limit, cpu_limit=settings.cpu_limit)
    pool = course_pool(root, work, sandbox=sandboxed, memory_limit=memory, cpu_limit=cpu,
                       ahead=settings.prelaunch, hidden=settings.hidden)
    return pool, cpu if sandboxed else None


def quiet_nbgrader() -> None:
    """Silence the warnings of nbgrader's gradebook and of its restored cells (which lack an id): not ours to fix."""
    from nbformat.warnings import MissingIDFieldWarning
    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)
    warnings.filterwarnings("ignore", category=MissingIDFieldWarning)


class SubmissionGrader:
    """Autograde submissions one at a time in a scratch folder of its own. Example::

        grader = SubmissionGrader(GradingSettings(root="."))
        graded = grader.grade("ada", "02-remaining", files, prepared, more=False)
        grader.close()

    Raises SandboxUnavailable, before any kernel starts, when the settings ask for the sandbox
    and bubblewrap cannot give it here. ``pool`` is its KernelPool (``grading_pool``).
    """

    def __init__(self, settings: GradingSettings):
        self.settings = settings
        for prefix in (SCRATCH_PREFIX, KERNEL_FOLDER_PREFIX):  # what graders killed on this machine left
            remove_abandoned(prefix)
        quiet_nbgrader()
        self.scratch = owned_folder(SCRATCH_PREFIX)
        try:
            s, root, self.work = settings, settings.course_root(), self.scratch / "work"
            self.pool, self.cpu_limit = grading_pool(s, self.work)
            # ctx_reference without each notebook's exercise functions, for the learner's process
            self.builds = ReferenceBuilds(parent=self.work / BUILDS)
            # what StartEvaluation starts and ScoreFromBehaviour scores, this grader's alone
            self.evaluations = Evaluations()
            self.config = grading_config(root, work=self.work, timeout=s.timeout, pool=self.pool,
                                         policy=self.pool.policy, builds=self.builds, evaluations=self.evaluations)
            self.api = NbGraderAPI(config=self.config)
            self.db_url, self.course_id = self.config.CourseDirectory.db_url, self.api.coursedir.course_id
            create_gradebook(self.db_url, self.course_id)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.prepared: dict[str, PreparedAssignment] = {}  # what the scratch folder holds, by assignment

    def folder(self, kind: str, student: str, assignment: str) -> Path:
        """Return a submission's folder of one kind (``submitted``, ``autograded``, ...) in the scratch folder."""
        coursedir = self.api.coursedir
        return Path(coursedir.format_path(getattr(coursedir, f"{kind}_directory"), student, assignment))

    def grade(self, student: str, assignment: str, files: dict[str, bytes], prepared: PreparedAssignment,
              *, more: bool) -> GradedSubmission:
        """Autograde one submission from its files against ``prepared``; never raises for a broken submission.

        ``more`` says another submission follows on this grader (its kernel is launched ahead).
        """
        start = time.perf_counter()
        if self.prepared.get(assignment) != prepared:
            with Gradebook(self.db_url, self.course_id) as gb:
                write_definition(gb, prepared.rows)
            write_files(self.folder("release", ".", assignment), prepared.release)
            self.prepared[assignment] = prepared
        self._clear(student, assignment)
        try:
            write_files(self.folder("submitted", student, assignment), files)
            notebooks = sum(name.endswith(".ipynb") and "/" not in name for name in files)
            self.pool.plan(None if more else notebooks)
            graded = self._autograde(student, assignment)
        finally:
            self._clear(student, assignment)
        return replace(graded, result=replace(graded.result, seconds=time.perf_counter() - start))

    def _autograde(self, student: str, assignment: str) -> GradedSubmission:
        submitted = self.folder("submitted", student, assignment)
        links = links_in(submitted)
        if links:  # nbgrader would read through them (another student's files, the solutions)
            reason = f"the submission holds links, which are not followed: {', '.join(links[:3])}; collect it again"
            return GradedSubmission(GradeResult(student, assignment, False, reason=reason))
        outcome = self._run_autograde(student, assignment)
        if not outcome["success"] and kernel_failed_to_start(outcome):
            self.evaluations.discard(student, assignment)
            outcome = self._run_autograde(student, assignment)  # not the student's fault: once more
        self.evaluations.discard(student, assignment)  # a notebook that failed before it was scored
        log = outcome.get("log", "") + outcome.get("error", "")
        try:
            with Gradebook(self.db_url, self.course_id) as gb:
                expected = _notebook_names(gb, assignment)
                rows = _rows(gb, student, assignment, submitted)
            if outcome["success"]:
                result = GradeResult(student, assignment, True, log=log)
                files = read_files(self.folder("autograded", student, assignment))
            else:
                reason = diagnose(submitted, expected, outcome, timeout=self.config.Execute.timeout,
                                  cpu_limit=self.cpu_limit)
                result, files = GradeResult(student, assignment, False, reason=reason, log=log), {}
        except Exception as exc:  # reading the scratch gradebook back must not stop the class either
            reason = f"graded, but the gradebook could not be read: {exc}"
            return GradedSubmission(GradeResult(student, assignment, False, reason=reason, log=log))
        if rows is None:
            return GradedSubmission(result, files=files)
        return GradedSubmission(result, True, *rows, files=files)

    def _run_autograde(self, student: str, assignment: str) -> dict:
        try:
            return self.api.autograde(assignment, student, force=True)
        except Exception as exc:  # nbgrader catches almost everything; this is the last net
            return {"success": False, "error": f"{type(exc).__name__}: {exc}", "log": ""}

    def _clear(self, student: str, assignment: str) -> None:
        """Remove one submission's folders and gradebook rows from the scratch folder."""
        for kind in ("submitted", "autograded", "feedback"):
            shutil.rmtree(self.folder(kind, student, assignment), ignore_errors=True)
        with Gradebook(self.db_url, self.course_id) as gb:
            try:
                gb.remove_student(student)
            except MissingEntry:
                pass

    def abandon(self) -> None:
        """Kill the kernel of the notebook running now (only sends a signal: safe in a signal handler)."""
        self.pool.abandon()

    def close(self) -> None:
        """Shut down the kernel launched ahead, remove the reference builds and the scratch folder."""
        self.pool.close()
        self.builds.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _notebook_names(gb: Gradebook, assignment: str) -> list[str]:
    try:
        return [nb.name for nb in gb.find_assignment(assignment).notebooks]
    except MissingEntry:
        return []


def _rows(gb: Gradebook, student: str, assignment: str, folder: Path) -> tuple[object, tuple[NotebookRows, ...]] | None:
    """Return (timestamp, the rows of every notebook) of a submission in ``gb`` (None: it has none)."""
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
