"""Run a plan and judge each check cell: the learner's process answers, the grader's side decides.

Covers: ``evaluate`` (one notebook's ``Plan`` run: the learner's process started, the grader's cells judged),
``judge`` (the grader's side of a plan, giving a ``Verdict`` per check cell), ``failed_check``, the feedback lines.

The learner's side is a process of its own (``sandbox/answer_session.py`` running
``sandbox/answerer.py`` in the sandbox, with a build of ``ctx_reference`` without the notebook's
exercise functions: ``reference_build.py``). The grader's side runs the check cells, hidden tests
included, and the release cells they need, in a fresh namespace of this process with the real
``ctx_reference``, the learner's names bound to proxies that call, in that process, the objects
those names were bound to at the check cell's checkpoint and take back plain data.

Why: a check cell's outcome used to be read from the learner's own kernel (its errors, a report
on its stderr, a guard object that answered a token), and everything in that kernel can be
replaced by the learner's code. Here no output, object or message of a learner's process decides
a score: the only thing taken from it is the data its functions return, and a hidden test passes
only if that data passes it. The hidden tests' source never reaches a learner's process, and the
feedback never shows text a learner's process produced during the evaluation.

Leaves out: which cells each side runs (``plan.py``), the autograde steps that call ``evaluate``
(``behaviour.py``), the wire protocol and the answer process (``sandbox/answerer.py``,
``sandbox/answer_session.py``), the sandbox's rules (``sandbox/policy.py``).

Vocabulary: a *verdict* is one check cell's outcome (passed, and a Chinese line for the feedback
that holds no text from the learner's process, and the label of the first hidden check it failed,
for the instructor); a *checkpoint* is as in ``plan.py``.
"""
from __future__ import annotations

import atexit
import builtins
import contextlib
import io
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctx_reference.i18n import N_, _, language

from ...cells import hidden_checks, hidden_lines, source_lines
from ...sandbox import batch
from ...sandbox.answer_session import ANSWERER_SOURCE, AnswerSession, LearnerFunction, close_sessions
from ...sandbox.policy import PASSED_ENV, is_course_package
from .plan import Cell, plain_python, plan_cells

CHECK_FILE = "<check cell {}>"

batch.install()  # the checks call this side's LearnerFunction objects on their generated cases in batches

# Feedback lines of a failed check cell (they quote no text of the learner's process). Each is
# shown in the language of the submission's edition (``_()`` where the verdict is made).
HIDDEN_FAILED = N_("隐藏测试没有通过。")
VISIBLE_FAILED = N_("这一格第 {line} 行没有通过：{text}")
USED_REFERENCE = N_(
    "评分时发现你的函数用到了这个练习的参考实现（评分时不提供），这一格得 0 分："
    "这个练习要用你自己写的代码完成。"
)
TIMED_OUT = N_("评分时你的函数运行超过了 {seconds} 秒，这一格按未通过计分。")
# Names no type: a type's name is text the learner's process chose, and could spell a hidden input.
UNREADABLE = N_("评分时你的函数返回了一个检查读不了的类型的值：这里只接受普通的数据"
                "（int、float、str、bool、list、tuple、dict、数字……）和练习里说明的类型。这一格按未通过计分。")
ANSWERER_DIED = N_("评分时运行你的函数的进程意外结束了（内存或 CPU 时间用完了？），"
                   "这一格按未通过计分。")


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
        if session.unreadable is not None:
            return Verdict(False, _(UNREADABLE), f"unreadable value of type {session.unreadable}; {detail}"[:500])
        line = _line_in(exc, filename)
        if line is None or line in hidden_lines(cell.source):
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
    _LIVE.add(home)
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
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}  # as into a sandbox
        env.update(
            HOME=str(home / "home"), MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", NBGRADER_EXECUTION="autograde"
        )
        env["CTX_LANG"] = language()  # the learner's cells run as in their kernel, in the submission's language
        if policy is not None:
            # never the course package itself: only its build without the exercise
            exposed = tuple(p for p in policy.exposed if not is_course_package(p)) + (str(build),)
            learner_policy = replace(policy, exposed=exposed)
            argv = learner_policy.command(argv, home, env={k: v for k, v in env.items() if k != "HOME"})
        session = AnswerSession(argv, job, timeout, env=None if policy is not None else env, cwd=str(home / "run"))
        try:
            return judge(plan.grader_side, session, plan.learner)
        finally:
            session.close()
    finally:
        _LIVE.discard(home)
        shutil.rmtree(home, ignore_errors=True)


# The folders of evaluations still running: an evaluation left running when the grader exits (its
# notebook stopped before it was scored) has its answer process closed and its folder removed then.
_LIVE: set[Path] = set()


@atexit.register
def _clean_up() -> None:
    close_sessions()
    for home in list(_LIVE):
        shutil.rmtree(home, ignore_errors=True)
