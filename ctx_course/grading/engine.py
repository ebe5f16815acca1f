"""Engines that grade submissions: in this process (``--jobs 1``) or on Dask workers (``--jobs N``, ``--cluster``).

Covers: ``Engine`` (the one interface ``grader.py`` grades through: ``start``, ``grade``, ``feedback``, ``abandon``,
``close``), ``InProcessEngine``, ``DaskEngine`` (and its ``run_on_workers``), ``default_jobs``, ``check_cluster``.

``InProcessEngine`` is one ``SubmissionGrader`` in this process. ``DaskEngine`` starts a
``LocalCluster`` of N single-threaded worker processes or connects to an existing scheduler,
registers the ``GradingWorker`` plugin, makes every worker prove it can grade
(``worker.readiness``) before it gets work, submits one task per submission and hands the results
back in submission order; the workers of this machine then render the feedback pages too.
``default_jobs`` and ``check_jobs`` say how many workers unless told, ``check_cluster`` which
scheduler addresses are accepted.

Engines execute, the coordinator writes: every engine returns plain data (``GradedSubmission``,
made by ``autograde.SubmissionGrader`` wherever it runs; feedback pages as bytes) and the caller
writes it into the gradebook and the working folder. Faults on Dask: a worker that dies while
grading has its task run once more on another worker (the scheduler's ``allowed-failures`` is
set to 1); a submission that costs two workers their life is reported as not graded with that
reason. A stop (SIGTERM/SIGINT) starts no other
submission and kills the kernel running; what was graded before is kept.

Nothing is left behind: a LocalCluster started here keeps Dask's spill folder in a folder of this
process (removed by ``close``, or by the next run after a kill) and starts no dashboard.

Why TLS across machines: a Dask worker runs whatever code a client sends it, and the scheduler
accepts any client that reaches it; a ``tcp://`` address that is not on this machine is refused,
``tls://`` with Dask's security settings (``distributed.comm.tls.*``) is what ``docs/cluster.md`` shows.

Leaves out: grading one submission (``autograde.py``), what a task does on the worker
(``worker.py``), what is written (``grader.py``, ``gradebook_writer.py``), starting workers on
other machines (``dask worker``, dask-jobqueue, dask-kubernetes: see ``docs/cluster.md``).

Vocabulary: a *job* is one grader (this process, or a worker process) grading one submission at a
time; a *submission* handed to an engine is (student, assignment, files, prepared assignment).
"""
from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ..scratch_folders import owned_folder, remove_abandoned
from .autograde import GradingSettings, SubmissionGrader
from .records import GradedSubmission, GradeResult, PreparedAssignment, WorkerRefused
from .worker import PLUGIN_NAME, GradingWorker, abandon_kernel, grade_submission, readiness, render_feedback

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

# One submission handed to an engine: (student, assignment, {relative path: bytes}, the assignment prepared).
Submission = tuple[str, str, dict[str, bytes], PreparedAssignment]
# What an engine answers for a submission it could not start because the run was asked to stop.
NOT_STARTED = "stopped before it started"
# One assignment's feedback pages from an engine: (assignment, {student: {file name: bytes}}), or
# (assignment, None) when the coordinator renders them itself.
FeedbackPages = tuple[str, dict[str, dict[str, bytes]] | None]

# What the process that forks this machine's worker processes imports once, so that no worker
# imports the grader (nbgrader, nbconvert, SQLAlchemy, Dask) again: about 1.5 CPU seconds each.
FORKSERVER_PRELOAD = ("distributed", "ctx_course.grading.worker", "ctx_course.grading.autograde")
# Dask's housekeeping that a grading run has no use for, each a timer in every Dask process
# (scheduler, nannies, workers): the event loop's health check every 20 ms, the system monitor
# every 500 ms (for the dashboard's plots), work stealing and the active memory manager (a task
# waits on the scheduler until a worker is free, and its result is kept nowhere but the
# coordinator). Idle, a LocalCluster of two workers took about 9% of a core with them.
QUIET_CLUSTER = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.active-memory-manager.start": False,
}
# How many times a task may be running on a worker that dies before it is given up.
ALLOWED_FAILURES = 1
# Seconds to wait for the workers of an existing cluster to answer.
CONNECT_TIMEOUT = 30
# The folder of a LocalCluster's processes (Dask's dask-scratch-space), in the temporary folder:
# this prefix, the coordinator's process id, a dash.
CLUSTER_PREFIX = "ctx-dask-"


