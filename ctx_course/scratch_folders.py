"""Temporary folders named after the process that owns them, and removing those whose process is gone.

Covers: ``owned_folder`` (a new folder ``<temporary folder>/<prefix><pid>-<random>``),
``remove_abandoned`` (remove this user's folders of a prefix whose process no longer runs) and
``grading_run`` (a grading run's mark and temporary folder). A process killed outright (SIGKILL,
out of memory) never removes its folders; the next process of the same kind to start on the
machine does. A folder of another user, a symbolic link, or a name without a process id is never
touched; a process id reused by a live process keeps its folder.

A grading run (``python -m ctx_course grade``) marks every process it starts and keeps every
temporary file of them in one folder of its own, ``<temporary folder>/ctx-run-<pid>-<random>``
(``grading_run``). While the run lasts, its process has ``RUN_VARIABLE`` (``CTX_GRADING_RUN``) set
to that folder's name and the folder as its temporary folder (``TMPDIR`` and ``tempfile``'s), and
every process it starts inherits both: multiprocessing's fork server and resource tracker, the
Dask scheduler's and workers' processes, kernels and learners' answer processes outside the
sandbox, and the sandbox's own processes (bubblewrap, and what runs inside it, which gets the
variable by name: ``sandbox/policy.py``'s ``PASSED_ENV``). So the processes of a run are those
whose environment in ``/proc/<pid>/environ`` names its folder, and whatever any of them leaves in
the temporary folder is inside that folder: the workers' and kernels' folders, Dask's
``dask-scratch-space``, and the ``pymp-*`` folder multiprocessing makes without a process id in
its name. The next run removes the folder of a run killed outright (its process is gone) before
it grades; a live run's folder is never touched. A worker forked by the fork server of an earlier
run in the same process (a program calling the command line twice) shows that run's name in
``/proc``; the processes it starts carry this one's.

Used by the grading workers (their scratch folders), the kernel pools (each kernel's folder) and
the ``grade`` command (its run's folder).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

# The environment variable every process of a grading run carries: the name of the run's folder.
RUN_VARIABLE = "CTX_GRADING_RUN"
# A grading run's folder, in the temporary folder: this prefix, the coordinator's process id, a dash.
RUN_PREFIX = "ctx-run-"
# When the run's folder goes: after multiprocessing removed its own folder in it (its priority is -100)
# at the process's exit, as the fork server started in the run lives until then.
RUN_FOLDER_EXIT_PRIORITY = -200


def owned_folder(prefix: str, folder: str | os.PathLike | None = None) -> Path:
    """Create and return a new folder ``<prefix><this process's id>-<random>`` in ``folder``.

    ``folder`` is the temporary folder unless given.
    """
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=folder))


def remove_abandoned(prefix: str, folder: str | os.PathLike | None = None) -> list[Path]:
    """Remove this user's folders ``<prefix><pid>-*`` in ``folder`` whose process is gone; return them, sorted."""
    removed = []
    for path in sorted(Path(folder or tempfile.gettempdir()).glob(f"{prefix}*-*")):
        pid = path.name[len(prefix):].split("-", 1)[0]
        try:
            if not pid.isdigit() or path.is_symlink() or path.lstat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not _running(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def grading_run() -> Iterator[Path]:
    """Mark this process and the processes it starts as one grading run, with a temporary folder of its own; yield it.

    First removes the folders of runs killed on this machine (``remove_abandoned``). For the
    block, ``RUN_VARIABLE`` names the new folder and the folder is the temporary folder (``TMPDIR``
    and ``tempfile.tempdir``); both are as before afterwards. The folder is removed when this
    process exits, after multiprocessing removed its own folder in it.
    """
    from multiprocessing.util import Finalize

    before = {name: os.environ.get(name) for name in (RUN_VARIABLE, "TMPDIR")}
    before_tempdir = tempfile.tempdir  # None until tempfile looked for one (below)
    remove_abandoned(RUN_PREFIX)
    folder = owned_folder(RUN_PREFIX)
    Finalize(None, shutil.rmtree, args=(str(folder),), kwargs={"ignore_errors": True},
             exitpriority=RUN_FOLDER_EXIT_PRIORITY)
    os.environ.update({RUN_VARIABLE: folder.name, "TMPDIR": str(folder)})
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = before_tempdir
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
