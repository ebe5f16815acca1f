"""Each check cell is graded on the code the learner's notebook runs before it, in notebook order.

First the pure planning (``notebook_cells``, ``plan_cells``) on small hand-written cells; then one
small class of notebook 02 (check_remaining: 3 points) graded once in the sandbox, through
nbgrader, with submissions built here from a fresh release:

- ``helper``: the answer calls a helper function written in a cell of the learner's own above it;
- ``helper_class``: the answer uses a class of the learner's own, defined in a cell above it;
- ``imported``: a cell of the learner's own imports ``operator``, which the answer uses;
- ``edited``: the learner wrote their helper at the top of the release's first code cell (its imports stay);
- ``moved``: the model answer, moved below its check cell;
- ``spoiled_after``: the model answer, then below the check cell a cell redefining ``remaining`` wrongly;
- ``fixed_after``: a wrong answer, then below the check cell a cell redefining it rightly;
- ``reference``: a cell of the learner's own imports the exercise's reference, which the answer calls.
"""
from __future__ import annotations

import json

import nbformat
import pytest
from test_grading_dask import MODEL

from ctx_course.grading.grader import Grader
from ctx_course.grading.steps.plan import Cell, notebook_cells, plan_cells
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REPO, class_builder

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"

# ---- the plan, from hand-written cells


def _code(source, cell_id, nbgrader=None):
    cell = nbformat.v4.new_code_cell(source)
    cell["id"] = cell_id
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"grade": False, "solution": False, "locked": False, **nbgrader}
    return cell


RELEASE = nbformat.v4.new_notebook(cells=[
    _code("from lib import check\ntable = [1, 2]", "setup"),
    nbformat.v4.new_markdown_cell("写出 f。"),
    _code("def f(x):\n    raise NotImplementedError()", "f", {"grade_id": "f", "solution": True}),
    _code("check(f)", "check_f", {"grade_id": "check_f", "grade": True, "locked": True, "points": 1}),
    _code("print(table)", "show"),
])
CHECKS = {"check_f": "check(f)\n### BEGIN HIDDEN TESTS\nfrom lib import expect\nexpect(f(3))\n### END HIDDEN TESTS"}


