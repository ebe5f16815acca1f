"""Whether the English edition of a notebook says what the Chinese says and runs as the Chinese runs.

Covers: ``english_notebook`` (the English source notebook of an assignment, built from
``solutions/`` and its catalogue), ``check_assignment`` (entry by entry: nothing left to translate,
the code unchanged where the grader runs it, every number and number label of a markdown cell kept)
and ``run_assignment`` (the English edition executed with ``CTX_LANG=en``, ``execute_english``; every
cell's errors and output numbers compared with the Chinese edition's stored outputs, ``compare_outputs``);
``chinese_in_outputs`` finds the Chinese an executed notebook shows. ``python -m ctx_course i18n
check`` and ``run`` print their findings; ``tests/test_editions.py`` fails on any.

What may differ, by cell (see ``translate.py``): in a check or answer cell only comments,
docstrings and the messages of ``assert`` and ``AssertionError``; in another code cell also the
strings it shows; never a name, a number or the structure of the code.
"""
from __future__ import annotations

import ast
import json
import os
import re
from collections import Counter
from pathlib import Path

from ..cells import source_text
from .catalogues import notebook_messages, source_notebook, translated
from .translate import (
    catalogue_entries,
    catalogue_path,
    locked_code,
    missing,
    read_catalogue,
    translate_notebook,
    translations_of,
)

ENGLISH = "en"
# Number labels (test_number_labels.py): the Chinese word and its English one, in parentheses.
LABELS = {"原课": "lesson", "推导": "derived", "论文": "paper", "示例": "example"}  # data
_ZH_LABEL = re.compile(r"[（(](原课|推导|论文|示例)[）)]")  # data
_EN_LABEL = re.compile(r"\((lesson|derived|paper|example)\)")
_ZH_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?)\s*(万|亿)?")  # data
_EN_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?)(?:\s*(thousand|million|billion))?")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_EN_MONTH = re.compile(rf"\b({'|'.join(_MONTHS)}) \d{{4}}\b")  # "October 2026" shows 2026-10's 10 as a word
_SCALE = {None: 1, "": 1, "万": 10_000, "亿": 100_000_000, "thousand": 1_000, "million": 1_000_000,  # data
          "billion": 1_000_000_000}


def english_notebook(root: str | os.PathLike, assignment: str) -> dict:
    """Return the English source notebook of ``assignment``: ``solutions/`` with its catalogue applied."""
    root = Path(root)
    source = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
    catalogue = read_catalogue(catalogue_path(root, ENGLISH, assignment))
    return translate_notebook(source, translations_of(catalogue), ENGLISH)


def numbers(text: str, pattern: re.Pattern = _ZH_NUMBER) -> Counter:
    """Return the numbers ``text`` shows, by value (``5 万`` and ``50,000`` are one), with their counts.

    >>> sorted(numbers("第 3 篇，约 5 万 token，0.25"))
    [0.25, 3.0, 50000.0]
    >>> numbers("（2026-10）") == numbers("(October 2026)", _EN_NUMBER)
    True
    """
    found: Counter = Counter()
    for digits, scale in pattern.findall(text):
        cleaned = digits.rstrip(",").replace(",", "")
        if not cleaned or cleaned == ".":
            continue
        found[round(float(cleaned) * _SCALE[scale or None], 6)] += 1
    if pattern is _EN_NUMBER:
        for month in _EN_MONTH.findall(text):
            found[float(_MONTHS.index(month) + 1)] += 1
    return found


