"""Numbers as the text says them, graded: request_cost's "一个数" in another number type gets full marks.

A small class of notebook 06, graded as an instructor grades it (the sandbox, the learner's functions
called in a process of their own): every student hands in the model ``select_to_clear``; ``model``
hands in the model ``request_cost``, the others one that computes the same costs exactly in
fractions and returns them as a numpy float, a ``Fraction`` or a ``Decimal``; ``off_by_one`` returns
a ``Fraction`` one token's worth too high. The text asks for "a number": every honest answer gets
the model's marks, the wrong one does not.
"""
from __future__ import annotations

import pytest

from ctx_course.grading.grader import Grader

from conftest import REPO, class_builder

pytestmark = pytest.mark.heavy

ASSIGNMENT = "06-strategies"

_EXACT = '''
from fractions import Fraction


def _exact_cost(input_tokens, previous_input, rewrote, params):
    """这一次请求的花费，用分数精确地算（价格按它们的十进制写法读成分数）。"""
    write, read = Fraction(str(params.cache_write)), Fraction(str(params.cache_read))
    if previous_input is None or rewrote:
        return write * input_tokens
    return read * previous_input + write * (input_tokens - previous_input)

'''

ANSWERS = {
    "numpy": _EXACT + '''
import numpy as np


def request_cost(input_tokens, previous_input, rewrote, params):
    cost = _exact_cost(input_tokens, previous_input, rewrote, params)
    return np.float64(cost.numerator) / np.float64(cost.denominator)
''',
    "fraction": _EXACT + '''
def request_cost(input_tokens, previous_input, rewrote, params):
    return _exact_cost(input_tokens, previous_input, rewrote, params)
''',
    "decimal": _EXACT + '''
from decimal import Decimal


def request_cost(input_tokens, previous_input, rewrote, params):
    cost = _exact_cost(input_tokens, previous_input, rewrote, params)
    return Decimal(cost.numerator) / Decimal(cost.denominator)
''',
    "off_by_one": _EXACT + '''
def request_cost(input_tokens, previous_input, rewrote, params):
    return _exact_cost(input_tokens, previous_input, rewrote, params) + 1
''',
}



@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded once with one job: {student: result}."""
    tmp = tmp_path_factory.mktemp("numbers")
    build = class_builder()
    assert Grader(REPO, work=tmp / "release-work", sandbox=False).prepare([ASSIGNMENT]) == {}
    released = tmp / "release-work" / "release" / ASSIGNMENT / "strategies.ipynb"
    source = REPO / "solutions" / ASSIGNMENT / "strategies.ipynb"
    students = {"model": build.MODEL, **ANSWERS}
    for student, code in students.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        work = build.Work(code={"select_to_clear": build.MODEL, "request_cost": code})
        (folder / "strategies.ipynb").write_text(build.submission(released, source, work), encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", jobs=1)
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return {result.student: result for result in report.results}


def test_the_model_answer_gets_full_marks(graded):
    model = graded["model"]
    assert model.graded and model.max_auto_score > 0 and model.auto_score == model.max_auto_score


@pytest.mark.parametrize("student", ["numpy", "fraction", "decimal"])
def test_a_number_in_another_type_gets_the_models_marks(graded, student):
    """request_cost returning its costs as a numpy float, a Fraction or a Decimal: full marks."""
    assert (graded[student].graded, graded[student].auto_score) == (True, graded["model"].auto_score)


def test_a_wrong_number_in_another_type_loses_marks(graded):
    """By value is not anything goes: a Fraction one token's worth too high loses the check cell's points."""
    assert graded["off_by_one"].graded and graded["off_by_one"].auto_score < graded["model"].auto_score
