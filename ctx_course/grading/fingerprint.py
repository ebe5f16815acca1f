"""What a machine grades with: the digest of its copy of the course and the versions of its tools.

Covers: ``course_fingerprint`` (one digest per part of the course a notebook is graded with, and
the version of every package that runs it), ``fingerprint_difference`` (one line naming the
first part that differs between two machines) and ``hash_tree`` (the digest of a folder).

A grading worker on another machine must give a notebook the score the instructor's machine
would: the same source notebooks (hidden tests, from the course folder), the same checker the
check cells call and the same grading code (the packages as imported), and the same versions of
what executes and scores a notebook.

Leaves out: when the comparison is made and what is done about a difference (``engine.py``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import platform
from importlib import metadata
from pathlib import Path

# The packages a grading run executes (the checker the check cells call, the grading code):
# their files as this interpreter imports them, ``.py`` only.
PACKAGES = ("ctx_reference", "ctx_course")
# The packages whose version changes what a notebook's run gives.
TOOLS = ("nbgrader", "nbconvert", "nbclient", "nbformat", "ipykernel", "jupyter_client", "numpy", "matplotlib")


def hash_tree(sha, folder: Path, suffix: str = "") -> None:
    """Feed every file under ``folder`` (relative path and bytes, in sorted order) into ``sha``."""
    if not folder.is_dir():
        sha.update(b"missing")
        return
    for path in sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file() and "__pycache__" not in p.parts):
        sha.update(str(path.relative_to(folder)).encode() + b"\0")
        sha.update(hashlib.sha256(path.read_bytes()).digest())


def course_fingerprint(root: str | Path) -> dict[str, str]:
    """Return {part: digest or version} for the course at ``root`` and this interpreter.

    Example: ``{"solutions/": "3f…", "ctx_reference/": "9a…", "ctx_course/": "c1…",
    "python": "3.11.2", "nbgrader": "0.9.5", …}``.
    """
    sha = hashlib.sha256()
    hash_tree(sha, Path(root) / "solutions")
    parts = {"solutions/": sha.hexdigest()}
    for name in PACKAGES:
        sha = hashlib.sha256()
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec is not None else ["missing"]:
            hash_tree(sha, Path(folder), ".py")
        parts[f"{name}/"] = sha.hexdigest()
    parts["python"] = platform.python_version()
    for name in TOOLS:
        try:
            parts[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            parts[name] = "not installed"
    return parts


def fingerprint_difference(expected: dict[str, str], found: dict[str, str]) -> str | None:
    """Return one line naming what differs from ``expected`` in ``found`` (None when nothing does).

    >>> fingerprint_difference({"solutions/": "a", "nbgrader": "0.9.5"}, {"solutions/": "a", "nbgrader": "0.9.4"})
    'nbgrader 0.9.4 (the coordinator has 0.9.5)'
    >>> fingerprint_difference({"solutions/": "a"}, {"solutions/": "b"})
    'its copy of solutions/ differs from the coordinator’s'
    """
    differences = []
    for part, value in expected.items():
        other = found.get(part, "missing")
        if other == value:
            continue
        if part.endswith("/"):
            differences.append(f"its copy of {part} differs from the coordinator’s")
        else:
            differences.append(f"{part} {other} (the coordinator has {value})")
    return "; ".join(differences) or None
