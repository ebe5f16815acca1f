"""Hidden digests are compared by the grader, outside the learner's kernel (ctx_course/grading/hidden_digests.py).

Units on hand-built sources, outputs and notebooks first; then real grading runs through
``Grader`` with the digest steps added: the model answer of every assignment, and a small class
of notebook 02 (check_remaining: 3 points) whose ``almost`` function is right except when
nothing was used (only the hidden test "什么都没用" tries that), handed in plain and with
patches of the checker, of hashlib and of the reports.
"""
from __future__ import annotations

import ast
import json

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute
from nbgrader.utils import determine_grade

from ctx_course.cells import hidden_spans
from ctx_course.grading.grader import Grader, grading_config
from ctx_course.grading.hidden_digests import (
    REPORT_CALL,
    CompareDigests,
    HiddenTestError,
    StripDigests,
    expected_digests,
    failures,
    judge_cell,
    strip_digests,
    take_reports,
)
from ctx_course.grading.preprocessors import RestoreCells
from ctx_course.sandbox.execute import PrelaunchedExecute
from ctx_course.sandbox.kernels import KernelPool
from ctx_reference.checks import report_digest
from ctx_reference.checks.hidden import REPORT_PREFIX

from conftest import REPO, SOLUTIONS, class_builder, notebooks

pytestmark = pytest.mark.heavy  # grades submissions: scheduled first

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
EMPTY_LIST = "4f53cda18c2baa0c"  # digest of [] (the hidden tests of 05 and 06 expect it)
OTHER = "0123456789abcdef"

CELL = f'''check_exercise("f", f)
{BEGIN}
from ctx_reference.checks import expect_digest
expect_digest("空", f([]), "{EMPTY_LIST}")
expect_digest(
    "两个",
    f([1, 2]),  # 注释
    "{OTHER}",
    places=3,
)
assert f([]) == []
{END}'''


def _report(label, digest=None, error=None):
    body = {"label": label, "digest": digest} if error is None else {"label": label, "error": error}
    return REPORT_PREFIX + json.dumps(body, ensure_ascii=False) + "\n"


def _stderr(text):
    return nbformat.v4.new_output("stream", name="stderr", text=text)


def _check_cell(source=CELL, outputs=(), grade_id="check_f", solution=False):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata.nbgrader = {
        "grade": True, "grade_id": grade_id, "locked": True, "points": 2, "schema_version": 3,
        "solution": solution, "task": False,
    }
    cell.outputs = list(outputs)
    return cell


# --------------------------------------------------------------------------------------------
# Rewriting


def test_rewrite_removes_every_digest_literal_from_every_solution_check_cell():
    """In every check cell of solutions/, the rewritten source parses, keeps its line count,
    and contains none of the cell's expected digests and no call of expect_digest."""
    rewritten = 0
    for path in notebooks(SOLUTIONS):
        for cell in nbformat.read(path, as_version=4).cells:
            digests = expected_digests(cell.source) if cell.cell_type == "code" else {}
            if not digests:
                continue
            new = strip_digests(cell.source)
            ast.parse(new)
            assert new.count("\n") == cell.source.count("\n"), path.name
            assert not [d for d in digests.values() if d in new], path.name
            assert "expect_digest(" not in new, path.name
            rewritten += 1
    assert rewritten >= 9  # at least one check cell per notebook 01-09


def test_rewrite_keeps_label_value_and_places():
    """A call written over several lines, with a comment and places=3, becomes one report call
    with the same label, value expression and places."""
    new = strip_digests(CELL)
    assert f'{REPORT_CALL}("空", f([]))' in new
    assert f'{REPORT_CALL}("两个", f([1, 2]), places=3' in new


def test_rewrite_keeps_every_line_in_place():
    """Every line outside the rewritten calls keeps its number (the hidden markers, the assert)."""
    old, new = CELL.split("\n"), strip_digests(CELL).split("\n")
    for number, line in enumerate(old):
        if line.startswith(("###", "assert", "check_exercise", "from")):
            assert new[number] == line


def test_rewrite_leaves_calls_outside_the_hidden_tests_alone():
    """An expect_digest call of the visible part stays as written (the lab shows it anyway)."""
    source = f'expect_digest("看得见", f([]), "{EMPTY_LIST}")\n{BEGIN}\n{END}'
    assert strip_digests(source) == source


