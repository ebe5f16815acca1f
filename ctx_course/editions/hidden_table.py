"""Read which rules each hidden test decides from the source notebooks, and write the table the package ships.

Covers: the hidden tests of one check cell (``cell_tests``: every ``expect_digest(label, value, digest,
decides=(...))`` and ``expect_generated(label, exercise, function)`` between its hidden-test markers, in
source order) and the exercise the cell checks (``cell_exercise``: its ``check_exercise("<name>", …)``);
the table of every exercise of the course (``hidden_table``), each test's rules held to the rules its
exercise states; and writing it into ``ctx_reference/checks/hidden_tests.json`` (``write_hidden_table``,
run by ``python -m ctx_course release``), which ``docs/rules.md`` and the exercises' records read.

Leaves out: the file's format and reading it (``ctx_reference/checks/hidden_tests.py``), and which rules
the hidden generated cases decide (the record derives them: every rule with generated cases).

Vocabulary: the check cell's hidden part is the one place that says what a hidden test decides; an
``expect_generated`` call names no rules (``decides`` there is refused), an ``expect_digest`` call
always does, as a literal tuple of rule names.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from ctx_reference.checks import REGISTRY
from ctx_reference.checks.hidden_tests import TABLE_FILE, HiddenTest, rule_names, table_text

from ..cells import hidden_spans, is_check_cell, source_text
from ..config import assignments
from .catalogues import source_notebook

HIDDEN_CALLS = ("expect_digest", "expect_generated")
"""The calls of a check cell's hidden part that are hidden tests; the first argument of each is its label."""


def _calls(source: str, names: tuple[str, ...]) -> list[ast.Call]:
    """Return the calls of ``source`` to one of ``names`` (by their plain name), in source order."""
    lines = [line if not line.lstrip().startswith(("%", "!")) else "" for line in source.split("\n")]
    found = [node for node in ast.walk(ast.parse("\n".join(lines)))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def cell_exercise(source: str) -> str:
    """Return the exercise a check cell checks: the literal name of its one ``check_exercise`` call.

    >>> cell_exercise('check_exercise("remaining", remaining)')
    'remaining'
    """
    names = [node.args[0].value for node in _calls(source, ("check_exercise",))
             if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]
    if len(names) != 1:
        raise ValueError(f"a check cell with hidden tests must call check_exercise with one literal exercise name "
                         f"(got {names!r})")
    return names[0]


def _test(node: ast.Call) -> HiddenTest:
    """Return the hidden test of one ``expect_digest`` or ``expect_generated`` call; ValueError naming what is wrong."""
    label = node.args[0] if node.args else None
    if not (isinstance(label, ast.Constant) and isinstance(label.value, str)):
        raise ValueError(f"label must be a string literal (got {ast.unparse(node)[:120]!r})")
    decides = next((keyword.value for keyword in node.keywords if keyword.arg == "decides"), None)
    if isinstance(node.func, ast.Name) and node.func.id == "expect_generated":
        if decides is not None:
            raise ValueError(f"decides must be left out of expect_generated: the hidden generated cases decide every "
                             f"rule with generated cases (got decides={ast.unparse(decides)} for {label.value!r})")
        return HiddenTest(label.value, generated=True)
    if decides is None:
        raise ValueError(f"decides must name the rules hidden test {label.value!r} decides, e.g. "
                         f'decides=("negative-when-over",) (got none)')
    try:
        names = ast.literal_eval(decides)
    except ValueError:
        raise ValueError(f"decides must be a literal tuple of rule names (got {ast.unparse(decides)} for hidden "
                         f"test {label.value!r})") from None
    return HiddenTest(label.value, rule_names(names))


def cell_tests(source: str) -> list[HiddenTest]:
    """Return the hidden tests of a check cell's source, in source order; raise ValueError on a malformed one.

    >>> cell_tests('check(1)\\n### BEGIN HIDDEN TESTS\\nexpect_digest("甲", f(1), "ab", decides=("r1",))\\n'
    ...            'expect_generated("生成", "f", f)\\n### END HIDDEN TESTS')
    [HiddenTest(label='甲', decides=('r1',), generated=False), HiddenTest(label='生成', decides=(), generated=True)]
    """
    spans = hidden_spans(source)
    inside = [node for node in _calls(source, HIDDEN_CALLS)
              if any(first <= node.lineno and (node.end_lineno or node.lineno) <= last for first, last in spans)]
    return [_test(node) for node in inside]


def _stated(exercise: str, tests: list[HiddenTest], where: str) -> None:
    """Raise ValueError unless every rule the tests name is one ``exercise`` states, and no label is given twice."""
    if exercise not in REGISTRY:
        raise ValueError(f"check_exercise must name an exercise ({', '.join(sorted(REGISTRY))}) (got {exercise!r} "
                         f"in {where})")
    stated = [rule.name for rule in REGISTRY[exercise].rules]
    for test in tests:
        unknown = [name for name in test.decides if name not in stated]
        if unknown:
            raise ValueError(f"decides must name rules of exercise {exercise!r} ({', '.join(stated)}) (got "
                             f"{test.decides!r} for hidden test {test.label!r} in {where})")
    labels = [test.label for test in tests]
    if len(labels) != len(set(labels)):
        raise ValueError(f"hidden test labels must be unique within exercise {exercise!r} (got {labels!r} in {where})")


def hidden_table(root: str | os.PathLike = ".") -> dict[str, tuple[HiddenTest, ...]]:
    """Return exercise → its hidden tests, read from the check cells of every source notebook under ``root``."""
    root = Path(root)
    table: dict[str, tuple[HiddenTest, ...]] = {}
    for assignment in assignments(root):
        path = source_notebook(root, assignment)
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = source_text(cell.get("source", ""))
            if not is_check_cell(cell) or not hidden_spans(source):
                continue
            where = f"{path.relative_to(root).as_posix()}, cell {cell.get('id')}"
            try:
                tests = cell_tests(source)
                if not tests:
                    continue
                exercise = cell_exercise(source)
            except ValueError as exc:
                raise ValueError(f"{exc} in {where}") from None
            if exercise in table:
                raise ValueError(f"an exercise's hidden tests must be in one check cell (got a second for "
                                 f"{exercise!r} in {where})")
            _stated(exercise, tests, where)
            table[exercise] = tuple(tests)
    return table


def table_path(root: str | os.PathLike = ".") -> Path:
    """Return where the table is written in the checkout at ``root``."""
    return Path(root) / "ctx_reference" / "checks" / TABLE_FILE


def write_hidden_table(root: str | os.PathLike = ".") -> Path:
    """Write the hidden tests of every exercise into ``ctx_reference/checks/hidden_tests.json``; return the file."""
    path = table_path(root)
    path.write_text(table_text(hidden_table(root)), encoding="utf-8")
    return path


__all__ = ["HIDDEN_CALLS", "cell_exercise", "cell_tests", "hidden_table", "table_path", "write_hidden_table"]
