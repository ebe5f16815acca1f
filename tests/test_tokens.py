"""Tests for ctx_reference.tokens: the character-class estimate and the tokenizer interface."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.tokens import FakeTokenizer, Tokenizer, estimate_tokens

ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127))
NON_ASCII_TEXT = st.text(alphabet=st.characters(min_codepoint=128))


def test_estimate_tokens():
    """ASCII counts ceil(chars / 4), every other character counts 1, and "" counts 0."""
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1  # ceil(4 / 4)
    assert estimate_tokens("abcde") == 2  # ceil(5 / 4)
    assert estimate_tokens("hello world") == 3  # ceil(11 / 4)
    assert estimate_tokens("上下文工程") == 5  # 5 CJK characters
    assert estimate_tokens("token 预算") == 4  # ceil(6 / 4) = 2, plus 2 CJK
    assert estimate_tokens("窗口 window") == 4  # 2 CJK, plus ceil(7 / 4) = 2


def test_estimate_tokens_pools_ascii_before_rounding():
    """ASCII characters are pooled across the whole text before rounding up: "a预b" is ceil(2/4) + 1 = 2."""
    assert estimate_tokens("a预b") == 2


def test_estimate_tokens_is_not_additive():
    """Rounding makes the estimate subadditive: "ab" + "cd" estimate 1 + 1 = 2 apart but 1 together."""
    assert estimate_tokens("ab") + estimate_tokens("cd") == 2
    assert estimate_tokens("abcd") == 1


@given(st.text(), st.text())
def test_estimate_tokens_concatenation_within_one(a, b):
    """Joining two texts never costs more than the two estimates, and at most one token less."""
    joined = estimate_tokens(a + b)
    apart = estimate_tokens(a) + estimate_tokens(b)
    assert apart - 1 <= joined <= apart


@given(st.text())
def test_estimate_tokens_bounds(text):
    """The estimate lies between ceil(len / 4) (all ASCII) and len (all non-ASCII)."""
    assert -(-len(text) // 4) <= estimate_tokens(text) <= len(text)


@given(NON_ASCII_TEXT)
def test_estimate_tokens_non_ascii_counts_characters(text):
    """For text with no ASCII at all, the estimate is the number of characters."""
    assert estimate_tokens(text) == len(text)


@given(ASCII_TEXT, NON_ASCII_TEXT)
def test_estimate_tokens_non_ascii_adds_exactly(ascii_part, non_ascii_part):
    """Adding non-ASCII characters adds exactly one token each, wherever they go."""
    assert estimate_tokens(ascii_part + non_ascii_part) == estimate_tokens(ascii_part) + len(non_ascii_part)
    assert estimate_tokens(non_ascii_part + ascii_part) == estimate_tokens(ascii_part) + len(non_ascii_part)


@pytest.mark.parametrize("bad", [None, 42, b"bytes", ["a", "b"]])
def test_estimate_tokens_rejects_non_str(bad):
    """A non-str text raises ValueError naming `text` and echoing the value."""
    with pytest.raises(ValueError, match=r"text must be a str \(got " + re.escape(repr(bad)) + r"\)"):
        estimate_tokens(bad)


def test_fake_tokenizer_counts_quarter_length():
    """FakeTokenizer counts len(text) // 4 in any script: 2,208 characters -> 552, 3 -> 0, 8 CJK -> 2."""
    ruler = FakeTokenizer()
    assert ruler.count("x" * 2_208) == 552
    assert ruler.count("abc") == 0
    assert ruler.count("上下文工程上下文") == 2
    assert ruler.count("") == 0


def test_fake_tokenizer_rejects_non_str():
    """FakeTokenizer.count of a non-str raises ValueError naming `text`."""
    with pytest.raises(ValueError, match=r"text must be a str \(got 7\)"):
        FakeTokenizer().count(7)


def test_fake_tokenizer_is_a_tokenizer():
    """FakeTokenizer satisfies the Tokenizer protocol; an object without count does not."""
    assert isinstance(FakeTokenizer(), Tokenizer)
    assert not isinstance(object(), Tokenizer)


def test_custom_tokenizer_satisfies_protocol():
    """Any class with a count(text) method is a Tokenizer, with no inheritance needed."""

    class OnePerChar:
        def count(self, text):
            return len(text)

    assert isinstance(OnePerChar(), Tokenizer)
