"""Compare the hidden tests' expected digests outside the learner's kernel.

A hidden test reads ``expect_digest("尾部 0 行", trim_lines(hundred, 3, 0), "8bb703315bc2feb2")``.
Run as written, the comparison happens in the learner's kernel, where earlier code can replace
``expect_digest``, ``hashlib`` or ``json`` and pass every hidden test, and where the expected
digests can be read. So grading takes two steps around the run:

- ``StripDigests`` (sanitising pass, right after the cell restorer has put the hidden
  tests back) rewrites each such call of a check cell's hidden tests into
  ``…report_digest("尾部 0 行", trim_lines(hundred, 3, 0))``: the kernel computes the digest of
  what the learner's code returned and writes one report line to stderr, and neither the cell
  nor the notebook file next to the kernel holds an expected digest.
- ``CompareDigests`` (autograding pass, right after ``Execute``) reads the expected digests from
  the gradebook (the check cells as the instructor wrote them), takes the report lines out of
  each check cell's outputs and compares them: every expected label must be reported exactly
  once with its digest, and no other label may be reported. Otherwise it adds a ``CheckFailed``
  error to the cell, so nbgrader's ``SaveAutoGrades`` scores it 0.

Fail-closed by construction: a report line that stays in a check cell is stderr output, which
nbgrader scores 0, so rewriting without comparing fails every such cell; comparing without
rewriting finds no reports and fails them too. Either misconfiguration fails the model answers,
never passes a wrong one.

Rules a hidden ``expect_digest`` call must follow to be rewritten (otherwise ``HiddenTestError``
names the cell and the notebook is not graded): the label and the digest are string literals,
the digest has 16 hex digits, each label appears once in its cell, and the call is not inside
a loop, a comprehension, a function or a lambda. A call that may run several times could be
answered by repeating the report of one right value, whatever the other values are.

Leaves out: the visible checks (they run in the kernel, as in the lab), the hidden ``assert``
lines (they still run in the kernel), and sandboxing: code running with the grader's
privileges can still read the gradebook or ``solutions/`` (see grader.py).

Vocabulary: a *check cell* is a read-only autograded test cell; its *hidden tests* are the lines
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``; a *report* is one line
``REPORT_PREFIX {"label": …, "digest": …}`` (or ``"error": …`` for a value that is not plain data)
written by ``report_digest``.
"""
from __future__ import annotations

import ast
import inspect
import json
import re
from dataclasses import dataclass

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import ClearHiddenTests

from ctx_reference.checks.hidden import DIGEST_HEX, expect_digest

from ..cells import hidden_spans, is_check_cell

# Started each report line of the rewritten calls (kept for reading notebooks graded by earlier releases).
REPORT_PREFIX = "[ctx-digest] "

# What a rewritten call calls: self-contained, so it needs no import in the cell, and the
# name it leaves in the cell says what it does.
REPORT_CALL = '__import__("ctx_reference.checks.hidden", fromlist=["report_digest"]).report_digest'
EXPECT_NAME = expect_digest.__name__
FAILED = "CheckFailed"
_SIGNATURE = inspect.signature(expect_digest)

_DIGEST = re.compile(rf"[0-9a-f]{{{DIGEST_HEX}}}")
_REPORT_LINE = re.compile(re.escape(REPORT_PREFIX) + r"(\{[^\n]*\})\n?")
_LINE_END = re.compile(r"\r\n|\r|\n")
# Places where one call could run more than once.
_REPEATING = (
    ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)


class HiddenTestError(ValueError):
    """A hidden ``expect_digest`` call that cannot be rewritten; the message says which and why."""


@dataclass(frozen=True)
class DigestCall:
    """One hidden ``expect_digest`` call: its label, expected digest and where it sits in the cell."""

    label: str
    digest: str
    node: ast.Call


# --------------------------------------------------------------------------------------------
# Finding and rewriting the calls (pure functions of a cell's source)


