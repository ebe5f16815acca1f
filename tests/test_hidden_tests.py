"""Hidden tests are judged on the grader's side: real grading runs of notebook 02 (check_remaining: 3 points).

A small class whose ``almost`` function is right except in a window of 2,005 with 200 tokens left
(only the hidden test "窗口 2,005：余量 200" tries that; no visible case, hand-written or generated,
has that window), handed in plain and with patches of the checker, of hashlib and of the digests; a right
function whose hidden values are not plain data; a right function that reads the notebook file
next to its kernel; a function wrong only where a generated case looks, plain and with the bank
emptied in its kernel; the model answer.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from ctx_course.grading.grader import Grader
from ctx_course.grading.steps.judge import UNREADABLE

from conftest import REPO, SOLUTIONS, class_builder

pytestmark = pytest.mark.heavy  # grades submissions: scheduled first

# --------------------------------------------------------------------------------------------
# Real grading runs

ASSIGNMENT = "02-remaining"

ALMOST = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)；窗口 2,005 时把十分之一算成 200（错的）。"""
    left = window - (read + write + input) - max_tokens
    if window == 2_005:
        return left, left < 200
    return left, left < window / 10
'''

MODEL_REMAINING = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''

PATCHES = {
    "almost": "",
    "patch_checker": '''
import ctx_reference.checks
ctx_reference.checks.expect_digest = lambda *args, **kwargs: None
''',
    "patch_hashlib": '''
import hashlib
_sha256 = hashlib.sha256
hashlib.sha256 = lambda data=b"": _sha256(b"")
''',
    "patch_digest": '''
import ctx_reference.checks
import ctx_reference.checks.values as values
values.digest = ctx_reference.checks.digest = lambda value, places=None: "0123456789abcdef"
''',
}
# Wrong only on small windows, where only a generated case of the visible check looks: a window
# of 10 with 1 token left is not "below a tenth". Handed in plain, and with the bank of generated
# cases emptied in the learner's kernel (what the kernel runs does not decide the grade).
GENERATED_ONLY = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)；窗口小于 100 时把“正好十分之一”也算成要压缩（错的）。"""
    left = window - (read + write + input) - max_tokens
    return left, (left <= window / 10 if window < 100 else left < window / 10)
'''
EMPTY_BANK = '''
import ctx_reference.checks.bank as bank
bank.cases = lambda exercise, part="visible": ()
'''

# A right function whose values only the hidden tests see (windows 1,000 and 2,005) are not plain.
NOT_PLAIN = MODEL_REMAINING + '''
class Pair(tuple):
    pass


_plain_remaining = remaining


def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)；窗口是 1,000 或 2,005 时返回一个元组子类。"""
    left, compact = _plain_remaining(window, read, write, input, max_tokens)
    return Pair((left, compact)) if window in (1_000, 2_005) else (left, compact)
'''



# A right function handed in with code that reads, during the run, the notebook file next to
# the kernel and counts what its check cell holds.
READER = MODEL_REMAINING + '''
import glob
import json
import re

for _path in glob.glob("*.ipynb"):
    for _cell in json.load(open(_path, encoding="utf-8"))["cells"]:
        if _cell["metadata"].get("nbgrader", {}).get("grade_id") == "check_remaining":
            _text = "".join(_cell["source"])
            print("hidden calls:", _text.count("expect_digest("), "digests:", len(re.findall(r"[0-9a-f]{16}", _text)))
'''


def _grade(tmp, submissions):
    """Grade ``{(student, assignment): solution code}`` built from lessons/; return results and the grader."""
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", timeout=60)
    for (student, aid), code in submissions.items():
        (released,) = sorted((REPO / "lessons" / aid).glob("*.ipynb"))
        (source,) = sorted((SOLUTIONS / aid).glob("*.ipynb"))
        work = build.Work(code={gid: code for gid in _solution_ids(source)})
        folder = tmp / "incoming" / student / aid
        folder.mkdir(parents=True)
        (folder / released.name).write_text(build.submission(released, source, work), encoding="utf-8")
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return {(r.student, r.assignment): r for r in report.results}, grader


def _solution_ids(source):
    return [
        c.metadata.nbgrader["grade_id"]
        for c in nbformat.read(source, as_version=4).cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]


@pytest.fixture(scope="module")
def class_02(tmp_path_factory):
    """Notebook 02 graded: ``almost`` plain and with each patch, ``not_plain``, ``reader``, the model."""
    build = class_builder()
    submissions = {(student, ASSIGNMENT): ALMOST + patch for student, patch in PATCHES.items()}
    submissions["not_plain", ASSIGNMENT] = NOT_PLAIN
    submissions["generated_only", ASSIGNMENT] = GENERATED_ONLY
    submissions["empty_bank", ASSIGNMENT] = GENERATED_ONLY + EMPTY_BANK
    submissions["reader", ASSIGNMENT] = READER
    submissions["model", ASSIGNMENT] = build.MODEL
    return _grade(tmp_path_factory.mktemp("digests02"), submissions)


