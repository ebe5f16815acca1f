"""What each side of a check cell's evaluation runs: the learner's process and the grader's, pure functions of cells.

Covers: ``notebook_cells`` (a learner's notebook as ``Cell``s), ``plan_cells`` (a ``Plan``: what each side runs,
in notebook order, a checkpoint where each check cell stands), ``cell_names``, ``split_statements``, ``release_names``.

The evaluation of each check cell sees exactly the code the learner's notebook runs before it, in
notebook order (the cells the learner added included, the cells below it left out, never the
reference). The learner's process runs every cell the learner wrote (answer cells, cells they
added, release cells they edited) and the release cells those need, and stops at a *checkpoint*
where each check cell stands; the grader's side runs the check cells as the gradebook holds them,
hidden tests included, and the release cells they need. So an answer moved below its check cell
is not defined at that check (0, as the lab shows it failing); a cell after the check that
redefines the answer does not change that check's verdict; of a duplicated answer cell, each check
sees the copy above it. A release cell the learner left as released runs on the grader's side as
released (and on the learner's side if their code needs it); one they edited runs on the
learner's side as edited, and as released on the grader's side. The names the grader's side takes
from the release and the check cells (and Python's builtins) are never the learner's.

Leaves out: running the plan (``judge.py``), the autograde steps (``behaviour.py``), parsing hidden-test
regions (``cells.py``). Nothing here imports nbgrader or runs code: these are functions of sources.

Vocabulary: the *answer cells* are the code cells with ``solution: true``; *added cells* are the
code cells of the learner's notebook that the release does not have as they stand (a cell of
their own, a release cell they edited, the other copies of a duplicated answer); the *learner's
names* are the names answer and added cells define at top level that the grader's cells read;
a *checkpoint* is the place of one of the grader's cells among the learner's.
"""
from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ...cells import is_answer, is_check_cell, source_lines, source_text


@dataclass(frozen=True)
class Cell:
    """One code cell as a side runs it: where it comes from, its id, its source, and what the release has there.

    ``kind`` is ``"release"``, ``"answer"``, ``"added"`` or ``"check"``; in a plan also
    ``"checkpoint"`` (a place in the learner's cells, named by ``id``). ``released`` is an answer
    cell, or a release cell the learner edited, as released (what the grader's side runs of it).
    ``checkpoint`` is, for a cell of the grader's side, the checkpoint whose bindings it sees.
    """

    kind: str
    id: str
    source: str
    released: str = ""
    checkpoint: str = ""


def plain_python(source: str) -> str:
    """Return a cell's source with IPython's ``%`` and ``!`` lines blanked (they are not Python)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source_lines(source))


def cell_names(source: str, imports: bool = True) -> tuple[set[str], set[str], bool]:
    """Return (names a cell binds at top level, names it reads anywhere, whether it does ``import *``).

    ``cell_names("import math\\nx = f(y)")`` is ``({"math", "x"}, {"f", "y"}, False)``; with
    ``imports=False`` the names bound by imports are left out. A cell that is not Python binds
    nothing and reads nothing.
    """
    try:
        tree = ast.parse(plain_python(source))
    except SyntaxError:
        return set(), set(), False
    bound: set[str] = set()
    star = False
    for statement in tree.body:
        star |= _bind_top_level(statement, imports, bound)
    try:
        table = symtable.symtable(plain_python(source), "<cell>", "exec")
    except SyntaxError:
        return bound, set(), star
    return bound, _free_reads(table) - bound, star


def _bind_top_level(node: ast.AST, imports: bool, bound: set[str]) -> bool:
    """Add to ``bound`` the names ``node`` binds at a cell's top level; return whether it does ``import *``.

    Top level: the statement itself, the blocks of the ``if``, ``for``, ``while``, ``with`` and
    ``try`` it opens (its ``except`` handlers included), and a ``:=`` that is one of its parts
    (``if (n := f()):``); not the bodies of the functions and classes it defines.
    """
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.add(node.name)
        return False
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        star = False
        for alias in node.names:
            if alias.name == "*":
                star = True
            elif imports:
                bound.add((alias.asname or alias.name).split(".")[0])
        return star
    for target in _binding_targets(node):
        bound.update(name.id for name in ast.walk(target) if isinstance(name, ast.Name))
    star = False
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt) or isinstance(node, ast.stmt) and isinstance(child, ast.NamedExpr):
            star |= _bind_top_level(child, imports, bound)
        elif isinstance(child, ast.ExceptHandler):  # the one kind of ast.excepthandler
            if child.name:
                bound.add(child.name)
            for statement in child.body:
                star |= _bind_top_level(statement, imports, bound)
    return star


def _binding_targets(node: ast.AST) -> list[ast.expr]:
    """Return what a statement (or a ``:=``) binds names to: assignment, loop and ``with ... as`` targets."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _free_reads(table) -> set[str]:
    """Return the names a scope (and the scopes inside it) read from the cell's globals."""
    names = set()
    for symbol in table.get_symbols():
        if symbol.is_referenced() and (table.get_type() == "module" or symbol.is_global()):
            names.add(symbol.get_name())
    for child in table.get_children():
        names |= _free_reads(child)
    return names


