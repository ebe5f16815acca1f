"""nbgrader preprocessors that keep what a learner sees honest and readable.

Covers: ``CapOutput``, which caps every output of a graded notebook by characters, image size
and count (nbgrader's ``LimitOutput`` only caps lines, so one endless line would pass);
``ScoreFromErrorsOnly``, which keeps a value a student's code displays in a check cell from
becoming that cell's score; ``RestoreCells``, which puts back deleted answer and check cells
where nbgrader's own restorer would fail; ``RemoveHiddenTests``, which takes the hidden tests
that nbgrader puts back out of the check cells before the kernel runs them (they are judged on
the grader's side, ``judge.py``); ``ShowEdition``, which shows the read-only cells nbgrader put
back in the language of the submission's edition (and ``ShowEditionStubs`` its untouched answers'
stubs, in its feedback); ``HideHiddenTests``, which removes any hidden test left in a
notebook (one autograded by an earlier release), what was printed while it ran, the traceback
lines that would quote it, and any output line of any cell that quotes a hidden test, from the
feedback; and the preprocessor lists a grading run uses (``AUTOGRADE_PREPROCESSORS``,
``FEEDBACK_PREPROCESSORS``), the same ones ``nbgrader_config.py`` names for nbgrader's own
commands and the formgrader.

Leaves out: running the notebooks (nbgrader's ``Execute``, or ``sandbox.execute.PrelaunchedExecute``),
scoring (``behaviour.ScoreFromBehaviour``), the metadata restore (``metadata.py``), and the
grading run itself (``grader.py``).

Vocabulary: a *check cell* is a read-only autograded test cell; its *hidden tests* are the lines
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, left out of the release and put
back for grading; the *feedback* is the HTML a learner gets back, made from the autograded notebook.
"""
from __future__ import annotations

import html
import re

import nbformat
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from traitlets import Integer

from ctx_reference.i18n import N_, _, using

from ...cells import hidden_spans, is_answer, is_check_cell, source_lines
from ...editions.translate import as_source_stub, in_edition, stubs, submitted_edition
from ..deadlines import ShowLateness
from .behaviour import ScoreFromBehaviour, StartEvaluation
from .inert import MakeInert
from .metadata import RestoreMetadata
from .streams import MergeStreams

# Longest text kept from one output of a graded cell, in characters (about 250 lines of 80).
MAX_OUTPUT_CHARS = 20_000
# Largest non-text output (an image, base64) kept in a graded notebook, in characters.
MAX_BINARY_CHARS = 2_000_000
# Most outputs kept per cell (a loop of display() calls would otherwise make thousands).
MAX_OUTPUTS = 50

# Printed by a check cell when its hidden tests started, in notebooks autograded by earlier
# releases (the kernel ran the hidden tests then; it no longer does); the feedback drops
# everything a cell prints after it, so a function that prints its arguments cannot reveal the
# hidden tests' inputs.
# The marker carries a nonce drawn for each graded notebook (the feedback reads it back from the
# check cell's own source, which a student cannot change): "[ctx_course: hidden tests start 3fa…]".
HIDDEN_START = "[ctx_course: hidden tests start]"
_MARKER_LINE = re.compile(r"print\('(\[ctx_course: hidden tests start [0-9a-f]+\])'")
# Shortest piece of a hidden test line (letters and digits only) that may not appear in any output.
QUOTE_CHARS = 16
# What replaces an output line that quotes a hidden test (in the submission's language).
QUOTE_REDACTED = N_("（这一行引用了隐藏测试，已删去）")

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

    def preprocess(self, nb, resources):
        with using(submitted_edition(nb)):  # the markers speak the language of the submission
            return super().preprocess(nb, resources)

    def _cap_text(self, text):
        if isinstance(text, list):
            text = "".join(text)
        if len(text) <= self.max_chars:
            return text
        marker = _("…… 输出太长，只保留前 {kept:,} 个字符（共 {total:,} 个）……").format(
            kept=self.max_chars, total=len(text))
        return text[: self.max_chars] + f"\n{marker}\n"

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
                    data.setdefault("text/plain", _("（{mime} 输出太大，已省略）").format(mime=mime))
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
                nbformat.v4.new_output(
                    "stream", name="stdout", text=_("…… 还有 {count:,} 个输出已省略 ……").format(count=dropped) + "\n"
                )
            )
        cell.outputs = outputs
        return cell, resources



