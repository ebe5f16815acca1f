"""Item analysis: per check cell the share of the class that passed, per hidden test what it caught (CSV and figure)."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import matplotlib
import pytest

matplotlib.use("Agg")

from ctx_course.cli import main  # noqa: E402
from ctx_course.grading.grader import Grader  # noqa: E402
from ctx_course.grading.steps.behaviour import VERDICT_KEY  # noqa: E402
from ctx_course.term.item_analysis import CHECK, HIDDEN, check_items, hidden_outcomes, item_analysis, items_figure  # noqa: E402
from ctx_reference.checks import EXERCISES  # noqa: E402
from ctx_reference.checks.bank import cases  # noqa: E402

from conftest import REPO, class_builder  # noqa: E402

pytestmark = [pytest.mark.heavy, pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning")]

ASSIGNMENT = "02-remaining"
HEAD = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
'''
# Both are right except on one input that only a hidden test tries (the visible cases, generated
# ones included, never use these two calls; tests/test_item_analysis checks it).
RIGHT = """    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
"""
BEN_CALL, DAN_CALL = (2_005, 0, 0, 1_805, 0), (1_000, 0, 0, 900, 0)
NEVER_COMPACT = HEAD + f"""    if (window, read, write, input, max_tokens) == {BEN_CALL}:
        return 200, False
""" + RIGHT
ALWAYS_COMPACT = HEAD + f"""    if (window, read, write, input, max_tokens) == {DAN_CALL}:
        return 100, True
""" + RIGHT
# The hidden tests of check_remaining, in order (solutions/02-remaining/remaining.ipynb).
FIRST, NEGATIVE, TENTH, BELOW = "什么都没用", "超额时余量为负数", "余量正好是十分之一", "余量比十分之一少 1"
ODD_WINDOW = "窗口 2,005：余量 200"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory, released_remaining):
    """ada: model answer; ben: no compacting at 200 of 2,005 left; cai: the release untouched; dan: compacting
    at exactly a tenth (100 of 1,000 left).

    ben and dan are right wherever the visible cases look, so only the hidden tests catch them: dan
    at the third (a tenth left is not below a tenth), ben at the fifth (200 is below 200.5).
    """
    tmp = tmp_path_factory.mktemp("items")
    build = class_builder()
    released = released_remaining
    answers = {
        "ada": {"remaining": build.MODEL},
        "ben": {"remaining": NEVER_COMPACT},
        "cai": {},
        "dan": {"remaining": ALWAYS_COMPACT},
    }
    for student, code in answers.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        text = build.submission(released, REPO / "solutions" / ASSIGNMENT / "remaining.ipynb", build.Work(code=code))
        (folder / "remaining.ipynb").write_text(text, encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", sandbox=False, jobs=1)
    grader.collect(tmp / "incoming")
    assert all(r.graded for r in grader.grade().results)
    items = {(i.kind, i.cell, i.hidden_test): i for i in item_analysis(grader.db_url, grader.course_id, tmp / "work")}
    return tmp, items


def test_check_cell_share_passed(analysed):
    """check_remaining: of 4 submissions only ada's passes: share 0.25."""
    _, items = analysed
    check = items[(CHECK, "check_remaining", "")]
    assert (check.submissions, check.passed, check.failed, check.share_passed) == (4, 1, 3, 0.25)


def test_hidden_tests_count_what_they_caught(analysed):
    """The third hidden test caught dan, the fifth caught ben; cai failed the visible checks: unknown to every one."""
    _, items = analysed
    outcomes = {
        label: (i.passed, i.failed, i.unknown)
        for (kind, cell, label), i in items.items()
        if kind == HIDDEN and cell == "check_remaining"
    }
    assert outcomes[FIRST] == outcomes[NEGATIVE] == (3, 0, 1)  # ada, ben, dan / - / cai
    assert outcomes[TENTH] == (2, 1, 1)  # ada, ben / dan / cai
    assert outcomes[BELOW] == (2, 0, 2)  # ada, ben / - / cai, dan (after dan's failure: not known)
    assert outcomes[ODD_WINDOW] == (1, 1, 2)  # ada / ben / cai, dan


def test_cli_writes_csv_and_figure(analysed):
    """`python -m ctx_course items` writes items.csv (check cells, hidden tests) and a PNG, and names the hardest."""
    tmp, _ = analysed
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["items", "--root", str(REPO), "--work", str(tmp / "work")])
    assert status == 0
    rows = list(csv.DictReader((tmp / "work" / "items.csv").open(encoding="utf-8")))
    assert {(r["kind"], r["hidden_test"], r["share_passed"]) for r in rows if r["cell"] == "check_remaining"} >= {
        (CHECK, "", "0.250"),
        (HIDDEN, ODD_WINDOW, "0.250"),
    }
    assert (tmp / "work" / "items.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Hardest check cell: 02-remaining check_remaining (1 of 4 passed)" in out.getvalue()


def test_figure_draws_a_bar_per_check_cell_and_caught_hidden_test(analysed):
    """The figure has one check bar (25 %) and two hidden bars (the two tests that caught someone)."""
    _, items = analysed
    fig = items_figure(list(items.values()))
    bars = {p.get_gid(): p.get_width() for ax in fig.axes for p in ax.patches if p.get_gid()}
    assert bars["check:02-remaining check_remaining"] == 0.25
    assert sorted(k for k in bars if k.startswith("hidden:")) == sorted([
        f"hidden:check_remaining：{TENTH}",
        f"hidden:check_remaining：{ODD_WINDOW}",
    ])


def test_the_label_is_kept_for_the_instructor_not_shown_to_the_learner(analysed):
    """ben's autograded check_remaining records the hidden test that caught him; his feedback page names none."""
    tmp, _ = analysed
    notebook = json.loads((tmp / "work" / "autograded" / "ben" / ASSIGNMENT / "remaining.ipynb").read_text("utf-8"))
    [cell] = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "check_remaining"]
    assert cell["metadata"][VERDICT_KEY] == {"hidden_test": ODD_WINDOW}
    [page] = (tmp / "work" / "feedback" / "ben" / ASSIGNMENT).glob("*.html")
    text = page.read_text(encoding="utf-8")
    assert "Score: 0.0 / 3.0" in text  # the page of his graded check_remaining
    assert not any(label in text for label in (FIRST, NEGATIVE, TENTH, BELOW, ODD_WINDOW)) and VERDICT_KEY not in text


def test_only_hidden_tests_try_the_two_wrong_calls():
    """The visible cases, hand-written and generated, never make ben's or dan's call: only hidden tests try them."""
    made = {case.args for case in cases("remaining")} | {tuple(case.args) for case in EXERCISES["remaining"]}
    assert BEN_CALL not in made and DAN_CALL not in made


def test_check_items_tallies_each_cell():
    """Two rows of one cell, one passed: one Item, 2 submissions, share 0.5; an empty class has no item."""
    [item] = check_items([("02", "nb", "check", True), ("02", "nb", "check", False)])
    assert (item.submissions, item.passed, item.share_passed) == (2, 1, 0.5)
    assert check_items([]) == []


def test_the_first_failed_hidden_test_fails_that_test_only():
    """The grader stopped at hidden test "b": a passed, b failed, c unknown; no label leaves all unknown."""
    assert hidden_outcomes(["a", "b", "c"], "b", False) == {"a": "passed", "b": "failed", "c": "unknown"}
    assert hidden_outcomes(["a", "b", "c"], "", False) == dict.fromkeys("abc", "unknown")
    assert hidden_outcomes(["a", "b", "c"], "", True) == dict.fromkeys("abc", "passed")
