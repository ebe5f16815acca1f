"""How a check tells the notebook that it failed: one line, no traceback.

Covers: ``CheckFailed``, the ``AssertionError`` a check cell ends with, which IPython shows as its
one-line message (with the cell line when autograding, so that the grader's feedback can tell a
visible check from a hidden test), the marks that begin a feedback line (``PASS_MARK``,
``FAIL_MARK``), and ``UsedReference``, raised when the learner's function entered the reference
implementation of its own exercise.

Leaves out: what the message says (``runner.py``, ``__init__.py``) and how the grader reads the
cell's output (``ctx_course/grading/``).

Vocabulary: the *cell line* is the line, in the notebook cell, of the outermost frame outside
IPython and this package.
"""
from __future__ import annotations

import os
import sys

PASS_MARK = "✓"
FAIL_MARK = "×"  # U+00D7: in DejaVu Sans and Noto Sans CJK SC alike (✗ is missing from the CJK fonts)


class CheckFailed(AssertionError):
    """A failed or unfinished check, shown by IPython as its one-line message, without traceback.

    IPython calls ``_render_traceback_`` instead of formatting a traceback; the cell still ends
    with an error output, so nbgrader scores it as failed. When autograding, a second line gives
    the cell line (``Cell In[], line 3``), so that the feedback can tell a failed visible check,
    whose message it shows, from a failed hidden test, whose message it hides. Being an ``AssertionError``, it reads
    like the asserts of the hidden tests to anyone catching it.
    """

    def _render_traceback_(self) -> list[str]:
        lines = [f"{FAIL_MARK} {self}"]
        if os.environ.get("NBGRADER_EXECUTION") == "autograde":
            # The grader's feedback tells a visible failure from a hidden one by the cell line.
            line = _cell_line(self.__traceback__)
            if line is not None:
                lines.append(f"Cell In[], line {line}")
        return lines


def _cell_line(tb) -> int | None:
    """Return the line, in the notebook cell, of the outermost frame outside IPython and this package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    skipped = [package]
    ipython_file = getattr(sys.modules.get("IPython"), "__file__", None)
    if ipython_file:
        skipped.append(os.path.dirname(os.path.abspath(ipython_file)))
    while tb is not None:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not any(filename.startswith(prefix + os.sep) for prefix in skipped):
            return tb.tb_lineno
        tb = tb.tb_next
    return None


class UsedReference(Exception):
    """The learner's function called the reference implementation of its own exercise."""