def _without_messages(source: str, locked: bool) -> str:
    """Return the AST dump of a code cell with what may differ between editions blanked out."""
    lines = [("pass" if line.lstrip().startswith(("%", "!")) else line) for line in source.split("\n")]
    tree = ast.parse("\n".join(lines))

    class Blank(ast.NodeTransformer):
        def visit_Expr(self, node):  # a docstring, or any bare string
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return ast.Expr(ast.Constant("…"))
            return self.generic_visit(node)

        def visit_Assert(self, node):
            node.test = self.visit(node.test)
            node.msg = ast.Constant("…") if node.msg is not None else None
            return node

        def visit_Call(self, node):
            if isinstance(node.func, ast.Name) and node.func.id == "AssertionError":
                node.args = [ast.Constant("…") for _ in node.args]
            return self.generic_visit(node)

        def visit_Constant(self, node):
            if not locked and isinstance(node.value, str):
                return ast.Constant("…")
            return node

        def visit_JoinedStr(self, node):
            if locked:
                return self.generic_visit(node)
            return ast.JoinedStr([self.visit(v) for v in node.values if not isinstance(v, ast.Constant)])

    return ast.dump(Blank().visit(tree))


def _code_problems(cell_id: str, chinese: str, english: str, locked: bool) -> list[str]:
    try:
        same = _without_messages(chinese, locked) == _without_messages(english, locked)
    except SyntaxError as exc:
        return [f"code cell {cell_id}: the English does not parse ({exc.msg}, line {exc.lineno})"]
    if same:
        return []
    what = "comments, docstrings and assert messages" if locked else "comments and the strings it shows"
    return [f"code cell {cell_id}: the English changes more than {what}"]


def _markdown_problems(cell_id: str, chinese: str, english: str) -> list[str]:
    problems = []
    lost = numbers(chinese) - numbers(english, _EN_NUMBER)
    if lost:
        shown = ", ".join(f"{value:g}" for value in sorted(lost))
        problems.append(f"markdown cell {cell_id}: the English lacks the number(s) {shown}")
    labels = Counter(LABELS[word] for word in _ZH_LABEL.findall(chinese))
    missing_labels = labels - Counter(_EN_LABEL.findall(english))
    if missing_labels:
        shown = ", ".join(f"({label})" for label in sorted(missing_labels))
        problems.append(f"markdown cell {cell_id}: the English lacks the number label(s) {shown}")
    if re.search(r"glossary\.md", english):
        problems.append(f"markdown cell {cell_id}: links to glossary.md, not glossary.en.md")
    return problems


def check_assignment(root: str | os.PathLike, assignment: str) -> list[str]:
    """Return what is wrong with the English of ``assignment`` (nothing when it agrees with the Chinese)."""
    root = Path(root)
    source = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
    catalogue = read_catalogue(catalogue_path(root, ENGLISH, assignment))
    problems = []
    left = missing(source, catalogue)
    if left:
        problems.append(f"{len(left)} entries of i18n/en/{assignment}.po left to translate "
                        f"(first: cell {left[0].cell_id}: {left[0].text[:40]!r})")
    done = translations_of(catalogue)
    for entry in catalogue_entries(source):
        text = done.get((entry.cell_id, entry.text))
        if text is not None and entry.kind != "markdown" and "\n" in text:
            problems.append(f"code cell {entry.cell_id}: the translation of one line has a line break")
    english = translate_notebook(source, done, ENGLISH)
    for zh, en in zip(source["cells"], english["cells"]):
        zh_text, en_text = source_text(zh.get("source", "")), source_text(en.get("source", ""))
        if zh["cell_type"] == "code":
            problems += _code_problems(zh["id"], zh_text, en_text, locked_code(zh))
        elif zh["cell_type"] == "markdown" and zh_text != en_text:
            problems += _markdown_problems(zh["id"], zh_text, en_text)
    shown = translated(catalogue)  # the labels are messages of the notebook's catalogue, without msgctxt
    untranslated = [m for m in notebook_messages(source) if m not in shown]
    if untranslated:
        problems.append(f"{len(untranslated)} check labels of i18n/en/{assignment}.po left to translate "
                        f"(first: {untranslated[0]!r})")
    return problems


