"""Kernels for a grading run: launched one notebook ahead, each used for one notebook only.

Covers: ``KernelPool``, which starts the kernel of the next notebook while the current one runs;
``PrelaunchedExecute``, nbgrader's ``Execute`` running each notebook in a kernel taken from the
pool; the kernels' command-line option (``KERNEL_LOG_LEVEL``); and telling, from nbgrader's log,
that a kernel could not start (``kernel_failed_to_start``), so the run can try once more.

Leaves out: which notebooks run and what is done with the results (``grade.py``), time limits
(nbgrader's ``Execute.timeout``), and any sandboxing of student code.

Vocabulary: a *kernel manager* starts, watches and stops one kernel process; a kernel *launched
ahead* was started before its notebook was due; a kernel is *fresh* when no notebook ran in it.
"""
from __future__ import annotations

import os
from typing import Sequence

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Any

# Kernel command-line option: the grading run's kernels report errors only.
KERNEL_LOG_LEVEL = "--IPKernelApp.log_level=ERROR"

# What nbgrader's log says when a kernel could not start (a port taken by another process, say).
KERNEL_START_FAILURES = ("Address already in use", "Kernel died before replying to kernel_info")


class KernelPool:
    """Launch the kernel of the next notebook while the current one runs.

    Starting a kernel takes about half a second of the second or so a notebook needs; launched
    one notebook ahead, that start-up overlaps the previous notebook's run. Every notebook still
    gets a fresh kernel of its own: a kernel is never reused, or one student's monkey-patching
    would reach the next student. Example: ``pool.take()`` returns a started kernel manager and
    ``pool.launch_next()`` starts the one after it.
    """

    def __init__(self, cwd: str | os.PathLike, kernel_name: str = "python3", extra_arguments: Sequence[str] = ()):
        self.cwd = str(cwd)
        self.kernel_name = kernel_name
        # nbclient keeps the IPython history in memory; so must a kernel started without it.
        self.extra_arguments = [*extra_arguments, "--HistoryManager.hist_file=:memory:"]
        self._waiting: AsyncKernelManager | None = None

    def _launch(self) -> AsyncKernelManager:
        manager = AsyncKernelManager(kernel_name=self.kernel_name)
        env = dict(os.environ, NBGRADER_EXECUTION="autograde")  # as nbgrader sets it for autograding
        run_sync(manager.start_kernel)(extra_arguments=self.extra_arguments, cwd=self.cwd, env=env)
        return manager

    def take(self) -> AsyncKernelManager:
        """Return a started kernel for one notebook (the one launched ahead, if it is alive)."""
        manager, self._waiting = self._waiting, None
        if manager is not None and not run_sync(manager.is_alive)():
            _shutdown(manager)
            manager = None
        return manager if manager is not None else self._launch()

    def launch_next(self) -> None:
        """Start the kernel for the next notebook, unless one is already waiting."""
        if self._waiting is None:
            self._waiting = self._launch()

    def close(self) -> None:
        """Shut down the kernel still waiting, if any."""
        if self._waiting is not None:
            _shutdown(self._waiting)
            self._waiting = None

    def __deepcopy__(self, memo):
        # traitlets deep-copies configuration values: every copy must be this same pool
        return self


def _shutdown(manager: AsyncKernelManager) -> None:
    try:
        run_sync(manager.shutdown_kernel)(now=True)
    except Exception:  # already dead
        pass
    try:
        run_sync(manager.cleanup_resources)()
    except Exception:
        pass


class PrelaunchedExecute(Execute):
    """nbgrader's Execute, running each notebook in a kernel taken from a KernelPool.

    The kernel was started in the pool's folder; before the first cell it moves to the
    notebook's folder, where nbgrader would have started it. Without a pool (nbgrader's own
    commands), this is nbgrader's Execute.
    """

    pool = Any(None, allow_none=True, help="a KernelPool shared by a grading run").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        kernel_name = nb.metadata.get("kernelspec", {}).get("name", self.pool.kernel_name if self.pool else None)
        if self.pool is None or km is not None or kernel_name != self.pool.kernel_name:
            return super().preprocess(nb, resources, km=km)
        folder = os.path.abspath((resources or {}).get("metadata", {}).get("path") or ".")
        manager = self.pool.take()
        self.pool.launch_next()

        async def enter_folder(notebook):
            reply_to = self.kc.execute(f"__import__('os').chdir({folder!r})", silent=True, store_history=False)
            await self.async_wait_for_reply(reply_to)

        self.on_notebook_start = enter_folder
        try:
            return super().preprocess(nb, resources, km=manager)
        finally:
            self.on_notebook_start = None
            if self.kc is not None:
                self.kc.stop_channels()
                self.kc = None
            _shutdown(manager)
            self.km = None


def kernel_failed_to_start(outcome: dict) -> bool:
    """Return whether an nbgrader outcome failed because a kernel could not start (not the student's fault).

    Example: ``kernel_failed_to_start({"success": False, "log": "OSError: Address already in use"})``
    is True; the grading run then autogrades that submission once more.
    """
    text = outcome.get("log", "") + outcome.get("error", "")
    return any(sign in text for sign in KERNEL_START_FAILURES)