def test_rewrite_handles_an_attribute_call():
    """``hidden.expect_digest(...)`` is rewritten like a bare call."""
    source = f'{BEGIN}\nhidden.expect_digest("a", 1, "{OTHER}")\n{END}'
    assert strip_digests(source) == f'{BEGIN}\n{REPORT_CALL}("a", 1)\n{END}'


@pytest.mark.parametrize(
    "body",
    [
        f'for x in [1, 2]:\n    expect_digest("循环", x, "{OTHER}")',
        f'def helper():\n    expect_digest("函数里", 1, "{OTHER}")',
        f'[expect_digest("推导式", x, "{OTHER}") for x in [1]]',
        f'expect_digest("同名", 1, "{OTHER}")\nexpect_digest("同名", 2, "{OTHER}")',
        'expect_digest("非字面量", 1, DIGEST)',
        'expect_digest("短", 1, "0123")',
        f'expect_digest(label, 1, "{OTHER}")',
        'check = expect_digest',
        f'expect_digest("注释里又写了一遍", 1, "{OTHER}")  # {OTHER}',
        f'expect_digest(*args, "{OTHER}")',
    ],
)
def test_rewrite_refuses_a_hidden_call_it_cannot_protect(body):
    """Loops, functions, comprehensions, repeated labels, non-literal or malformed digests, a
    non-literal label, an indirect use, a digest written again in a comment and * arguments are
    refused with HiddenTestError."""
    with pytest.raises(HiddenTestError):
        strip_digests(f"{BEGIN}\n{body}\n{END}")


def test_hidden_spans_close_an_unterminated_region_at_the_end():
    """A region without its END marker runs to the cell's last line."""
    assert hidden_spans(f"a\n{BEGIN}\nb\nc") == [(2, 4)]


# --------------------------------------------------------------------------------------------
# The report written in the kernel


def test_report_digest_writes_the_digest_of_the_value_to_stderr(capsys):
    """report_digest("空", []) writes one stderr line with the label and the digest of []."""
    report_digest("空", [])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == _report("空", EMPTY_LIST)


def test_report_digest_reports_a_value_that_is_not_plain_as_an_error(capsys):
    """A tuple subclass is not plain data: the report carries an error instead of a digest, and
    the comparison fails with its reason."""

    class Pair(tuple):
        pass

    report_digest("元组子类", Pair((1, 2)))
    _, reports = take_reports([_stderr(capsys.readouterr().err)])
    assert "digest" not in reports[0] and "Pair" in reports[0]["error"]
    assert failures({"元组子类": OTHER}, reports) == [f"隐藏测试没有通过：元组子类（{reports[0]['error']}）"]


# --------------------------------------------------------------------------------------------
# Reading reports and judging a cell


def test_take_reports_keeps_the_other_stderr_text_and_drops_emptied_streams():
    """Report lines are taken out of stderr, other text on the same stream stays, a stream of
    reports only disappears, and a report printed to stdout is not read."""
    outputs = [
        _stderr("警告\n" + _report("a", OTHER)),
        _stderr(_report("b", OTHER)),
        nbformat.v4.new_output("stream", name="stdout", text=_report("c", OTHER)),
    ]
    kept, reports = take_reports(outputs)
    assert [r["label"] for r in reports] == ["a", "b"]
    assert [(o["name"], o["text"]) for o in kept] == [("stderr", "警告\n"), ("stdout", _report("c", OTHER))]


def test_each_expected_label_reported_once_with_its_digest_passes():
    """Two labels, each reported once with the expected digest: no failure."""
    reports = [{"label": "b", "digest": EMPTY_LIST}, {"label": "a", "digest": OTHER}]
    assert failures({"a": OTHER, "b": EMPTY_LIST}, reports) == []


def test_a_missing_label_fails():
    """A label never reported (the patched checker printed nothing) fails."""
    assert failures({"a": OTHER}, []) == ["隐藏测试没有通过：a（没有运行到）"]


def test_forged_reports_with_the_right_labels_and_made_up_digests_fail():
    """Reports with every expected label and made-up digests fail every label."""
    forged = [{"label": "a", "digest": "f" * 16}, {"label": "b", "digest": "0" * 16}]
    assert len(failures({"a": OTHER, "b": EMPTY_LIST}, forged)) == 2


