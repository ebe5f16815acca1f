"""The test command cosmic-ray runs for each mutant: the exercise's visible check on the mutated file.

Covers: ``judge(exercise, path)``, which builds the learner's function from the file (see
``targets.learner_function``) and calls ``check_exercise(exercise, func, quiet=True)``, as the
notebook's check cell does; its verdict is the exit status cosmic-ray reads (0: every visible case
passed, the mutant survives; 1: the check failed, or defining the function failed, the mutant is
killed).

Leaves out: the hidden tests (the campaign measures what the learner sees) and timeouts (cosmic-ray
kills a command that runs too long).
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

SURVIVED, KILLED = 0, 1


def judge(exercise: str, path: str | Path) -> tuple[int, str]:
    """Return (exit status, one line saying why) for the file ``path`` judged as exercise ``exercise``."""
    from ctx_reference.checks import CheckFailed, check_exercise

    from .targets import learner_function

    path = Path(path)
    source = path.read_text(encoding="utf-8")
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            func = learner_function(exercise, source, str(path))
        except Exception as exc:  # the mutation broke the definition itself
            return KILLED, f"killed: defining it raised {type(exc).__name__}: {exc}"
        try:
            check_exercise(exercise, func, quiet=True)
        except CheckFailed as exc:
            return KILLED, f"killed: {exc}"
    return SURVIVED, "survived: every visible case passed"