class Engine(Protocol):
    """What the coordinator grades through: ``start()``, ``grade(submissions)`` once, ``feedback(...)``, ``close()``.

    ``grade`` yields (index, GradedSubmission) in the order given; ``abandon()`` (a stop signal
    came) returns at once and is safe in a signal handler: no submission starts after it, the one
    running is killed, and each comes back not graded, ``NOT_STARTED`` for those never begun.
    ``feedback(assignments, db_url, autograded)`` yields (assignment, pages) in the order given:
    the pages rendered where the engine's graders are, from the coordinator's gradebook and
    autograded folder (read only), or None for the coordinator to render them itself.
    """

    def start(self) -> None: ...

    def grade(self, submissions: Sequence[Submission]) -> Iterator[tuple[int, GradedSubmission]]: ...

    def feedback(self, assignments: Sequence[str], db_url: str, autograded: str) -> Iterator[FeedbackPages]: ...

    def abandon(self) -> None: ...

    def close(self) -> None: ...


class InProcessEngine:
    """One SubmissionGrader in this process, grading one submission after the other (``--jobs 1``)."""

    def __init__(self, settings: GradingSettings):
        self.settings = settings
        self.grader: SubmissionGrader | None = None
        self._stopping = False

    def start(self) -> None:
        """Make the SubmissionGrader (raises SandboxUnavailable when the sandbox cannot be had here)."""
        self.grader = SubmissionGrader(self.settings)

    def grade(self, submissions: Sequence[Submission]) -> Iterator[tuple[int, GradedSubmission]]:
        """Grade each submission when the next result is asked for; yield (index, GradedSubmission)."""
        if self.grader is None:
            raise RuntimeError("InProcessEngine.grade called before start()")
        for index, (student, assignment, files, prepared) in enumerate(submissions):
            if self._stopping:
                yield index, GradedSubmission(GradeResult(student, assignment, False, reason=NOT_STARTED))
                continue
            more = index < len(submissions) - 1
            yield index, self.grader.grade(student, assignment, files, prepared, more=more)

    def feedback(self, assignments: Sequence[str], db_url: str, autograded: str) -> Iterator[FeedbackPages]:
        """Yield (assignment, None) for each: in this process, the coordinator renders the pages itself."""
        for assignment in assignments:
            yield assignment, None

    def abandon(self) -> None:
        """Start no other submission; kill the kernel running (only a flag and a signal)."""
        self._stopping = True
        if self.grader is not None:
            self.grader.abandon()

    def close(self) -> None:
        """Remove the grader's scratch folder and its kernel launched ahead."""
        if self.grader is not None:
            self.grader.close()
            self.grader = None


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


def check_cluster(address) -> str:
    """Return a Dask scheduler address that may be used; raise ValueError for any other.

    ``tls://host:port`` anywhere, ``tcp://`` only on this machine (a worker runs what it is sent).

    >>> check_cluster("tls://grader.example.org:8786")
    'tls://grader.example.org:8786'
    >>> check_cluster("tcp://127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    """
    text = str(address)
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or parts.port is None:
        raise ValueError(f"cluster must be a scheduler address such as tls://host:8786 (got {address!r})")
    if parts.scheme == "tcp" and not _on_this_machine(parts.hostname):
        raise ValueError(
            "cluster must use tls:// with Dask's TLS settings when the scheduler is on another machine: "
            f"a Dask worker runs whatever it is sent (got {address!r})"
        )
    return f"{parts.scheme}://{parts.hostname}:{parts.port}" if ":" not in parts.hostname else text


def _start_method() -> dict:
    """Return the Dask setting that forks local workers from a server that imported the grader once.

    Dask spawns every worker process afresh by default, and each one then imports everything
    the grader needs. A fork server (where the platform has one) imports FORKSERVER_PRELOAD
    once, when the first LocalCluster of this process starts, and every worker it starts is a
    fork of it (a worker the nanny restarts after one died is spawned, as Dask does by default).
    """
    import multiprocessing

    import dask
    from distributed.utils import get_mp_context

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return {}
    setting = {"distributed.worker.multiprocessing-method": "forkserver"}
    with dask.config.set(setting):
        context = get_mp_context()  # Dask sets its own preload list once, on the first call
    context.set_forkserver_preload(list(FORKSERVER_PRELOAD))
    return setting


def _on_this_machine(host: str) -> bool:
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


