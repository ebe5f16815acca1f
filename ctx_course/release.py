"""Generate the student release (``lessons/``) from the source notebooks (``solutions/``).

nbgrader removes the solutions and the hidden tests, clears the outputs and locks the check
cells. The release is committed; ``tests/test_release.py`` regenerates it into a temporary folder
and fails if the committed copy differs.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from nbgrader.apps import NbGraderAPI

from .config import assignments, load_course_config


class ReleaseError(RuntimeError):
    """nbgrader could not generate an assignment; the message carries its log."""


def generate_release(
    root: str | os.PathLike = ".",
    *,
    release: str | os.PathLike | None = None,
    work: str | os.PathLike | None = None,
) -> list[str]:
    """Regenerate every assignment of the course into ``release`` and return their ids.

    The gradebook nbgrader needs for this lives in ``work``, a temporary folder by default, so
    releasing never changes the gradebook of a grading run.

    Example: ``generate_release(".")`` rewrites ``lessons/01-window-math/window_math.ipynb`` and
    the eight others.
    """
    root = Path(root).resolve()
    if work is None:
        # Releasing must not touch the instructor's gradebook: use a throw-away one.
        with tempfile.TemporaryDirectory(prefix="ctx-release-") as scratch:
            return generate_release(root, release=release, work=scratch)
    config = load_course_config(root, work=work, release=release)
    api = NbGraderAPI(config=config)
    done = []
    for assignment_id in assignments(root):
        target = Path(api.coursedir.format_path(api.coursedir.release_directory, ".", assignment_id))
        if target.exists():
            shutil.rmtree(target)
        result = api.generate_assignment(assignment_id, force=True)
        if not result["success"]:
            details = f"{result.get('log', '')}{result.get('error', '')}"
            raise ReleaseError(f"assignment {assignment_id!r} failed:\n{details}")
        done.append(assignment_id)
    return done
