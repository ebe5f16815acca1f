"""The evaluations one autograde step starts and the next scores: one object, handed to both in the configuration."""
from __future__ import annotations

import threading

import pytest
from traitlets.config import Config

from ctx_course.grading.steps.behaviour import ScoreFromBehaviour, StartEvaluation
from ctx_course.grading.steps.evaluations import Evaluations


def _info(student: str, notebook: str = "remaining", assignment: str = "02-remaining") -> dict:
    return {"db_url": "sqlite:///gradebook.db", "student": student, "assignment": assignment, "notebook": notebook}


def test_both_steps_configured_alike_hold_the_same_evaluations():
    """traitlets deep-copies configuration values; StartEvaluation and ScoreFromBehaviour still get the one object."""
    evaluations = Evaluations()
    config = Config()
    config.ScoreFromBehaviour.evaluations = evaluations
    assert StartEvaluation(config=config).evaluations is evaluations
    assert ScoreFromBehaviour(config=config).evaluations is evaluations


def test_two_sets_of_evaluations_share_nothing():
    """An evaluation started in one set is not in another (two graders in one process keep theirs apart)."""
    first, second = Evaluations(), Evaluations()
    first.start(_info("ada"), lambda: {"c1": "passed"})
    assert second.take(_info("ada")) is None
    started = first.take(_info("ada"))
    assert started is not None and started.result() == {"c1": "passed"}


def test_an_evaluation_is_taken_once():
    """take returns the notebook's evaluation, then None: a notebook is scored from its evaluation once."""
    evaluations = Evaluations()
    evaluations.start(_info("ada"), lambda: {"c1": "passed"})
    assert evaluations.take(_info("ben")) is None
    assert evaluations.take(_info("ada")).result() == {"c1": "passed"}
    assert evaluations.take(_info("ada")) is None


def test_what_an_evaluation_raised_is_raised_where_it_is_scored():
    """An exception of the evaluation's thread comes back from result(), in the thread that scores it."""
    def broken():
        raise OSError("no answer process")

    evaluations = Evaluations()
    evaluations.start(_info("ada"), broken)
    with pytest.raises(OSError, match="no answer process"):
        evaluations.take(_info("ada")).result()


def test_discard_waits_for_a_submissions_evaluations_and_drops_only_them():
    """discard(student, assignment) returns after every evaluation of that submission finished (each notebook of
    it, even one that raised), forgets them, and keeps the other submissions' evaluations."""
    gate, finished = threading.Event(), []

    def slow(name):
        def run():
            gate.wait(30)
            finished.append(name)
            if name == "broken":
                raise RuntimeError("failed after the notebook did")
            return name
        return run

    evaluations = Evaluations()
    evaluations.start(_info("ada", "one"), slow("one"))
    evaluations.start(_info("ada", "two"), slow("broken"))
    evaluations.start(_info("ben"), lambda: "ben's")
    opener = threading.Timer(0.2, gate.set)
    opener.start()
    evaluations.discard("ada", "02-remaining")
    opener.join()
    assert sorted(finished) == ["broken", "one"]
    assert evaluations.take(_info("ada", "one")) is None and evaluations.take(_info("ada", "two")) is None
    assert evaluations.take(_info("ben")).result() == "ben's"
