"""The generated cases of a check cross to the learner's process in batches, with the outcome of single calls.

Each test starts a real answer process (``ctx_course/sandbox/answerer.py``, as the grader starts
it, without the sandbox: what is tested is the wire) whose cells define a learner's function, and
runs the real check code on the grader's side (``run_generated``, ``expect_generated``) with a
``LearnerFunction`` of that process, as a check cell at grading does; the same function, defined
here, gives the lab's outcome. A hostile answer process is a script of its own that speaks the
protocol and forges batch replies.
"""
from __future__ import annotations

import json
import math
import sys
import time

import pytest

import ctx_course.grading.steps.judge  # noqa: F401 - installs the batch caller, as the grader does
from ctx_course.sandbox import batch
from ctx_course.sandbox.answer_session import ANSWERER_SOURCE, AnswerSession, AnswerUnavailable, LearnerFunction
from ctx_reference.checks import FUNCTIONS, GENERATED, REGISTRY, RULES, generated
from ctx_reference.checks import batch as hook
from ctx_reference.checks.bank import cases as bank_cases
from ctx_reference.checks.failure import CheckFailed

from conftest import REPO

# A learner's remaining, wrong (one token off) only where the tokens read pass 700,000: few cases of the bank.
REMAINING_LATE = """
def remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    if read > 700_000:
        left -= 1
    return left, left < window / 10
"""
REMAINING = """
def remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
"""


@pytest.fixture
def start(tmp_path):
    """Start an answer process running ``source`` as its one cell, before checkpoint "c", and run it there; close
    them all after."""
    sessions: list[AnswerSession] = []

    def started(source: str, names: list[str], timeout: float = 10.0, argv: list[str] | None = None) -> AnswerSession:
        script = tmp_path / "answer.py"
        script.write_text(ANSWERER_SOURCE, encoding="utf-8")
        job = {"cells": [{"id": "a", "source": source}, {"checkpoint": "c"}], "names": names,
               "path": [str(REPO)], "cwd": str(tmp_path), "cell_timeout": timeout}
        # the process starts and reaches the checkpoint with time to spare on a busy machine; then each call has
        # the limit the test gives (the one the answer process itself applies, from the job)
        session = AnswerSession(argv or [sys.executable, "-P", str(script)], job, 60, cwd=str(tmp_path))
        sessions.append(session)
        session.reach("c")
        session.timeout = timeout
        return session

    yield started
    for session in sessions:
        session.close()
        assert session.process is None


@pytest.fixture
def batches(monkeypatch):
    """The BatchedCalls the checks make while a test runs (the registered caller, watched)."""
    made: list[batch.BatchedCalls] = []

    def caller(func, calls):
        made.append(batch.BatchedCalls(func, calls))
        return made[-1]

    monkeypatch.setitem(hook._CALLERS, LearnerFunction, caller)
    return made


def _lab(source: str, name: str):
    namespace: dict = {}
    exec(source, namespace)
    return namespace[name]


def _visible(exercise: str, func, watched: bool = True):
    codes = REGISTRY[exercise].codes if watched else frozenset()
    return generated.run_generated(func, FUNCTIONS.get(exercise, exercise), bank_cases(exercise),
                                   GENERATED[exercise], RULES[exercise], codes)


def _hidden(exercise: str, func) -> str:
    try:
        generated.expect_generated("生成的隐藏例子", exercise, func, GENERATED[exercise])
    except CheckFailed as exc:
        return str(exc)
    return "passed"


def _first_failing(exercise: str, func) -> int:
    cases = bank_cases(exercise)
    return next(i for i, case in enumerate(cases) if not _visible_one(exercise, func, case))


def _visible_one(exercise, func, case) -> bool:
    return generated.run_generated(func, exercise, [case], GENERATED[exercise], RULES[exercise]).passed


def test_only_the_grader_type_is_batched():
    """The hook hands the caller only objects of exactly LearnerFunction's type: a learner's function, a subclass
    and an object claiming the type's attributes are called as they are."""

    class Forged(LearnerFunction):
        pass

    def mine(*args):
        return args

    fake = Forged.__new__(Forged)
    assert hook.batched(mine, [((1,), {})]) is mine
    assert hook.batched(fake, [((1,), {})]) is fake
    assert type(hook.batched(LearnerFunction(None, "f", "c"), [((1,), {})])) is batch.BatchedCalls
    with pytest.raises(TypeError, match="kind must be a class"):
        hook.register("LearnerFunction", batch.batched_calls)  # type: ignore[arg-type]


