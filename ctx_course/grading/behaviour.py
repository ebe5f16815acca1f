"""Score check cells from what the learner's functions return, judged on the grader's side.

Covers: what each side runs (``plan_cells``: the learner's answer cells and the release cells they
need on one side, the check cells as the gradebook holds them, hidden tests included, and the
release cells they need on the other); the learner's side, a process of its own
(``AnswerSession``, running ``sandbox/answerer.py`` in the sandbox with a build of ``ctx_reference``
without the notebook's exercise functions, see ``reference_build.py``); the grader's side
(``judge``), which runs the check cells in a fresh namespace of this process with the real
``ctx_reference``, the learner's names bound to proxies that call into that process and take back
plain data; and ``ScoreFromBehaviour``, the autograde step that turns each check cell's verdict
into what nbgrader scores.

Why: a check cell's outcome used to be read from the learner's own kernel (its errors, a report
on its stderr, a guard object that answered a token), and everything in that kernel can be
replaced by the learner's code. Here no output, object or message of a learner's process decides
a score: the only thing taken from it is the data its functions return, and a hidden test passes
only if that data passes it. The hidden tests' source never reaches a learner's process (the
notebook's kernel runs the check cells as released), and the feedback never shows text a
learner's process produced during the evaluation.

Leaves out: running the notebook for its visible output (the kernel, ``kernels.py``), the
sandbox's rules (``sandbox.py``).

Vocabulary: the *answer cells* are the code cells with ``solution: true``; the *learner's names*
are the names they define at top level; a *verdict* is one check cell's outcome (passed, and a
Chinese line for the feedback that holds no text from the learner's process, and the label of the
first hidden check it failed, for the instructor).
"""
from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import io
import json
import os
import select
import shutil
import signal
import subprocess
import symtable
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Any as AnyTrait
from traitlets import Integer

from ..cells import hidden_checks
from ..sandbox import answerer as wire
from ..sandbox.policy import is_course_package
from .reference_build import ReferenceBuilds, graded_exercises, withheld_objects

# The learner's side runs this file's text (the sandbox does not show ctx_course).
ANSWERER_SOURCE = Path(wire.__file__).read_text(encoding="utf-8")

BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
CHECK_FILE = "<check cell {}>"

# Feedback lines of a failed check cell (they quote no text of the learner's process).
HIDDEN_FAILED = "隐藏测试没有通过。"
VISIBLE_FAILED = "这一格第 {line} 行没有通过：{text}"
USED_REFERENCE = (
    "评分时发现你的函数用到了这个练习的参考实现（评分时不提供），这一格得 0 分："
    "这个练习要用你自己写的代码完成。"
)
TIMED_OUT = "评分时你的函数运行超过了 {seconds} 秒，这一格按未通过计分。"
ANSWERER_DIED = "评分时运行你的函数的进程意外结束了（内存或 CPU 时间用完了？），"\
    "这一格按未通过计分。"
NOT_RUN = "这一格的检查没有运行：{why}"
# Where the autograded notebook keeps a check cell's verdict for the instructor (item analysis):
# ``{"hidden_test": label}``, the label of the first hidden check it failed ("" for none). The
# feedback page does not show cell metadata, so the label stays out of what the learner sees.
VERDICT_KEY = "ctx_verdict"
# What a check cell's error from the kernel becomes when the grader's evaluation passed it.
KERNEL_ERROR_NOTE = "（笔记本里这一格报错 {ename}，评分以评分程序单独运行的检查为准："\
    "这一格通过。）\n"


# --------------------------------------------------------------------------------------------
# Which cells each side runs (pure functions of the cells' sources)


@dataclass(frozen=True)
class Cell:
    """One code cell as a side runs it: where it comes from, its id, its source (an answer's: also as released)."""

    kind: str  # "release", "answer" or "check"
    id: str
    source: str
    released: str = ""  # an answer cell as released (its imports are the release's to give)


