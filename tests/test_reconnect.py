"""reconnecting: a lost gradebook connection is retried with growing pauses, then stops the run in one line."""
from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from ctx_course.grading.reconnect import GradebookUnreachable, reconnecting

URL = "postgresql+psycopg2://grader:secret@db.example.org/course"


def _lost() -> OperationalError:
    return OperationalError("SELECT 1", {}, Exception('connection to server on socket "/x" failed\nsecond line'))


class Clock:
    """A clock that sleeping moves forward; ``slept`` keeps every pause."""

    def __init__(self):
        self.now, self.slept = 0.0, []

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_an_action_that_works_again_returns_its_value_after_pauses_that_double():
    """Two lost connections, then success: the value comes back, after pauses of 0.5 s and 1 s."""
    clock, calls = Clock(), []

    def action():
        calls.append(clock.now)
        if len(calls) < 3:
            raise _lost()
        return "written"

    assert reconnecting(action, URL, sleep=clock.sleep, clock=lambda: clock.now) == "written"
    assert clock.slept == [0.5, 1.0]
    assert len(calls) == 3


def test_a_server_that_stays_away_stops_the_run_with_one_line_naming_the_gradebook_without_its_password():
    """After the patience (10 s here) the error is one line: the URL with *** for the password, the first
    line of the driver's message, and what to do next."""
    clock = Clock()

    def action():
        raise _lost()

    with pytest.raises(GradebookUnreachable) as caught:
        reconnecting(action, URL, patience=10, sleep=clock.sleep, clock=lambda: clock.now)
    message = str(caught.value)
    assert "\n" not in message
    assert "grader:***@db.example.org" in message and "secret" not in message
    assert 'connection to server on socket "/x" failed' in message and "second line" not in message
    assert "run the same command again" in message
    assert sum(clock.slept) == pytest.approx(10)  # 0.5 + 1 + 2 + 4 + 2.5: the last pause ends at the patience


def test_an_error_that_is_not_about_the_connection_is_raised_at_once():
    """An IntegrityError is raised unchanged, without a retry."""
    clock, calls = Clock(), []

    def action():
        calls.append(1)
        raise IntegrityError("INSERT", {}, Exception("duplicate key"))

    with pytest.raises(IntegrityError):
        reconnecting(action, URL, sleep=clock.sleep, clock=lambda: clock.now)
    assert calls == [1] and clock.slept == []


def test_a_negative_patience_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"^patience must be >= 0 seconds \(got -1\)$"):
        reconnecting(lambda: None, URL, patience=-1)
