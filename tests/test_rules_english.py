"""The English rule phrases hold to the English edition: a failing case names its rule in words the learner read.

When a generated case fails, the learner's failure line quotes the rule it breaks, in the reader's
language (``Rule.states``, a message). tests/test_rules.py checks that the Chinese phrase appears
word for word in the Chinese notebook's markdown before the exercise's check cell; this file checks
the same of the English phrase and the English release (``lessons-en/``). Runs of whitespace count
as one space, since an English sentence may break across lines of a cell.
"""
from __future__ import annotations

import json
import re
from functools import cache

import pytest

from ctx_reference import i18n
from ctx_reference.checks import NOTEBOOKS, RULES

from notebook_cells import ROOT, grade_id, source
from test_mutations import _cell

ENGLISH = ROOT / "lessons-en"


@cache
def _english_cells(folder: str) -> tuple[dict, ...]:
    """Return the cells of the one notebook of ``lessons-en/<folder>/``."""
    (path,) = sorted((ENGLISH / folder).glob("*.ipynb"))
    return tuple(json.loads(path.read_text(encoding="utf-8"))["cells"])


def _flat(text: str) -> str:
    """Return ``text`` with every run of whitespace as one space."""
    return re.sub(r"\s+", " ", text)


def _english_markdown_before_check(name: str) -> str:
    """Return the English release's markdown cells up to the exercise's check cell, joined, whitespace flattened."""
    gid, _ = _cell(name)
    notebook = _english_cells(NOTEBOOKS[name])
    (index,) = [k for k, cell in enumerate(notebook) if grade_id(cell) == gid]
    return _flat("\n".join(source(c) for c in notebook[:index] if c["cell_type"] == "markdown"))


def _english(phrase: str) -> str:
    with i18n.using("en"):
        return i18n._(phrase)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_is_stated_in_the_english_text(name):
    """Every rule's English phrase appears word for word in the English markdown before the check cell."""
    text = _english_markdown_before_check(name)
    assert [(rule.name, _english(rule.states)) for rule in RULES[name]
            if _flat(_english(rule.states)) not in text] == []


def test_every_rule_phrase_has_its_own_english():
    """Every rule phrase with Chinese in it reads differently in English (a missing translation falls back to it)."""
    untranslated = [(name, rule.name) for name, rules in RULES.items() for rule in rules
                    if re.search(r"[\u4e00-\u9fff]", rule.states) and _english(rule.states) == rule.states]
    assert untranslated == []


def test_a_phrase_missing_from_the_english_text_is_reported():
    """The check reads the English markdown: a Chinese phrase of the same exercise is not in it."""
    text = _english_markdown_before_check("remaining")
    assert _flat("超额时可以是负数") not in text
    assert _flat(_english("超额时可以是负数")) in text
