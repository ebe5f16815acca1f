"""Grade a class through nbgrader: plan the run, hand each submission to an engine, write what comes back.

Covers: ``Grader``, the coordinator of a run: ``register``, ``collect``, ``prepare``, then ``grade``, which reads
plan (``manifest.py``) → grade (through an ``Engine``, ``engine.py``) → deadlines → feedback → export.

An engine (in this process, or Dask workers) starts while the assignments are generated into the gradebook,
and one ``with`` block spans its life. Each result it sends back is written once: the hand grades kept
(``hand_grades.py``), the rows and the autograded folder written (``gradebook_writer.py``), the score and
notes read back. Then the late penalties (``deadlines.py``), the feedback HTML (rendered where the engine's
graders are, or here), the grades CSV (``report.py``). One broken submission never costs another one its
grade. Every kernel runs in a bubblewrap sandbox (``sandbox/policy.py``) unless made with ``sandbox=False``.

Leaves out: grading one submission (``autograde.py``), the records (``records.py``), the roster and
submitted folders (``submissions.py``), stop signals (``stopping.py``), the formgrader's hand grading.

Vocabulary: *root* is the course folder (``nbgrader_config.py``, ``solutions/``); *work* the folder a run
writes to (``grading/`` by default: ``submitted/``, ``autograded/``, ``feedback/``, ``gradebook.db``,
``grades.csv``); a *submission* one student's folder for one assignment, ``<work>/submitted/<student>/<assignment>/``;
*auto points* come from the check cells, *manual points* from free-response cells; the *coordinator* is this process.
"""
from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from nbgrader.api import Gradebook, InvalidEntry, MissingEntry
from nbgrader.apps import NbGraderAPI

from ..config import assignments, create_gradebook, load_course_config, work_folder
from ..sandbox.policy import SandboxUnavailable, sandbox_limits, sandbox_problem
from .assignment_rows import read_definition
from .autograde import GradingSettings, grading_config
from .deadlines import apply_deadlines, check_students, load_deadlines
from .diagnosis import last_error, tamper_notes, timeout_notes
from .disk_space import (
    DiskFull,
    full_disk_line,
    gradebook_folders,
    is_disk_full,
    says_disk_full,
    stops_on_full_disk,
)
from .engine import (
    NOT_STARTED,
    DaskEngine,
    Engine,
    InProcessEngine,
    Submission,
    WorkerRefused,
    check_cluster,
    check_jobs,
    default_jobs,
)
from .fingerprint import course_fingerprint
from .gradebook_writer import read_files, write_files, write_submission
from .hand_grades import SNAPSHOTS
from .manifest import Digests, Manifest, Pair, RunPlan, plan_run
from .reconnect import GradebookUnreachable, reconnecting
from .records import ClassReport, GradedSubmission, GradeResult, PreparedAssignment, Student
from .report import export_grades
from .stopping import StopOnSignal
from .submissions import collect, find_submissions, outside_exchange

__all__ = ["AUDIT_EVENT", "Grader", "grading_config"]

# The audit event (sys.audit) a grading run starts with: an administrator's audit hook may log or refuse it.
AUDIT_EVENT = "ctx_course.grade"


