"""Grade a class through nbgrader's Python API, in one process or one worker process per job.

Covers: registering the students of a roster, collecting submissions into the working folder,
making sure every submitted assignment exists in the gradebook, autograding every
student × assignment found in ``submitted/`` (each in its own try, so a broken submission never
costs another one its grade), writing the feedback HTML, exporting a grades CSV, and the record
of what happened to each submission (score, or why it could not be graded).

Elsewhere: the records in ``records.py``; the roster and the submitted folders in
``submissions.py``; why a submission failed in ``diagnosis.py``; the preprocessors that cap
outputs and keep hidden tests out of the feedback in ``preprocessors.py``; the kernels launched
ahead of their notebooks in ``ctx_course/sandbox/``; the Dask workers that grade several
submissions at once, on this machine or others, in ``engine.py`` and ``worker.py`` (this module
alone writes what they send back, through ``gradebook_writer.py``); the lines printed for the
instructor and the grades CSV in ``report.py``.

Also: a *manifest* of what was graded (submission digest, source digest) so that a rerun skips
the unchanged submissions, and stopping cleanly on SIGTERM/SIGINT (``stopping.py``). Every
kernel runs in a bubblewrap sandbox (``sandbox/policy.py``) unless the grader is made with
``sandbox=False``.

Leaves out: the manual grading of free-response cells (the formgrader does it), late penalties.

Vocabulary: *root* is the course folder (``nbgrader_config.py``, ``solutions/``); *work* is the
folder a grading run writes to (``grading/`` by default: ``submitted/``, ``autograded/``,
``feedback/``, ``gradebook.db``, ``grades.csv``); a *submission* is one student's folder for one
assignment, ``<work>/submitted/<student>/<assignment>/``; *auto points* come from the autograded
check cells, *manual points* from the free-response cells graded in the formgrader.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from nbgrader.api import Gradebook, InvalidEntry, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.preprocessors import Execute
from traitlets.config import Config

from ..config import assignments, create_gradebook, load_course_config, work_folder
from ..sandbox.execute import PrelaunchedExecute
from ..sandbox.kernels import KERNEL_LOG_LEVEL, KernelPool, course_pool
from ..sandbox.policy import SandboxPolicy, sandbox_limits
from .assignment_rows import read_definition
from .behaviour import discard_pending
from .deadlines import apply_deadlines, check_students, load_deadlines
from .diagnosis import diagnose, kernel_failed_to_start, last_error, tamper_notes, timeout_notes
from .engine import DaskEngine, WorkerRefused, check_cluster, check_jobs, default_jobs
from .feedback_page import FeedbackExporter
from .fingerprint import course_fingerprint, hash_tree
from .gradebook_writer import read_files, write_files, write_rows
from .hand_grades import SNAPSHOTS, HandGrades
from .preprocessors import AUTOGRADE_PREPROCESSORS, FEEDBACK_PREPROCESSORS, SANITIZE_PREPROCESSORS
from .records import ClassReport, GradedSubmission, GradeResult, PreparedAssignment, Student
from .reference_build import ReferenceBuilds
from .report import export_grades
from .stopping import StopOnSignal
from .submissions import collect, find_submissions, links_in
from .worker import WorkerSettings, render_feedback

# Where the grading run keeps the release it generates to fill the gradebook (never lessons/).
SCRATCH_RELEASE = "release"
# What was graded from which files (<work>/manifest.json), so that a rerun skips unchanged submissions.
MANIFEST = "manifest.json"
# Bumped when a change to grading itself must regrade every submission.
GRADING_VERSION = "3"
# Where the grading run keeps the builds of ctx_reference without each notebook's exercises.
BUILDS = "reference-builds"


def grading_config(
    root: str | os.PathLike = ".",
    *,
    work: str | os.PathLike | None = None,
    timeout: int | None = None,
    pool: KernelPool | None = None,
    policy: SandboxPolicy | None = None,
    builds: ReferenceBuilds | None = None,
) -> Config:
    """Return the course's nbgrader Config with the grading run's preprocessors and scratch release.

    The release that fills the gradebook goes to ``<work>/release``, never to the committed
    ``lessons/``; with a ``pool``, notebooks run in kernels launched ahead of time.
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
    config.Autograde.sanitize_preprocessors = list(SANITIZE_PREPROCESSORS)
    config.GenerateFeedback.preprocessors = list(FEEDBACK_PREPROCESSORS)
    config.GenerateFeedback.exporter_class = FeedbackExporter  # HTMLExporter's page, for less CPU
    # Each kernel would print a transport warning to the terminal; keep only its errors.
    config.Execute.extra_arguments = [KERNEL_LOG_LEVEL]
    return config


