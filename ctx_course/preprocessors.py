"""nbgrader preprocessors that keep what a learner sees honest and readable.

Covers: ``CapOutput``, which caps every output of a graded notebook by characters, image size
and count (nbgrader's ``LimitOutput`` only caps lines, so one endless line would pass);
``MarkHiddenTests``, which makes a check cell print a marker where its hidden tests begin;
``HideHiddenTests``, which removes the hidden tests that nbgrader puts back into the check cells
before grading, what was printed while they ran, and the traceback lines that would quote them,
from the feedback; and the two preprocessor lists a grading run uses (``AUTOGRADE_PREPROCESSORS``,
``FEEDBACK_PREPROCESSORS``), the same ones ``nbgrader_config.py`` names for nbgrader's own
commands and the formgrader.

Leaves out: running the notebooks (nbgrader's ``Execute``, or ``kernels.PrelaunchedExecute``),
scoring, and the grading run itself (``grade.py``).

Vocabulary: a *check cell* is a read-only autograded test cell; its *hidden tests* are the lines
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, left out of the release and put
back for grading; the *feedback* is the HTML a learner gets back, made from the autograded notebook.
"""
from __future__ import annotations

import re

import nbformat
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    SaveAutoGrades,
)
from traitlets import Integer

# Longest text kept from one output of a graded cell, in characters (about 250 lines of 80).
MAX_OUTPUT_CHARS = 20_000
# Largest non-text output (an image, base64) kept in a graded notebook, in characters.
MAX_BINARY_CHARS = 2_000_000
# Most outputs kept per cell (a loop of display() calls would otherwise make thousands).
MAX_OUTPUTS = 50

# Printed by a check cell when its hidden tests start (see MarkHiddenTests); the feedback drops
# everything a cell prints after it, so a function that prints its arguments cannot reveal the
# hidden tests' inputs.
HIDDEN_START = "[ctx_course: hidden tests start]"

# Colour codes in a traceback (IPython colours its tracebacks).
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_CELL_LINE = re.compile(r"Cell In\[\d*\], line (\d+)")


