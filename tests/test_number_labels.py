"""Every number a notebook's text shows carries a label saying where it comes from.

The four labels (README, "What the workbook is based on"): （原课） the lessons quote it, （推导）
it follows from the rebuilt models, （论文） it is measured data from a paper, （示例） it was made
up for an example. The rule is checked per markdown cell of solutions/ (model answers, which
learners never see, excepted): a cell that shows a number of three or more significant digits
names at least one label, or its notebook's first cell says which label all its numbers carry
("所有数字都是推导值"). Years, code spans, formulas, links and headings are not counted.
"""
from __future__ import annotations

import json
import re

import pytest

from conftest import REPO

LABELS = ("原课", "推导", "论文", "示例")
_NUMBER = re.compile(r"(?<![\w.\-])\d[\d,]*(?:\.\d+)?(?![\w\-])")
_BLANKET = re.compile(r"所有数字都是\W*(原课|推导|论文|示例)")


def shown_numbers(text: str) -> list[str]:
    """Return the numbers of three or more significant digits in markdown text, outside code, formulas and headings."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\$[^$]*\$", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"^#+ .*$", "", text, flags=re.M)
    found = []
    for number in _NUMBER.findall(text):
        if len(number.replace(",", "").replace(".", "").lstrip("0")) >= 3 and not re.fullmatch(r"(19|20)\d\d", number):
            found.append(number)
    return found


def unlabelled_cells(notebook: dict) -> list[tuple[str, list[str]]]:
    """Return (cell id, numbers) of every learner-facing markdown cell that shows numbers and names no label."""
    cells = notebook["cells"]
    if cells and _BLANKET.search("".join(cells[0]["source"])):
        return []
    missing = []
    for cell in cells:
        if cell["cell_type"] != "markdown" or cell["metadata"].get("nbgrader", {}).get("solution"):
            continue
        text = "".join(cell["source"])
        numbers = shown_numbers(text)
        if numbers and not any(label in text for label in LABELS):
            missing.append((cell.get("id"), numbers))
    return missing


def test_shown_numbers_skips_code_years_and_short_numbers():
    """66,000 and 0.818 count; 2026, 12, `8_000` and a heading's 100 do not."""
    text = "## 100 个用例\n余量 66,000，召回 0.818，2026 年，12 轮，`8_000`"
    assert shown_numbers(text) == ["66,000", "0.818"]


def test_a_cell_without_a_label_is_found():
    """A cell with 66,000 and no label is reported; adding （原课） or a blanket first cell clears it."""
    plain = {"cell_type": "markdown", "metadata": {}, "id": "c1", "source": ["余量 66,000"]}
    assert unlabelled_cells({"cells": [plain]}) == [("c1", ["66,000"])]
    labelled = dict(plain, source=["余量 66,000（原课）"])
    assert unlabelled_cells({"cells": [labelled]}) == []
    blanket = {"cell_type": "markdown", "metadata": {}, "id": "c0", "source": ["本节所有数字都是**推导**值。"]}
    assert unlabelled_cells({"cells": [blanket, plain]}) == []


@pytest.mark.parametrize("path", sorted((REPO / "solutions").glob("*/*.ipynb")), ids=lambda p: p.parent.name)
def test_every_shown_number_carries_a_label(path):
    """No learner-facing markdown cell shows a number without naming where it comes from."""
    assert unlabelled_cells(json.loads(path.read_text(encoding="utf-8"))) == []