def _graded_check(class_02, student):
    """Return ``student``'s result and the error output of check_remaining in their autograded notebook."""
    results, grader = class_02
    (path,) = grader.work.glob(f"autograded/{student}/{ASSIGNMENT}/*.ipynb")
    cells = nbformat.read(path, as_version=4).cells
    (cell,) = [c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == "check_remaining"]
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    return results[student, ASSIGNMENT], error


@pytest.mark.parametrize("student", [*sorted(PATCHES), "not_plain"])
def test_a_wrong_function_scores_zero_whatever_it_patches(class_02, student):
    """The almost-right function scores 0 of 3 on check_remaining, plain, with the checker
    replaced, with hashlib replaced and with the digest function replaced; so does a right
    function whose hidden values are not plain data. The check cell ends with one fixed line (for the values
    that are not plain data: that the check cannot read them, without the type's name, which the learner chose)."""
    result, error = _graded_check(class_02, student)
    assert (result.graded, result.auto_score, result.max_auto_score) == (True, 0, 3)
    fixed = UNREADABLE if student == "not_plain" else "隐藏测试没有通过。"  # neither names what the learner chose
    assert (error.ename, error.evalue) == ("CheckFailed", fixed)


@pytest.mark.parametrize("student", ["generated_only", "empty_bank"])
def test_a_mistake_only_a_generated_case_finds_scores_zero(class_02, student):
    """A function wrong only where a generated case of the visible check looks scores 0 of 3, as
    the lab showed it, also when its kernel emptied the bank: the check cell's verdict is the
    grader's, and it ends with a visible failure, not the hidden one: the check's own line where the
    kernel failed too, the grader's line naming line 1 (the visible check) where the kernel passed."""
    result, error = _graded_check(class_02, student)
    assert (result.graded, result.auto_score, result.max_auto_score) == (True, 0, 3)
    kernel_failed = "练习 `remaining`：1 个检查没有通过，请看上面的 × 行。"
    visible = kernel_failed if student == "generated_only" else "这一格第 1 行没有通过"
    assert error.ename == "CheckFailed" and error.evalue.startswith(visible)


def test_the_model_answer_of_02_scores_full_marks(class_02):
    """The model answer, graded in the same run, scores 3 of 3."""
    results, _ = class_02
    assert results["model", ASSIGNMENT].auto_score == 3


def test_graded_notebooks_hold_no_expected_digest(class_02):
    """Neither the autograded notebooks (what the kernel ran) nor the feedback hold one of 02's
    expected digests."""
    _, grader = class_02
    digests = re.findall(r'"([0-9a-f]{16})"', _check_source(ASSIGNMENT, "check_remaining"))
    texts = [p.read_text(encoding="utf-8") for p in grader.work.glob("autograded/*/*/*.ipynb")]
    texts += [p.read_text(encoding="utf-8") for p in grader.work.glob("feedback/*/*/*.html")]
    assert digests and len(texts) == 2 * (len(PATCHES) + 5)
    assert [t for t in texts if any(d in t for d in digests)] == []


def test_the_notebook_file_next_to_the_kernel_holds_no_expected_digest(class_02):
    """Read during the run, reader's notebook file holds check_remaining without a hidden call
    and without a 16-hex-digit string; reader's right function scores 3 of 3."""
    results, grader = class_02
    assert results["reader", ASSIGNMENT].auto_score == 3
    (path,) = grader.work.glob(f"autograded/reader/{ASSIGNMENT}/*.ipynb")
    printed = [
        "".join(o.get("text", ""))
        for c in nbformat.read(path, as_version=4).cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream"
    ]
    assert "hidden calls: 0 digests: 0\n" in printed


def test_feedback_shows_a_hidden_failure_without_its_label(class_02):
    """almost's feedback says a hidden test failed, and does not name it ("窗口 2,005：余量 200")."""
    _, grader = class_02
    (page,) = grader.work.glob(f"feedback/almost/{ASSIGNMENT}/*.html")
    text = page.read_text(encoding="utf-8")
    assert "隐藏测试没有通过。" in text
    assert "窗口 2,005：余量 200" not in text


def _check_source(aid, grade_id):
    (source,) = sorted((SOLUTIONS / aid).glob("*.ipynb"))
    for cell in nbformat.read(source, as_version=4).cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell.source
    raise KeyError(grade_id)