def plain_python(source: str) -> str:
    """Return a cell's source with IPython's ``%`` and ``!`` lines blanked (they are not Python)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


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


def plan_cells(cells: Iterable[Cell]) -> tuple[list[Cell], list[Cell], set[str]]:
    """Return (what the learner's process runs, what the grader runs, the learner's names).

    ``cells`` are a notebook's code cells in order. The learner's process runs every answer
    cell and the release cells that bind a name the cells it runs read (transitively, anywhere
    in the notebook); the grader runs every check cell and the release cells that the check
    cells need, the learner's names being bound to proxies where their answer cell stands.
    Names the learner's answer cells define (not import) are never looked for in the release cells.
    """
    cells = [part for cell in cells for part in (split_statements(cell) if cell.kind == "release" else [cell])]
    info = [cell_names(c.source) for c in cells]
    # The learner's names: what answer cells define (a module they import is the release's to give).
    learner: set[str] = set()
    for cell in cells:
        if cell.kind == "answer":
            learner |= cell_names(cell.source, imports=False)[0]

    def sliced(targets: str, skip_learner: bool) -> list[int]:
        needed = set().union(*[info[i][1] for i, c in enumerate(cells) if c.kind == targets]) if cells else set()
        if skip_learner:
            needed -= learner
        chosen = set()
        for i in range(len(cells) - 1, -1, -1):
            bound, read, star = info[i]
            if cells[i].kind == targets:
                chosen.add(i)
            elif cells[i].kind == "release" and (star or bound & needed):
                chosen.add(i)
                needed |= read - (learner if skip_learner else set())
        return sorted(chosen)

    answer_side = [cells[i] for i in sliced("answer", False)]
    judge_side = sliced("check", True)
    judge_cells = [cells[i] for i in sorted(set(judge_side) | {i for i, c in enumerate(cells) if c.kind == "answer"})]
    return answer_side, judge_cells, learner


def hidden_lines(source: str) -> set[int]:
    """Return the 1-based numbers of the lines inside hidden-test regions (markers included)."""
    lines, inside, found = source.split("\n"), False, set()
    for number, line in enumerate(lines, start=1):
        if not inside and BEGIN_HIDDEN in line:
            inside = True
        if inside:
            found.add(number)
            if END_HIDDEN in line:
                inside = False
    return found


# --------------------------------------------------------------------------------------------
# The learner's side


class AnswerUnavailable(RuntimeError):
    """The learner's process ran past its time, died, or broke the protocol: the call cannot be answered."""


