"""Score check cells from what the learner's functions return, judged on the grader's side.

Covers: what each side runs (``notebook_cells``, ``plan_cells``): the evaluation of each check cell
sees exactly the code the learner's notebook runs before it, in notebook order (the cells the
learner added included, the cells below it left out, never the reference). The learner's side,
a process of its own (``sandbox/answer_session.py`` running ``sandbox/answerer.py`` in the
sandbox with a build of ``ctx_reference`` without the notebook's exercise functions, see
``reference_build.py``), runs every cell the learner wrote (answer cells, cells they added,
release cells they edited) and the release cells those need, in notebook order, and stops at a
*checkpoint* where each check cell stands. The grader's side (``judge``) runs the check cells as
the gradebook holds them, hidden tests included, and the release cells they need, in a fresh
namespace of this process with the real ``ctx_reference``, the learner's names bound to proxies
that call, in that process, the objects those names were bound to at the check cell's checkpoint
and take back plain data. ``ScoreFromBehaviour`` is the autograde step that turns each check
cell's verdict into what nbgrader scores.

So a check cell's visible cases get the verdict the learner saw in JupyterLab, and the hidden
tests only add: a helper written in a cell of its own above the answer is there; an answer moved
below its check cell is not defined at that check (0, as the lab shows it failing); a cell after
the check that redefines the answer does not change that check's verdict; of a duplicated answer
cell, each check sees the copy above it. A release cell the learner left as released runs on
the grader's side as released (and on the learner's side if their code needs it); one they edited
runs on the learner's side as edited (what their notebook ran), and as released on the grader's
side (what the check cells may need of it). Learner-written code only ever runs in the answer
process; the names the grader's side takes from the release and the check cells (and Python's
builtins) are never the learner's, whatever a learner's cell rebinds.

Why: a check cell's outcome used to be read from the learner's own kernel (its errors, a report
on its stderr, a guard object that answered a token), and everything in that kernel can be
replaced by the learner's code. Here no output, object or message of a learner's process decides
a score: the only thing taken from it is the data its functions return, and a hidden test passes
only if that data passes it. The hidden tests' source never reaches a learner's process (the
notebook's kernel runs the check cells as released), and the feedback never shows text a
learner's process produced during the evaluation.

Leaves out: running the notebook for its visible output (its kernel: ``sandbox/kernels.py`` and
``sandbox/execute.py``), the sandbox's rules (``sandbox/policy.py``), the wire protocol and the
answer process itself (``sandbox/answerer.py``, ``sandbox/answer_session.py``), parsing cells'
sources and hidden-test regions (``cells.py``).

Vocabulary: the *answer cells* are the code cells with ``solution: true``; *added cells* are the
code cells of the learner's notebook that the release does not have as they stand (a cell of
their own, a release cell they edited, the other copies of a duplicated answer); the *learner's
names* are the names answer and added cells define at top level that the grader's cells read;
a *checkpoint* is the place of one of the grader's cells among the learner's; a *verdict* is one
check cell's outcome (passed, and a Chinese line for the feedback that holds no text from the
learner's process, and the label of the first hidden check it failed, for the instructor).
"""
from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import io
import json
import os
import shutil
import symtable
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Any as AnyTrait
from traitlets import Integer

from ctx_reference.i18n import N_, _, language, using

from ...cells import hidden_checks, hidden_lines, is_answer, is_check_cell, source_lines, source_text
from ...editions.translate import in_edition, submitted_edition
from ...sandbox.answer_session import ANSWERER_SOURCE, AnswerSession, LearnerFunction
from ...sandbox.policy import is_course_package
from .reference_build import ReferenceBuilds, graded_exercises, withheld_objects

CHECK_FILE = "<check cell {}>"

# Feedback lines of a failed check cell (they quote no text of the learner's process). Each is
# shown in the language of the submission's edition (``_()`` where the verdict is made).
HIDDEN_FAILED = N_("隐藏测试没有通过。")
VISIBLE_FAILED = N_("这一格第 {line} 行没有通过：{text}")
USED_REFERENCE = N_(
    "评分时发现你的函数用到了这个练习的参考实现（评分时不提供），这一格得 0 分："
    "这个练习要用你自己写的代码完成。"
)
TIMED_OUT = N_("评分时你的函数运行超过了 {seconds} 秒，这一格按未通过计分。")
ANSWERER_DIED = N_("评分时运行你的函数的进程意外结束了（内存或 CPU 时间用完了？），"
                   "这一格按未通过计分。")