def test_a_wrong_answer_on_a_late_case_gets_the_labs_line_in_few_requests(start, batches):
    """Wrong only on a late case: the grader's outcome is the lab's, word for word, and the calls before it went in
    a few requests, not one each; the hidden cases fail at grading as in the lab."""
    lab = _lab(REMAINING_LATE, "remaining")
    late = _first_failing("remaining", lab)
    assert late >= batch.FIRST_CHUNK  # past the first chunk
    session = start(REMAINING_LATE, ["remaining"])
    assert session.reach("c") == {"remaining": {"callable": True}}
    learner = LearnerFunction(session, "remaining", "c")
    expected, got = _visible("remaining", lab), _visible("remaining", learner)
    assert not expected.passed
    assert (got.passed, got.line, got.rule) == (expected.passed, expected.line, expected.rule)
    [made] = batches
    assert made.batched == late + 1 and made.requests < late / 2
    assert _hidden("remaining", learner) == _hidden("remaining", lab)
    assert session.failure is None


def test_an_honest_answer_passes_every_case_in_batches(start, batches):
    session = start(REMAINING, ["remaining"])
    learner = LearnerFunction(session, "remaining", "c")
    outcome = _visible("remaining", learner)
    assert outcome.passed and outcome.line == _visible("remaining", _lab(REMAINING, "remaining")).line
    assert _hidden("remaining", learner) == "passed"
    visible, hidden = batches
    growing = 3  # chunks of 8, 32 and 128 cases, then chunks of MAX_CHUNK
    assert visible.batched == len(bank_cases("remaining"))
    assert visible.requests <= growing + math.ceil(len(bank_cases("remaining")) / batch.MAX_CHUNK)
    assert hidden.batched == len(bank_cases("remaining", "hidden"))


# select_to_clear's second argument is a list or a range: this learner empties a list on the cases where it is long (the
# reference's answer otherwise; the check's watch for the reference is left out here, in the lab and at grading).
SELECT_CHANGES = """
from ctx_reference.sim import select_to_clear as _select

def select_to_clear(*args):
    answer = _select(*args)
    if type(args[1]) is list and len(args[1]) > 40:
        args[1].clear()
    return answer
"""


def test_an_argument_changed_on_one_case_comes_back_for_that_case(start, batches):
    """The learner's change to a list argument comes back with that case's entry: the same line as the lab's."""
    lab = _lab(SELECT_CHANGES, "select_to_clear")
    session = start(SELECT_CHANGES, ["select_to_clear"])
    learner = LearnerFunction(session, "select_to_clear", "c")
    expected, got = _visible("select_to_clear", lab, False), _visible("select_to_clear", learner, False)
    assert not expected.passed and "改动了" in expected.line
    assert got.line == expected.line
    assert batches[0].requests < batches[0].batched
    assert _hidden("select_to_clear", learner) == _hidden("select_to_clear", lab) != "passed"


HANGS_LATE = """
def remaining(window, read, write, input, max_tokens):
    while read > 700_000:
        pass
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
"""
# The same, wrong on every case first, then hanging where read passes 700,000 in a loop that swallows the interrupt.
SWALLOWS = """
def remaining(window, read, write, input, max_tokens):
    while read > 700_000:
        try:
            while True:
                pass
        except BaseException:
            pass
    return 0, False
"""


def test_a_hanging_call_in_a_batch_is_ended_like_a_single_call(start):
    """A call that never ends, among the calls of a batch, is ended after the time limit and fails the check as a
    single hanging call does (the session says "timeout"); the calls before it are judged as they came."""
    session = start(HANGS_LATE, ["remaining"], timeout=1.0)
    cases = bank_cases("remaining")
    func = hook.batched(LearnerFunction(session, "remaining", "c"), [(c.args, c.kwargs) for c in cases])
    lab = _lab(REMAINING, "remaining")
    hangs = next(i for i, case in enumerate(cases) if case.args[1] > 700_000)
    began = time.monotonic()
    with pytest.raises(AnswerUnavailable, match="timeout"):
        for case in cases:
            assert func(*case.args, **case.kwargs) == lab(*case.args, **case.kwargs)
    assert time.monotonic() - began < 1.0 + 3
    assert session.failure == "timeout" and session.process is None
    assert func.batched == hangs + 1  # the calls before it answered, then its own entry said "timeout"


def test_a_call_that_swallows_the_interrupt_is_ended_by_the_grader(start):
    """A loop that catches the interrupt keeps its process busy: the grader stops waiting one time limit (and the
    progress allowance) after the batch's last progress, and the check fails with "timeout"."""
    session = start(SWALLOWS, ["remaining"], timeout=1.0)
    learner = LearnerFunction(session, "remaining", "c")
    began = time.monotonic()
    outcome = _visible("remaining", learner)
    assert not outcome.passed  # the first case already failed: its line decides, as with single calls
    assert session.failure is None
    cases = [case for case in bank_cases("remaining") if case.args[1] > 700_000]
    func = hook.batched(learner, [(c.args, c.kwargs) for c in cases])
    with pytest.raises(AnswerUnavailable, match="timeout"):
        func(*cases[0].args, **cases[0].kwargs)
    assert time.monotonic() - began < 1.0 + 3 + 2
    assert session.failure == "timeout"


SLOW = """
import time

def remaining(window, read, write, input, max_tokens):
    time.sleep(0.45)
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
"""