def test_a_duplicate_report_fails_even_when_one_copy_is_right():
    """The right report plus a forged copy of the same label fails: each label is reported once."""
    reports = [{"label": "a", "digest": OTHER}, {"label": "a", "digest": OTHER}]
    assert failures({"a": OTHER}, reports) == ["隐藏测试没有通过：a（结果出现了 2 次）"]


def test_an_extra_report_with_an_unexpected_label_fails():
    """A right report plus one of a label the hidden tests never asked for fails."""
    reports = [{"label": "a", "digest": OTHER}, {"label": "z", "digest": OTHER}]
    assert failures({"a": OTHER}, reports) == ["隐藏测试没有通过：多出一个结果（'z'）"]


def test_a_malformed_report_line_fails():
    """A report line that is not a JSON object with a label counts as an unexpected report."""
    _, reports = take_reports([_stderr(REPORT_PREFIX + "{not json}\n")])
    assert failures({}, reports) == ["隐藏测试没有通过：多出一个结果（None）"]


def test_a_failing_cell_gets_an_error_that_nbgrader_scores_zero():
    """A wrong digest adds a CheckFailed error with a one-line traceback; nbgrader scores 0 of 2
    and no report line is left in the cell."""
    cell = _check_cell(outputs=[_stderr(_report("空", OTHER) + _report("两个", OTHER))])
    judge_cell(cell, {"空": EMPTY_LIST, "两个": OTHER})
    (error,) = cell.outputs
    assert (error.ename, error.evalue, error.traceback) == (
        "CheckFailed", "隐藏测试没有通过：空", ["CheckFailed: 隐藏测试没有通过：空"])
    assert determine_grade(cell) == (0, 2)


def test_the_error_goes_before_a_result_that_nbgrader_would_read_as_a_score():
    """A cell ending in an execute_result "2" still scores 0: the error is put before the result."""
    result = nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)
    cell = _check_cell(outputs=[_stderr(_report("空", OTHER)), result])
    judge_cell(cell, {"空": EMPTY_LIST})
    assert [o.output_type for o in cell.outputs] == ["error", "execute_result"]
    assert determine_grade(cell) == (0, 2)


def test_a_passing_cell_loses_its_reports_and_keeps_its_points():
    """Right reports are removed and nothing is added: nbgrader gives 2 of 2."""
    printed = nbformat.v4.new_output("stream", name="stdout", text="✓ 例子\n")
    cell = _check_cell(outputs=[printed, _stderr(_report("空", EMPTY_LIST) + _report("两个", OTHER))])
    assert judge_cell(cell, {"空": EMPTY_LIST, "两个": OTHER}) == []
    assert cell.outputs == [printed]
    assert determine_grade(cell) == (2, 2)


def test_a_cell_that_already_failed_gets_no_second_error():
    """A cell whose code raised before its reports keeps its one error."""
    raised = nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=["ValueError: x"])
    cell = _check_cell(outputs=[raised])
    assert judge_cell(cell, {"空": EMPTY_LIST}) != []
    assert cell.outputs == [raised]


def test_a_report_left_in_a_check_cell_scores_zero_without_the_comparison():
    """Fail-closed: when nothing compares the reports, the report line is stderr output and
    nbgrader scores the check cell 0, even with the right digest."""
    cell = _check_cell(outputs=[_stderr(_report("空", EMPTY_LIST))])
    assert determine_grade(cell) == (0, 2)


# --------------------------------------------------------------------------------------------
# The preprocessors on hand-built notebooks


def test_strip_digests_rewrites_check_cells_only():
    """StripDigests rewrites the check cell; a solution cell with the same text is left alone."""
    nb = nbformat.v4.new_notebook(cells=[_check_cell(), _check_cell(grade_id="answer", solution=True)])
    nb, _ = StripDigests().preprocess(nb, {})
    assert nb.cells[0].source == strip_digests(CELL)
    assert nb.cells[1].source == CELL