def _submitted(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _kinds(cells):
    return [(c.kind, c.id) for c in cells]


def test_the_learners_notebook_gives_the_cells_in_its_order_each_from_where_it_must_come():
    """The learner's own cell above the answer is an added cell; the release cells left as they
    were are release cells; the answer is theirs with the stub as released; the check cell is the
    gradebook's, hidden tests included; markdown is left out."""
    answer = _code("def f(x):\n    return helper(x)", "f", {"grade_id": "f", "solution": True})
    check = _code("check(f)", "check_f", {"grade_id": "check_f", "grade": True, "locked": True, "points": 1})
    nb = _submitted(RELEASE.cells[0], _code("def helper(x):\n    return x", "mine"), answer, check, RELEASE.cells[4])
    cells = notebook_cells(RELEASE, CHECKS, nb)
    assert _kinds(cells) == [("release", "setup"), ("added", "mine"), ("answer", "f"), ("check", "check_f"),
                             ("release", "show")]
    assert cells[2].source == "def f(x):\n    return helper(x)"
    assert cells[2].released == "def f(x):\n    raise NotImplementedError()"
    assert "expect(f(3))" in cells[3].source
    assert cells[1].released == ""


def test_an_edited_release_cell_is_an_added_cell_that_keeps_its_release_version():
    """The release's first cell with a line added is the learner's (an added cell), and carries
    the release's source of that cell id for the grader's side."""
    edited = _code("from lib import check\ntable = [1, 2]\nBASE = 10", "setup")
    cells = notebook_cells(RELEASE, CHECKS, _submitted(edited, *RELEASE.cells[2:4]))
    assert (cells[0].kind, cells[0].source, cells[0].released) == (
        "added", "from lib import check\ntable = [1, 2]\nBASE = 10", "from lib import check\ntable = [1, 2]"
    )


def test_a_release_cell_read_back_from_a_notebook_saved_as_lists_of_lines_is_still_the_release():
    """nbgrader's JSON keeps a source as a list of lines; read as one string, it matches the release."""
    as_saved = json.loads(nbformat.writes(_submitted(*RELEASE.cells)))
    as_saved["cells"][0]["source"] = ["from lib import check\n", "table = [1, 2]"]
    assert notebook_cells(RELEASE, CHECKS, as_saved)[0].kind == "release"


HELPER = Cell("added", "mine", "def helper(x):\n    return x + BASE")
SETUP = Cell("release", "setup", "from lib import check\nBASE = 10\nunused = 3")
ANSWER = Cell("answer", "f", "def f(x):\n    return helper(x)", released="def f(x):\n    raise NotImplementedError()")
CHECK = Cell("check", "check_f", CHECKS["check_f"])


def test_the_learners_side_runs_their_cells_and_the_release_statements_they_need_up_to_each_check():
    """Learner side: BASE = 10 (read by the helper), the helper, the answer, then the checkpoint
    of check_f; the release's import and its unused name stay on the grader's side, where the
    check cell needs the import and gets f from its checkpoint."""
    plan = plan_cells([SETUP, HELPER, ANSWER, CHECK])
    assert [(c.kind, c.id, c.source) for c in plan.learner_side] == [
        ("release", "setup:2", "BASE = 10"), ("added", "mine", HELPER.source), ("answer", "f", ANSWER.source),
        ("checkpoint", "check_f", ""),
    ]
    assert [(c.kind, c.id, c.checkpoint) for c in plan.grader_side] == [
        ("release", "setup:1", ""), ("answer", "f", ""), ("check", "check_f", "check_f")
    ]
    assert plan.grader_side[1].source == ANSWER.released
    assert plan.learner == {"f"}


def test_an_answer_below_its_check_comes_after_the_checkpoint():
    """The answer moved below check_f runs after check_f's checkpoint: f is not defined there."""
    plan = plan_cells([SETUP, HELPER, CHECK, ANSWER])
    assert _kinds(plan.learner_side)[-2:] == [("checkpoint", "check_f"), ("answer", "f")]


def test_a_redefinition_below_the_check_comes_after_its_checkpoint():
    """A cell below check_f that defines f again runs after check_f's checkpoint."""
    again = Cell("added", "again", "def f(x):\n    return 0")
    plan = plan_cells([SETUP, HELPER, ANSWER, CHECK, again])
    assert _kinds(plan.learner_side)[-3:] == [("answer", "f"), ("checkpoint", "check_f"), ("added", "again")]
    assert plan.learner == {"f"}


def test_names_of_the_grader_side_are_never_the_learners():
    """A learner's cell that redefines the release's check, the expect the hidden tests import, a
    builtin or a reserved name gets no proxy: only f, which the answer defines, is the learner's."""
    forger = Cell("added", "forger", "def check(g): pass\ndef expect(v): pass\ndef len(v): return 3\nsecret = 1")
    reader = Cell("check", "reads", "assert len([f, secret]) == 2")
    plan = plan_cells([SETUP, forger, ANSWER, CHECK, reader], reserved={"secret"})
    assert plan.learner == {"f"}


def test_an_edited_release_cell_runs_as_edited_for_the_learner_and_as_released_for_the_grader():
    """The learner side runs the edited copy whole (what their notebook ran); the grader side runs
    only the release's import of it that the check needs."""
    edited = Cell("added", "setup", "from lib import check\nBASE = 20\ndef helper(x):\n    return x + BASE",
                  released=SETUP.source)
    plan = plan_cells([edited, ANSWER, CHECK])
    assert [c.source for c in plan.learner_side if c.kind == "added"] == [edited.source]
    assert [c.source for c in plan.grader_side if c.kind == "release"] == ["from lib import check"]


def test_a_cell_of_an_unknown_kind_is_refused():
    """plan_cells names the bad kind."""
    with pytest.raises(ValueError, match="'markdown'"):
        plan_cells([Cell("markdown", "m", "text")])


# ---- one graded class

WRONG = '''
def remaining(window, read, write, input, max_tokens):
    return 0, False
'''
HELPER_CELL = '''
def tokens_left(window, used, max_tokens):
    return window - used - max_tokens
'''
CLASS_CELL = '''
class Budget:
    def __init__(self, window):
        self.window = window

    def left(self, used, max_tokens):
        return self.window - used - max_tokens

    def tight(self, left):
        return left < self.window / 10
'''
USES_HELPER = '''
def remaining(window, read, write, input, max_tokens):
    left = tokens_left(window, read + write + input, max_tokens)
    return left, left < window / 10
'''
USES_CLASS = '''
def remaining(window, read, write, input, max_tokens):
    budget = Budget(window)
    left = budget.left(read + write + input, max_tokens)
    return left, budget.tight(left)
'''
USES_OPERATOR = '''
def remaining(window, read, write, input, max_tokens):
    left = op.sub(window, read + write + input) - max_tokens
    return left, op.lt(left, window / 10)
'''
USES_REFERENCE = '''
def remaining(window, read, write, input, max_tokens):
    return reference(window, read, write, input, max_tokens)
'''

# student: (answer, cells added above the answer, cells added below the check cell)
CLASS = {
    "helper": (USES_HELPER, [HELPER_CELL], []),
    "helper_class": (USES_CLASS, [CLASS_CELL], []),
    "imported": (USES_OPERATOR, ["import operator as op"], []),
    "edited": (USES_HELPER, [], []),
    "moved": (MODEL, [], []),
    "spoiled_after": (MODEL, [], [WRONG]),
    "fixed_after": (WRONG, [], [MODEL]),
    "reference": (USES_REFERENCE, ["from ctx_reference import remaining as reference"], []),
}


def _index(nb, grade_id):
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _notebook(text: str, student: str) -> str:
    """Return one student's notebook: the built submission with their cells added, edited or moved."""
    _, above, below = CLASS[student]
    nb = nbformat.reads(text, as_version=4)
    check = _index(nb, "check_remaining")
    for number, source in enumerate(below, start=1):
        nb.cells.insert(check + number, _code(source.strip("\n"), f"below-{number}"))
    for number, source in enumerate(above, start=1):
        nb.cells.insert(_index(nb, "remaining"), _code(source.strip("\n"), f"above-{number}"))
    if student == "edited":
        first = next(c for c in nb.cells if c.cell_type == "code")
        first.source = HELPER_CELL.strip("\n") + "\n\n" + first.source
    if student == "moved":
        answer = nb.cells.pop(_index(nb, "remaining"))
        nb.cells.insert(_index(nb, "check_remaining") + 1, answer)
    return nbformat.writes(nb) + "\n"


needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")


@pytest.fixture(scope="module")
def graded(tmp_path_factory, released_remaining):
    """The class built from a fresh release and graded once in the sandbox, two notebooks at once."""
    tmp = tmp_path_factory.mktemp("view")
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", timeout=20, jobs=2)
    released = released_remaining
    source = REPO / "solutions" / ASSIGNMENT / NOTEBOOK
    for student, (answer, _, _) in CLASS.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        text = build.submission(released, source, build.Work(code={"remaining": answer}))
        (folder / NOTEBOOK).write_text(_notebook(text, student), encoding="utf-8")
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return grader, {r.student: r for r in report.results}


def _score(graded, student):
    result = graded[1][student]
    return result.graded, result.auto_score, result.max_auto_score


@needs_sandbox
@pytest.mark.heavy
@pytest.mark.parametrize("student", ["helper", "helper_class", "imported", "edited"])
def test_code_in_cells_the_learner_added_or_edited_is_graded_as_the_lab_ran_it(graded, student):
    """A helper function, a helper class, an import in a cell of the learner's own above the answer,
    or a helper written into a release cell: the check passed in the lab, and scores 3 of 3."""
    assert _score(graded, student) == (True, 3, 3)


@needs_sandbox
@pytest.mark.heavy
def test_an_answer_below_its_check_cell_is_not_defined_at_that_check(graded):
    """moved's model answer comes after the check cell, which ran without it in the lab: 0 of 3."""
    assert _score(graded, "moved") == (True, 0, 3)


@needs_sandbox
@pytest.mark.heavy
@pytest.mark.parametrize("student, points", [("spoiled_after", 3), ("fixed_after", 0)])
def test_a_redefinition_below_the_check_cell_does_not_change_its_verdict(graded, student, points):
    """The check cell scores the answer above it: a wrong redefinition below the model answer
    costs nothing (3 of 3), a right one below a wrong answer earns nothing (0 of 3)."""
    assert _score(graded, student) == (True, points, 3)


@needs_sandbox
@pytest.mark.heavy
def test_an_added_cell_that_imports_the_reference_scores_zero(graded):
    """reference imports the exercise's reference in a cell of its own and calls it from the
    answer: the answer process has only the stub, the check scores 0 of 3, and the feedback says why."""
    assert _score(graded, "reference") == (True, 0, 3)
    [page] = graded[0].feedback_path("reference", ASSIGNMENT)
    assert "用到了这个练习的参考实现" in page.read_text(encoding="utf-8")