# --------------------------------------------------------------------------------------------
# Grading


class Grader:
    """Grade the submissions of one course through one NbGraderAPI, reused across runs.

    ``jobs`` submissions are autograded at once (default: one per core); with more than one,
    a LocalCluster of that many Dask worker processes grades them (see ``engine.py``); with
    ``cluster`` (a scheduler address), the workers of that Dask cluster do. Example::

        grader = Grader(".", work="grading/example")
        grader.register(read_roster("examples/class/roster.csv"))
        grader.collect("examples/class/submitted")
        report = grader.grade()
    """

    def __init__(
        self,
        root: str | os.PathLike = ".",
        *,
        work: str | os.PathLike | None = None,
        timeout: int | None = None,
        prelaunch: bool = True,
        sandbox: bool | None = None,
        memory_limit: str | int | None = None,
        cpu_limit: int | None = None,
        jobs: int | None = None,
        cluster: str | None = None,
        hidden: Sequence[str] = (),
        deadlines: str | os.PathLike | bool | None = None,
    ):
        self.root = Path(root).resolve()
        # Submissions autograded at once, each by a Dask worker with its own kernels (engine.py).
        self.jobs = default_jobs() if jobs is None else check_jobs(jobs)
        self.cluster = None if cluster is None else check_cluster(cluster)
        course = load_course_config(self.root, work=work)
        self.work = work_folder(self.root, course)
        # Due dates, extensions and the late policy: deadlines.toml beside nbgrader_config.py unless told.
        self.deadlines = load_deadlines(self.root, deadlines)
        self.sandboxed, memory, cpu = sandbox_limits(course, sandbox=sandbox, memory_limit=memory_limit,
                                                     cpu_limit=cpu_limit)
        self.settings_key = f"sandbox={self.sandboxed} memory={memory} cpu={cpu} timeout={timeout}"
        self.cpu_limit = cpu if self.sandboxed else None
        self.pool = course_pool(self.root, self.work, sandbox=self.sandboxed, memory_limit=memory, cpu_limit=cpu,
                                ahead=prelaunch, hidden=hidden)
        # ctx_reference without each notebook's exercise functions, for the learner's process
        self.builds = ReferenceBuilds(parent=self.work / BUILDS)
        self.config = grading_config(
            self.root, work=work, timeout=timeout, pool=self.pool, policy=self.pool.policy, builds=self.builds
        )
        # What every Dask worker grades with: the same sandbox, limits and time limit, and no view of this work folder.
        self.worker_settings = functools.partial(
            WorkerSettings, root=str(self.root), timeout=self.config.Execute.timeout, prelaunch=prelaunch,
            sandbox=self.sandboxed, memory_limit=memory, cpu_limit=cpu, hidden=(*hidden, str(self.work)),
            make_grader=Grader,
        )
        self.api = NbGraderAPI(config=self.config)
        self.coursedir = self.api.coursedir
        self.db_url = self.config.CourseDirectory.db_url
        self.course_id = self.coursedir.course_id
        self.roster: list[Student] = []

    # -- paths
    @property
    def submitted(self) -> Path:
        return Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", ".")).resolve()

    def _dir(self, kind: str, student: str, assignment: str) -> Path:
        return Path(self.coursedir.format_path(getattr(self.coursedir, f"{kind}_directory"), student, assignment))

    def gradebook(self) -> Gradebook:
        """Open the gradebook (use as a context manager); the first time, create its tables if missing."""
        if not getattr(self, "_created", False):
            create_gradebook(self.db_url, self.course_id)
            self._created = True
        return Gradebook(self.db_url, self.course_id)

    # -- steps
    def register(self, students: Iterable[Student]) -> None:
        """Create or update every student of the roster in the gradebook.

        Runs from several folders may share one gradebook (PostgreSQL): a student added by
        another run between looking her up and adding her is updated instead.
        """
        self.roster = list(students)
        with self.gradebook() as gb:
            for s in self.roster:
                details = dict(first_name=s.first_name, last_name=s.last_name, email=s.email, lms_user_id=s.lms_user_id)
                try:
                    gb.update_or_create_student(s.id, **details)
                except InvalidEntry:  # another run sharing the gradebook added her a moment ago
                    gb.update_or_create_student(s.id, **details)

    def collect(self, source: str | os.PathLike) -> list[tuple[str, str]]:
        """Copy a folder of submissions into the working folder (see ``collect``)."""
        return collect(source, self.submitted)

    def prepare(self, assignment_ids: Iterable[str]) -> dict[str, str]:
        """Generate each assignment from ``solutions/`` so the gradebook holds its current cells.

        Returns the assignments that could not be prepared, with the reason. The release goes to
        the scratch folder ``<work>/release``.
        """
        problems = {}
        for aid in assignment_ids:
            target = self._dir("release", ".", aid)
            if target.exists():
                shutil.rmtree(target)
            outcome = self.api.generate_assignment(aid, force=True)
            if not outcome["success"]:
                problems[aid] = "could not prepare the assignment from solutions/: " + last_error(outcome)
        return problems

    def notebook_count(self, student: str, assignment: str) -> int:
        """Return how many notebooks a submission hands in (each one runs in a kernel of its own)."""
        return len(list(self._dir("submitted", student, assignment).glob("*.ipynb")))

    def autograde(self, student: str, assignment: str) -> GradeResult:
        """Autograde one submission and return its result; never raises for a broken submission."""
        start = time.perf_counter()
        links = links_in(self._dir("submitted", student, assignment))
        if links:  # nbgrader would read through them (another student's files, the solutions)
            reason = f"the submission holds links, which are not followed: {', '.join(links[:3])}; collect it again"
            return GradeResult(student, assignment, False, reason=reason, seconds=time.perf_counter() - start)
        hand = HandGrades(self.gradebook, student, assignment, self._dir("autograded", student, assignment),
                          self.work / SNAPSHOTS)
        hand.before()  # nbgrader reopens every hand-graded cell: put them back after the run
        outcome = self._run_autograde(student, assignment)
        if not outcome["success"] and kernel_failed_to_start(outcome):
            discard_pending(student, assignment)
            outcome = self._run_autograde(student, assignment)  # not the student's fault: once more
        discard_pending(student, assignment)  # a notebook that failed before it was scored
        reopened = hand.after()
        log = outcome.get("log", "") + outcome.get("error", "")
        try:
            if not outcome["success"]:
                reason = self._diagnose(student, assignment, outcome)
                result = GradeResult(student, assignment, False, reason=reason, log=log)
            else:
                result = replace(self._read_result(student, assignment, log), regrade=reopened)
        except Exception as exc:  # reading the gradebook back must not stop the class either
            result = GradeResult(student, assignment, False,
                                 reason=f"graded, but the gradebook could not be read: {exc}", log=log)
        if not result.graded:
            # nbgrader removed the autograded copy; stale feedback must not outlive it.
            shutil.rmtree(self._dir("feedback", student, assignment), ignore_errors=True)
        return _with_seconds(result, time.perf_counter() - start)

    def _run_autograde(self, student: str, assignment: str) -> dict:
        try:
            return self.api.autograde(assignment, student, force=True)
        except Exception as exc:  # nbgrader catches almost everything; this is the last net
            return {"success": False, "error": f"{type(exc).__name__}: {exc}", "log": ""}

    def feedback(self, assignment_ids: Iterable[str]) -> None:
        """Write the feedback HTML of every autograded submission of each assignment (one pass each)."""
        for aid in assignment_ids:
            try:
                self.api.generate_feedback(aid, force=True)
            except Exception:  # a failure is visible as a missing feedback file
                pass

    def _feedback(self, assignment_ids: Sequence[str]) -> None:
        """Write the feedback of each assignment: on the Dask workers of this machine if there are, else here.

        A local worker reads this run's gradebook and autograded folder, renders one assignment's
        pages into its scratch folder and sends them back; they are written here. Workers of a
        cluster (``--cluster``) may be on other machines, so their run's pages are rendered here,
        as is an assignment whose task failed.
        """
        if self._engine is None or not assignment_ids:
            self.feedback(assignment_ids)
            return
        autograded = os.path.join(self.coursedir.root, self.coursedir.autograded_directory)
        futures = self._engine.submit_each(render_feedback, [(aid, self.db_url, autograded) for aid in assignment_ids])
        for aid, future in zip(assignment_ids, futures):
            try:
                pages = future.result()
            except Exception:  # one assignment's pages, rendered here instead
                self.feedback([aid])
                continue
            folders: dict[str, dict[str, bytes]] = {}
            for relative, data in pages.items():
                student, _, rest = relative.partition("/")
                folders.setdefault(student, {})[rest.partition("/")[2]] = data
            for student, files in folders.items():
                write_files(self._dir("feedback", student, aid), files)

    def feedback_path(self, student: str, assignment: str) -> list[Path]:
        """Return the feedback files of one submission."""
        folder = self._dir("feedback", student, assignment)
        return sorted(folder.glob("*.html")) if folder.is_dir() else []

    def grade(
        self,
        pairs: Sequence[tuple[str, str]] | None = None,
        *,
        autograde: bool = True,
        force: bool = False,
        on_start: Callable | None = None,
        on_result: Callable | None = None,
    ) -> ClassReport:
        """Grade every submission in ``<work>/submitted`` (or ``pairs``) and export the grades CSV.

        With ``autograde=False`` no notebook runs: the scores already in the gradebook (after
        grading by hand in the formgrader, say) are read back, and the feedback and the CSV are
        rewritten. ``on_start(index, total, student, assignment)`` is called before each
        submission and ``on_result(index, total, result)`` after it (the CLI prints progress
        lines with them). Returns a ClassReport; ``<work>/grades.csv`` is written.

        A submission graded by an earlier run from the same files and the same sources is read
        back instead of run again, unless ``force``. SIGTERM or SIGINT abandons the notebook
        running, starts no other, and still writes the feedback and the CSV (``stopped_by``).
        """
        self._engine: DaskEngine | None = None
        if self.deadlines is not None:  # an extension for nobody is bad input: nothing is graded
            check_students(self.deadlines, self._known_students())
        with StopOnSignal(on_stop=self._abandon) as stop:
            return self._grade(stop, pairs, autograde=autograde, force=force, on_start=on_start, on_result=on_result)

    def _abandon(self) -> None:
        """Stop what grades right now: the in-process kernel, and every Dask task (a stop signal came)."""
        if self.pool is not None:
            self.pool.abandon()
        if self._engine is not None:  # talking to the scheduler is not for a signal handler
            threading.Thread(target=self._engine.abandon, daemon=True).start()

    def _grade(self, stop: StopOnSignal, pairs, *, autograde, force, on_start, on_result) -> ClassReport:
        start = time.perf_counter()
        phases = {}
        pairs = sorted(pairs if pairs is not None else find_submissions(self.submitted))
        known = set(assignments(self.root))
        tick = time.perf_counter()
        manifest = self._read_manifest()
        digests = {(s, a): self._digest(s, a) for s, a in pairs if a in known} if autograde else {}
        skipped = {}  # graded by an earlier run from the same files and sources: read back
        for pair, digest in digests.items():
            if not force and manifest.get("/".join(pair)) == digest and (earlier := self.read_back(*pair)).graded:
                skipped[pair] = replace(earlier, skipped=True)
        starting = self._start_engine([p for p in pairs if p not in skipped], known) if autograde else None
        try:
            problems = self.prepare(sorted({aid for _, aid in pairs if aid in known})) if autograde else {}
            if starting is not None:
                starting.join()
                if starting.error is not None:
                    raise starting.error
        except BaseException:
            self._close_engine(starting)
            raise
        phases["prepare"] = time.perf_counter() - tick

        results: list[GradeResult] = []
        tick = time.perf_counter()
        keep_engine = False  # the workers of this machine render the feedback too (see _feedback)
        try:
            todo = [(s, a) for s, a in pairs if a in known and a not in problems and (s, a) not in skipped]
            if self._engine is not None:  # the workers grade ahead; results are written in this loop's order
                self._add_new_students(todo)
                ahead = self._graded_by_workers(todo)
            elif autograde and self.pool is not None:  # no kernel launched ahead after the last notebook
                self.pool.plan(sum(self.notebook_count(s, a) for s, a in todo))
            for index, (student, aid) in enumerate(pairs, start=1):
                if on_start is not None:
                    on_start(index, len(pairs), student, aid)
                digest = digests.get((student, aid))
                if aid not in known:
                    result = GradeResult(student, aid, False, reason=f"{aid!r} is not an assignment of this course")
                elif aid in problems:
                    result = GradeResult(student, aid, False, reason=problems[aid])
                elif (student, aid) in skipped:
                    result = skipped[(student, aid)]
                elif self._engine is not None:
                    result = next(ahead)
                    if stop.signal and not result.graded:  # cancelled, or its kernel killed by the stop
                        if result.reason == "stopped before it started":
                            result = replace(result, reason=f"the run was stopped by {stop.signal} before it started")
                        else:
                            reason = f"abandoned: the run was stopped by {stop.signal} while it ran"
                            result = replace(result, reason=reason)
                elif stop.signal:
                    result = GradeResult(student, aid, False,
                                         reason=f"the run was stopped by {stop.signal} before it started")
                elif autograde:
                    result = self.autograde(student, aid)
                    if stop.signal and not result.graded:
                        result = replace(result, reason=f"abandoned: the run was stopped by {stop.signal} while it ran")
                else:
                    result = self.read_back(student, aid)
                if autograde and digest is not None and not result.skipped:
                    manifest.pop(f"{student}/{aid}", None)
                    if result.graded:
                        manifest[f"{student}/{aid}"] = digest
                    self._write_manifest(manifest)
                results.append(result)
                if on_result is not None:
                    on_result(index, len(pairs), result)
            keep_engine = self._engine is not None and self.cluster is None and not stop.signal
        finally:
            if self.pool is not None:
                self.pool.close()
            self.builds.close()
            if not keep_engine:
                self._close_engine(starting)
        phases["autograde"] = time.perf_counter() - tick
        try:
            if self.deadlines is not None:
                with self.gradebook() as gb:
                    graded = [(r.student, r.assignment) for r in results if r.graded]
                    late = apply_deadlines(gb, self.deadlines, graded)
                results = [replace(r, late=late.get((r.student, r.assignment))) for r in results]

            tick = time.perf_counter()
            self._feedback(sorted({r.assignment for r in results if r.graded}))
            feedback = sum(bool(self.feedback_path(r.student, r.assignment)) for r in results if r.graded)
            phases["feedback"] = time.perf_counter() - tick
        finally:
            self._close_engine(starting)
        shutil.rmtree(self.work / BUILDS, ignore_errors=True)  # what a killed worker could not remove

        tick = time.perf_counter()
        csv_path = export_grades(self.db_url, self.work / "grades.csv", results, course_id=self.course_id)
        phases["export"] = time.perf_counter() - tick

        roster_ids = {s.id for s in self.roster}
        not_on_roster = tuple(sorted({s for s, _ in pairs} - roster_ids)) if self.roster else ()
        return ClassReport(
            results=tuple(results),
            seconds=time.perf_counter() - start,
            work=self.work,
            grades_csv=csv_path,
            feedback=feedback,
            not_on_roster=not_on_roster,
            phases=phases,
            sandboxed=self.sandboxed or not autograde,  # no notebook ran: nothing to warn about
            stopped_by=stop.signal,
            stop_status=128 + stop.number if stop.number else 0,
            outside_exchange=self.outside_exchange(results),
        )

    def outside_exchange(self, results: Sequence[GradeResult]) -> tuple[str, ...]:
        """Name the graded submissions that nbgrader's ``release_feedback`` cannot return to their learner.

        A submission made with ``nbgrader submit`` carries ``timestamp.txt`` and
        ``submission_secret.txt``; one copied in with ``--submissions`` has neither, and its
        learner has no secret to find the page by. Named only for assignments that others handed
        in through the exchange (a class graded wholly from an LMS download is not flagged).
        Example: ``("cai 02-remaining",)``.
        """
        secret_file = "submission_secret.txt"
        has_secret = {
            (r.student, r.assignment): (self._dir("submitted", r.student, r.assignment) / secret_file).is_file()
            for r in results
            if r.graded
        }
        through_exchange = {a for (_, a), secret in has_secret.items() if secret}
        return tuple(f"{s} {a}" for (s, a), secret in sorted(has_secret.items())
                     if not secret and a in through_exchange)

    # -- manifest
    def _digest(self, student: str, assignment: str) -> str:
        """Return the digest of a submission's files, its assignment's sources and the grading settings."""
        sha = hashlib.sha256(f"{GRADING_VERSION}\0{self.settings_key}\0".encode())
        sha.update(self._source_digest(assignment).encode())
        hash_tree(sha, self._dir("submitted", student, assignment))
        return sha.hexdigest()

    def _source_digest(self, assignment: str) -> str:
        cache = self.__dict__.setdefault("_source_digests", {})
        if assignment not in cache:
            sha = hashlib.sha256()
            hash_tree(sha, self.root / "solutions" / assignment)
            for package in ("ctx_reference",):  # the checker that check cells call
                hash_tree(sha, self.root / package, suffix=".py")
            cache[assignment] = sha.hexdigest()
        return cache[assignment]

    def _read_manifest(self) -> dict:
        try:
            data = json.loads((self.work / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_manifest(self, manifest: dict) -> None:
        path = self.work / MANIFEST
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        partial.replace(path)

    def _start_engine(self, pairs, known) -> _Starting | None:
        """Start the Dask workers in the background if more than one job (or a cluster) and a submission to grade.

        Their start-up overlaps the preparation of the assignments; ``join()`` the thread returned.
        """
        count = sum(aid in known for _, aid in pairs)
        jobs = min(self.jobs, count)
        if count == 0 or (self.cluster is None and jobs <= 1):
            return None
        with self.gradebook():  # created here, once, before anything else opens it
            pass
        settings = self.worker_settings(fingerprint=course_fingerprint(self.root))
        self._engine = DaskEngine(settings, jobs=jobs, cluster=self.cluster)
        starting = _Starting(self._engine.start)
        starting.start()
        return starting

    def _close_engine(self, starting) -> None:
        if starting is not None:
            starting.join()
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def _graded_by_workers(self, pairs) -> Iterator[GradeResult]:
        """Send every submission to the workers; write each one sent back, in order; yield its GradeResult.

        Raises WorkerRefused when a worker turns out unable to grade (one that joined late).
        """
        with self.gradebook() as gb:  # each assignment as this run's prepare left it
            prepared = {a: PreparedAssignment(read_definition(gb, a), read_files(self._dir("release", ".", a)))
                        for a in sorted({a for _, a in pairs})}
        sent = [(s, a, read_files(self._dir("submitted", s, a)), prepared[a]) for s, a in pairs]
        for index, graded in self._engine.grade(sent):
            student, assignment = pairs[index]
            if graded.refusal:
                raise WorkerRefused(f"worker {graded.worker} cannot grade: {graded.refusal}")
            yield self._write(student, assignment, graded)

    def _write(self, student: str, assignment: str, graded: GradedSubmission) -> GradeResult:
        """Write what a worker sent back into the gradebook and the autograded folder; return the result."""
        seconds = graded.result.seconds
        autograded = self._dir("autograded", student, assignment)
        try:
            with self.gradebook() as gb:  # one connection for every step (each opening checks every table)
                opened = functools.partial(contextlib.nullcontext, gb)
                hand = HandGrades(opened, student, assignment, autograded, self.work / SNAPSHOTS)
                hand.before()  # the rows reopen every hand-graded cell, as nbgrader does: put them back after
                if graded.in_gradebook:  # as nbgrader records a submission it then fails to grade
                    write_rows(gb, student, assignment, graded)
                if not graded.result.graded:
                    for kind in ("autograded", "feedback"):  # nbgrader leaves no autograded copy of a failure
                        shutil.rmtree(self._dir(kind, student, assignment), ignore_errors=True)
                    hand.after()
                    return graded.result
                write_files(autograded, graded.files)
                reopened = hand.after()
                result = replace(self._read_result(student, assignment, graded.result.log, opened),
                                 regrade=reopened)
        except Exception as exc:  # one submission's rows, not the class
            reason = f"graded, but the gradebook could not be written: {exc}"
            result = GradeResult(student, assignment, False, reason=reason, log=graded.result.log)
        return _with_seconds(result, seconds)

    def _known_students(self) -> set[str]:
        """Return the students of the roster, of the submissions folder and of the gradebook."""
        with self.gradebook() as gb:
            students = {s.id for s in gb.students}
        return students | {s.id for s in self.roster} | {s for s, _ in find_submissions(self.submitted)}

    def _add_new_students(self, pairs) -> None:
        """Add to the gradebook the students nbgrader would add when autograding these pairs.

        nbgrader adds a student when it autogrades the first submission folder of hers that
        holds a notebook; the workers add her to their scratch gradebooks only.
        """
        with self.gradebook() as gb:
            for student in sorted({s for s, a in pairs if any(self._dir("submitted", s, a).glob("*.ipynb"))}):
                try:
                    gb.find_student(student)
                except MissingEntry:
                    try:
                        gb.add_student(student)
                    except InvalidEntry:  # another run sharing the gradebook added her a moment ago
                        gb.find_student(student)

    def read_back(self, student: str, assignment: str) -> GradeResult:
        """Return the result already in the gradebook for a submission autograded earlier."""
        start = time.perf_counter()
        if not self._dir("autograded", student, assignment).is_dir():
            result = GradeResult(student, assignment, False, reason="not autograded yet (run without --feedback-only)")
        else:
            try:
                result = self._read_result(student, assignment, "")
            except Exception as exc:
                result = GradeResult(student, assignment, False, reason=f"the gradebook could not be read: {exc}")
        return _with_seconds(result, time.perf_counter() - start)

    # -- helpers
    def _diagnose(self, student: str, assignment: str, outcome: dict) -> str:
        """Return one line saying why nbgrader could not grade a submission (see ``diagnosis.diagnose``)."""
        with self.gradebook() as gb:
            try:
                expected = [nb.name for nb in gb.find_assignment(assignment).notebooks]
            except MissingEntry:
                expected = []
        return diagnose(self._dir("submitted", student, assignment), expected, outcome,
                        timeout=self.config.Execute.timeout, cpu_limit=self.cpu_limit)

    def _read_result(self, student: str, assignment: str, log: str, gradebook=None) -> GradeResult:
        """Read a graded submission's result back (``gradebook``: a function opening it; ``self.gradebook``)."""
        with (gradebook or self.gradebook)() as gb:
            sub = gb.find_submission(assignment, student)
            pending = sum(
                g.max_score for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade and g.max_score
            )
            notes = tamper_notes(gb, self._dir("submitted", student, assignment), assignment)
            auto, max_auto = float(sub.code_score or 0), float(sub.max_code_score or 0)
        notes += timeout_notes(self._dir("autograded", student, assignment), self.config.Execute.timeout)
        return GradeResult(student, assignment, True, auto, max_auto, float(pending), notes=notes, log=log)


# --------------------------------------------------------------------------------------------
# Small helpers


class _Starting(threading.Thread):
    """Run a start-up function in the background; keep the exception it raised (``error``)."""

    def __init__(self, function):
        super().__init__(daemon=True)
        self.function, self.error = function, None

    def run(self) -> None:
        try:
            self.function()
        except BaseException as exc:
            self.error = exc


def _with_seconds(result: GradeResult, seconds: float) -> GradeResult:
    return replace(result, seconds=seconds)