def test_strip_digests_names_the_cell_it_cannot_rewrite():
    """A hidden call in a loop stops the notebook with an error naming its check cell."""
    bad = f'{BEGIN}\nfor x in [1]:\n    expect_digest("循环", x, "{OTHER}")\n{END}'
    nb = nbformat.v4.new_notebook(cells=[_check_cell(source=bad, grade_id="check_loop")])
    with pytest.raises(HiddenTestError, match="check_loop"):
        StripDigests().preprocess(nb, {})


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """A gradebook holding notebook ``nb`` of assignment ``a``, with the check cell CELL as source."""
    url = f"sqlite:///{tmp_path_factory.mktemp('gradebook') / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("a")
        gb.add_notebook("nb", "a")
        gb.add_grade_cell("check_f", "nb", "a", max_score=2, cell_type="code")
        gb.add_source_cell("check_f", "nb", "a", cell_type="code", source=CELL, locked=True, checksum="x")
    return {"nbgrader": {"db_url": url, "notebook": "nb", "assignment": "a", "student": "s"}}


def test_compare_digests_reads_the_expected_digests_from_the_gradebook(gradebook):
    """CompareDigests passes a cell whose reports match the digests of the gradebook's source
    cell, and fails the same cell with one made-up digest."""
    right = _check_cell(source=strip_digests(CELL),
                        outputs=[_stderr(_report("空", EMPTY_LIST) + _report("两个", OTHER))])
    wrong = _check_cell(source=strip_digests(CELL),
                        outputs=[_stderr(_report("空", OTHER) + _report("两个", OTHER))])
    for cell, score in ((right, 2), (wrong, 0)):
        nb = nbformat.v4.new_notebook(cells=[cell])
        nb, resources = CompareDigests().preprocess(nb, json.loads(json.dumps(gradebook)))
        assert determine_grade(nb.cells[0]) == (score, 2)
        assert REPORT_PREFIX not in json.dumps(nb.cells[0].outputs, ensure_ascii=False)


def test_compare_digests_fails_a_check_cell_that_ran_without_the_rewrite(gradebook):
    """Without StripDigests no report is written: CompareDigests fails the cell instead of passing it."""
    nb = nbformat.v4.new_notebook(cells=[_check_cell(outputs=[])])
    nb, resources = CompareDigests().preprocess(nb, json.loads(json.dumps(gradebook)))
    assert determine_grade(nb.cells[0]) == (0, 2)
    assert resources["ctx_digests"]["check_f"][0] == "隐藏测试没有通过：空（没有运行到）"


# --------------------------------------------------------------------------------------------
# Where the steps go


def test_grading_run_puts_each_digest_step_after_its_anchor(tmp_path):
    """In the grading run, StripDigests follows the cell restorer and CompareDigests follows the
    (prelaunched) Execute, before any step that caps or reads the outputs."""
    plain = grading_config(REPO)
    sanitize, autograde = plain.Autograde.sanitize_preprocessors, plain.Autograde.autograde_preprocessors
    assert sanitize[sanitize.index(RestoreCells) + 1] is StripDigests
    assert autograde[autograde.index(Execute) + 1] is CompareDigests
    pooled = grading_config(REPO, pool=KernelPool(tmp_path)).Autograde.autograde_preprocessors
    assert pooled[pooled.index(PrelaunchedExecute) + 1] is CompareDigests


# --------------------------------------------------------------------------------------------
# Real grading runs

ASSIGNMENT = "02-remaining"