NOT_RUN = N_("这一格的检查没有运行：{why}")
NOT_IN_GRADER = N_("评分程序里没有这一格")
# Where the autograded notebook keeps a check cell's verdict for the instructor (item analysis):
# ``{"hidden_test": label}``, the label of the first hidden check it failed ("" for none). The
# feedback page does not show cell metadata, so the label stays out of what the learner sees.
VERDICT_KEY = "ctx_verdict"
# What a check cell's error from the kernel becomes when the grader's evaluation passed it.
KERNEL_ERROR_NOTE = N_("（笔记本里这一格报错 {ename}，评分以评分程序单独运行的检查为准："
                       "这一格通过。）\n")


# --------------------------------------------------------------------------------------------
# Which cells each side runs (pure functions of the cells' sources)


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
    bound, star = set(), False

    def bind_target(node):
        for name in ast.walk(node):
            if isinstance(name, ast.Name):
                bound.add(name.id)

    def top(node):
        nonlocal star
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                elif imports:
                    bound.add((alias.asname or alias.name).split(".")[0])
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                bind_target(target)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            bind_target(node.target)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    bind_target(item.optional_vars)
        if isinstance(node, ast.NamedExpr):
            bind_target(node.target)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) or isinstance(node, ast.stmt) and isinstance(child, ast.NamedExpr):
                top(child)
            elif isinstance(child, ast.excepthandler):
                if child.name:
                    bound.add(child.name)
                for statement in child.body:
                    top(statement)

    for statement in tree.body:
        top(statement)
    try:
        table = symtable.symtable(plain_python(source), "<cell>", "exec")
    except SyntaxError:
        return bound, set(), star
    return bound, _free_reads(table) - bound, star


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
    parts: list[tuple[Cell, str]] = []  # (cell, side): "both", "learner", "grader", or "answer"
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


# --------------------------------------------------------------------------------------------
# The grader's side


@dataclass(frozen=True)
class Verdict:
    """One check cell's outcome: passed, the feedback line, its detail and first failed hidden check, its prints."""

    passed: bool
    line: str = ""
    detail: str = ""
    hidden: bool = False
    hidden_test: str = ""  # the label of the hidden check the cell failed on ("" when none did)
    visible: bool = False  # failed on a visible line of the check cell (``VISIBLE_FAILED``)
    printed: str = field(default="", repr=False, compare=False)


class _Quiet:
    """What ``get_ipython()`` returns to a release cell run on the grader's side."""

    def run_line_magic(self, *args, **kwargs):
        return None

    run_cell_magic = system = run_line_magic


def judge(cells: list[Cell], session: AnswerSession, learner: Iterable[str]) -> dict[str, Verdict]:
    """Run the grader's cells (``Plan.grader_side``) in a fresh namespace and return the verdict of every check cell.

    Before a cell with a checkpoint, the learner's process runs on to it and the learner's names
    are bound to what they are there (a callable becomes a LearnerFunction of that checkpoint, a
    value is taken as data, an undefined name is unbound); answer cells run as released (their
    imports; the stubs never reach a check cell) and release cells as released, their errors
    ignored; each check cell runs with its hidden tests and passes if it raises nothing.
    """
    learner = sorted(learner)
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins, "display": lambda *a, **k: None}
    namespace["get_ipython"] = lambda: _Quiet
    verdicts: dict[str, Verdict] = {}
    sink = io.StringIO()
    with _printing_to(sink):
        for cell in cells:
            sink.seek(0)
            sink.truncate()
            if cell.checkpoint:
                _bind(namespace, learner, session, cell.checkpoint)
            if cell.kind != "check":
                try:
                    exec(compile(plain_python(cell.source), f"<{cell.kind} cell {cell.id}>", "exec"), namespace)
                except BaseException:  # noqa: BLE001 - a stub raises NotImplementedError, a release cell may fail
                    pass
                continue
            verdict = _check(cell, namespace, session)
            verdicts[cell.id] = replace(verdict, printed=sink.getvalue()[-20_000:])
    return verdicts


def _bind(namespace: dict, learner: list[str], session: AnswerSession, checkpoint: str) -> None:
    """Bind the learner's names in ``namespace`` to what they are at ``checkpoint`` in the learner's process."""
    ready = session.reach(checkpoint)
    for name in learner:
        kind = ready.get(name)
        namespace.pop(name, None)
        if isinstance(kind, dict) and kind.get("callable"):
            namespace[name] = LearnerFunction(session, name, checkpoint)
        elif isinstance(kind, dict) and "value" in kind:
            try:
                namespace[name] = session.codec.decode(kind["value"])
            except Exception:  # noqa: BLE001 - a value that does not decode is not defined
                pass


