"""Find the release a learner's notebook was copied from, for copies made before the workspace kept records.

A copy made before ``workspace/.lessons-manifest.json`` existed carries no note of the release it
came from. In a git checkout the candidates are still there: every committed version of
``lessons/<name>``. The one the copy came from is the version that shares the most cells with it,
since every cell the learner did not edit is still exactly as that version had it (answer cells
aside, which learners fill in). Without git, or outside a checkout, there are no candidates, and
the merge falls back to its conservative rule (``notebook_merge``).
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..cells import is_answer
from .notebook_merge import cell_digest, cell_key, release_record

MAX_VERSIONS = 200  # most recent versions of one notebook looked at
GIT_TIMEOUT = 30  # seconds for one git command


def past_releases(root: str | os.PathLike, name: str) -> list[dict]:
    """Return the committed versions of ``lessons/<name>`` in the git checkout at ``root``, newest first.

    Returns [] when git is missing, ``root`` is not in a checkout, or the file has no history.
    A version that is not valid JSON is skipped.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commits = git("log", f"-n{MAX_VERSIONS}", "--format=%H", "--", f"lessons/{name}")
    versions = []
    for commit in (commits or "").split():
        text = git("show", f"{commit}:./lessons/{name}")
        try:
            version = json.loads(text or "")
        except ValueError:
            continue
        if isinstance(version, dict) and isinstance(version.get("cells"), list):
            versions.append(version)
    return versions


def _shared(learner: Mapping, version: Mapping) -> int:
    released = {cell_key(cell): cell_digest(cell) for cell in version.get("cells", [])}
    return sum(
        1 for cell in learner["cells"]
        if not is_answer(cell) and cell_key(cell) in released and released[cell_key(cell)] == cell_digest(cell)
    )


def likeliest_release(learner: Mapping, versions: Sequence[Mapping]) -> Mapping | None:
    """Return the version sharing the most unedited cells (same key, same digest) with ``learner``.

    Ties go to the earlier version in ``versions`` (the newest, from ``past_releases``). Returns
    None when no version shares a cell.

    >>> v1 = {"cells": [{"id": "a", "cell_type": "markdown", "metadata": {}, "source": "旧"}]}
    >>> v2 = {"cells": [{"id": "a", "cell_type": "markdown", "metadata": {}, "source": "新"}]}
    >>> likeliest_release(v1, [v2, v1]) is v1
    True
    """
    best, best_shared = None, 0
    for version in versions:
        shared = _shared(learner, version)
        if shared > best_shared:
            best, best_shared = version, shared
    return best


def find_record(root: str | os.PathLike, name: str, learner: Mapping) -> dict[str, str] | None:
    """Return the ``release_record`` of the likeliest release ``learner`` was copied from, or None.

    Versions whose cells cannot be told apart (no ids, as in releases before nbformat 4.5) are left out.
    """
    records = {}
    for version in past_releases(Path(root), name):
        try:
            records[id(version)] = (version, release_record(version))
        except ValueError:
            continue
    best = likeliest_release(learner, [version for version, _ in records.values()])
    return None if best is None else records[id(best)][1]
