"""Temporary folders named after the process that owns them, and removing those whose process is gone.

Covers: ``owned_folder`` (a new folder ``<temporary folder>/<prefix><pid>-<random>``) and
``remove_abandoned`` (remove this user's folders of a prefix whose process no longer runs). A
process killed outright (SIGKILL, out of memory) never removes its folders; the next process
of the same kind to start on the machine does. A folder of another user, a symbolic link, or
a name without a process id is never touched; a process id reused by a live process keeps its
folder.

Used by the grading workers (their scratch folders) and the kernel pools (each kernel's folder).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


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
