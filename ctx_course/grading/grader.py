"""Grade a class through nbgrader: plan the run, hand each submission to an engine, write what comes back.

Covers: registering the students of a roster, collecting submissions into the working folder,
generating every assignment into the gradebook (``prepare``), handing every student ×
assignment found in ``submitted/`` to an engine (``engine.py``: in this process, or on Dask
workers) and writing each result once: the hand grades kept (``hand_grades.py``), the rows and
the autograded folder written (``gradebook_writer.py``), the score and notes read back. Then the
late penalties (``deadlines.py``), the feedback HTML, the grades CSV, and the record of what
happened to each submission (score, or why it could not be graded). One broken submission never
costs another one its grade.

Elsewhere: grading one submission in a scratch folder (``autograde.py``); the records in
``records.py``; the roster and the submitted folders in ``submissions.py``; why a submission
failed in ``diagnosis.py``; the lines printed for the instructor and the grades CSV in
``report.py``.

Also: a *manifest* of what was graded (submission digest, source digest) so that a rerun skips
the unchanged submissions, and stopping cleanly on SIGTERM/SIGINT (``stopping.py``). Every
kernel runs in a bubblewrap sandbox (``sandbox/policy.py``) unless the grader is made with
``sandbox=False``.

Leaves out: the manual grading of free-response cells (the formgrader does it).

Vocabulary: *root* is the course folder (``nbgrader_config.py``, ``solutions/``); *work* is the
folder a grading run writes to (``grading/`` by default: ``submitted/``, ``autograded/``,
``feedback/``, ``gradebook.db``, ``grades.csv``); a *submission* is one student's folder for one
assignment, ``<work>/submitted/<student>/<assignment>/``; *auto points* come from the autograded
check cells, *manual points* from the free-response cells graded in the formgrader; the
*coordinator* is this process.
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
from .fingerprint import course_fingerprint, hash_tree
from .gradebook_writer import read_files, write_files, write_submission
from .hand_grades import SNAPSHOTS
from .reconnect import GradebookUnreachable, reconnecting
from .records import ClassReport, GradedSubmission, GradeResult, PreparedAssignment, Student
from .report import export_grades
from .stopping import StopOnSignal
from .submissions import collect, find_submissions
from .worker import render_feedback

__all__ = ["GRADING_VERSION", "MANIFEST", "Grader", "grading_config"]

# What was graded from which files (<work>/manifest.json), so that a rerun skips unchanged submissions.
MANIFEST = "manifest.json"
# Bumped when a change to grading itself must regrade every submission.
GRADING_VERSION = "3"


class Grader:
    """Grade the submissions of one course: the coordinator of a grading run, reused across runs.

    ``jobs`` submissions are autograded at once (default: one per core): one in this process,
    more by a LocalCluster of that many Dask worker processes; with ``cluster`` (a scheduler
    address), by the workers of that Dask cluster (see ``engine.py``). Example::

        grader = Grader(".", work="grading/example")
        grader.register(read_roster("examples/class/roster.csv"))
        grader.collect("examples/class/submitted")
        report = grader.grade()

    Raises SandboxUnavailable when the sandbox is asked for and bubblewrap cannot give it here.
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
        course = load_course_config(self.root, work=work)
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
        self._engine: Engine | None = None
        self._created = False  # the gradebook's tables
        self._source_digests: dict[str, str] = {}

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
        engine = self._engine
        if not isinstance(engine, DaskEngine) or self.cluster is not None or not assignment_ids:
            self.feedback(assignment_ids)
            return
        autograded = os.path.join(self.coursedir.root, self.coursedir.autograded_directory)
        futures = engine.submit_each(render_feedback, [(aid, self.db_url, autograded) for aid in assignment_ids])
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
        """
        if self.deadlines is not None:  # an extension for nobody is bad input: nothing is graded
            check_students(self.deadlines, self._known_students())
        with StopOnSignal(on_stop=self._abandon) as stop, stops_on_full_disk(self.work, self.db_url):
            try:
                return self._grade(stop, pairs, autograde=autograde, force=force, on_start=on_start,
                                   on_result=on_result)
            finally:
                self._close_engine()

    def _abandon(self) -> None:
        """Stop what grades right now (a stop signal came): the engine starts nothing more, kills what runs."""
        if self._engine is not None:
            self._engine.abandon()

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
        starting = self._start_engine(sum(p not in skipped and p[1] in known for p in pairs)) if autograde else None
        try:
            problems = self.prepare(sorted({aid for _, aid in pairs if aid in known})) if autograde else {}
        finally:
            if starting is not None:
                starting.join()
        if starting is not None and starting.error is not None:
            raise starting.error
        phases["prepare"] = time.perf_counter() - tick

        tick = time.perf_counter()
        todo = [(s, a) for s, a in digests if a not in problems and (s, a) not in skipped]
        graded = self._graded(todo, stop)
        results: list[GradeResult] = []
        for index, (student, aid) in enumerate(pairs, start=1):
            if on_start is not None:
                on_start(index, len(pairs), student, aid)
            if aid not in known:
                result = GradeResult(student, aid, False, reason=f"{aid!r} is not an assignment of this course")
            elif aid in problems:
                result = GradeResult(student, aid, False, reason=problems[aid])
            elif (student, aid) in skipped:
                result = skipped[(student, aid)]
            elif not autograde:
                result = self.read_back(student, aid)
            else:
                result = next(graded)
                manifest.pop(f"{student}/{aid}", None)
                if result.graded:
                    manifest[f"{student}/{aid}"] = digests[(student, aid)]
                self._write_manifest(manifest)
            results.append(result)
            if on_result is not None:
                on_result(index, len(pairs), result)
        if stop.signal or not isinstance(self._engine, DaskEngine) or self.cluster is not None:
            self._close_engine()  # only the workers of this machine render the feedback too (see _feedback)
        phases["autograde"] = time.perf_counter() - tick

        if self.deadlines is not None:
            late = reconnecting(functools.partial(self._apply_deadlines, results), self.db_url)
            results = [replace(r, late=late.get((r.student, r.assignment))) for r in results]
        tick = time.perf_counter()
        reconnecting(functools.partial(self._feedback, sorted({r.assignment for r in results if r.graded})),
                     self.db_url)
        feedback = sum(bool(self.feedback_path(r.student, r.assignment)) for r in results if r.graded)
        phases["feedback"] = time.perf_counter() - tick
        self._close_engine()

        tick = time.perf_counter()
        csv_path = reconnecting(functools.partial(export_grades, self.db_url, self.work / "grades.csv", results,
                                                  course_id=self.course_id), self.db_url)
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

    def _start_engine(self, count: int) -> _Starting | None:
        """Start the engine in the background when there is a submission to grade: Dask for more than one job.

        Its start-up overlaps the preparation of the assignments; ``join()`` the thread returned.
        """
        jobs = min(self.jobs, count)
        if count == 0:
            return None
        if self.cluster is None and jobs <= 1:
            self._engine = InProcessEngine(self.settings)
        else:
            with self.gradebook():  # created here, once, before anything else opens it
                pass
            settings = replace(self.settings, fingerprint=course_fingerprint(self.root))
            self._engine = DaskEngine(settings, jobs=jobs, cluster=self.cluster)
        starting = _Starting(self._engine.start)
        starting.start()
        return starting

    def _close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def _graded(self, pairs: list[tuple[str, str]], stop: StopOnSignal) -> Iterator[GradeResult]:
        """Hand every submission to the engine; write each one it sends back, in order; yield its GradeResult.

        Raises WorkerRefused when a worker turns out unable to grade (one that joined late).
        """
        if not pairs:
            return
        self._add_new_students(pairs)
        with self.gradebook() as gb:  # each assignment as this run's prepare left it
            prepared = {a: PreparedAssignment(read_definition(gb, a), read_files(self.folder("release", ".", a)))
                        for a in sorted({a for _, a in pairs})}
        sent: list[Submission] = [(s, a, read_files(self.folder("submitted", s, a)), prepared[a]) for s, a in pairs]
        assert self._engine is not None
        for index, graded in self._engine.grade(sent):
            student, assignment = pairs[index]
            if graded.refusal:
                raise WorkerRefused(f"worker {graded.worker} cannot grade: {graded.refusal}")
            result = self._write(student, assignment, graded)
            if stop.signal and not result.graded:  # not started, or its kernel killed by the stop
                if result.reason == NOT_STARTED:
                    result = replace(result, reason=f"the run was stopped by {stop.signal} before it started")
                else:
                    result = replace(result, reason=f"abandoned: the run was stopped by {stop.signal} while it ran")
            yield result

    def _write(self, student: str, assignment: str, graded: GradedSubmission) -> GradeResult:
        """Write what an engine sent back into the gradebook and the autograded folder; return the result.

        A lost connection to the gradebook's server is retried (``reconnect.py``); if the server stays
        away, ``GradebookUnreachable`` stops the run. Any other failure costs this submission only.
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
        """Name the graded submissions that nbgrader's ``release_feedback`` cannot return to their learner.

        A submission made with ``nbgrader submit`` carries ``timestamp.txt`` and
        ``submission_secret.txt``; one copied in with ``--submissions`` has neither, and its
        learner has no secret to find the page by. Named only for assignments that others handed
        in through the exchange (a class graded wholly from an LMS download is not flagged).
        Example: ``("cai 02-remaining",)``.
        """
        secret_file = "submission_secret.txt"
        has_secret = {
            (r.student, r.assignment): (self.folder("submitted", r.student, r.assignment) / secret_file).is_file()
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
        hash_tree(sha, self.folder("submitted", student, assignment))
        return sha.hexdigest()

    def _source_digest(self, assignment: str) -> str:
        cache = self._source_digests
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

    # -- helpers
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