def split_statements(cell: Cell) -> list[Cell]:
    """Return a release cell as one cell per top-level statement (so a side runs only the imports it needs).

    A cell that is not Python stays whole.
    """
    text = plain_python(cell.source)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [cell]
    return [
        Cell(cell.kind, f"{cell.id}:{node.lineno}", ast.get_source_segment(text, node) or "")
        for node in tree.body
    ]


@dataclass(frozen=True)
class Plan:
    """What each side runs of one notebook, in notebook order.

    ``learner_side``: the cells of the learner's process, with a ``"checkpoint"`` cell where each
    cell of the grader's side that reads a learner's name stands; ``grader_side``: the cells the
    grader runs (an answer cell there runs as released, for its imports); ``learner``: the
    learner's names.
    """

    learner_side: list[Cell]
    grader_side: list[Cell]
    learner: frozenset[str]


def plan_cells(cells: Iterable[Cell], reserved: Iterable[str] = ()) -> Plan:
    """Return what each side runs of a notebook's code cells (``notebook_cells``), kept in their order.

    The learner's process runs every answer and added cell, and the release cells that bind a
    name the cells it runs read (transitively); the grader runs every check cell, the answer
    cells as released, and the release cells that the check cells need (a release cell the
    learner edited counts there as released). The learner's names are what answer and added
    cells define (not import) and the grader's cells read, less the names the grader's side
    binds itself (its release cells and check cells, ``reserved``: the release's other names,
    and Python's builtins): those are never a learner's. Each grader cell that reads a learner's
    name gets a checkpoint at its place.

    >>> plan = plan_cells([Cell("added", "h", "def helper(): return 2"),
    ...                    Cell("answer", "a", "def f(): return helper()", released="def f(): ..."),
    ...                    Cell("check", "c", "assert f() == 2")])
    >>> [(c.kind, c.id) for c in plan.learner_side], sorted(plan.learner)
    ([('added', 'h'), ('answer', 'a'), ('checkpoint', 'c')], ['f'])
    """
    parts = _sided_parts(cells)
    info = [cell_names(c.source) for c, _ in parts]
    writes_learner = [side in ("answer", "learner") for _, side in parts]
    release_grader = [side in ("both", "grader") for _, side in parts]
    grader_owned = set(reserved) | set(dir(builtins))
    read_by_grader: set[str] = set()
    written: set[str] = set()
    for (cell, side), (bound, read, _unused) in zip(parts, info):
        if side in ("both", "grader", "check"):
            grader_owned |= bound
            read_by_grader |= read
        if side in ("answer", "learner"):
            written |= cell_names(cell.source, imports=False)[0]
    learner = (written & read_by_grader) - grader_owned

    def sliced(targets: list[bool], candidates: list[bool], skip: set[str]) -> set[int]:
        needed = set().union(*[info[i][1] for i, target in enumerate(targets) if target]) - skip
        chosen = {i for i, target in enumerate(targets) if target}
        for i in range(len(parts) - 1, -1, -1):
            bound, read, star = info[i]
            if candidates[i] and i not in chosen and (star or bound & needed):
                chosen.add(i)
                needed |= read - skip
        return chosen

    on_learner = sliced(writes_learner, [side == "both" for _, side in parts], set())
    checks = [side == "check" for _, side in parts]
    on_grader = sliced(checks, release_grader, learner) | {i for i, (_, side) in enumerate(parts) if side == "answer"}
    learner_side, grader_side = [], []
    for i, (cell, side) in enumerate(parts):
        if i in on_grader:
            if side == "answer":
                cell = Cell("answer", cell.id, cell.released)
            elif side == "check" or info[i][1] & learner:
                cell = replace(cell, checkpoint=cell.id if side == "check" else f"{cell.id}@{i}")
                learner_side.append(Cell("checkpoint", cell.checkpoint, ""))
            grader_side.append(cell)
        if i in on_learner:
            learner_side.append(parts[i][0])
    return Plan(learner_side, grader_side, frozenset(learner))


