"""One call across the grading wire: what the grader sends again is sent as a number, and the check's watch is off.

Each test starts a real answer process (``ctx_course/sandbox/answerer.py``, as the grader starts it, without
the sandbox) and calls the learner's function through a ``LearnerFunction``, as a check cell at grading does
(the capstone's policy: once a turn, each turn's view holding the records of the turns before).
"""
from __future__ import annotations

import cProfile
import sys
from pathlib import Path

import pytest

from ctx_course.sandbox import batch
from ctx_course.sandbox.answer_session import ANSWERER_SOURCE, AnswerSession, LearnerFunction
from ctx_course.sandbox.answerer import Codec, to_text
from ctx_course.sandbox.wire_types import registry
from ctx_reference import TurnRecord

from conftest import REPO

SANDBOX = str(Path(batch.__file__).parent)

LEARNER = """
def turns(records, turn):
    if turn < 0:
        raise ValueError("no such turn")
    return [r.turn for r in records if r.needed], records[-1], len({id(r) for r in records})

def ask(helper, value):
    return helper.double(value) + 1
"""


@pytest.fixture
def session(tmp_path):
    script = tmp_path / "answer.py"
    script.write_text(ANSWERER_SOURCE, encoding="utf-8")
    job = {"cells": [{"id": "a", "source": LEARNER}, {"checkpoint": "c"}], "names": ["turns", "ask"],
           "path": [str(REPO)], "cwd": str(tmp_path), "cell_timeout": 10.0}
    made = AnswerSession([sys.executable, "-P", str(script)], job, 60, cwd=str(tmp_path))
    made.reach("c")
    made.timeout = 10.0
    yield made
    made.close()
    assert made.process is None


def _sent(session: AnswerSession) -> list[int]:
    """Watch the bytes of each line the grader sends from now on."""
    sizes: list[int] = []
    send = session._send_line

    def counted(line: bytes) -> None:
        sizes.append(len(line))
        send(line)

    session._send_line = counted  # type: ignore[method-assign]
    return sizes


def _expected(records, turn):
    return [r.turn for r in records if r.needed], records[-1], len(records)


def test_view_after_view_each_record_crosses_in_full_once(session):
    """Turn after turn the same records go again: after the first time each crosses as its number, the answers
    are those of a fresh process, and after a call that raised, or a new process, every record is sent again."""
    func = LearnerFunction(session, "turns", "c")
    sizes = _sent(session)
    records: list[TurnRecord] = []
    plain: list[int] = []  # what a fresh codec would send: every record in full
    for turn in range(1, 61):
        records.append(TurnRecord(turn, "read", 100 * turn, 10 * turn, turn % 4 == 1, False, False, False))
        if turn % 10 == 0:  # a clearing: older records replaced by new objects
            records[: turn // 2] = [r._replace(cleared=True, tokens=1) for r in records[: turn // 2]]
        assert func(list(records), turn) == _expected(records, turn)
        plain.append(len(to_text(Codec(refs_out=True, types=registry()).encode([list(records), turn]))))
    assert sum(sizes) * 3 < sum(plain)  # about 5 times fewer bytes

    with pytest.raises(ValueError, match="no such turn"):
        func(list(records) + [TurnRecord(61, "run", 1, 1, True, False, False, False)], -1)
    assert func(list(records), 60) == _expected(records, 60)

    session.close()
    session.reach("c")  # a new process: it holds none of the records
    assert func(list(records), 60) == _expected(records, 60)
    assert func(list(records), 60) == _expected(records, 60)
    assert sizes[-1] < sizes[-2]


class Helper:
    def double(self, value):
        return 2 * value


def test_the_checks_watch_is_off_on_the_wire_and_on_for_a_callback(session):
    """A check watches for reference code with a profile hook: while a call crosses the wire the hook is off
    (it sees nothing of the grader's wire code), on again while the learner's code calls back one of the
    grader's objects, and back after the call; single and batched calls alike. A C profiler stays on."""
    seen: list[str] = []

    def hook(frame, event, arg):  # noqa: ARG001 - the profile protocol
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    helper = Helper()
    ask = LearnerFunction(session, "ask", "c")
    one = [TurnRecord(1, "run", 1, 1, True, False, False, False)]
    turns = batch.BatchedCalls(LearnerFunction(session, "turns", "c"), [((one, 1), {}), ((one, 2), {})])
    sys.setprofile(hook)
    try:
        answers = [ask(helper, 4), turns(list(one), 1), turns(list(one), 2)]
        after = sys.getprofile()
    finally:
        sys.setprofile(None)
    assert answers == [9, _expected(one, 1), _expected(one, 2)] and turns.batched == 2
    assert after is hook
    assert (__file__, "double") in seen  # Helper.double, called back
    # of the wire, only the calls that turn the hook off (and the one that turns it off after a callback)
    assert {name for file, name in seen if file.startswith(SANDBOX)} <= {"__call__", "call", "__enter__", "__exit__"}

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        assert ask(helper, 5) == 11
    finally:
        profiler.disable()