class Grader:
    """Grade the submissions of one course: the coordinator of a grading run, reused across runs.

    ``jobs`` submissions are autograded at once (default: one per core): one in this process,
    more by a LocalCluster of that many Dask worker processes; with ``cluster`` (a scheduler
    address), by the workers of that Dask cluster (see ``engine.py``). Example::

        grader = Grader(".", work="grading/example")
        grader.register(read_roster("examples/class/roster.csv"))
        grader.collect("examples/class/submitted")
        report = grader.grade()

    Raises ValueError naming a bad argument first; then SandboxUnavailable when the sandbox is asked for and
    bubblewrap cannot give it here.
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
        self.jobs = default_jobs() if jobs is None else check_jobs(jobs)
        self.cluster = None if cluster is None else check_cluster(cluster)
        course = load_course_config(self.root, work=work, timeout=timeout)  # a bad timeout before the sandbox
        self.work = work_folder(self.root, course)
        # Due dates, extensions and the late policy: deadlines.toml beside nbgrader_config.py unless told.
        self.deadlines = load_deadlines(self.root, deadlines)
        self.sandboxed, memory, cpu = sandbox_limits(course, sandbox=sandbox, memory_limit=memory_limit,
                                                     cpu_limit=cpu_limit)
        if self.sandboxed and (problem := sandbox_problem()) is not None:
            raise SandboxUnavailable(problem)
        self.settings_key = f"sandbox={self.sandboxed} memory={memory} cpu={cpu} timeout={timeout}"
        self.config = grading_config(self.root, work=work, timeout=timeout)
        # How every SubmissionGrader grades, here or on a worker: no kernel sees this working folder.
        self.settings = GradingSettings(
            root=str(self.root), timeout=self.config.Execute.timeout, prelaunch=prelaunch, sandbox=self.sandboxed,
            memory_limit=memory, cpu_limit=cpu, hidden=(*hidden, str(self.work)),
        )
        self.api = NbGraderAPI(config=self.config)  # generates the assignments and renders the feedback
        self.coursedir = self.api.coursedir
        self.db_url = self.config.CourseDirectory.db_url
        self.course_id = self.coursedir.course_id
        self.roster: list[Student] = []
        self._engine: Engine | None = None  # the engine of the run going on, for a stop signal
        self._created = False  # the gradebook's tables
        self.digests = Digests(self.root, self.settings_key)  # each assignment's sources hashed once

    # -- paths
    @property
    def submitted(self) -> Path:
        return Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", ".")).resolve()

    def folder(self, kind: str, student: str, assignment: str) -> Path:
        """Return a submission's folder of one kind: ``submitted``, ``autograded``, ``feedback`` (``release``: ".")."""
        return Path(self.coursedir.format_path(getattr(self.coursedir, f"{kind}_directory"), student, assignment))

    def gradebook(self) -> Gradebook:
        """Open the gradebook (use as a context manager); the first time, create its tables if missing."""
        if not self._created:
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
        with stops_on_full_disk(self.work, self.db_url), self.gradebook() as gb:
            for s in self.roster:
                details = dict(first_name=s.first_name, last_name=s.last_name, email=s.email, lms_user_id=s.lms_user_id)
                try:
                    gb.update_or_create_student(s.id, **details)
                except InvalidEntry:  # another run sharing the gradebook added her a moment ago
                    gb.update_or_create_student(s.id, **details)

    def collect(self, source: str | os.PathLike) -> list[tuple[str, str]]:
        """Copy a folder of submissions into the working folder (see ``collect``)."""
        with stops_on_full_disk(self.work, self.db_url):
            return collect(source, self.submitted)

    def prepare(self, assignment_ids: Iterable[str]) -> dict[str, str]:
        """Generate each assignment from ``solutions/`` so the gradebook holds its current cells.

        Returns the assignments that could not be prepared, with the reason. The release goes to
        the scratch folder ``<work>/release``.
        """
        problems = {}
        for aid in assignment_ids:
            target = self.folder("release", ".", aid)
            if target.exists():
                shutil.rmtree(target)
            outcome = self.api.generate_assignment(aid, force=True)
            if not outcome["success"]:
                if says_disk_full(outcome.get("error") or ""):
                    raise DiskFull(full_disk_line(None, self.work, self.db_url))
                problems[aid] = "could not prepare the assignment from solutions/: " + last_error(outcome)
        return problems

    def feedback(self, assignment_ids: Iterable[str]) -> None:
        """Write the feedback HTML of every autograded submission of each assignment (one pass each)."""
        for aid in assignment_ids:
            with contextlib.suppress(Exception):  # a failure is visible as a missing feedback file
                self.api.generate_feedback(aid, force=True)

    def _feedback(self, engine: Engine | None, assignment_ids: Sequence[str]) -> None:
        """Write each assignment's feedback: the pages the engine's graders rendered (``Engine.feedback``), else here.

        A run with no engine, and an assignment whose pages the engine leaves to the coordinator, is rendered here.
        """
        if engine is None:
            self.feedback(assignment_ids)
            return
        autograded = os.path.join(self.coursedir.root, self.coursedir.autograded_directory)
        for aid, pages in engine.feedback(assignment_ids, self.db_url, autograded):
            if pages is None:
                self.feedback([aid])
            for student, files in (pages or {}).items():
                write_files(self.folder("feedback", student, aid), files)

    def feedback_path(self, student: str, assignment: str) -> list[Path]:
        """Return the feedback files of one submission."""
        folder = self.folder("feedback", student, assignment)
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
        The run starts with the audit event ``AUDIT_EVENT`` (PEP 578: the course folder, the
        working folder, ``autograde``), which an audit hook may log or refuse.
        """
        if self.deadlines is not None:  # an extension for nobody is bad input: nothing is graded
            check_students(self.deadlines, self._known_students())
        sys.audit(AUDIT_EVENT, str(self.root), str(self.work), autograde)
        with StopOnSignal(on_stop=self._abandon) as stop, stops_on_full_disk(self.work, self.db_url):
            return self._grade(stop, pairs, autograde=autograde, force=force, on_start=on_start,
                               on_result=on_result)

    def _abandon(self) -> None:
        """Stop what grades right now (a stop signal came): the engine starts nothing more, kills what runs."""
        if self._engine is not None:
            self._engine.abandon()

    def _grade(self, stop: StopOnSignal, pairs, *, autograde, force, on_start, on_result) -> ClassReport:
        """Plan → grade → deadlines → feedback → export; return the run's report."""
        clock, phases = [time.perf_counter()], {}

        def lap() -> float:  # seconds since the last lap
            clock.append(time.perf_counter())
            return clock[-1] - clock[-2]

        plan = self._plan(pairs, autograde=autograde, force=force)
        with self._engine_for(plan) as engine:  # started while the assignments are prepared; closed at the end
            phases["prepare"] = lap()
            results = self._results(plan, engine, stop, on_start, on_result)
            phases["autograde"] = lap()
            if self.deadlines is not None:
                late = reconnecting(functools.partial(self._apply_deadlines, results), self.db_url)
                results = [replace(r, late=late.get((r.student, r.assignment))) for r in results]
            lap()
            graded = sorted({r.assignment for r in results if r.graded})
            reconnecting(functools.partial(self._feedback, engine, graded), self.db_url)
            feedback = sum(bool(self.feedback_path(r.student, r.assignment)) for r in results if r.graded)
            phases["feedback"] = lap()
        lap()
        csv_path = reconnecting(functools.partial(export_grades, self.db_url, self.work / "grades.csv", results,
                                                  course_id=self.course_id), self.db_url)
        phases["export"] = lap()
        roster_ids = {s.id for s in self.roster}
        return ClassReport(
            results=tuple(results),
            seconds=time.perf_counter() - clock[0],
            work=self.work,
            grades_csv=csv_path,
            feedback=feedback,
            not_on_roster=tuple(sorted({s for s, _ in plan.pairs} - roster_ids)) if self.roster else (),
            phases=phases,
            sandboxed=self.sandboxed or not autograde,  # no notebook ran: nothing to warn about
            stopped_by=stop.signal,
            stop_status=128 + stop.number if stop.number else 0,
            outside_exchange=self.outside_exchange(results),
        )

    def _plan(self, pairs: Sequence[Pair] | None, *, autograde: bool, force: bool) -> RunPlan:
        """Return the plan of a run of ``pairs`` (None: every submission in ``<work>/submitted``): ``plan_run``."""
        pairs = sorted(pairs if pairs is not None else find_submissions(self.submitted))
        return plan_run(pairs, set(assignments(self.root)), Manifest.load(self.work),
                        lambda s, a: self.digests.submission(a, self.folder("submitted", s, a)),
                        self.read_back, autograde=autograde, force=force)

    @contextlib.contextmanager
    def _engine_for(self, plan: RunPlan) -> Iterator[Engine | None]:
        """Prepare the plan's assignments while the engine that grades them starts; yield it (None: nothing to grade).

        It lives for the block (its graders render the feedback too) and is closed when the block ends, whatever
        happened. Raises what starting it raised (WorkerRefused, SandboxUnavailable).
        """
        count = sum(p not in plan.skipped and p[1] in plan.known for p in plan.pairs) if plan.autograde else 0
        engine = self._engine = self._new_engine(count)
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="ctx-engine-start") as starting:
                started = starting.submit(engine.start) if engine is not None else None
                plan.problems = self.prepare(plan.assignments()) if plan.autograde else {}
            if started is not None:
                started.result()
            yield engine
        finally:
            self._engine = None
            if engine is not None:
                engine.close()

    def _new_engine(self, count: int) -> Engine | None:
        """Return the engine for ``count`` submissions, not started: Dask for more than one job or a cluster."""
        jobs = min(self.jobs, count)
        if count == 0:
            return None
        if self.cluster is None and jobs <= 1:
            return InProcessEngine(self.settings)
        with self.gradebook():  # created here, once, before anything else opens it
            pass
        settings = replace(self.settings, fingerprint=course_fingerprint(self.root))
        return DaskEngine(settings, jobs=jobs, cluster=self.cluster)

    def _results(self, plan: RunPlan, engine: Engine | None, stop: StopOnSignal, on_start: Callable | None,
                 on_result: Callable | None) -> list[GradeResult]:
        """Return every pair's result, in order: graded by the engine and written, read back, or why it was not."""
        graded = self._graded(engine, plan.to_grade(), stop)
        results: list[GradeResult] = []
        for index, (student, aid) in enumerate(plan.pairs, start=1):
            if on_start is not None:
                on_start(index, len(plan.pairs), student, aid)
            if aid not in plan.known:
                result = GradeResult(student, aid, False, reason=f"{aid!r} is not an assignment of this course")
            elif aid in plan.problems:
                result = GradeResult(student, aid, False, reason=plan.problems[aid])
            elif (student, aid) in plan.skipped:
                result = plan.skipped[(student, aid)]
            elif not plan.autograde:
                result = self.read_back(student, aid)
            else:
                result = next(graded)
                plan.manifest.record((student, aid), plan.digests[(student, aid)] if result.graded else None)
            results.append(result)
            if on_result is not None:
                on_result(index, len(plan.pairs), result)
        return results

    def _graded(self, engine: Engine | None, pairs: list[Pair], stop: StopOnSignal) -> Iterator[GradeResult]:
        """Hand every submission to the engine; write each one it sends back, in order; yield its GradeResult.

        Raises WorkerRefused when a worker turns out unable to grade (one that joined late).
        """
        if not pairs:
            return
        assert engine is not None  # one whenever there is a submission to grade (_engine_for)
        self._add_new_students(pairs)
        with self.gradebook() as gb:  # each assignment as this run's prepare left it
            prepared = {a: PreparedAssignment(read_definition(gb, a), read_files(self.folder("release", ".", a)))
                        for a in sorted({a for _, a in pairs})}
        sent: list[Submission] = [(s, a, read_files(self.folder("submitted", s, a)), prepared[a]) for s, a in pairs]
        for index, graded in engine.grade(sent):
            student, assignment = pairs[index]
            if graded.refusal:
                raise WorkerRefused(f"worker {graded.worker} cannot grade: {graded.refusal}")
            result = self._write(student, assignment, graded)
            if stop.signal and not result.graded:  # not started, or its kernel killed by the stop
                stopped, ran = f"the run was stopped by {stop.signal}", result.reason != NOT_STARTED
                reason = f"abandoned: {stopped} while it ran" if ran else f"{stopped} before it started"
                result = replace(result, reason=reason)
            yield result

    def _write(self, student: str, assignment: str, graded: GradedSubmission) -> GradeResult:
        """Write what an engine sent back into the gradebook and the autograded folder; return the result.

        A lost connection is retried (``reconnect.py``); a server that stays away stops the run
        (``GradebookUnreachable``). Any other failure costs this submission only.
        """
        try:
            result = reconnecting(functools.partial(self._write_once, student, assignment, graded), self.db_url)
        except GradebookUnreachable:
            raise
        except Exception as exc:  # one submission's rows, not the class
            if is_disk_full(exc, self.work, *gradebook_folders(self.db_url)):  # every later one would fail alike
                raise  # the run stops (disk_space.py)
            reason = f"graded, but the gradebook could not be written: {exc}"
            result = GradeResult(student, assignment, False, reason=reason, log=graded.result.log)
        return replace(result, seconds=graded.result.seconds)

    def _apply_deadlines(self, results: Sequence[GradeResult]) -> dict:
        assert self.deadlines is not None  # called only with deadlines
        with self.gradebook() as gb:
            return apply_deadlines(gb, self.deadlines, [(r.student, r.assignment) for r in results if r.graded])

    def _write_once(self, student: str, assignment: str, graded: GradedSubmission) -> GradeResult:
        """Write one result in one connection (hand grades kept around the rows); run again after a lost one."""
        with self.gradebook() as gb:  # one connection for every step (each opening checks every table)
            reopened = write_submission(gb, student, assignment, graded, snapshots=self.work / SNAPSHOTS,
                                        autograded=self.folder("autograded", student, assignment),
                                        feedback=self.folder("feedback", student, assignment))
            if not graded.result.graded:
                return graded.result
            opened = functools.partial(contextlib.nullcontext, gb)
            return replace(self._read_result(student, assignment, graded.result.log, opened), regrade=reopened)

    def outside_exchange(self, results: Sequence[GradeResult]) -> tuple[str, ...]:
        """Name the graded submissions that nbgrader's ``release_feedback`` cannot return (``outside_exchange``)."""
        return outside_exchange([(r.student, r.assignment) for r in results if r.graded], self.submitted)

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
            for student in sorted({s for s, a in pairs if any(self.folder("submitted", s, a).glob("*.ipynb"))}):
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
        if not self.folder("autograded", student, assignment).is_dir():
            result = GradeResult(student, assignment, False, reason="not autograded yet (run without --feedback-only)")
        else:
            try:
                result = self._read_result(student, assignment, "")
            except Exception as exc:
                result = GradeResult(student, assignment, False, reason=f"the gradebook could not be read: {exc}")
        return replace(result, seconds=time.perf_counter() - start)

    def _read_result(self, student: str, assignment: str, log: str,
                     gradebook: Callable[[], Gradebook] | None = None) -> GradeResult:
        """Read a graded submission's result back (``gradebook``: a function opening it; ``self.gradebook``)."""
        with (gradebook or self.gradebook)() as gb:
            sub = gb.find_submission(assignment, student)
            pending = sum(
                g.max_score for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade and g.max_score
            )
            notes = tamper_notes(gb, self.folder("submitted", student, assignment), assignment, self.root)
            auto, max_auto = float(sub.code_score or 0), float(sub.max_code_score or 0)
        notes += timeout_notes(self.folder("autograded", student, assignment), self.config.Execute.timeout)
        return GradeResult(student, assignment, True, auto, max_auto, float(pending), notes=notes, log=log)