class _Routed(io.TextIOBase):
    """A standard stream whose writes from a thread with a sink go to that sink, the others where they went."""

    def __init__(self, default):
        self.default = default

    def write(self, text):
        sink = getattr(_SINKS, "sink", None)
        return (sink if sink is not None else self.default).write(text)

    def flush(self):
        sink = getattr(_SINKS, "sink", None)
        (sink if sink is not None else self.default).flush()

    def __getattr__(self, name):
        return getattr(self.default, name)


_SINKS = threading.local()
_ROUTING = threading.Lock()


@contextlib.contextmanager
def _printing_to(sink):
    """Send what this thread prints (stdout and stderr, warnings included) to ``sink``; other threads unaffected.

    The grader's side runs check cells in a thread beside the notebook's kernel run: what they
    print must not reach the instructor's console.
    """
    with _ROUTING:
        if not isinstance(sys.stdout, _Routed):
            sys.stdout = _Routed(sys.stdout)
        if not isinstance(sys.stderr, _Routed):
            sys.stderr = _Routed(sys.stderr)
    _SINKS.sink = sink
    try:
        yield
    finally:
        _SINKS.sink = None


def _check(cell: Cell, namespace: dict, session: AnswerSession) -> Verdict:
    filename = CHECK_FILE.format(cell.id)
    try:
        exec(compile(cell.source, filename, "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - any failure of a check cell scores it 0
        detail = f"{type(exc).__name__}: {exc}"[:500]
        if session.withheld:
            return Verdict(False, _(USED_REFERENCE), detail)
        if session.failure == "timeout":
            return Verdict(False, _(TIMED_OUT).format(seconds=int(session.timeout)), detail)
        if session.failure is not None:
            return Verdict(False, _(ANSWERER_DIED), detail)
        line = _line_in(exc, filename)
        hidden = line is None or line in hidden_lines(cell.source)
        if hidden:
            return Verdict(False, _(HIDDEN_FAILED), detail, hidden=True, hidden_test=failed_check(cell.source, line))
        text = source_lines(cell.source)[line - 1].strip()
        return Verdict(False, _(VISIBLE_FAILED).format(line=line, text=text), detail, visible=True)
    if session.withheld:  # the learner's code met a withheld function and went on
        return Verdict(False, _(USED_REFERENCE), "ReferenceWithheld caught by the learner's code")
    return Verdict(True)


def failed_check(source: str, line: int | None) -> str:
    """Return the label of the hidden check of ``source`` on ``line`` ("" when the line is in none).

    The line is where the check cell stopped (``_line_in``): the cell runs top to bottom, so the
    hidden checks before it passed:

    >>> cell = '### BEGIN HIDDEN TESTS\\nexpect_digest("a", f(1), "0")\\nexpect_digest("b", f(2), "0")'
    >>> failed_check(cell, 3), failed_check(cell, 1)
    ('b', '')
    """
    if line is None:
        return ""
    return next((label for label, first, last in hidden_checks(source) if first <= line <= last), "")


def _line_in(exc: BaseException, filename: str) -> int | None:
    """Return the line of the check cell where ``exc`` left it (its outermost frame there)."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
            break
        tb = tb.tb_next
    return line


# --------------------------------------------------------------------------------------------
# Putting it together for one notebook


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


def evaluate(
    cells: list[Cell],
    *,
    build: Path,
    timeout: float,
    policy=None,
    reserved: Iterable[str] = (),
) -> dict[str, Verdict]:
    """Evaluate every check cell of ``cells`` (``notebook_cells``) and return the verdicts (see the module docstring).

    ``build`` holds the ``ctx_reference`` the learner's process imports; that process works in
    an empty folder of its own (no file handed in with the submission is there: a copy of the
    package handed in cannot be imported); with a ``policy`` (``SandboxPolicy``) it runs in the
    sandbox, where the real package is not. ``reserved`` are names that are never a learner's
    (``release_names``).
    """
    plan = plan_cells(cells, reserved)
    # beside the build: a grading run removes that folder at its end, even after a worker was killed
    home = Path(tempfile.mkdtemp(prefix="ctx-answer-", dir=Path(build).parent))
    _LIVE[home] = None
    try:
        for name in ("run", "home", "work"):
            (home / name).mkdir()
        job = {
            "cells": [
                {"checkpoint": c.id} if c.kind == "checkpoint" else {"id": c.id, "source": c.source}
                for c in plan.learner_side
            ],
            "names": sorted(plan.learner),
            "path": [str(build)],
            "cwd": str(home / "work"),
            "cell_timeout": timeout,
        }
        # the script goes in the process's own folder: its command line names no course module
        script = home / "run" / "answer.py"
        script.write_text(ANSWERER_SOURCE, encoding="utf-8")
        argv = [sys.executable, "-P", str(script)]
        env = {k: os.environ[k] for k in ("LANG", "LC_ALL", "LC_CTYPE", "TZ") if k in os.environ}
        env.update(
            HOME=str(home / "home"), MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", NBGRADER_EXECUTION="autograde"
        )
        env["CTX_LANG"] = language()  # the learner's cells run as in their kernel, in the submission's language
        if policy is not None:
            # never the course package itself: only its build without the exercise
            exposed = tuple(p for p in policy.exposed if not is_course_package(p)) + (str(build),)
            learner_policy = replace(policy, exposed=exposed)
            argv = learner_policy.command(argv, home, env={k: v for k, v in env.items() if k != "HOME"})
            env = None
        session = AnswerSession(argv, job, timeout, env=env, cwd=str(home / "run"))
        _LIVE[home] = session
        try:
            return judge(plan.grader_side, session, plan.learner)
        finally:
            session.close()
    finally:
        _LIVE.pop(home, None)
        shutil.rmtree(home, ignore_errors=True)


# The answer processes and folders of evaluations still running: an evaluation left running when
# the grader exits (its notebook stopped before it was scored) is cleaned up then.
_LIVE: dict[Path, AnswerSession | None] = {}


@atexit.register
def _clean_up() -> None:
    for home, session in list(_LIVE.items()):
        if session is not None:
            session.close()
        shutil.rmtree(home, ignore_errors=True)


def discard_pending(student: str, assignment: str) -> None:
    """Wait for and drop the evaluations of a submission that were started but never scored."""
    for key in [k for k in _PENDING if k[1:3] == (student, assignment)]:
        try:
            _PENDING.pop(key).result()
        except Exception:  # noqa: BLE001 - nothing is scored from it
            pass


# --------------------------------------------------------------------------------------------
# The autograde step


def apply_verdict(cell, verdict: Verdict) -> None:
    """Make a check cell's outputs say what the verdict says, for nbgrader to score.

    The kernel's stderr becomes stdout (it never costs points). A passed cell loses the kernel's
    errors (each becomes one note line); a failed cell keeps them, and gets one error with the
    verdict's line when the kernel raised none. The cell's ``VERDICT_KEY`` metadata gets the first
    hidden check it failed (whatever the submission held there is replaced).
    """
    outputs = []
    for output in cell.outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            output = nbformat.v4.new_output("stream", name="stdout", text=output.get("text", ""))
        if output.get("output_type") == "error" and verdict.passed:
            note = _(KERNEL_ERROR_NOTE).format(ename=output.get("ename", ""))
            output = nbformat.v4.new_output("stream", name="stdout", text=note)
        outputs.append(output)
    if not verdict.passed:
        kernel_errors = any(o.get("output_type") == "error" for o in outputs)
        explained = verdict.visible and kernel_errors
        if not explained:  # the kernel's own error explains a visible failure; anything else gets the verdict's line
            outputs = [o for o in outputs if o.get("output_type") != "error"]
            error = {"ename": "CheckFailed", "evalue": verdict.line, "traceback": [f"CheckFailed: {verdict.line}"]}
            outputs.append(nbformat.v4.new_output("error", **error))
    cell.outputs = outputs
    cell.metadata[VERDICT_KEY] = {"hidden_test": "" if verdict.passed else verdict.hidden_test}


class ScoreFromBehaviour(NbGraderPreprocessor):
    """Score every check cell from the learner's functions' behaviour, evaluated outside the kernel.

    Runs right after ``Execute``. For the notebook being autograded it builds (or takes from
    ``builds``) a ``ctx_reference`` without the notebook's exercise functions, evaluates each
    check cell as the gradebook holds it (``evaluate``), and rewrites the check cells' outputs
    with ``apply_verdict``. ``policy`` (a ``SandboxPolicy``) puts the learner's process in the
    sandbox; without one (nbgrader's own commands) it runs as a plain process.
    ``resources["ctx_verdicts"]`` keeps the verdicts, with details, for the instructor.
    """

    policy = AnyTrait(None, allow_none=True, help="the SandboxPolicy of the learner's process").tag(config=True)
    builds = AnyTrait(None, allow_none=True, help="ReferenceBuilds shared by a grading run").tag(config=True)
    timeout = Integer(0, help="seconds one call of a learner's function may run (0: Execute.timeout)").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        pending = _PENDING.pop(_key(info), None)
        verdicts = pending.result() if pending is not None else self.evaluation(nb, info)()
        if verdicts is None:  # the notebook is not in the gradebook
            return nb, resources
        with using(submitted_edition(nb)):  # the feedback speaks the language of the submission
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                    missing = Verdict(False, _(NOT_RUN).format(why=_(NOT_IN_GRADER)))
                    verdict = verdicts.get(meta.get("grade_id"), missing)
                    apply_verdict(cell, verdict)
                    if not verdict.passed:
                        self.log.info("%s: %s", meta.get("grade_id"), verdict.detail)
        resources["ctx_verdicts"] = verdicts
        return nb, resources

    def evaluation(self, nb, info) -> Callable[[], dict[str, Verdict] | None]:
        """Return the evaluation of a (sanitised) notebook as a function to call, in this thread or another."""
        edition = submitted_edition(nb)
        release = self._release(info, edition)
        with Gradebook(info["db_url"]) as gb:
            try:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return lambda: None
            answers = {c.name for c in notebook.solution_cells}
            graded = [c.name for c in notebook.grade_cells if c.cell_type == "code" and c.name not in answers]
            sources = {c.name: c.source for c in notebook.source_cells}
        checks = {name: sources.get(name) or "" for name in graded}
        cells = notebook_cells(release, checks, nb)
        reserved = release_names(release)
        withheld = withheld_objects(graded_exercises(checks.values()))
        timeout = self.timeout or int(getattr(self.config.Execute, "timeout", 60) or 60)
        shared, policy = self.builds, self.policy

        def run() -> dict[str, Verdict]:
            # The verdicts' lines in the submission's language: a thread does not inherit ``using``.
            with using(edition):
                builds = shared if shared is not None else ReferenceBuilds()
                try:
                    return evaluate(
                        cells, build=builds.path(withheld), timeout=timeout, policy=policy, reserved=reserved
                    )
                finally:
                    if shared is None:
                        builds.close()

        return run

    def _release(self, info, edition: str = "zh_CN") -> dict:
        """Return the release notebook, in ``edition``, of the notebook being graded (JSON), or an empty one."""
        course = self.config.CourseDirectory
        root = Path(course.root or ".")
        release = Path(course.release_directory or "release")
        if not release.is_absolute():
            release = root / release
        path = release / info["assignment"] / f"{info['notebook']}.ipynb"
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"cells": []}
        # A submission of the English edition is compared with the English release (its cells as released).
        return in_edition(notebook, root, info["assignment"], edition)


class _Pending:
    """An evaluation running in a thread of its own; ``result()`` waits for it (and re-raises what it raised)."""

    def __init__(self, run: Callable[[], Any]):
        self._outcome: tuple = (None, None)
        self._thread = threading.Thread(target=self._run, args=(run,), name="ctx-evaluation", daemon=True)
        self._thread.start()

    def _run(self, run) -> None:
        try:
            self._outcome = (run(), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits
            self._outcome = (None, exc)

    def result(self):
        self._thread.join()
        value, error = self._outcome
        if error is not None:
            raise error
        return value


# Evaluations started while sanitising, by (gradebook, student, assignment, notebook), taken after Execute.
_PENDING: dict[tuple, _Pending] = {}


def _key(info: dict) -> tuple:
    return (info.get("db_url"), info.get("student"), info.get("assignment"), info.get("notebook"))


class StartEvaluation(ScoreFromBehaviour):
    """The last sanitising step: start the notebook's evaluation beside the kernel's run.

    The evaluation needs nothing the kernel computes (the answer cells come from the sanitised
    notebook, the check cells from the gradebook), so it runs in a thread of the grader while the
    notebook runs in its kernel; ``ScoreFromBehaviour`` waits for it after ``Execute``. Configured
    like ``ScoreFromBehaviour`` (``c.ScoreFromBehaviour.policy`` and the rest apply to both).
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        _PENDING[_key(info)] = _Pending(self.evaluation(nb, info))
        return nb, resources
