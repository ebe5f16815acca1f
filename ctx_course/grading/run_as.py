"""Who a grading run runs as: the one line ``grade`` prints when root starts it.

Covers: ``root_warning``, that line (or None) for a run by an effective user id in a course folder
owned by a named account; ``course_owner``, the account that owns the course folder. Everything of a
run outside the sandbox (the coordinator, its Dask workers, nbgrader's converters and exporters, the
grader's end of every learner's answer process) has the rights of whoever started ``grade``, and needs
no more than reading the course and the submissions and writing the working folder: the rights of the
account that owns the course (on the hub, ``COURSE_GRADER``). Started by root, a flaw in any of it is
root's on the whole machine; the line says so and names the command that runs it as that account
(docs/sandbox.md, "Who grading runs as").

Leaves out: changing user (the instructor starts the run as the right account, ``sudo -u``); the
sandbox around the learner's code (``sandbox/policy.py``).

Vocabulary: *root* is effective user id 0; the *course's account* is the owner of the course folder
(``--root``) when that is not root; *acknowledged*: ``ACKNOWLEDGED`` is set in the environment (a
throw-away container whose only user is root), and the line is left out.
"""
from __future__ import annotations

import os
import pwd
from pathlib import Path

# Set to anything but "" or "0": the run is root's on purpose (a throw-away container), and no line is printed.
ACKNOWLEDGED = "CTX_GRADING_AS_ROOT"
GUIDE = 'docs/sandbox.md, "Who grading runs as"'
RISK = ("warning: grading as root: nbgrader and the grader's end of every answer run outside the sandbox "
        "with root's rights")


def root_warning(euid: int, owner: str | None, course: str, python: str = "python",
                 acknowledged: str = "") -> str | None:
    """Return the one line a run started by ``euid`` prints, or None when it is not root's (or ``acknowledged``).

    ``owner`` is the course's account (None when root owns the course folder ``course``); ``python`` the
    interpreter the command is given with.

    >>> root_warning(1001, "grader", "/srv/course") is None
    True
    >>> print(root_warning(0, "grader", "/srv/course", "/opt/course/bin/python"))  # doctest: +NORMALIZE_WHITESPACE
    warning: grading as root: nbgrader and the grader's end of every answer run outside the sandbox with root's
    rights; run it as the course's account: sudo -u grader -H /opt/course/bin/python -m ctx_course grade ...
    (docs/sandbox.md, "Who grading runs as")
    """
    if euid != 0 or acknowledged.strip() not in ("", "0"):
        return None
    command = f"{python} -m ctx_course grade ... ({GUIDE})"
    if owner is not None:
        return f"{RISK}; run it as the course's account: sudo -u {owner} -H {command}"
    return (f"{RISK}; give the course to an unprivileged account (useradd -m grader && chown -R grader: {course}) "
            f"and run it as that account: sudo -u grader -H {command}")


def course_owner(course: str | os.PathLike) -> str | None:
    """Return the name of the account that owns the folder ``course``; None for root or an id without a name."""
    uid = Path(course).stat().st_uid
    if uid == 0:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