class DaskEngine:
    """A Dask client and its grading workers. Example::

        engine = DaskEngine(settings, jobs=2)          # or cluster="tls://host:8786"
        engine.start()                                   # raises WorkerRefused
        for index, graded in engine.grade([("ada", "02-remaining", files, prepared)]):
            ...
        engine.close()

    With ``jobs`` it starts a LocalCluster of that many single-threaded worker processes (its
    HTTP routes on a free loopback port and no dashboard, its scratch space in ``folder``, no
    profiler sampling the grading thread, no memory limit of Dask's own: every kernel has the
    sandbox's); with ``cluster``
    it uses the workers of an existing scheduler, each of which must run one task at a time
    (``dask worker --nthreads 1``).
    """

    def __init__(self, settings: GradingSettings, *, jobs: int | None = None, cluster: str | None = None):
        self.settings = settings
        self.jobs = default_jobs() if jobs is None else check_jobs(jobs)
        self.address = None if cluster is None else check_cluster(cluster)
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self.folder: Path | None = None  # the LocalCluster's folder (Dask's spill and lock files)
        self._futures: list = []
        self._running_at_stop: set = set()
        self._stopping = False
        self._abandoned = False  # a stop signal came (set in the handler itself)
        self._lock = threading.Lock()

    # -- starting
    def start(self) -> None:
        """Start or reach the workers, register the plugin, check every worker; raise WorkerRefused."""
        import dask
        from distributed import Client, LocalCluster

        if self.address is None:
            remove_abandoned(CLUSTER_PREFIX)  # those of coordinators killed on this machine
            self.folder = owned_folder(CLUSTER_PREFIX)
        with dask.config.set({
            # the scheduler's and workers' dask-scratch-space (and its lock files) in this run's folder
            **({"temporary-directory": str(self.folder)} if self.folder is not None else {}),
            **_start_method(),
            "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
            "distributed.scheduler.worker-saturation": 1.0,  # a worker holds only the task it runs
            "distributed.worker.daemon": False,  # the kernels are its child processes
            "distributed.admin.tick.limit": "60s",  # a long notebook start is not a hung worker
            "distributed.worker.profile.enabled": False,  # its 10 ms stack sampling costs CPU on every worker
            **QUIET_CLUSTER,
        }):
            if self.address is None:
                self.cluster = LocalCluster(
                    n_workers=self.jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                    # Dask's HTTP routes (health, metrics) on a free port of this machine only, and no
                    # dashboard: nobody watches a grading run's plots
                    dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                    local_directory=str(self.folder), memory_limit=0, silence_logs=logging.ERROR,
                    env=dict(os.environ),  # as now, not as when the fork server started (PATH, CTX_COURSE_ROOT)
                )
                self.client = Client(self.cluster, set_as_default=False)
            else:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        self._connected().run_on_scheduler(_allow_one_retry)
        self._connected().register_plugin(GradingWorker(self.settings), name=PLUGIN_NAME)
        self.check_workers()

    def _connected(self) -> Client:
        if self.client is None:
            raise RuntimeError("DaskEngine used before start() or after close()")
        return self.client

    def check_workers(self) -> None:
        """Raise WorkerRefused naming the first worker that cannot grade (or when there is none)."""
        workers = self._connected().scheduler_info(n_workers=-1)["workers"]
        if not workers:
            raise WorkerRefused(f"the Dask scheduler at {self._connected().scheduler.address} has no worker")
        for address, info in sorted(workers.items()):
            if info.get("nthreads") != 1:
                raise WorkerRefused(f"worker {address} runs {info.get('nthreads')} tasks at once; "
                                    "start it with `dask worker --nthreads 1`")
        answers = self._connected().run(readiness, self.settings, on_error="return")
        for address, problem in sorted(answers.items()):
            if isinstance(problem, BaseException):
                problem = f"{type(problem).__name__}: {problem}"
            if problem is not None:
                raise WorkerRefused(f"worker {address} cannot grade: {problem}")

    # -- grading
    def grade(self, submissions: Sequence[Submission]) -> Iterator[tuple[int, GradedSubmission]]:
        """Submit every (student, assignment, files, prepared assignment); yield (index, GradedSubmission) in order.

        A submission whose task could not finish (two workers died running it, the run was
        stopped) comes back as a not-graded result saying so.
        """
        futures: list[Any] = []
        workers = self.jobs_running()
        for index, (student, assignment, files, prepared) in enumerate(submissions):
            if self._stopping:  # asked to stop before this one was sent
                futures.append(None)
                continue
            # no kernel launched ahead once no worker will get another submission after this one
            more = len(submissions) - index - 1 >= workers
            futures.append(self._connected().submit(
                grade_submission, student, assignment, files, more, prepared,
                key=f"grade-{index}-{student}-{assignment}", pure=False, retries=0,
            ))
        with self._lock:
            self._futures = futures
        for index, future in enumerate(futures):
            student, assignment = submissions[index][:2]
            yield index, self._outcome(future, student, assignment)

    def jobs_running(self) -> int:
        """Return how many workers there are now."""
        return max(1, len(self._connected().scheduler_info(n_workers=-1)["workers"]))

    def _outcome(self, future, student: str, assignment: str) -> GradedSubmission:
        from distributed import KilledWorker

        if future is None:
            return GradedSubmission(GradeResult(student, assignment, False, reason=NOT_STARTED))
        try:
            return future.result()
        except CancelledError:
            reason = "stopped while it ran" if future.key in self._running_at_stop else NOT_STARTED
            return GradedSubmission(GradeResult(student, assignment, False, reason=reason))
        except KilledWorker:
            return GradedSubmission(GradeResult(
                student, assignment, False,
                reason=f"{ALLOWED_FAILURES + 1} grading workers died while grading it (it was retried once elsewhere)",
            ))
        except Exception as exc:  # the task failed on the worker: one submission, not the class
            reason = f"the grading worker failed: {type(exc).__name__}: {exc}"
            return GradedSubmission(GradeResult(student, assignment, False, reason=reason))

    def feedback(self, assignments: Sequence[str], db_url: str, autograded: str) -> Iterator[FeedbackPages]:
        """Render each assignment's feedback pages on the workers; yield (assignment, pages) in order.

        Only the workers of a LocalCluster started here are on the coordinator's machine, where
        the gradebook and the autograded folder are: with ``cluster``, after a stop, or for an
        assignment whose task failed, the pages are None (the coordinator renders them).
        """
        if self.address is not None or self._abandoned or not assignments:
            for assignment in assignments:
                yield assignment, None
            return
        futures = self._submit_each(render_feedback, [(aid, db_url, autograded) for aid in assignments])
        for assignment, future in zip(assignments, futures):
            try:
                yield assignment, future.result()
            except (Exception, CancelledError):  # one assignment's pages, rendered by the coordinator instead
                yield assignment, None

    def run_on_workers(self, function: Callable, arguments: Iterable[tuple]) -> list:
        """Run ``function(*args)`` as a task on the workers for each tuple; return the results in order.

        Each task runs on one worker, one at a time there; ``function`` reaches the worker's state
        with ``worker.this_worker()`` (the leaderboard runs its notebooks in the workers' kernels).
        A stop cancels the tasks not finished, as it cancels grading.
        """
        return self._connected().gather(self._submit_each(function, arguments))

    def _submit_each(self, function: Callable, arguments: Iterable[tuple]) -> list:
        futures = [self._connected().submit(function, *args, pure=False) for args in arguments]
        with self._lock:
            self._futures = futures
        return futures

    # -- stopping
    def abandon(self) -> None:
        """Cancel every task not finished and kill the kernel running on every worker, in a thread of its own.

        Returns at once (talking to the scheduler is not for a signal handler).
        """
        self._abandoned = True
        threading.Thread(target=self.abandon_now, daemon=True).start()

    def abandon_now(self) -> None:
        """Cancel every task not finished and kill the kernel running on every worker (the run was asked to stop)."""
        with self._lock:
            if self._stopping or self.client is None:
                return
            self._stopping = True
            futures = [f for f in self._futures if f is not None and not f.done()]
        try:
            running = self.client.run(_executing, on_error="ignore")
            self._running_at_stop = {key for keys in running.values() for key in keys}
            self.client.cancel(futures)
            self.client.run(abandon_kernel, on_error="ignore")
        except Exception:  # the cluster is going away already
            pass

    def close(self) -> None:
        """Unregister from the scheduler; stop the LocalCluster this engine started (and every worker of it)."""
        if self.client is not None:
            try:
                if self.cluster is None:
                    self.client.unregister_worker_plugin(PLUGIN_NAME)
            except Exception:
                pass
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> DaskEngine:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _executing(dask_worker=None) -> list:
    """On a worker: the keys of the tasks it is running now (not those waiting in its queue)."""
    return [ts.key for ts in dask_worker.state.executing]


def _allow_one_retry(dask_scheduler=None) -> None:
    """On an existing scheduler: give up a task after two workers died running it."""
    dask_scheduler.allowed_failures = ALLOWED_FAILURES