class CapOutput(NbGraderPreprocessor):
    """Cap the outputs of every code cell: characters per output, size of images, outputs per cell.

    Runs after nbgrader's ``LimitOutput`` (which caps lines) during autograding, so the
    autograded notebook and the feedback made from it stay small whatever a cell printed.
    Example: ``print("x" * 5_000_000)`` keeps its first 20,000 characters and a marker line.
    """

    max_chars = Integer(MAX_OUTPUT_CHARS, help="characters kept per text output").tag(config=True)
    max_binary_chars = Integer(MAX_BINARY_CHARS, help="largest image kept, in characters").tag(config=True)
    max_outputs = Integer(MAX_OUTPUTS, help="outputs kept per cell").tag(config=True)

    def _cap_text(self, text):
        if isinstance(text, list):
            text = "".join(text)
        if len(text) <= self.max_chars:
            return text
        return text[: self.max_chars] + f"\n…… 输出太长，只保留前 {self.max_chars:,} 个字符（共 {len(text):,} 个）……\n"

    def _cap_output(self, output):
        kind = output.get("output_type")
        if kind == "stream":
            output["text"] = self._cap_text(output.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            for mime in list(data):
                value = data[mime]
                if mime.startswith("text/") or mime.endswith("json"):
                    if isinstance(value, (str, list)):
                        data[mime] = self._cap_text(value)
                elif isinstance(value, str) and len(value) > self.max_binary_chars:
                    del data[mime]
                    data.setdefault("text/plain", f"（{mime} 输出太大，已省略）")
        elif kind == "error":
            output["evalue"] = self._cap_text(output.get("evalue", ""))
            output["traceback"] = [self._cap_text(line) for line in output.get("traceback", [])]
        return output

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code":
            return cell, resources
        outputs = [self._cap_output(o) for o in cell.outputs[: self.max_outputs]]
        dropped = len(cell.outputs) - len(outputs)
        if dropped > 0:
            outputs.append(
                nbformat.v4.new_output("stream", name="stdout", text=f"…… 还有 {dropped:,} 个输出已省略 ……\n")
            )
        cell.outputs = outputs
        return cell, resources



class MarkHiddenTests(ClearHiddenTests):
    """Make a check cell print HIDDEN_START where its hidden tests begin (autograding only).

    The marker line ``### BEGIN HIDDEN TESTS`` becomes
    ``print(HIDDEN_START, end="", flush=True)  ### BEGIN HIDDEN TESTS``: same line numbers, same
    indentation, and the feedback (HideHiddenTests) can tell what was printed during the hidden
    tests. Example: a ``remaining`` that prints its arguments shows the visible cases' inputs in
    the feedback, not the hidden ones.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("grade"):
            return cell, resources
        lines = cell.source.split("\n")
        for number, line in enumerate(lines):
            if self.begin_test_delimeter in line:
                indent = line[: len(line) - len(line.lstrip())]
                lines[number] = f"{indent}print({HIDDEN_START!r}, end='', flush=True)  {line.strip()}"
        cell.source = "\n".join(lines)
        return cell, resources


class HideHiddenTests(ClearHiddenTests):
    """Remove hidden tests, and the error details that would quote them, from the feedback.

    nbgrader puts the hidden tests back into the check cells before autograding, and its feedback
    shows the autograded notebook: without this step a learner would read every hidden test.
    The region between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` is removed from
    every cell; in a cell that had one, what was printed after HIDDEN_START is dropped and each
    error keeps its type, and its message only when it was raised outside the hidden region.
    Example: a failing hidden ``assert`` shows as ``AssertionError（隐藏测试没有通过）`` without
    the line.
    """

    def _hidden_spans(self, source: str) -> list[tuple[int, int]]:
        """Return the 1-based (first, last) line numbers of each hidden region of ``source``."""
        spans, begin = [], None
        lines = source.split("\n")
        for number, line in enumerate(lines, start=1):
            if begin is None and self.begin_test_delimeter in line:
                begin = number
            elif begin is not None and self.end_test_delimeter in line:
                spans.append((begin, number))
                begin = None
        if begin is not None:  # an unterminated region hides everything after its start
            spans.append((begin, len(lines)))
        return spans

    def preprocess_cell(self, cell, resources, cell_index):
        spans = self._hidden_spans(cell.source)
        if not spans:
            return cell, resources
        lines = cell.source.split("\n")
        hidden = {n for first, last in spans for n in range(first, last + 1)}
        cell.source = "\n".join(line for n, line in enumerate(lines, start=1) if n not in hidden)
        if cell.cell_type == "code":
            cell.outputs = [self._redact(o, hidden, lines) for o in self._before_hidden(cell.outputs)]
        return cell, resources

    def _before_hidden(self, outputs):
        """Return the outputs printed before HIDDEN_START (errors are kept: _redact handles them)."""
        kept, hidden = [], False
        for output in outputs:
            if output.get("output_type") == "error":
                kept.append(output)
            elif not hidden and output.get("output_type") == "stream" and HIDDEN_START in output.get("text", ""):
                hidden = True
                output["text"] = output["text"].split(HIDDEN_START)[0]
                if output["text"]:
                    kept.append(output)
            elif not hidden:
                kept.append(output)
        return kept

    def _redact(self, output, hidden: set[int], lines: list[str]):
        if output.get("output_type") != "error":
            return output
        match = _CELL_LINE.search(ANSI_ESCAPE.sub("", "\n".join(output.get("traceback", []))))
        line = int(match.group(1)) if match else None
        if line is not None and line not in hidden and line <= len(lines):
            summary = f"{output.ename}: {output.evalue}" if output.evalue else output.ename
            output["traceback"] = [summary, f"（这一格第 {line} 行没有通过：{lines[line - 1].strip()}）"]
        else:
            output["evalue"] = ""
            output["traceback"] = [f"{output.ename}（隐藏测试没有通过）"]
        return output


# What a grading run applies, in order (nbgrader_config.py names the same classes).
AUTOGRADE_PREPROCESSORS = [
    MarkHiddenTests,
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    CapOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
FEEDBACK_PREPROCESSORS = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]
