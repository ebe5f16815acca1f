"""Autograde several submissions at once: one worker process per job, each with kernels of its own.

Covers: ``default_jobs`` (how many submissions run at once unless told), and ``ParallelAutograde``,
which starts the worker processes and hands them submissions one at a time, giving the results
back in submission order as soon as they are known, then the feedback, one assignment per task.

Each worker builds its own ``Grader`` (so its own NbGraderAPI and its own ``KernelPool``) with the
factory it is given (pickled by reference, so this module never imports the grader): a
kernel is launched, used for one notebook and stopped inside one worker, exactly as in a run
with one job, and whatever ``sandbox/kernels.py`` does to launch a kernel applies to every worker alike.

Why processes that each write the gradebook, and not workers that only execute notebooks while
the parent writes: nbgrader's autograde interleaves its gradebook writes with the notebook run
(the submission's timestamp first, then every grade and comment), and splitting it would mean
re-implementing it. SQLite serialises the writers itself: a writer waits for the lock (five
seconds by default) and each transaction lasts milliseconds. Two races remain, and a submission
that meets one is autograded again (what a second run would do): the lock held past the wait
("database is locked"), and two workers adding the same new student at once, each grading one of
her submissions (the second insert fails with an IntegrityError before anything else is written).
Everything before (registering the roster, generating the assignments) and after (feedback,
grades.csv) stays in the parent, one writer.

Leaves out: grading across machines (see the README), and which submissions to grade.

Vocabulary: a *job* is one submission being graded; a *worker* is the process grading it.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from .records import GradeResult

# Worker processes never start as a copy of the parent (it may hold a gradebook connection and
# an event loop): where available, a fork server that imported the grader once forks them, so
# the import is paid once per run instead of once per worker; elsewhere each starts afresh.
PRELOAD = ["ctx_course.grading.grader"]

# What nbgrader's log says when another worker held the gradebook's lock for too long, or added
# the same new student a moment earlier.
DATABASE_RACES = ("database is locked", "IntegrityError")
RACE_RETRIES = 3


def default_jobs() -> int:
    """Return how many submissions to grade at once by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs) -> int:
    """Return ``jobs`` if it is a positive whole number; otherwise raise ValueError."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive whole number (got {jobs!r})")
    return jobs


class ParallelAutograde:
    """Worker processes that autograde submissions of one course, each in its own kernels.

    The workers start as soon as this is created (their start-up overlaps whatever the parent
    does next, such as generating the assignments). Example::

        with ParallelAutograde(grader.make_worker, jobs=2) as workers:
            for result in workers.results([("ada", "02-remaining", 1), ("ben", "02-remaining", 1)]):
                print(result.auto_score)

    ``make_grader`` builds the Grader of one worker (``Grader.make_worker``: the same course,
    sandbox and limits, one job); it must pickle, so a ``functools.partial`` of the class.
    """

    def __init__(self, make_grader: Callable[[], Any], jobs: int):
        self.make_grader = make_grader
        self.jobs = check_jobs(jobs)
        self._context = _context()
        self._workers: list[tuple[multiprocessing.Process, Connection]] = []
        self._stopping = False  # set by abandon(): no new task, no replacement worker
        # Starting waits for the fork server's import: let the parent go on meanwhile.
        self._starting = threading.Thread(target=self._start_all, daemon=True)
        self._starting.start()

    def _start_all(self) -> None:
        for _ in range(self.jobs):
            self._workers.append(self._start())

    def _start(self) -> tuple[multiprocessing.Process, Connection]:
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(self.make_grader, child_end), daemon=True)
        process.start()
        child_end.close()
        return process, parent_end

    def results(self, submissions: Iterable[tuple[str, str, int]]) -> Iterator[GradeResult]:
        """Autograde every (student, assignment, notebooks) submission; yield the GradeResults in order.

        A result is yielded as soon as it and every one before it are known. A worker that dies
        (killed, out of memory) costs only the submission it was grading: that one is reported
        as not graded and a new worker takes its place.
        """
        def stopped(task, exitcode):
            return GradeResult(task[1], task[2], False,
                               reason=f"the grading process stopped (exit code {exitcode}) while grading it")

        yield from self._run([("autograde", student, assignment, notebooks)
                              for student, assignment, notebooks in submissions], stopped)

    def feedback(self, assignment_ids: Iterable[str]) -> None:
        """Write the feedback of every autograded submission of each assignment, one assignment per task."""
        for _ in self._run([("feedback", aid) for aid in assignment_ids], lambda task, exitcode: None):
            pass

    def _run(self, tasks: list[tuple], stopped) -> Iterator:
        """Hand the tasks out one at a time; yield their answers in order (``stopped(task, exitcode)`` for a
        lost one)."""
        self._starting.join()
        pending = list(tasks)
        done: dict[int, object] = {}
        busy: dict[int, int] = {}  # worker slot -> index of the pair it grades
        following, next_up = 0, 0
        while following < len(pending):
            if self._stopping and not busy:  # abandoned: what was never handed out is lost too
                for index in range(next_up, len(pending)):
                    done[index] = stopped(pending[index], None)
                next_up = len(pending)
            for slot in range(len(self._workers)):
                if slot not in busy and next_up < len(pending) and not self._stopping:
                    # Launch a kernel ahead only while every worker will get another task after this one.
                    more = len(pending) - next_up - 1 >= len(self._workers)
                    self._send(slot, (*pending[next_up], more))
                    busy[slot] = next_up
                    next_up += 1
            ready = wait([conn for slot, (_, conn) in enumerate(self._workers) if slot in busy]
                         + [proc.sentinel for slot, (proc, _) in enumerate(self._workers) if slot in busy])
            for slot in list(busy):
                process, conn = self._workers[slot]
                if conn in ready or process.sentinel in ready:
                    try:
                        done[busy[slot]] = conn.recv()
                    except (EOFError, OSError):
                        conn.close()
                        process.join()
                        done[busy[slot]] = stopped(pending[busy[slot]], process.exitcode)
                        if not self._stopping:
                            self._workers[slot] = self._start()
                    del busy[slot]
            while following in done:
                yield done.pop(following)
                following += 1

    def _send(self, slot: int, task: tuple) -> None:
        try:
            self._workers[slot][1].send(task)
        except OSError:  # the worker died while idle: a new one takes the task
            process, conn = self._workers[slot]
            conn.close()
            process.join()
            self._workers[slot] = self._start()
            self._workers[slot][1].send(task)

    def abandon(self) -> None:
        """Kill every worker now (the grading run was asked to stop); safe in a signal handler.

        The submissions they were grading come back as not graded; no task is handed out after.
        """
        self._stopping = True
        for process, _ in list(self._workers):
            try:
                process.kill()
            except (OSError, AttributeError):
                pass

    def close(self) -> None:
        """Ask every worker to stop its kernels and exit; wait for them."""
        self._starting.join()
        for _process, conn in self._workers:
            try:
                conn.send(None)
            except OSError:
                pass
        for process, conn in self._workers:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
            conn.close()
        self._workers = []

    def __enter__(self) -> ParallelAutograde:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def _serve(make_grader: Callable[[], Any], conn: Connection) -> None:
    """Worker loop: build a Grader, autograde each pair received, send back its GradeResult."""
    import warnings

    from nbformat.warnings import MissingIDFieldWarning
    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)
    warnings.filterwarnings("ignore", category=MissingIDFieldWarning)
    grader = make_grader()
    try:
        while True:
            try:
                task = conn.recv()
            except EOFError:
                break
            if task is None:
                break
            kind, *arguments, more = task
            if kind == "autograde":
                student, assignment, notebooks = arguments
                grader.pool.plan(None if more else notebooks)  # no kernel launched ahead if none will follow
                conn.send(autograde_with_retries(grader, student, assignment))
            else:
                grader.feedback(arguments)
                conn.send(None)
    finally:
        if grader.pool is not None:
            grader.pool.close()
        grader.builds.close()
        conn.close()


def autograde_with_retries(grader, student: str, assignment: str):
    """Autograde one submission; if it lost a race for the gradebook to another worker, try again."""
    for attempt in range(RACE_RETRIES + 1):
        result = grader.autograde(student, assignment)
        lost_race = not result.graded and any(sign in result.log for sign in DATABASE_RACES)
        if not lost_race or attempt == RACE_RETRIES:
            return result
        time.sleep(0.5 * (attempt + 1))
    return result