def _output_text(cell: dict) -> tuple[str, list[str]]:
    """Return a code cell's output text (streams, results) and the names of the errors it raised."""
    texts, errors = [], []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            texts.append(source_text(output["text"]))
        elif output["output_type"] in ("execute_result", "display_data"):
            texts.append(source_text(output.get("data", {}).get("text/plain", "")))
        elif output["output_type"] == "error":
            errors.append(output["ename"])
    return "\n".join(texts), errors


def execute_english(root: str | os.PathLike, assignment: str, timeout: int = 600, kernel_manager_class=None) -> dict:
    """Return the English edition of ``assignment`` executed in a kernel of its own, in the source folder,
    with ``CTX_LANG=en`` (a notebook node, every code cell's outputs fresh).

    ``kernel_manager_class`` is nbclient's, unless given (the suite gives one whose kernels use IPC sockets).
    """
    import nbformat
    from nbclient import NotebookClient

    root = Path(root).resolve()
    path = source_notebook(root, assignment)
    english = nbformat.from_dict(english_notebook(root, assignment))
    for cell in english.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    env = {**os.environ, "CTX_LANG": ENGLISH}
    client = NotebookClient(english, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    if kernel_manager_class is not None:
        client.kernel_manager_class = kernel_manager_class
    client.km = client.kernel_manager_class(kernel_name="python3", config=client.config)
    client.execute(env=env)
    return english


def compare_outputs(chinese: dict, english: dict) -> list[str]:
    """Return where the outputs of an executed English notebook disagree with the Chinese stored outputs.

    For every code cell: the same errors (by name), and the same numbers in its text outputs.
    """
    problems = []
    for zh, en in zip(chinese["cells"], english["cells"]):
        if zh["cell_type"] != "code":
            continue
        zh_text, zh_errors = _output_text(zh)
        en_text, en_errors = _output_text(en)
        if zh_errors != en_errors:
            problems.append(f"code cell {zh['id']}: errors {en_errors} in English, {zh_errors} in Chinese"
                            + (f": {en_text[-300:]!r}" if en_errors else ""))
        lost, extra = numbers(zh_text) - numbers(en_text, _EN_NUMBER), numbers(en_text, _EN_NUMBER) - numbers(zh_text)
        if lost or extra:
            problems.append(f"code cell {zh['id']}: output numbers differ (only in Chinese: "
                            f"{sorted(lost)[:8]}, only in English: {sorted(extra)[:8]})")
    return problems


_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+")


def chinese_in_outputs(notebook: dict) -> list[tuple[str, str]]:
    """Return (cell id, run) for every run of Chinese characters or punctuation in a notebook's outputs, in order.

    Streams, the ``text/plain``, ``text/html`` and ``text/markdown`` of results and displays, and
    errors (name, value) are read; a picture is not.

    >>> chinese_in_outputs({"cells": [{"id": "a", "cell_type": "code", "outputs": [
    ...     {"output_type": "stream", "text": "ok 中文 ok：x"}]}]})
    [('a', '中文'), ('a', '：')]
    """
    found = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            kind = output["output_type"]
            if kind == "stream":
                texts = [source_text(output["text"])]
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                texts = [source_text(data[key]) for key in ("text/plain", "text/html", "text/markdown") if key in data]
            elif kind == "error":
                texts = [output.get("ename", ""), output.get("evalue", "")]
            else:
                texts = []
            found += [(cell["id"], run) for text in texts for run in _CJK_RUN.findall(text)]
    return found


def run_assignment(root: str | os.PathLike, assignment: str, timeout: int = 600) -> list[str]:
    """Execute the English edition of ``assignment`` and return where its outputs disagree with the Chinese.

    The kernel runs in the source folder with ``CTX_LANG=en`` (``execute_english``); every code
    cell is compared with the Chinese stored outputs (``compare_outputs``).
    """
    root = Path(root).resolve()
    chinese = json.loads(source_notebook(root, assignment).read_text(encoding="utf-8"))
    return compare_outputs(chinese, execute_english(root, assignment, timeout))