def _sided_parts(cells: Iterable[Cell]) -> list[tuple[Cell, str]]:
    """Return the parts of a notebook's code cells with their side: "both", "learner", "grader", "answer" or "check".

    A release cell is split into its statements (both sides); an added cell is the learner's,
    and the release cell it replaced, if any, runs as released on the grader's side.
    """
    parts: list[tuple[Cell, str]] = []
    for cell in cells:
        if cell.kind == "release":
            parts += [(part, "both") for part in split_statements(cell)]
        elif cell.kind == "added":
            parts.append((cell, "learner"))
            if cell.released:
                parts += [(part, "grader") for part in split_statements(Cell("release", cell.id, cell.released))]
        elif cell.kind in ("answer", "check"):
            parts.append((cell, cell.kind))
        else:
            raise ValueError(f"cell kind must be release, answer, added or check (got {cell.kind!r})")
    return parts


def release_names(release: dict) -> set[str]:
    """Return the names the release's own code cells bind (not its answers' or check cells'): never a learner's.

    >>> sorted(release_names({"cells": [{"cell_type": "code", "metadata": {}, "source": "from m import f\\nx = 1"}]}))
    ['f', 'x']
    """
    names = set()
    for cell in release.get("cells", []):
        if cell.get("cell_type") == "code" and not is_answer(cell) and not is_check_cell(cell):
            names |= cell_names(source_text(cell.get("source", "")))[0]
    return names



def notebook_cells(release: dict, checks: dict[str, str], notebook: Any) -> list[Cell]:
    """Return the code cells of the learner's notebook, in its order, each as what it is to grading.

    ``release`` is the release notebook (JSON); ``checks`` the check cells' sources from the
    gradebook (hidden tests included), by grade id; ``notebook`` the learner's (sanitised)
    notebook, whose nbgrader metadata is the release's. An answer cell is the learner's, with its
    release version; a check cell is the gradebook's; any other cell is a release cell if its
    source is one of the release's other code cells, else an added cell (with the release cell of
    its id as released, when the learner edited one).
    """
    stubs: dict[str, str] = {}
    plain: dict[str, str] = {}  # the release's other code cells, by cell id
    for cell in release.get("cells", []):
        if cell.get("cell_type") != "code" or is_check_cell(cell):
            continue
        source = source_text(cell.get("source", ""))
        if is_answer(cell):
            stubs[cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")] = source
        else:
            plain[str(cell.get("id", ""))] = source
    as_released = {source.rstrip() for source in plain.values()}
    cells = []
    for number, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        cell_id = str(cell.get("id") or f"cell-{number}")
        source = source_text(cell.get("source", ""))
        if is_answer(cell) and grade_id:
            cells.append(Cell("answer", grade_id, source, released=stubs.get(grade_id, "")))
        elif is_check_cell(cell) and grade_id in checks:
            cells.append(Cell("check", grade_id, checks[grade_id]))
        elif source.rstrip() in as_released:
            cells.append(Cell("release", cell_id, source))
        else:
            cells.append(Cell("added", cell_id, source, released=plain.get(cell_id, "")))
    return cells

