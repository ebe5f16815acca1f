"""ctx_reference.plain_text: a rule's phrase, written in Markdown and LaTeX, read as plain text."""
from __future__ import annotations

import pytest

from ctx_reference.checks import RULES
from ctx_reference.checks.generated import rule_sentence
from ctx_reference.i18n import _, using
from ctx_reference.plain_text import latex_to_text, plain_text

LEFTOVERS = ("$", "\\", "**", "`")


@pytest.mark.parametrize(("latex", "text"), [
    (r"x = \frac{pos + 0.5}{n}", "x = (pos + 0.5) / n"),
    (r"x = \frac{p - 0.5}{N}", "x = (p - 0.5) / N"),
    (r"\frac{1}{2}", "1 / 2"),
    (r"\frac{\frac{a}{b}}{c + d}", "(a / b) / (c + d)"),
    (r"(n / \text{half\_at})^{\text{steep}}", "(n / half_at)^steep"),
    (r"1 - \text{middle} \cdot 4x(1-x)", "1 - middle · 4x(1-x)"),
    (r"[1,\ -4x(1-x),\ -x]", "[1, -4x(1-x), -x]"),
    (r"\text{middle} = c_1 / c_0", "middle = c_1 / c_0"),
    (r"2^{n + 1} \le 3 \times 10^{6}", "2^(n + 1) ≤ 3 × 10^6"),
    (r"\left( a \right)", "( a )"),
    (r"x_{i}", "x_i"),
    (r"\frac{a", "a / "),
    ("", ""),
])
def test_latex_becomes_the_formula_as_it_is_read(latex, text):
    """Each construct the notebooks use reads as its plain form: a fraction with parentheses around a side of
    more than one term, \\text{} as its words, a superscript group with parentheses when it is several terms,
    the operators as their characters; an unclosed group ends the formula instead of failing."""
    assert latex_to_text(latex) == text


@pytest.mark.parametrize(("markdown", "text"), [
    ("**Output order: stable first, dynamic after**", "Output order: stable first, dynamic after"),
    ("If `context_tokens` does **not exceed** `threshold`", "If context_tokens does not exceed threshold"),
    ("the last `</context>` is followed by **no** newline", "the last </context> is followed by no newline"),
    (r"one row $[1,\ -4x(1-x),\ -x]$ per measured point", "one row [1, -4x(1-x), -x] per measured point"),
    (r"再换回 $\text{middle} = c_1 / c_0$", "再换回 middle = c_1 / c_0"),
    ("`lines[-0:]` and `a * b * c`", "lines[-0:] and a * b * c"),
    ("a *word* and 2 * 3 * 4", "a word and 2 * 3 * 4"),
    ("see [the glossary](../glossary.en.md#cache)", "see the glossary"),
    ("half_at and c_1 stay as written", "half_at and c_1 stay as written"),
    (r"an escaped \* star", "an escaped * star"),
    ("``code with ` inside``", "code with ` inside"),
    ("**不超过** `threshold`", "不超过 threshold"),
])
def test_markdown_becomes_the_text_it_shows(markdown, text):
    """Emphasis, code spans, links and escapes are dropped and their text kept; code is kept as written; an
    identifier's underscores and a product's stars are not emphasis."""
    assert plain_text(markdown) == text


def test_plain_text_refuses_what_is_not_a_string():
    """A value that is not a str is refused in one line naming the argument and the value."""
    with pytest.raises(TypeError, match=r"markdown must be a str \(got int: 3\)"):
        plain_text(3)


def _sentences(language: str) -> list[tuple[str, str]]:
    with using(language):
        return [(f"{exercise}/{rule.name}", _(rule.states)) for exercise, rules in RULES.items() for rule in rules]


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_no_rule_sentence_of_either_edition_shows_markup(language):
    """Every rule phrase of every exercise, in each edition, reads without $, backslash, ** or backtick once
    converted; the sweep holds phrases that had each (it would prove nothing otherwise)."""
    sentences = _sentences(language)
    for mark in LEFTOVERS:
        assert any(mark in text for _, text in sentences), f"no rule phrase holds {mark!r}"
    shown = {name: plain_text(text) for name, text in sentences}
    assert {name: text for name, text in shown.items() if any(mark in text for mark in LEFTOVERS)} == {}
    assert all(text.strip() for text in shown.values())


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "x = (pos + 0.5) / n"),
    ("zh_CN", "x = (pos + 0.5) / n"),
])
def test_the_rule_a_failing_generated_case_quotes_is_plain_text(language, expected):
    """rule_sentence, what a failing generated case of recall quotes, gives the formula as it is read."""
    rules = RULES["recall"]
    with using(language):
        assert rule_sentence("tiny-contexts", rules, "x-at-the-token-middle") == expected