def digest_calls(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> list[DigestCall]:
    """Return the ``expect_digest`` calls of the hidden regions of ``source``, in source order.

    Raises HiddenTestError for a call that breaks the rules of the module docstring.
    Example: a check cell of 05-trim-lines gives nine calls, the first labelled "放得下：原样的内容".
    """
    spans = hidden_spans(source, begin, end)
    if not spans or EXPECT_NAME not in source:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise HiddenTestError(f"a cell with hidden {EXPECT_NAME} calls must be plain Python (got {exc})") from None

    def hidden(node: ast.AST) -> bool:
        return any(first <= node.lineno and node.end_lineno <= last for first, last in spans)

    calls: list[DigestCall] = []
    seen: set[str] = set()

    def visit(node: ast.AST, repeating: bool, inside: bool) -> None:
        found = isinstance(node, ast.Call) and _is_expect(node.func) and hidden(node)
        if found:
            call = _digest_call(node, source)
            if repeating or inside:
                raise HiddenTestError(f"hidden {EXPECT_NAME}({call.label!r}, …) must not be inside a loop, "
                                      f"comprehension, function or another {EXPECT_NAME}")
            if call.label in seen:
                raise HiddenTestError(f"hidden {EXPECT_NAME} label {call.label!r} appears twice in one cell")
            seen.add(call.label)
            calls.append(call)
        for child in ast.iter_child_nodes(node):
            visit(child, repeating or isinstance(node, _REPEATING), inside or found)

    visit(tree, False, False)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and _is_expect(node) and hidden(node):
            if not any(node is c.node.func for c in calls):
                raise HiddenTestError(f"hidden tests may only call {EXPECT_NAME} directly (line {node.lineno})")
    return sorted(calls, key=lambda c: (c.node.lineno, c.node.col_offset))


def expected_digests(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> dict[str, str]:
    """Return ``{label: expected digest}`` for the hidden ``expect_digest`` calls of ``source``."""
    return {call.label: call.digest for call in digest_calls(source, begin, end)}


def strip_digests(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> str:
    """Return ``source`` with each hidden ``expect_digest`` call turned into a report call.

    ``expect_digest("尾部 0 行", trim_lines(hundred, 3, 0), "8bb703315bc2feb2")`` becomes
    ``<REPORT_CALL>("尾部 0 行", trim_lines(hundred, 3, 0))``; ``places`` is kept. Every line
    keeps its number (a call that spanned several lines is padded with newlines inside its
    parentheses), so tracebacks and the hidden markers stay where they were.
    """
    calls = digest_calls(source, begin, end)
    starts = [0] + [m.end() for m in _LINE_END.finditer(source)] + [len(source)]

    def offset(line: int, col: int) -> int:  # ast columns count UTF-8 bytes
        text = source[starts[line - 1] : starts[line]]
        return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8"))

    def segment(node: ast.AST) -> str:
        return source[offset(node.lineno, node.col_offset) : offset(node.end_lineno, node.end_col_offset)]

    text = source
    for call in reversed(calls):
        bound = _bind(call.node)
        parts = [segment(bound["label"]), segment(bound["value"])]
        if "places" in bound:
            parts.append("places=" + segment(bound["places"]))
        inner = ", ".join(parts)
        original = segment(call.node)
        padding = "\n" * (original.count("\n") - inner.count("\n"))
        first = offset(call.node.lineno, call.node.col_offset)
        text = text[:first] + f"{REPORT_CALL}({inner}{padding})" + text[first + len(original) :]
    left = sorted({call.digest for call in calls if call.digest in text})
    if left:  # written a second time elsewhere, in a comment or a string, say
        raise HiddenTestError(f"the hidden tests still hold the expected digest(s) {', '.join(left)} "
                              f"outside their {EXPECT_NAME} calls")
    return text


def _is_expect(func: ast.AST) -> bool:
    return (isinstance(func, ast.Name) and func.id == EXPECT_NAME) or (
        isinstance(func, ast.Attribute) and func.attr == EXPECT_NAME
    )


def _bind(node: ast.Call) -> dict[str, ast.AST]:
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise HiddenTestError(f"hidden {EXPECT_NAME} calls must not use * or ** (line {node.lineno})")
    try:
        bound = _SIGNATURE.bind(*node.args, **{k.arg: k.value for k in node.keywords})
    except TypeError as exc:
        raise HiddenTestError(f"hidden {EXPECT_NAME} call on line {node.lineno} does not match its signature "
                              f"({exc})") from None
    return dict(bound.arguments)


def _digest_call(node: ast.Call, source: str) -> DigestCall:
    bound = _bind(node)
    label, expected = bound["label"], bound["expected"]
    if not (isinstance(label, ast.Constant) and isinstance(label.value, str)):
        raise HiddenTestError(f"hidden {EXPECT_NAME} label on line {node.lineno} must be a string literal "
                              f"(got {ast.get_source_segment(source, label)!r})")
    if not (isinstance(expected, ast.Constant) and isinstance(expected.value, str)
            and _DIGEST.fullmatch(expected.value)):
        raise HiddenTestError(
            f"hidden {EXPECT_NAME}({label.value!r}, …) must give its digest as {DIGEST_HEX} hex digits "
            f"in a string literal "
            f"(got {ast.get_source_segment(source, expected)!r})"
        )
    return DigestCall(label.value, expected.value, node)


# --------------------------------------------------------------------------------------------
# Reading the reports and judging a cell (pure functions of its outputs)


def take_reports(outputs: list) -> tuple[list, list[dict]]:
    """Return (the outputs without report lines, the reports in order) of one code cell.

    Only stderr streams are read; other text on a stream is kept, and a stream left empty is
    dropped. A report line that is not a JSON object with a string ``label`` counts as a report
    with ``label`` None (it can only fail the cell).
    """
    kept, reports = [], []
    for output in outputs:
        if output.get("output_type") != "stream" or output.get("name") != "stderr":
            kept.append(output)
            continue
        text = "".join(output.get("text", ""))
        found = list(_REPORT_LINE.finditer(text))
        if not found:
            kept.append(output)
            continue
        for match in found:
            reports.append(_read_report(match.group(1)))
        rest = _REPORT_LINE.sub("", text)
        if rest:
            output["text"] = rest
            kept.append(output)
    return kept, reports


def _read_report(text: str) -> dict:
    try:
        report = json.loads(text)
    except ValueError:
        return {"label": None}
    if not isinstance(report, dict) or not isinstance(report.get("label"), str):
        return {"label": None}
    return report


def failures(expected: dict[str, str], reports: list[dict]) -> list[str]:
    """Return one Chinese message per hidden test the reports do not pass, in the order of ``expected``.

    A label passes when it was reported exactly once, with its expected digest. A report of a
    label that is not expected fails too. Example: ``failures({"a": "0123456789abcdef"}, [])``
    is ``["隐藏测试没有通过：a（没有运行到）"]``.
    """
    messages = []
    for label, digest in expected.items():
        mine = [r for r in reports if r.get("label") == label]
        if not mine:
            messages.append(f"隐藏测试没有通过：{label}（没有运行到）")
        elif len(mine) > 1:
            messages.append(f"隐藏测试没有通过：{label}（结果出现了 {len(mine)} 次）")
        elif "error" in mine[0]:
            messages.append(f"隐藏测试没有通过：{label}（{mine[0]['error']}）")
        elif mine[0].get("digest") != digest:
            messages.append(f"隐藏测试没有通过：{label}")
    for report in reports:
        if report.get("label") not in expected:
            messages.append(f"隐藏测试没有通过：多出一个结果（{report.get('label')!r}）")
    return messages


def judge_cell(cell, expected: dict[str, str]) -> list[str]:
    """Take the reports out of a check cell's outputs and, if they fail, add a CheckFailed error.

    Returns the failure messages (empty when the hidden digests pass). The error goes before
    the first ``execute_result`` (nbgrader reads a result before an error as a partial score),
    and is not added when the cell already has an error (it scores 0 anyway).
    """
    cell.outputs, reports = take_reports(cell.outputs)
    messages = failures(expected, reports)
    if messages and not any(o.get("output_type") == "error" for o in cell.outputs):
        error = nbformat.v4.new_output("error", ename=FAILED, evalue=messages[0],
                                       traceback=[f"{FAILED}: {messages[0]}"])
        results = [i for i, o in enumerate(cell.outputs) if o.get("output_type") == "execute_result"]
        cell.outputs.insert(results[0] if results else len(cell.outputs), error)
    return messages


# --------------------------------------------------------------------------------------------
# The two preprocessors


class StripDigests(ClearHiddenTests):
    """Rewrite the hidden ``expect_digest`` calls of every check cell into report calls.

    Runs in nbgrader's sanitising pass, after the cell restorer (``RestoreCells``, which puts the hidden tests
    back) and before the notebook is written next to the kernel. Example: in 05-trim-lines,
    ``expect_digest("尾部 0 行", trim_lines(hundred, 3, 0), "8bb703315bc2feb2")`` runs as
    ``…report_digest("尾部 0 行", trim_lines(hundred, 3, 0))``.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if not is_check_cell(cell):
            return cell, resources
        grade_id = cell.metadata.nbgrader.get("grade_id")
        try:
            cell.source = strip_digests(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        except HiddenTestError as exc:
            raise HiddenTestError(f"check cell {grade_id!r}: {exc}") from None
        return cell, resources


class CompareDigests(ClearHiddenTests):
    """Compare the reports of every check cell with the expected digests kept in the gradebook.

    Runs in nbgrader's autograding pass, right after ``Execute`` (before outputs are capped and
    before ``SaveAutoGrades``). Removes every report line from the check cells; a check cell
    whose hidden tests expect digests and whose reports do not match them gets a ``CheckFailed``
    error (see ``judge_cell``). The per-cell messages are left in
    ``resources["ctx_digests"][grade_id]`` for the instructor's logs.
    """

    def preprocess(self, nb, resources):
        expected = self.expected(resources)
        resources.setdefault("ctx_digests", {})
        for cell in nb.cells:
            if not is_check_cell(cell):
                continue
            grade_id = cell.metadata.nbgrader.get("grade_id")
            messages = judge_cell(cell, expected.get(grade_id, {}))
            resources["ctx_digests"][grade_id] = messages
            for message in messages:
                self.log.info("%s: %s", grade_id, message)
        return nb, resources

    def expected(self, resources) -> dict[str, dict[str, str]]:
        """Return ``{grade_id: {label: digest}}`` of the notebook's check cells, read from the gradebook."""
        info = resources["nbgrader"]
        found = {}
        with Gradebook(info["db_url"]) as gb:
            try:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return {}
            for source_cell in notebook.source_cells:
                if source_cell.cell_type != "code" or not source_cell.source:
                    continue
                try:
                    digests = expected_digests(source_cell.source, self.begin_test_delimeter, self.end_test_delimeter)
                except HiddenTestError as exc:
                    raise HiddenTestError(f"check cell {source_cell.name!r}: {exc}") from None
                if digests:
                    found[source_cell.name] = digests
        return found
