"""Kernels for a grading run: launched one notebook ahead, each used for one notebook only.

Covers:

- ``KernelPool``, which starts the kernel of the next notebook while the current one runs, each
  one talking to the grader over IPC sockets in its own folder (never TCP ports, which two kernels
  started at once can both pick), and (with a ``SandboxPolicy``) inside a bubblewrap sandbox of
  its own (``SandboxedKernelManager``);
- ``course_pool``, the pool of a course as the grading run and the leaderboard make it;
- ``ReadyKernelClient``, which starts a notebook as soon as its kernel answers;
- ``QuickStopKernelManager``, whose immediate shutdown waits only as long as the kernel's process
  takes to end, and ``stop_kernel``, which uses it and frees the kernel's folder;
- the kernels' command-line option (``KERNEL_LOG_LEVEL``).

Leaves out: running a notebook in a kernel of the pool (``execute.py``), which notebooks run and
what is done with the results (``ctx_course/grading/grader.py``), time limits (nbgrader's
``Execute.timeout``), what the sandbox lets a kernel see (``policy.py``).

Vocabulary: a *kernel manager* starts, watches and stops one kernel process; a kernel *launched
ahead* was started before its notebook was due; a kernel is *fresh* when no notebook ran in it;
a kernel's *folder* and *scratch copy* are described in ``policy.py``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager, KernelManager
from jupyter_core.utils import run_sync
from traitlets import Any

from ..scratch_folders import owned_folder, remove_abandoned
from .answer_session import abandon_sessions
from .policy import (
    DEFAULT_CPU_LIMIT,
    DEFAULT_MEMORY_LIMIT,
    SandboxPolicy,
    SandboxUnavailable,
    compile_course_packages,
    prepare_folder,
    sandbox_problem,
)

# Kernel command-line option: the grading run's kernels report errors only.
KERNEL_LOG_LEVEL = "--IPKernelApp.log_level=ERROR"
# A sandboxed kernel's folder, in the temporary folder: this prefix, the grading process's id, a dash.
KERNEL_FOLDER_PREFIX = "ctx-kernel-"
# A graded kernel's own stdout and stderr (file descriptors 1 and 2, which student code can write
# to directly) go nowhere: nothing a kernel writes reaches the instructor's console.
QUIET = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


class ReadyKernelClient(AsyncKernelClient):
    """An async kernel client whose ``wait_for_ready`` returns as soon as the kernel is ready.

    Ready means: the kernel answered ``kernel_info`` and one of its IOPub messages reached this
    client (so the outputs of the first cell will too). jupyter_client's own wait then listens
    for 0.2 s more to drop late IOPub messages; nbclient ignores every message that answers
    another request anyway, and those 0.2 s were idle time in every notebook graded.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                try:
                    await self.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass  # IOPub not connected yet: ask again
                else:
                    self._handle_kernel_info_reply(reply)
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")


CLIENT_CLASS = f"{__name__}.ReadyKernelClient"