class AnswerSession:
    """The learner's process for one notebook: started on demand, restarted for a check cell after it died.

    ``argv`` starts ``sandbox/answerer.py``; ``job`` is its first message (cells, names, path,
    working folder). ``call(name, args, kwargs)`` returns the learner's value (decoded) or
    raises what the learner's function raised; ``withheld`` is set when the learner's code
    called a withheld reference function, ``failure`` when the process timed out or died.
    """

    def __init__(self, argv: list[str], job: dict, timeout: float, env: dict | None = None, cwd: str | None = None):
        self.argv, self.job, self.timeout, self.env, self.cwd = argv, job, float(timeout), env, cwd
        self.process: subprocess.Popen | None = None
        self.ready: dict = {}
        self.codec = wire.Codec(refs_out=True)
        self._buffer = b""
        self.withheld = False
        self.failure: str | None = None
        self.started = 0

    # -- process
    def start(self) -> dict:
        """Start the learner's process and return which of the learner's names it defined."""
        self.close()
        self.started += 1
        self._buffer = b""
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=self.env, cwd=self.cwd, start_new_session=True,
        )
        try:
            self._send(self.job)
            # each of its cells may run up to the time limit, as in the notebook
            message = self._receive(time.monotonic() + self.timeout * (len(self.job.get("cells", [])) + 1))
        except AnswerUnavailable as exc:
            self._fail(str(exc))
            self.ready = {}
            return self.ready
        ready = message.get("ready") if isinstance(message, dict) else None
        self.ready = ready if isinstance(ready, dict) else {}
        return self.ready

    def begin_cell(self) -> None:
        """Clear the flags of the previous check cell; restart the process if it is gone."""
        self.withheld = False
        if self.failure is not None or self.process is None or self.process.poll() is not None:
            self.failure = None
            self.start()

    def close(self) -> None:
        """Kill the learner's process (its whole sandbox) and reap it."""
        if self.process is None:
            return
        process, self.process = self.process, None
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                process.kill()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def _fail(self, why: str) -> None:
        self.failure = why
        self.close()

    # -- messages
    def _send(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        try:
            self.process.stdin.write(line)
            self.process.stdin.flush()
        except (OSError, ValueError, AttributeError):
            raise AnswerUnavailable("died") from None

    def _receive(self, deadline: float) -> dict:
        while b"\n" not in self._buffer:
            if len(self._buffer) > wire.MAX_LINE:
                raise AnswerUnavailable("protocol")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AnswerUnavailable("timeout")
            fd = self.process.stdout.fileno()
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise AnswerUnavailable("died")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            raise AnswerUnavailable("protocol") from None
        if not isinstance(message, dict):
            raise AnswerUnavailable("protocol")
        return message

    # -- calls
    def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        """Call the learner's ``name`` on ``args`` in the learner's process and return its value."""
        if self.failure is not None or self.process is None:
            raise AnswerUnavailable(self.failure or "died")
        args = list(args)
        try:
            message = {
                "call": name,
                "args": [self.codec.encode(a) for a in args],
                "kwargs": {str(k): self.codec.encode(v) for k, v in kwargs.items()},
            }
        except wire.WireError as exc:
            raise TypeError(f"this argument cannot be passed to the learner's function ({exc})") from None
        deadline = time.monotonic() + self.timeout
        try:
            self._send(message)
            while True:
                reply = self._receive(deadline)
                if "cb" in reply:
                    self._send(self._callback(reply))
                    continue
                break
        except AnswerUnavailable as exc:
            self._fail(str(exc))
            raise
        if "raised" in reply:
            raise self._exception(reply["raised"])
        if "ok" not in reply:
            self._fail("protocol")
            raise AnswerUnavailable("protocol")
        try:
            for index, data in (reply.get("changed") or {}).items():
                _update(args[int(index)], self.codec.decode(data))
            value = reply["ok"]
            if isinstance(value, dict) and set(value) == {"same"}:
                return args[int(value["same"])]
            return self.codec.decode(value)
        except wire.WireError:
            raise
        except Exception as exc:  # a value that decodes to nothing valid
            raise wire.WireError(f"返回值无法还原（{type(exc).__name__}）") from None

    def _exception(self, info) -> BaseException:
        if not isinstance(info, dict):
            return RuntimeError("")
        if info.get("withheld"):
            self.withheld = True
        if "value" in info:
            try:
                value = self.codec.decode(info["value"])
                if isinstance(value, Exception):
                    return value
            except Exception:
                pass
        return wire._rebuild(info, self.codec)

    def _callback(self, message: dict) -> dict:
        """Answer the learner's call of an object the grader passed by reference."""
        try:
            target = self.codec.refs[message["cb"]]
            attr = message.get("attr")
            if attr != "__call__":
                if not isinstance(attr, str) or (attr.startswith("_") and attr not in wire.FORWARDED):
                    raise AttributeError(f"{attr!r} cannot be called back")
                target = getattr(target, attr)
            args = [self.codec.decode(a) for a in message.get("args", [])]
            kwargs = {str(k): self.codec.decode(v) for k, v in message.get("kwargs", {}).items()}
            value = target(*args, **kwargs)
            if attr == "__iter__":
                value = list(value)
            return {"ok": self.codec.encode(value)}
        except Exception as exc:
            return {"raised": wire.describe_exception(exc, self.codec)}


def _update(target, value) -> None:
    """Make a list, dict or set argument hold what the learner's function left in its copy."""
    if type(target) is list and type(value) is list:
        target[:] = value
    elif type(target) is dict and type(value) is dict:
        target.clear()
        target.update(value)
    elif type(target) is set and type(value) is set:
        target.clear()
        target.update(value)


class LearnerFunction:
    """Stands, on the grader's side, for a learner's callable: a call is answered by the learner's process."""

    def __init__(self, session: AnswerSession, name: str):
        self._session, self._name = session, name

    def __call__(self, *args, **kwargs):
        return self._session.call(self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<{self._name}>"


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
    printed: str = field(default="", repr=False, compare=False)


class _Quiet:
    """What ``get_ipython()`` returns to a release cell run on the grader's side."""

    def run_line_magic(self, *args, **kwargs):
        return None

    run_cell_magic = system = run_line_magic


def judge(cells: list[Cell], session: AnswerSession, learner: set[str]) -> dict[str, Verdict]:
    """Run the grader's cells in a fresh namespace and return the verdict of every check cell.

    Answer cells bind the learner's names the learner's process defined (a callable becomes a
    LearnerFunction, a value is taken as data); release cells run as released, their errors
    ignored; each check cell runs with its hidden tests and passes if it raises nothing.
    """
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins, "display": lambda *a, **k: None}
    namespace["get_ipython"] = lambda: _Quiet
    verdicts: dict[str, Verdict] = {}
    sink = io.StringIO()
    with _printing_to(sink):
        for cell in cells:
            sink.seek(0)
            sink.truncate()
            if cell.kind == "answer":
                try:  # the cell as released: its imports, and stubs the learner's names replace
                    exec(compile(plain_python(cell.released), f"<answer cell {cell.id}>", "exec"), namespace)
                except BaseException:  # noqa: BLE001 - a stub raises NotImplementedError
                    pass
                for name in sorted(cell_names(cell.source)[0] & learner):
                    kind = session.ready.get(name)
                    if isinstance(kind, dict) and kind.get("callable"):
                        namespace[name] = LearnerFunction(session, name)
                    elif isinstance(kind, dict) and "value" in kind:
                        try:
                            namespace[name] = session.codec.decode(kind["value"])
                        except Exception:
                            namespace.pop(name, None)
                    else:
                        namespace.pop(name, None)
                continue
            if cell.kind == "release":
                try:
                    exec(compile(plain_python(cell.source), f"<release cell {cell.id}>", "exec"), namespace)
                except BaseException:  # noqa: BLE001 - a release cell may fail without its learner's function
                    pass
                continue
            session.begin_cell()
            verdict = _check(cell, namespace, session)
            verdicts[cell.id] = replace(verdict, printed=sink.getvalue()[-20_000:])
    return verdicts


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
            return Verdict(False, USED_REFERENCE, detail)
        if session.failure == "timeout":
            return Verdict(False, TIMED_OUT.format(seconds=int(session.timeout)), detail)
        if session.failure is not None:
            return Verdict(False, ANSWERER_DIED, detail)
        line = _line_in(exc, filename)
        hidden = line is None or line in hidden_lines(cell.source)
        if hidden:
            return Verdict(False, HIDDEN_FAILED, detail, hidden=True, hidden_test=failed_check(cell.source, line))
        text = cell.source.split("\n")[line - 1].strip()
        return Verdict(False, VISIBLE_FAILED.format(line=line, text=text), detail)
    if session.withheld:  # the learner's code met a withheld function and went on
        return Verdict(False, USED_REFERENCE, "ReferenceWithheld caught by the learner's code")
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


def notebook_cells(release: dict, checks: dict[str, str], answers: dict[str, str]) -> list[Cell]:
    """Return a notebook's code cells in the release's order, each from where it must come.

    ``release`` is the release notebook (JSON); ``checks`` the check cells' sources from the
    gradebook (hidden tests included), by grade id; ``answers`` the learner's answer cells, by
    grade id (the last copy of a duplicated one). Every other code cell is the release's.
    """
    cells = []
    for number, cell in enumerate(release.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id") or f"cell-{number}"
        source = "".join(cell["source"]) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
        if meta.get("solution"):
            cells.append(Cell("answer", grade_id, answers.get(grade_id, source), released=source))
        elif meta.get("grade") and grade_id in checks:
            cells.append(Cell("check", grade_id, checks[grade_id]))
        else:
            cells.append(Cell("release", grade_id, source))
    return cells


def learner_answers(nb) -> dict[str, str]:
    """Return the source of every answer cell of a (sanitised) notebook by grade id; the last copy counts."""
    found = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and meta.get("grade_id"):
            found[meta["grade_id"]] = cell.source
    return found


def evaluate(
    cells: list[Cell],
    *,
    build: Path,
    timeout: float,
    policy=None,
) -> dict[str, Verdict]:
    """Evaluate every check cell of ``cells`` and return the verdicts (see the module docstring).

    ``build`` holds the ``ctx_reference`` the learner's process imports; that process works in
    an empty folder of its own (no file handed in with the submission is there: a copy of the
    package handed in cannot be imported); with a ``policy`` (``SandboxPolicy``) it runs in the
    sandbox, where the real package is not.
    """
    answer_side, judge_side, learner = plan_cells(cells)
    # beside the build: a grading run removes that folder at its end, even after a worker was killed
    home = Path(tempfile.mkdtemp(prefix="ctx-answer-", dir=Path(build).parent))
    _LIVE[home] = None
    try:
        for name in ("run", "home", "work"):
            (home / name).mkdir()
        job = {
            "cells": [{"id": c.id, "source": c.source} for c in answer_side],
            "names": sorted(learner),
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
        if policy is not None:
            # never the course package itself: only its build without the exercise
            exposed = tuple(p for p in policy.exposed if not is_course_package(p)) + (str(build),)
            learner_policy = replace(policy, exposed=exposed)
            argv = learner_policy.command(argv, home, env={k: v for k, v in env.items() if k != "HOME"})
            env = None
        session = AnswerSession(argv, job, timeout, env=env, cwd=str(home / "run"))
        _LIVE[home] = session
        try:
            session.start()
            return judge(judge_side, session, learner)
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
            note = KERNEL_ERROR_NOTE.format(ename=output.get("ename", ""))
            output = nbformat.v4.new_output("stream", name="stdout", text=note)
        outputs.append(output)
    if not verdict.passed:
        kernel_errors = any(o.get("output_type") == "error" for o in outputs)
        explained = not verdict.hidden and verdict.line.startswith("这一格第") and kernel_errors
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
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                missing = Verdict(False, NOT_RUN.format(why="评分程序里没有这一格"))
                verdict = verdicts.get(meta.get("grade_id"), missing)
                apply_verdict(cell, verdict)
                if not verdict.passed:
                    self.log.info("%s: %s", meta.get("grade_id"), verdict.detail)
        resources["ctx_verdicts"] = verdicts
        return nb, resources

    def evaluation(self, nb, info) -> Callable[[], dict[str, Verdict] | None]:
        """Return the evaluation of a (sanitised) notebook as a function to call, in this thread or another."""
        release = self._release(info)
        with Gradebook(info["db_url"]) as gb:
            try:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return lambda: None
            answers = {c.name for c in notebook.solution_cells}
            graded = [c.name for c in notebook.grade_cells if c.cell_type == "code" and c.name not in answers]
            sources = {c.name: c.source for c in notebook.source_cells}
        checks = {name: sources.get(name) or "" for name in graded}
        cells = notebook_cells(release, checks, learner_answers(nb))
        withheld = withheld_objects(graded_exercises(checks.values()))
        timeout = self.timeout or int(getattr(self.config.Execute, "timeout", 60) or 60)
        shared, policy = self.builds, self.policy

        def run() -> dict[str, Verdict]:
            builds = shared if shared is not None else ReferenceBuilds()
            try:
                return evaluate(cells, build=builds.path(withheld), timeout=timeout, policy=policy)
            finally:
                if shared is None:
                    builds.close()

        return run

    def _release(self, info) -> dict:
        """Return the release notebook of the notebook being graded (JSON), or an empty one."""
        course = self.config.CourseDirectory
        root = Path(course.root or ".")
        release = Path(course.release_directory or "release")
        if not release.is_absolute():
            release = root / release
        path = release / info["assignment"] / f"{info['notebook']}.ipynb"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"cells": []}


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
