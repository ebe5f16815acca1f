"""One search decides both: no wrong answer is caught by the hidden generated cases alone.

The hidden generated cases of an exercise come from the same strategies as the visible ones, with
another seed (``python -m ctx_reference.checks.bank``). The team's collection of learner-style wrong answers
(``test_generated_catches_*.py``, ``test_mutations.py``) is run against the visible check (the
hand-written cases and the visible generated ones) and against the hidden generated cases separately:
a wrong answer that the hidden cases catch and the visible check lets through would show the learner
a row of ✓ and then score 0, so it fails here.
"""
from __future__ import annotations

import contextlib
import io

import pytest

from ctx_reference.checks import EXERCISES, CheckFailed, check_exercise, expect_generated
from ctx_reference.checks.bank import cases

import test_generated_catches_01_06 as catches_01_06
import test_generated_catches_07_10 as catches_07_10
import test_mutations as mutations

WRONG = (
    [(param.values[0], param.values[1]) for param in catches_01_06.WRONG]
    + list(catches_07_10.WRONG)
    + [(name, func) for (_, name), funcs in mutations.MUTANTS.items() for func in funcs]
)


def _visible_catches(name: str, func) -> bool:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            check_exercise(name, func)
        except CheckFailed:
            return True
    return False


def _hidden_generated_catch(name: str, func) -> bool:
    try:
        expect_generated("生成的隐藏例子", name, func)
    except CheckFailed:
        return True
    return False


@pytest.mark.parametrize(("name", "wrong"), WRONG, ids=[f"{name}-{func.__name__}" for name, func in WRONG])
def test_no_wrong_answer_is_caught_by_the_hidden_generated_cases_alone(name, wrong):
    """A wrong answer the hidden generated cases catch is caught by the visible check too."""
    if _hidden_generated_catch(name, wrong):
        assert _visible_catches(name, wrong), f"{wrong.__name__}: only the hidden generated cases of {name} catch it"


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_hidden_generated_cases_are_as_many_as_the_visible_ones(name):
    """Each strategy gives as many hidden calls as visible ones; a strategy that is one listed call
    (or a list of calls: the capstone's sweep of seeds) gives none, and its domain has no other."""
    if not cases(name):
        pytest.skip(f"{name} has no bank")
    visible: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for case in cases(name):
        visible[case.strategy] = visible.get(case.strategy, 0) + 1
    for case in cases(name, "hidden"):
        hidden[case.strategy] = hidden.get(case.strategy, 0) + 1
    short = {strategy: (count, hidden.get(strategy, 0)) for strategy, count in visible.items()
             if hidden.get(strategy, 0) < count and count > 1}
    assert short == {} or name == "context_policy", f"strategies with fewer hidden calls than visible: {short}"