class KernelPool:
    """Launch the kernel of the next notebook while the current one runs.

    Starting a kernel takes about half a second of the second or so a notebook needs; launched
    one notebook ahead, that start-up overlaps the previous notebook's run. Every notebook still
    gets a fresh kernel of its own: a kernel is never reused, or one student's monkey-patching
    would reach the next student. Example: ``pool.take()`` returns a started kernel manager and
    ``pool.launch_next()`` starts the one after it.

    ``plan(n)`` says that ``n`` more notebooks will run in this pool: no kernel is launched ahead
    after the last of them (it would start, import and be shut down unused). Without a plan, a
    kernel is always launched ahead.
    """

    def __init__(
        self,
        cwd: str | os.PathLike,
        kernel_name: str = "python3",
        extra_arguments: Sequence[str] = (),
        *,
        policy: SandboxPolicy | None = None,
        ahead: bool = True,
    ):
        self.cwd = str(cwd)
        self.kernel_name = kernel_name
        self.policy = policy
        self.ahead = ahead
        # nbclient keeps the IPython history in memory; so must a kernel started without it.
        self.extra_arguments = [*extra_arguments, "--HistoryManager.hist_file=:memory:"]
        self._waiting: AsyncKernelManager | None = None
        self.current: AsyncKernelManager | None = None
        self.remaining: int | None = None  # notebooks still to run here; None: not known

    def plan(self, notebooks: int | None) -> None:
        """Say how many more notebooks will take a kernel from this pool (None: not known)."""
        whole = isinstance(notebooks, int) and not isinstance(notebooks, bool)
        if notebooks is not None and (not whole or notebooks < 0):
            raise ValueError(f"notebooks must be a whole number of at least 0, or None (got {notebooks!r})")
        self.remaining = notebooks

    def _launch(self) -> AsyncKernelManager:
        env = dict(os.environ, NBGRADER_EXECUTION="autograde")  # as nbgrader sets it for autograding
        if self.policy is None:  # its sockets in a folder of its own (IpcSockets), removed when it stops
            manager = QuickStopKernelManager(kernel_name=self.kernel_name, client_class=CLIENT_CLASS)
            try:
                run_sync(manager.start_kernel)(extra_arguments=self.extra_arguments, cwd=self.cwd, env=env, **QUIET)
            except Exception:
                stop_kernel(manager)
                raise
            return manager
        folder = owned_folder(KERNEL_FOLDER_PREFIX)
        prepare_folder(folder)
        manager = SandboxedKernelManager(
            kernel_name=self.kernel_name,
            client_class=CLIENT_CLASS,
            transport="ipc",
            ip=str(folder / "run" / "kernel"),
            connection_file=str(folder / "run" / "kernel.json"),
        )
        manager.policy, manager.folder = self.policy, folder
        # jupyter_client would signal bwrap's process group; the kernel interrupts itself instead.
        spec = manager.kernel_spec
        if spec is None:  # only for an empty name: jupyter_client looks any other name up or raises NoSuchKernel
            raise ValueError(f"kernel_name must name a kernel spec (got {self.kernel_name!r})")
        spec.interrupt_mode = "message"
        try:
            run_sync(manager.start_kernel)(
                extra_arguments=self.extra_arguments, cwd=str(folder / "run"), env=env, **QUIET
            )
        except Exception:
            stop_kernel(manager)
            raise
        return manager

    def take(self) -> AsyncKernelManager:
        """Return a started kernel for one notebook (the one launched ahead, if it is alive)."""
        manager, self._waiting = self._waiting, None
        if self.remaining:
            self.remaining -= 1
        if manager is not None and not run_sync(manager.is_alive)():
            stop_kernel(manager)
            manager = None
        return manager if manager is not None else self._launch()

    def launch_next(self) -> None:
        """Start the next notebook's kernel, unless one is waiting, none is planned or ``ahead`` is off."""
        if self.ahead and self._waiting is None and self.remaining != 0:
            self._waiting = self._launch()

    def abandon(self) -> None:
        """Kill the kernel of the notebook now running and every learner's answer process (the run was asked to stop).

        Only sends signals, so it is safe in a signal handler; nbclient then finds the kernel dead, and
        an evaluation waiting on a learner's call gets its answer at once ("stopped").
        """
        abandon_sessions()
        process = getattr(getattr(self.current, "provisioner", None), "process", None)
        if process is not None:
            try:
                process.kill()
            except OSError:
                pass

    def close(self) -> None:
        """Shut down the kernel still waiting, if any."""
        if self._waiting is not None:
            stop_kernel(self._waiting)
            self._waiting = None

    def __deepcopy__(self, memo):
        # traitlets deep-copies configuration values: every copy must be this same pool
        return self


def course_pool(
    root: str | os.PathLike,
    work: str | os.PathLike,
    *,
    sandbox: bool = True,
    memory_limit: str | int = DEFAULT_MEMORY_LIMIT,
    cpu_limit: str | int = DEFAULT_CPU_LIMIT,
    ahead: bool = True,
    hidden: Sequence[str] = (),
) -> KernelPool:
    """Return the KernelPool of a course at ``root`` graded into ``work``: every kernel sandboxed
    (``SandboxPolicy.for_course`` with these limits, ``hidden`` hidden too) unless ``sandbox`` is False.

    Raises SandboxUnavailable, before any kernel starts, when bubblewrap cannot sandbox kernels
    here. Also writes the bytecode of the course's packages, so that no kernel compiles them again,
    and removes the kernel folders of grading processes on this machine that were killed.
    Example: ``course_pool(".", "grading", cpu_limit=60)``.
    """
    policy = None
    if sandbox:
        problem = sandbox_problem()
        if problem is not None:
            raise SandboxUnavailable(problem)
        policy = SandboxPolicy.for_course(root, work, memory_limit=memory_limit, cpu_limit=cpu_limit, hidden=hidden)
    compile_course_packages()
    remove_abandoned(KERNEL_FOLDER_PREFIX)  # those of grading runs killed on this machine
    return KernelPool(work, extra_arguments=[KERNEL_LOG_LEVEL], policy=policy, ahead=ahead)