ALMOST = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)；什么输入都没有时总是建议压缩（错的）。"""
    left = window - (read + write + input) - max_tokens
    if read + write + input == 0:
        return left, True
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
import ctx_reference.checks.hidden as hidden
hidden.expect_digest = hidden.report_digest = lambda *args, **kwargs: None
ctx_reference.checks.expect_digest = ctx_reference.checks.report_digest = lambda *args, **kwargs: None
''',
    "patch_hashlib": '''
import hashlib
_sha256 = hashlib.sha256
hashlib.sha256 = lambda data=b"": _sha256(b"")
''',
    "forge": '''
import sys
import ctx_reference.checks.hidden as hidden


def _forged(label, value, places=None):
    sys.stderr.write(hidden.REPORT_PREFIX + '{"label": "%s", "digest": "0123456789abcdef"}\\n' % label)


hidden.report_digest = hidden.expect_digest = _forged
''',
}
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
            print("report calls:", _text.count("report_digest("), "digests:", len(re.findall(r"[0-9a-f]{16}", _text)))
'''


def _grade(tmp, submissions, digest_steps=True):
    """Grade ``{(student, assignment): solution code}`` built from lessons/; return results and the grader."""
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", timeout=60)
    if not digest_steps:  # as grading ran before the digest steps existed
        for name in ("sanitize_preprocessors", "autograde_preprocessors"):
            steps = grader.config.Autograde.get(name, Autograde.class_traits()[name].default())
            grader.config.Autograde[name] = [s for s in steps if s not in (StripDigests, CompareDigests)]
    grader.api = NbGraderAPI(config=grader.config)
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
    """Notebook 02 graded with the digest steps: ``almost`` plain and with each patch, ``not_plain``, the model."""
    build = class_builder()
    submissions = {(student, ASSIGNMENT): ALMOST + patch for student, patch in PATCHES.items()}
    submissions["not_plain", ASSIGNMENT] = NOT_PLAIN
    submissions["reader", ASSIGNMENT] = READER
    submissions["model", ASSIGNMENT] = build.MODEL
    return _grade(tmp_path_factory.mktemp("digests02"), submissions)


# The first failing hidden test of each student (the others fail "什么都没用").
FIRST_FAILURE = {"not_plain": "隐藏测试没有通过：余量正好是十分之一（返回值里有一个 Pair 类型的值"}


@pytest.mark.parametrize("student", [*sorted(PATCHES), "not_plain"])
def test_a_wrong_function_scores_zero_whatever_it_patches(class_02, student):
    """The almost-right function scores 0 of 3 on check_remaining, plain, with the checker
    replaced, with hashlib replaced and with forged reports; so does a right function whose
    hidden values are not plain data. The check cell fails on its first wrong hidden test."""
    results, grader = class_02
    result = results[student, ASSIGNMENT]
    assert (result.graded, result.auto_score, result.max_auto_score) == (True, 0, 3)
    (path,) = grader.work.glob(f"autograded/{student}/{ASSIGNMENT}/*.ipynb")
    (cell,) = [c for c in nbformat.read(path, as_version=4).cells
               if c.metadata.get("nbgrader", {}).get("grade_id") == "check_remaining"]
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "CheckFailed"
    assert error.evalue.startswith(FIRST_FAILURE.get(student, "隐藏测试没有通过：什么都没用"))


def test_the_model_answer_of_02_scores_full_marks(class_02):
    """The model answer, graded in the same run, scores 3 of 3."""
    results, _ = class_02
    assert results["model", ASSIGNMENT].auto_score == 3


def test_graded_notebooks_hold_no_expected_digest_and_no_report(class_02):
    """The autograded notebooks (the file next to the kernel) hold none of 02's expected digests,
    and neither they nor the feedback hold a report line."""
    _, grader = class_02
    digests = expected_digests(_check_source(ASSIGNMENT, "check_remaining"))
    texts = [p.read_text(encoding="utf-8") for p in grader.work.glob("autograded/*/*/*.ipynb")]
    texts += [p.read_text(encoding="utf-8") for p in grader.work.glob("feedback/*/*/*.html")]
    assert len(texts) == 2 * (len(PATCHES) + 3)
    assert [t for t in texts if any(d in t for d in digests.values())] == []
    assert [t for t in texts if "ctx-digest" in t] == []


def test_the_notebook_file_next_to_the_kernel_holds_no_expected_digest(class_02):
    """Read during the run, reader's notebook file holds check_remaining with its six report
    calls and no 16-hex-digit string; reader's right function scores 3 of 3."""
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
    assert "report calls: 6 digests: 0\n" in printed


def test_feedback_shows_a_hidden_failure_without_its_label(class_02):
    """almost's feedback says a hidden test failed, and does not name it ("什么都没用")."""
    _, grader = class_02
    (page,) = grader.work.glob(f"feedback/almost/{ASSIGNMENT}/*.html")
    text = page.read_text(encoding="utf-8")
    assert "CheckFailed（隐藏测试没有通过）" in text
    assert "什么都没用" not in text


def test_without_the_digest_steps_the_patched_checker_passes(tmp_path):
    """Control: graded as before (no digest steps), the almost-right function with the checker
    replaced scores 3 of 3. This is the hole the digest steps close."""
    results, _ = _grade(tmp_path, {("patch_checker", ASSIGNMENT): ALMOST + PATCHES["patch_checker"]},
                        digest_steps=False)
    assert results["patch_checker", ASSIGNMENT].auto_score == 3


def _check_source(aid, grade_id):
    (source,) = sorted((SOLUTIONS / aid).glob("*.ipynb"))
    for cell in nbformat.read(source, as_version=4).cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell.source
    raise KeyError(grade_id)
