"""What a notebook cell is to grading, read from its nbgrader metadata, and its source as text.

Covers: whether a cell is graded (``is_graded``), an answer (``is_answer``) or a check cell
(``is_check_cell``); a cell's source as one string (``source_text``) and as lines
(``source_lines``, split at ``\r\n``, ``\r`` or ``\n``, as Python counts lines); where its hidden
tests are (``hidden_spans``, ``hidden_lines``), which of them are named (``hidden_checks``), and a
check cell as the release shows it, without them (``released_source``). Every module that asks one of
these questions asks it here, so when nbgrader's metadata changes there is one place to follow.

Leaves out: changing cells (the preprocessors in ``grading/steps/`` do). Imports nothing of the
package, so the sandbox, the grading run and the leaderboard can all use it.

Vocabulary: a *graded* cell is a code cell with nbgrader's ``grade`` flag (a check cell, or an
answer graded by hand); an *answer* cell has nbgrader's ``solution`` flag (a learner writes it);
a *check cell* is a graded cell that is not an answer: a read-only autograded test cell. Its
*hidden tests* are the lines from ``### BEGIN HIDDEN TESTS`` to ``### END HIDDEN TESTS``, left
out of the release and put back for grading. A cell is a notebook node or the plain dict of a
notebook read as JSON. A *hidden check* is one hidden ``expect_digest(label, …)`` call, named by
its label.
"""
from __future__ import annotations

import ast
import re
from typing import Any

BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"
# What a hidden check calls (ctx_reference.checks.expect_digest); its first argument is the label.
HIDDEN_CHECK = "expect_digest"

_LINE_END = re.compile(r"\r\n|\r|\n")


def _nbgrader(cell: Any) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def is_graded(cell: Any) -> bool:
    """Return whether ``cell`` is a code cell that nbgrader grades (a check cell or a graded answer).

    >>> is_graded({"cell_type": "code", "metadata": {"nbgrader": {"grade": True}}})
    True
    >>> is_graded({"cell_type": "markdown", "metadata": {"nbgrader": {"grade": True}}})
    False
    """
    return cell.get("cell_type") == "code" and bool(_nbgrader(cell).get("grade"))


def is_answer(cell: Any) -> bool:
    """Return whether ``cell`` is an answer cell, one a learner writes (nbgrader's ``solution`` flag).

    >>> is_answer({"cell_type": "code", "metadata": {"nbgrader": {"solution": True}}})
    True
    >>> is_answer({"cell_type": "code", "metadata": {}})
    False
    """
    return bool(_nbgrader(cell).get("solution"))


def is_check_cell(cell: Any) -> bool:
    """Return whether ``cell`` is a check cell: graded, and not an answer a learner writes.

    >>> is_check_cell({"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "solution": False}}})
    True
    >>> is_check_cell({"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "solution": True}}})
    False
    """
    return is_graded(cell) and not is_answer(cell)


def source_text(source: str | list[str]) -> str:
    """Return a cell's source (or an output's text) as one string: notebooks on disk may hold a list of lines.

    >>> source_text(["a = 1\\n", "b = 2"])
    'a = 1\\nb = 2'
    """
    return "".join(source) if isinstance(source, list) else str(source)


def source_lines(source: str) -> list[str]:
    """Return the lines of ``source``, split at ``\\n``, ``\\r\\n`` or ``\\r`` as Python counts them.

    >>> source_lines("a\\r\\nb\\rc")
    ['a', 'b', 'c']
    """
    return _LINE_END.split(source)


def hidden_spans(source: str, begin: str = BEGIN_HIDDEN, end: str = END_HIDDEN) -> list[tuple[int, int]]:
    """Return the 1-based (first, last) line numbers (``source_lines``) of each hidden region of ``source``.

    ``begin`` and ``end`` are nbgrader's delimiters (``ClearHiddenTests.begin_test_delimeter``).
    An unterminated region runs to the last line:

    >>> hidden_spans("a\\n### BEGIN HIDDEN TESTS\\nb\\n### END HIDDEN TESTS")
    [(2, 4)]
    >>> hidden_spans("a\\n### BEGIN HIDDEN TESTS\\nb")
    [(2, 3)]
    """
    spans, start = [], None
    lines = source_lines(source)
    for number, line in enumerate(lines, start=1):
        if start is None and begin in line:
            start = number
        elif start is not None and end in line:
            spans.append((start, number))
            start = None
    if start is not None:
        spans.append((start, len(lines)))
    return spans


def hidden_lines(source: str, begin: str = BEGIN_HIDDEN, end: str = END_HIDDEN) -> set[int]:
    """Return the 1-based numbers of the lines inside hidden regions of ``source``, delimiters included.

    >>> sorted(hidden_lines("a\\r\\n### BEGIN HIDDEN TESTS\\r\\nb\\r\\n### END HIDDEN TESTS\\r\\nc"))
    [2, 3, 4]
    """
    return {number for first, last in hidden_spans(source, begin, end) for number in range(first, last + 1)}


def released_source(source: str, begin: str = BEGIN_HIDDEN, end: str = END_HIDDEN) -> str:
    """Return ``source`` without its hidden regions (delimiters included), as the release shows a check cell.

    The lines kept keep their own line ends:

    >>> released_source("a\\r\\n### BEGIN HIDDEN TESTS\\r\\nb\\r\\n### END HIDDEN TESTS\\r\\nc")
    'a\\r\\nc'
    """
    hidden = hidden_lines(source, begin, end)
    if not hidden:
        return source
    pieces = _LINE_END.split(source)
    ends = _LINE_END.findall(source) + [""]
    return "".join(line + ending for number, (line, ending) in enumerate(zip(pieces, ends), 1) if number not in hidden)


def hidden_checks(source: str, begin: str = BEGIN_HIDDEN, end: str = END_HIDDEN) -> list[tuple[str, int, int]]:
    """Return (label, first line, last line) of each hidden check of ``source``, in source order.

    A hidden check is a call of ``expect_digest`` inside a hidden region whose label is a string
    literal; other calls and a cell that is not Python give none:

    >>> hidden_checks('x = 1\\n### BEGIN HIDDEN TESTS\\nexpect_digest("a", f(1), "0")\\n### END HIDDEN TESTS')
    [('a', 3, 3)]
    """
    spans = hidden_spans(source, begin, end)
    if not spans or HIDDEN_CHECK not in source:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        label = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "label"), None)
        last = node.end_lineno or node.lineno
        if (
            name == HIDDEN_CHECK
            and isinstance(label, ast.Constant)
            and isinstance(label.value, str)
            and any(first <= node.lineno and last <= end_line for first, end_line in spans)
        ):
            found.append((label.value, node.lineno, last, node.col_offset))
    return [(label, first, last) for label, first, last, _ in sorted(found, key=lambda f: (f[1], f[3]))]