def ipc_sockets(folder: str | os.PathLike) -> dict[str, str]:
    """Return the kernel manager settings that put a kernel's sockets in ``folder``, over IPC.

    Never TCP: jupyter_client picks a TCP port by binding port 0 and letting it go, so two kernels
    started at the same moment by two processes can pick the same port, and one of them dies before
    it answers ``kernel_info``. A socket file in a folder of the kernel's own cannot be taken twice.
    """
    folder = Path(folder)
    return {"transport": "ipc", "ip": str(folder / "kernel"), "connection_file": str(folder / "kernel.json")}


class IpcSockets(KernelManager):
    """A kernel manager mixin: unless told otherwise, the kernel's sockets are IPC files in a new folder of its own.

    Put it before a kernel manager class (``KernelManager`` or ``AsyncKernelManager``): its methods
    then come first and hand on to that class's.

    The folder (``KERNEL_FOLDER_PREFIX`` and this process's id, in the temporary folder, so that
    ``remove_abandoned`` finds what a killed process left) goes when the manager cleans up. Every
    kernel manager of this module has it: an unsandboxed pool's kernels and any kernel that is not a
    grading run's (the notebooks' own tests, the English edition's run) get such a folder; a
    sandboxed kernel's sockets are in its sandbox's folder, which the pool names.
    """

    def __init__(self, *args, **kwargs):
        if "connection_file" not in kwargs and "transport" not in kwargs:
            self._own_folder = owned_folder(KERNEL_FOLDER_PREFIX)
            kwargs.update(ipc_sockets(self._own_folder))
        super().__init__(*args, **kwargs)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:  # what shutting down calls
        await super()._async_cleanup_resources(restart=restart)
        if not restart and getattr(self, "_own_folder", None) is not None:
            shutil.rmtree(self._own_folder, ignore_errors=True)


class IpcKernelManager(IpcSockets, AsyncKernelManager):
    """An asynchronous kernel manager (nbclient's) whose kernel talks over IPC sockets in a folder of its own."""

    # jupyter_client binds the public name to its own coroutine: called directly, it would leave the folder
    cleanup_resources = IpcSockets._async_cleanup_resources


class QuickStopKernelManager(IpcSockets, AsyncKernelManager):
    """A kernel manager whose ``shutdown_kernel(now=True)`` ends the kernel without idle waits.

    A kernel stopped with ``now=True`` has nothing to save, so it is killed at once (its process
    group, or its sandbox, which takes every process inside with it). jupyter_client would first
    send an interrupt message the dying kernel never reads (closing its socket then lingers
    0.1 s) and check every 0.1 s whether the process has ended: 0.1 to 0.2 s of idle time per
    notebook. Here the process is waited for directly, which returns as soon as it ends. A
    polite shutdown (``now=False``) and a restart are jupyter_client's own.
    """

    async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        if not now or restart:
            await super()._async_shutdown_kernel(now=now, restart=restart)
            return
        self.shutting_down = True
        self.stop_restarter()
        provisioner = self.provisioner
        process = getattr(provisioner, "process", None)
        if provisioner is not None and process is not None:
            try:
                await provisioner.kill()
                process.wait(timeout=10)
                await provisioner.wait()  # reaps it at once, closes its pipes
            except Exception:  # already gone
                pass
        await self._async_cleanup_resources()

    shutdown_kernel = _async_shutdown_kernel
    cleanup_resources = IpcSockets._async_cleanup_resources  # as IpcKernelManager's


class SandboxedKernelManager(QuickStopKernelManager):
    """A kernel manager whose kernel runs inside a SandboxPolicy (set ``policy`` and ``folder`` before starting)."""

    policy = Any(None, allow_none=True)
    folder = Any(None, allow_none=True)

    def format_kernel_cmd(self, extra_arguments=None):
        argv = super().format_kernel_cmd(extra_arguments)
        return self.policy.command(argv, self.folder, env={"NBGRADER_EXECUTION": "autograde"})


def stop_kernel(manager: AsyncKernelManager) -> None:
    """Kill a kernel of the pool now and free its sockets, files and folder.

    Safe to call on a kernel that already died or never started. With a ``QuickStopKernelManager``
    (every kernel of a ``KernelPool``) it returns as soon as the kernel's process has ended.
    """
    try:
        run_sync(manager.shutdown_kernel)(now=True)
    except Exception:  # already gone
        pass
    try:
        run_sync(manager.cleanup_resources)()
    except Exception:
        pass
    folder = getattr(manager, "folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
