"""Plausible wrong answers, written as a learner would write them, each fail the visible check.

Notebooks 01, 03, 04, 05 and 06. Each entry breaks a rule the exercise's text states, on an input
that text covers, without calling the reference; the comment beside it names the rule (the
``Rule`` name in the case module's ``RULES``). Most of them pass every hand-written case and are
caught by the generated ones (the bank, ``ctx_reference/checks/generated.py``).
"""
from __future__ import annotations

import contextlib
import io
import math
import re

import pytest

from ctx_reference.checks import CheckFailed, check_exercise
from ctx_reference.window import Outcome

# --- 01 check(size, input_tokens, max_tokens) ----------------------------------------------------

def check_refusing_zero(size, input_tokens, max_tokens):
    # returns-an-outcome: 0 input tokens or max_tokens 0 is a request the text admits
    if input_tokens <= 0 or max_tokens <= 0:
        raise ValueError("input_tokens and max_tokens must be positive")
    if input_tokens > size:
        return Outcome.REJECTED
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS


def check_max_tokens_alone_rejects(size, input_tokens, max_tokens):
    # total-over-window: only the input decides REJECTED; an output cap over the window only truncates
    if input_tokens > size or max_tokens > size:
        return Outcome.REJECTED
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS


def check_input_at_the_window_rejected(size, input_tokens, max_tokens):
    # equal-is-not-over: an input exactly the window is not over it
    if input_tokens >= size:
        return Outcome.REJECTED
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS


# --- 01 estimate_tokens(text) ---------------------------------------------------------------------

def estimate_stripped(text):
    # ascii-four-to-a-token: spaces and newlines are ASCII characters and count
    text = text.strip()
    ascii_chars = sum(1 for ch in text if ch.isascii())
    return math.ceil(ascii_chars / 4) + len(text) - ascii_chars


def estimate_ascii_up_to_128(text):
    # other-one-each: the character at code point 128 is not ASCII (ord(ch) < 128)
    ascii_chars = sum(1 for ch in text if ord(ch) <= 128)
    return -(-ascii_chars // 4) + len(text) - ascii_chars


def estimate_cjk_range(text):
    # other-one-each: every non-ASCII character (accented letters, emoji, full-width marks) is one token
    chinese = len(re.findall(r"[\u4e00-\u9fff]", text))
    return -(-(len(text) - chinese) // 4) + chinese


def estimate_printable_ascii(text):
    # ascii-four-to-a-token: tabs and newlines are ASCII too
    ascii_chars = sum(1 for ch in text if ch.isascii() and ch.isprintable())
    return -(-ascii_chars // 4) + len(text) - ascii_chars


WRONG = [
    pytest.param("check", check_refusing_zero, id="check-refusing-zero"),
    pytest.param("check", check_max_tokens_alone_rejects, id="check-max-tokens-alone-rejects"),
    pytest.param("check", check_input_at_the_window_rejected, id="check-input-at-the-window-rejected"),
    pytest.param("estimate_tokens", estimate_stripped, id="estimate-stripped"),
    pytest.param("estimate_tokens", estimate_ascii_up_to_128, id="estimate-ascii-up-to-128"),
    pytest.param("estimate_tokens", estimate_cjk_range, id="estimate-cjk-range"),
    pytest.param("estimate_tokens", estimate_printable_ascii, id="estimate-printable-ascii"),
]


@pytest.mark.parametrize("name, wrong", WRONG)
def test_wrong_answer_fails_the_visible_check(name, wrong):
    """The visible check (hand-written and generated cases) fails a plausible wrong answer with a × line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(CheckFailed):
        check_exercise(name, wrong)
    assert "×" in out.getvalue()