class HideHiddenTests(ClearHiddenTests):
    """Remove hidden tests, and the error details that would quote them, from the feedback.

    nbgrader puts the hidden tests back into the check cells before autograding, and its feedback
    shows the autograded notebook: without this step a learner would read every hidden test.
    The region between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` is removed from
    every cell; in a cell that had one, what was printed after its marker is dropped and each
    error keeps its type, and its message only when it was raised outside the hidden region.
    Example: a failing hidden ``assert`` shows as ``AssertionError（隐藏测试没有通过）`` without
    the line. Then, in every output of every cell, a line that quotes QUOTE_CHARS letters and
    digits in a row of a hidden test line (whatever else was changed: brackets, spaces, case)
    is replaced by QUOTE_REDACTED, and an output that still quotes one across lines is replaced
    whole.
    """

    def preprocess(self, nb, resources):
        with using(submitted_edition(nb)):  # what replaces a hidden test speaks the language of the submission
            self._quotes = self._hidden_quotes(nb)
            nb, resources = super().preprocess(nb, resources)
            if self._quotes:
                for cell in nb.cells:
                    if cell.cell_type == "code":
                        cell.outputs = [self._unquote(o) for o in cell.outputs]
        return nb, resources

    def _hidden_quotes(self, nb) -> set[str]:
        """Return the pieces of hidden test lines that no output may contain (normalised)."""
        hidden, shown = [], []
        for cell in nb.cells:
            lines = source_lines(cell.source)
            spans = self._hidden_spans(cell.source)
            inside = {n for first, last in spans for n in range(first, last + 1)}
            for number, line in enumerate(lines, start=1):
                if number in inside:
                    hidden.append(_normalised(line))
                elif cell.cell_type == "markdown" or cell.metadata.get("nbgrader", {}).get("locked"):
                    shown.append(_normalised(line))
        shown_text = "\n".join(shown)
        quotes = set()
        for line in hidden:
            if "beginhiddentests" in line or "endhiddentests" in line:
                continue
            pieces = [line[i : i + QUOTE_CHARS] for i in range(len(line) - QUOTE_CHARS + 1)]
            quotes |= {piece for piece in pieces if piece not in shown_text}
        return quotes

    def _quotes_hidden(self, text: str) -> bool:
        # As written, and as an HTML page would show it (tags between the letters removed).
        flats = {_normalised(text), _normalised(html.unescape(re.sub(r"<[^>]*>", "", text)))}
        return any(piece in flat for flat in flats for piece in self._quotes)

    def _unquote_text(self, text):
        if isinstance(text, list):
            text = "".join(text)
        if not isinstance(text, str) or not self._quotes_hidden(text):
            return text
        redacted = _(QUOTE_REDACTED)
        lines = [redacted if self._quotes_hidden(line) else line for line in text.split("\n")]
        text = "\n".join(lines)
        return redacted + "\n" if self._quotes_hidden(text) else text

    def _unquote(self, output):
        kind = output.get("output_type")
        if kind == "stream":
            output["text"] = self._unquote_text(output.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            for mime in list(data):
                if mime.startswith("text/") or mime.endswith("json"):
                    value = data[mime] if isinstance(data[mime], (str, list)) else str(data[mime])
                    if self._unquote_text(value) != ("".join(value) if isinstance(value, list) else value):
                        data[mime] = _(QUOTE_REDACTED) if mime == "text/plain" else None
                        if data[mime] is None:
                            del data[mime]
                elif mime.startswith("image/"):
                    pass  # text drawn into an image is not looked for (see the README)
        elif kind == "error":
            output["evalue"] = self._unquote_text(output.get("evalue", ""))
            output["traceback"] = [self._unquote_text(line) for line in output.get("traceback", [])]
        return output

    def _hidden_spans(self, source: str) -> list[tuple[int, int]]:
        return hidden_spans(source, self.begin_test_delimeter, self.end_test_delimeter)

    def preprocess_cell(self, cell, resources, cell_index):
        spans = self._hidden_spans(cell.source)
        if not spans:
            return cell, resources
        lines = source_lines(cell.source)
        hidden = {n for first, last in spans for n in range(first, last + 1)}
        cell.source = "\n".join(line for n, line in enumerate(lines, start=1) if n not in hidden)
        if cell.cell_type == "code":
            found = [m.group(1) for m in map(_MARKER_LINE.search, lines) if m]
            marker = found[0] if found else HIDDEN_START
            cell.outputs = [self._redact(o, hidden, lines) for o in self._before_hidden(cell.outputs, marker)]
        return cell, resources

    def _before_hidden(self, outputs, marker: str = HIDDEN_START):
        """Return the outputs printed before ``marker`` (errors are kept: _redact handles them)."""
        kept, hidden = [], False
        for output in outputs:
            if output.get("output_type") == "error":
                kept.append(output)
            elif not hidden and output.get("output_type") == "stream" and marker in "".join(output.get("text", "")):
                hidden = True
                output["text"] = "".join(output["text"]).split(marker)[0]
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
            failed = _("（这一格第 {line} 行没有通过：{text}）").format(line=line, text=lines[line - 1].strip())
            output["traceback"] = [summary, failed]
        else:
            output["evalue"] = ""
            output["traceback"] = [_("{ename}（隐藏测试没有通过）").format(ename=output.ename)]
        return output


def _normalised(text: str) -> str:
    """Return the letters and digits of ``text``, lower-cased: what survives any re-formatting."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


class ScoreFromErrorsOnly(NbGraderPreprocessor):
    """Keep a value shown by student code in a check cell from becoming the cell's score.

    nbgrader scores a check cell by its outputs, in order: an error scores 0, but an
    ``execute_result`` met first is taken as a partial score, and student code can emit one
    from inside the function under test (``sys.displayhook(3)``). Check cells score all or
    nothing here, so every ``execute_result`` of a graded code cell becomes a plain display:
    still shown, never a score. Runs after Execute, before SaveAutoGrades.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if is_check_cell(cell):
            for number, output in enumerate(cell.outputs):
                if output.get("output_type") == "execute_result":
                    cell.outputs[number] = nbformat.v4.new_output(
                        "display_data", data=output.get("data", {}), metadata=output.get("metadata", {})
                    )
        return cell, resources


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells, also putting back deleted answer cells, in the order of the source.

    nbgrader puts a deleted check cell back after the cell that precedes it in the source; when
    that cell (the answer cell) was deleted too, it raises KeyError and the whole notebook goes
    ungraded. Here every missing answer or check cell comes back (an answer cell as released,
    with the stub), after the nearest earlier cell that is there, and the notebook is scored.
    """

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source_nb.source_cells]
        source = {cell.name: cell for cell in source_nb.source_cells}
        grades = {cell.name: cell for cell in source_nb.grade_cells}
        answers = {cell.name for cell in source_nb.solution_cells}
        for name in order:
            present = {
                cell.metadata.get("nbgrader", {}).get("grade_id"): index
                for index, cell in enumerate(nb.cells)
                if cell.metadata.get("nbgrader", {}).get("grade_id")
            }
            if name in present or (name not in grades and name not in answers):
                continue
            self.log.warning("Missing cell %s encountered, adding to notebook", name)
            if name in grades:
                cell = self.missing_cell_transform(source[name], grades[name].max_score, is_solution=name in answers)
            else:
                cell = self.missing_cell_transform(source[name], 0, is_solution=True)
                cell["metadata"]["nbgrader"]["grade"] = False
                del cell["metadata"]["nbgrader"]["points"]
            earlier = [present[n] for n in order[: order.index(name)] if n in present]
            # a plain dict from nbgrader: later steps read it as a notebook node (cell.metadata...); its id is
            # its grade id (nbformat would draw a random one: the autograded notebook would differ on every run)
            cell = nbformat.from_dict(cell)
            cell["id"] = _free_id(name, {c.get("id") for c in nb.cells})
            nb.cells.insert(max(earlier) + 1 if earlier else 0, cell)
        return nb, resources


def _free_id(name: str, taken: set) -> str:
    """Return a cell id made from grade id ``name`` that no cell of ``taken`` has (``name``, ``name-2`` …)."""
    base = re.sub(r"[^A-Za-z0-9_-]", "-", name)[:60] or "cell"
    chosen, number = base, 1
    while chosen in taken:
        number += 1
        chosen = f"{base}-{number}"
    return chosen


class RemoveHiddenTests(ClearHiddenTests):
    """Remove the hidden tests from every check cell before the notebook runs (they run on the grader's side only).

    nbgrader puts the hidden tests back into the check cells it restores; the kernel, which runs
    the learner's code, gets the check cells as released, and ``ScoreFromBehaviour`` evaluates
    them with their hidden tests outside it. Cells that are not check cells are left as they are
    (a learner's cell that writes the markers is not an error).
    """

    def preprocess_cell(self, cell, resources, cell_index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            self._remove_hidden_test_region(cell)
        return cell, resources


class ShowEdition(NbGraderPreprocessor):
    """Show the read-only cells of a submission in the language of its edition (``ctx_edition``).

    nbgrader puts back the check cells and read-only cells of the gradebook, which holds the
    Chinese edition. A submission of the English edition gets them back in English
    (``editions.translate.in_edition``: in these cells only comments, docstrings and assert messages
    differ), so its notebook, its autograded copy and its feedback read in one language. Answer
    cells are the learner's and are never touched.
    """

    def preprocess(self, nb, resources):
        from ...cells import is_answer
        edition = submitted_edition(nb)
        if edition == "zh_CN":
            return nb, resources
        root = self.config.CourseDirectory.root or "."
        assignment = resources["nbgrader"]["assignment"]

        def locked(cell) -> bool:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            return bool(meta.get("locked") or meta.get("grade")) and not is_answer(cell)

        shown = in_edition(nb, root, assignment, edition, cells=locked)
        for cell, new in zip(nb.cells, shown["cells"]):
            cell.source = new["source"]
            # an answer left as the English release has it is the same untouched answer as the gradebook's
            as_source_stub(cell, edition)
        return nb, resources


class ShowEditionStubs(NbGraderPreprocessor):
    """Show an untouched answer of an English submission with the English stub again, in its feedback.

    ``ShowEdition`` gave it the gradebook's (Chinese) stub, so that nbgrader scores it as left
    untouched; the learner reads the stub of their own release.
    """

    def preprocess(self, nb, resources):
        edition = submitted_edition(nb)
        if edition != "zh_CN":
            source, shown = stubs("zh_CN"), stubs(edition)
            for cell in nb.cells:
                kind = "code" if cell.cell_type == "code" else "markdown"
                if is_answer(cell) and cell.source.strip() == source[kind].strip():
                    cell.source = shown[kind]
        return nb, resources


# What a grading run applies, in order (nbgrader_config.py names the same classes). The feedback's
# exporter, like every HTMLExporter of the course (the Formgrader's), runs MakeInert first (EXPORTER_PREPROCESSORS).
SANITIZE_PREPROCESSORS = [
    ClearOutput, RestoreMetadata, DeduplicateIds, OverwriteKernelspec, RestoreCells, RemoveHiddenTests,
    ShowEdition, CheckCellMetadata, StartEvaluation,
]
AUTOGRADE_PREPROCESSORS = [
    Execute,
    MergeStreams,
    ScoreFromBehaviour,
    ScoreFromErrorsOnly,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    CapOutput,
    MakeInert,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
FEEDBACK_PREPROCESSORS = [
    MergeStreams, GetGrades, ShowLateness, HideHiddenTests, ShowEditionStubs, CSSHTMLHeaderPreprocessor,
]
EXPORTER_PREPROCESSORS = [MakeInert]
