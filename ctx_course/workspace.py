"""Give a learner a private copy of the lessons to work in.

``lessons/`` is the release that nbgrader generates and the tests compare with ``solutions/``;
a learner's answers must not live there, or regenerating the release would overwrite them. The
workspace (``workspace/``, ignored by git) receives a copy of each released notebook that it does
not hold yet; a notebook already there is never overwritten.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

WORKSPACE = "workspace"


def prepare_workspace(
    root: str | os.PathLike = ".", target: str | os.PathLike | None = None
) -> list[Path]:
    """Copy every released notebook missing from the workspace; return the copies made.

    Example: on a fresh clone, ``prepare_workspace(".")`` copies every released notebook to
    ``workspace/01-window-math/window_math.ipynb`` …; run again, it copies nothing.
    """
    lessons = Path(root) / "lessons"
    if not lessons.is_dir():
        raise ValueError(f"root must hold a lessons/ folder (got {str(root)!r})")
    target = Path(root) / WORKSPACE if target is None else Path(target)
    copied = []
    for notebook in sorted(lessons.glob("*/*.ipynb")):
        destination = target / notebook.relative_to(lessons)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(notebook, destination)
        copied.append(destination)
    return copied
