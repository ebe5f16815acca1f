"""Grade on Dask's distributed scheduler: workers on this machine (``--jobs N``) or any (``--cluster``).

Covers: ``default_jobs`` and ``check_jobs`` (how many workers unless told), ``check_cluster``
(which scheduler addresses are accepted), and ``DaskEngine``, which starts a ``LocalCluster`` of
N single-threaded worker processes or connects to an existing scheduler, registers the
``GradingWorker`` plugin, makes every worker prove it can grade (``worker.readiness``) before
it gets work, submits one task per submission and hands the results back in submission order.

Workers execute, the coordinator writes: a task returns plain data (``GradedSubmission``) and
the caller (``grader.py``) writes it into the gradebook. Faults: a worker that dies while
grading has its task run once more on another worker (the scheduler's ``allowed-failures`` is
set to 1); a submission that costs two workers their life is reported as not graded with that
reason. A stop (SIGTERM/SIGINT) cancels every task not finished and kills the kernel running on
every worker; what was graded before is kept.

Why TLS across machines: a Dask worker runs whatever code a client sends it, and the scheduler
accepts any client that reaches it; a ``tcp://`` address that is not on this machine is refused,
``tls://`` with Dask's security settings (``distributed.comm.tls.*``) is what the README shows.

Leaves out: what a task does on the worker (``worker.py``), what is written (``grader.py``,
``gradebook_writer.py``), starting workers on other machines (``dask worker``, dask-jobqueue,
dask-kubernetes: see the README).

Vocabulary: a *job* is one worker process grading one submission at a time.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import socket
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import CancelledError
from urllib.parse import urlsplit

from .records import GradedSubmission, GradeResult, PreparedAssignment, WorkerRefused
from .worker import (
    PLUGIN_NAME,
    GradingWorker,
    WorkerSettings,
    abandon_kernel,
    grade_submission,
    readiness,
)

# What the process that forks this machine's worker processes imports once, so that no worker
# imports the grader (nbgrader, nbconvert, SQLAlchemy, Dask) again: about 1.5 CPU seconds each.
FORKSERVER_PRELOAD = ("distributed", "ctx_course.grading.worker", "ctx_course.grading.grader")
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
        for index, graded in engine.grade([("ada", "02-remaining", files)]):
            ...
        engine.close()

    With ``jobs`` it starts a LocalCluster of that many single-threaded worker processes (its
    HTTP routes on a free loopback port, no profiler sampling the grading thread, no memory
    limit of Dask's own: every kernel has the sandbox's); with ``cluster``
    it uses the workers of an existing scheduler, each of which must run one task at a time
    (``dask worker --nthreads 1``).
    """

    def __init__(self, settings: WorkerSettings, *, jobs: int | None = None, cluster: str | None = None):
        self.settings = settings
        self.jobs = default_jobs() if jobs is None else check_jobs(jobs)
        self.address = None if cluster is None else check_cluster(cluster)
        self.cluster = None
        self.client = None
        self._futures: list = []
        self._running_at_stop: set = set()
        self._stopping = False
        self._lock = threading.Lock()

    # -- starting
    def start(self) -> None:
        """Start or reach the workers, register the plugin, check every worker; raise WorkerRefused."""
        import dask
        from distributed import Client, LocalCluster

        with dask.config.set({
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
                    dashboard_address="127.0.0.1:0",  # Dask's HTTP routes on a free port of this machine only
                    memory_limit=0, silence_logs=logging.ERROR,
                    env=dict(os.environ),  # as now, not as when the fork server started (PATH, CTX_COURSE_ROOT)
                )
                self.client = Client(self.cluster, set_as_default=False)
            else:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        self.client.run_on_scheduler(_allow_one_retry)
        self.client.register_plugin(GradingWorker(self.settings), name=PLUGIN_NAME)
        self.check_workers()

    def check_workers(self) -> None:
        """Raise WorkerRefused naming the first worker that cannot grade (or when there is none)."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        if not workers:
            raise WorkerRefused(f"the Dask scheduler at {self.client.scheduler.address} has no worker")
        for address, info in sorted(workers.items()):
            if info.get("nthreads") != 1:
                raise WorkerRefused(f"worker {address} runs {info.get('nthreads')} tasks at once; "
                                    "start it with `dask worker --nthreads 1`")
        answers = self.client.run(readiness, self.settings, on_error="return")
        for address, problem in sorted(answers.items()):
            if isinstance(problem, BaseException):
                problem = f"{type(problem).__name__}: {problem}"
            if problem is not None:
                raise WorkerRefused(f"worker {address} cannot grade: {problem}")

    # -- grading
    def grade(self, submissions: Iterable[tuple[str, str, dict[str, bytes], PreparedAssignment]],
              ) -> Iterator[tuple[int, GradedSubmission]]:
        """Submit every (student, assignment, files, prepared assignment); yield (index, GradedSubmission) in order.

        A submission whose task could not finish (two workers died running it, the run was
        stopped) comes back as a not-graded result saying so.
        """
        submissions = list(submissions)
        futures = []
        workers = self.jobs_running()
        for index, (student, assignment, files, prepared) in enumerate(submissions):
            # no kernel launched ahead once no worker will get another submission after this one
            more = len(submissions) - index - 1 >= workers
            futures.append(self.client.submit(
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
        return max(1, len(self.client.scheduler_info(n_workers=-1)["workers"]))

    def _outcome(self, future, student: str, assignment: str) -> GradedSubmission:
        from distributed import KilledWorker

        try:
            return future.result()
        except CancelledError:
            when = "while it ran" if future.key in self._running_at_stop else "before it started"
            return GradedSubmission(GradeResult(student, assignment, False, reason=f"stopped {when}"))
        except KilledWorker:
            return GradedSubmission(GradeResult(
                student, assignment, False,
                reason=f"{ALLOWED_FAILURES + 1} grading workers died while grading it (it was retried once elsewhere)",
            ))
        except Exception as exc:  # the task failed on the worker: one submission, not the class
            reason = f"the grading worker failed: {type(exc).__name__}: {exc}"
            return GradedSubmission(GradeResult(student, assignment, False, reason=reason))

    def submit_each(self, function, arguments: Iterable[tuple]) -> list:
        """Run ``function(*args)`` for each tuple on the workers; return the futures, in order."""
        futures = [self.client.submit(function, *args, pure=False) for args in arguments]
        with self._lock:
            self._futures = futures
        return futures

    def map(self, function, arguments: Iterable[tuple]) -> list:
        """Run ``function(*args)`` for each tuple on the workers; return the results in order."""
        return self.client.gather(self.submit_each(function, arguments))

    # -- stopping
    def abandon(self) -> None:
        """Cancel every task not finished and kill the kernel running on every worker (the run was asked to stop)."""
        with self._lock:
            if self._stopping or self.client is None:
                return
            self._stopping = True
            futures = [f for f in self._futures if not f.done()]
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