def test_slow_calls_each_within_the_limit_pass_in_one_batch(start):
    """Eight calls of 0.45 s each with a 1 s limit: together past the limit, each within it; they pass (the
    answer process's progress messages move the grader's deadline)."""
    session = start(SLOW, ["remaining"], timeout=1.0)
    cases = bank_cases("remaining")[:8]
    func = hook.batched(LearnerFunction(session, "remaining", "c"), [(c.args, c.kwargs) for c in cases])
    lab = _lab(REMAINING, "remaining")
    for case in cases:
        assert func(*case.args, **case.kwargs) == lab(*case.args, **case.kwargs)
    assert func.requests == 1 and session.failure is None


# A hostile answer process: answers "advance" with a callable, and every batch with the reply given.
FORGER = """
import json, sys
reply = json.loads(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if "advance" in message:
        out = {"ready": {"remaining": {"callable": True}}}
    elif "batch" in message:
        for extra in reply.get("before", []):
            sys.stdout.write(json.dumps(extra) + "\\n")
        out = reply["reply"]
        if out == "asked+1":
            out = {"batch": [{"ok": {"t": [1, False]}}] * (len(message["calls"]) + 1)}
    elif "call" in message:
        out = {"ok": {"t": [1, False]}}
    else:
        continue
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""

FORGED = {
    "more entries than asked": {"reply": "asked+1"},
    "no entry": {"reply": {"batch": []}},
    "not a list": {"reply": {"batch": {"0": {"ok": 1}}}},
    "an entry of another shape": {"reply": {"batch": [{"ok": 1, "same": 0}]}},
    "a timeout entry before the last": {"reply": {"batch": [{"timeout": True}, {"ok": 1}]}},
    "a reply beside the batch": {"reply": {"batch": [{"ok": 1}], "ok": 1}},
    "a single reply": {"reply": {"ok": {"t": [1, False]}}},
    "progress that goes back": {"before": [{"next": 3}, {"next": 2}], "reply": {"batch": [{"ok": 1}]}},
    "progress past the calls": {"before": [{"next": 10_000}], "reply": {"batch": [{"ok": 1}]}},
}


@pytest.mark.parametrize("forged", sorted(FORGED))
def test_a_forged_batch_reply_costs_only_its_check(start, forged):
    """Each forged reply breaks the protocol: the check's calls fail with "protocol", the process is stopped, and
    the next check cell gets a fresh process that answers."""
    argv = [sys.executable, "-c", FORGER, json.dumps(FORGED[forged])]
    session = start("", ["remaining"], argv=argv)
    learner = LearnerFunction(session, "remaining", "c")
    outcome = _visible("remaining", learner)
    assert not outcome.passed
    assert session.failure == "protocol" and session.process is None
    assert session.reach("c") == {"remaining": {"callable": True}}
    assert learner(1, 2, 3, 4, 5) == (1, False)  # a single call to the fresh process


# Entries the hostile process forges that are read as a learner's values: only that case is judged on them.
READ_AS_VALUES = {
    "a value of an undeclared type": {"ok": {"o": "subprocess:Popen", "a": [["echo", "forged"]]}},
    "a class-name marker": {"ok": {"x": "Popen"}},
    "an argument index out of range": {"ok": {"same": 99}},
    "a changed argument that is not one": {"ok": 1, "changed": {"7": {"l": []}}},
}


@pytest.mark.parametrize("forged", sorted(READ_AS_VALUES))
def test_a_forged_entry_is_read_as_that_cases_value_only(start, forged):
    """An entry holding what no honest answer holds fails its own case (a value the check cannot read, or a wrong
    one), read by the closed schema; nothing the entry names is looked up or run."""
    entry = READ_AS_VALUES[forged]
    argv = [sys.executable, "-c", FORGER, json.dumps({"reply": {"batch": [entry]}})]
    session = start("", ["remaining"], argv=argv)
    outcome = _visible("remaining", LearnerFunction(session, "remaining", "c"))
    assert not outcome.passed
    assert session.process is not None and session.failure is None  # read as data: the process may answer on
    if "x" in json.dumps(entry) or "subprocess" in json.dumps(entry):
        assert session.unreadable is not None


def test_a_call_that_is_not_the_next_case_goes_alone(start):
    """Calls out of the cases' order, or with other arguments (an int where the case has a bool), are single calls
    with their own answers; the next case's call is answered from a batch."""
    session = start(REMAINING, ["remaining"])
    cases = bank_cases("remaining")[:3]
    func = hook.batched(LearnerFunction(session, "remaining", "c"), [(c.args, c.kwargs) for c in cases])
    lab = _lab(REMAINING, "remaining")
    assert func(*cases[1].args) == lab(*cases[1].args) and func.requests == 0
    assert func(*[float(v) for v in cases[0].args]) == lab(*[float(v) for v in cases[0].args])
    assert func.requests == 0 and func.batched == 0
    for case in cases:
        assert func(*case.args, **case.kwargs) == lab(*case.args, **case.kwargs)
    assert (func.requests, func.batched) == (1, 3)
