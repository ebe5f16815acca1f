"""Plausible wrong answers, written as a learner would write them, each fail the visible check.

Notebooks 01, 03, 04, 05 and 06. Each entry breaks a rule the exercise's text states, on an input
that text covers, without calling the reference; the comment beside it names the rule (the
``Rule`` name in the case module's ``RULES``). Most of them pass every hand-written case and are
caught by the generated ones (the bank, ``ctx_reference/checks/generated.py``). Beside them,
correct answers written another way, which every case, generated ones included, must accept.
"""
from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pytest

from ctx_reference.assemble import Assembly, BudgetError
from ctx_reference.checks import CheckFailed, check_exercise, expect_generated
from ctx_reference.trim import omission_marker
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


# --- 03 recall(pos, n, half_at=400_000, steep=1.5, middle=0.3) -------------------------------------

def recall_steep_above_one(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    # length-decay: any positive steep is a steepness (the curve falls more gently below 1)
    if steep <= 1:
        raise ValueError("steep must be > 1")
    base = 1 / (1 + (n / half_at) ** steep)
    x = (pos + 0.5) / n
    return base * (1 - middle * 4 * x * (1 - x))


def recall_v_shape(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    # middle-dip: the dip is the parabola 4x(1 - x), not a straight line down to the middle
    base = 1 / (1 + (n / half_at) ** steep)
    x = (pos + 0.5) / n
    return base * (1 - middle * (1 - 2 * abs(x - 0.5)))


def recall_over_n_plus_one(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    # x-at-the-token-middle: x = (pos + 0.5) / n
    base = 1 / (1 + (n / half_at) ** steep)
    x = (pos + 0.5) / (n + 1)
    return base * (1 - middle * 4 * x * (1 - x))


def recall_rounded(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    # an-unrounded-float: the value itself, not rounded to the lesson's decimals
    base = 1 / (1 + (n / half_at) ** steep)
    x = (pos + 0.5) / n
    return round(base * (1 - middle * 4 * x * (1 - x)), 6)


# --- 03 fit_position(positions, accuracy, n_docs) ------------------------------------------------

def _least_squares(x, accuracy):
    design = np.column_stack([np.ones_like(x), -4 * x * (1 - x), -x])
    (c0, c1, c2), *_ = np.linalg.lstsq(design, np.asarray(accuracy, dtype=float), rcond=None)
    return float(c0), float(c1 / c0), float(c2 / c0)


def fit_needs_four_points(positions, accuracy, n_docs):
    # three-columns: three points determine the three coefficients
    if len(positions) <= 3:
        raise ValueError("need more points than parameters")
    return _least_squares((np.asarray(positions, dtype=float) - 0.5) / n_docs, accuracy)


def fit_rounded(positions, accuracy, n_docs):
    # three-columns: the least-squares numbers themselves, not rounded to three decimals
    fit = _least_squares((np.asarray(positions, dtype=float) - 0.5) / n_docs, accuracy)
    return tuple(round(v, 3) for v in fit)


def fit_sorting_the_positions(positions, accuracy, n_docs):
    # inputs-unchanged: sorting the caller's list changes it
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    if isinstance(positions, list):
        positions.sort()
    else:
        positions = sorted(positions)
    accuracy = [accuracy[i] for i in order]
    return _least_squares((np.asarray(positions, dtype=float) - 0.5) / n_docs, accuracy)


def fit_normalised_positions(positions, accuracy, n_docs):
    # x-from-the-position: x = (p - 0.5) / N, not (p - 1) / (N - 1)
    return _least_squares((np.asarray(positions, dtype=float) - 1) / (n_docs - 1), accuracy)


# --- 04 assemble(items, budget) --------------------------------------------------------------------

def _assemble(items, budget, *, order=lambda item: -item.priority, same=lambda text: text, kept_as_set=False):
    """A learner's assemble, right but for the option given."""
    items = list(items)
    need = sum(item.tokens for item in items if item.required)
    if need > budget:
        raise BudgetError(need, budget)
    kept = [item.required for item in items]
    kept_set = {item for item in items if item.required}
    texts = {same(item.text) for item in items if item.required and item.text is not None}
    used, dropped = need, []
    for k in sorted((k for k, item in enumerate(items) if not item.required), key=lambda k: order(items[k])):
        item = items[k]
        if item.text is not None and same(item.text) in texts:
            dropped.append((item, "duplicate"))
        elif used + item.tokens > budget:
            dropped.append((item, "no room"))
        else:
            kept[k] = True
            kept_set.add(item)
            used += item.tokens
            if item.text is not None:
                texts.add(same(item.text))
    chosen = [item for item in items if item in kept_set] if kept_as_set else [
        item for item, keep in zip(items, kept) if keep]
    return Assembly([item for item in chosen if item.stable] + [item for item in chosen if not item.stable],
                    used, dropped)


def assemble_stripped_texts(items, budget):
    # same-text-is-a-duplicate: only text equal to the letter is a duplicate ("t " is not "t")
    return _assemble(items, budget, same=str.strip)


def assemble_case_blind(items, budget):
    # same-text-is-a-duplicate: "T" and "t" are different texts
    return _assemble(items, budget, same=str.lower)


def assemble_smaller_first(items, budget):
    # ties-in-input-order: equal priorities are tried in input order, not smallest first
    return _assemble(items, budget, order=lambda item: (-item.priority, item.tokens))


def assemble_kept_as_a_set(items, budget):
    # same-text-is-a-duplicate: of two equal items with a text, the second is a duplicate, not kept
    return _assemble(items, budget, kept_as_set=True)


def assemble_refusing_budget_zero(items, budget):
    # required-over-budget-raises: only required items over the budget raise; a budget of 0 is a budget
    if budget <= 0:
        raise ValueError(f"budget must be positive (got {budget})")
    return _assemble(items, budget)


# --- 05 trim_lines(lines, head, tail) --------------------------------------------------------------

def _trim(lines, head, tail):
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail:]


def trim_without_blank_lines(lines, head, tail):
    # head-marker-tail: blank and whitespace-only lines are lines too
    return _trim([line for line in lines if line.strip()], head, tail)


def trim_through_text(lines, head, tail):
    # fits-as-a-new-list: a line may hold a newline; joining and splitting makes two lines of it
    return _trim("\n".join(lines).split("\n") if lines else [], head, tail)


def trim_by_index(lines, head, tail):
    # head-marker-tail: equal lines repeat; lines.index finds the first of them
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    n = len(lines)
    return ([line for line in lines if lines.index(line) < head] + [omission_marker(n - head - tail)]
            + [line for line in lines if lines.index(line) >= n - tail])


def trim_right_stripped(lines, head, tail):
    # fits-as-a-new-list: the lines come back as they were, trailing spaces included
    return _trim([line.rstrip() for line in lines], head, tail)


def trim_head_zero_shortcut(lines, head, tail):
    # omitted-count: with head 0 the marker counts len(lines) - tail lines, and the tail is the last tail lines
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    if head == 0:
        return [omission_marker(len(lines) - tail)] + lines[-tail:]
    return _trim(lines, head, tail)


# --- 06 select_to_clear(context_tokens, uncleared_turns, turn, params), request_cost(...) -------------

def _clear(candidates, params):
    if not candidates or len(candidates) * (params.tool_result - params.placeholder) < params.clear_at_least:
        return []
    return candidates


def select_by_count(context_tokens, uncleared_turns, turn, params):
    # older-than-the-newest-keep: keep longer than the run so far leaves no candidate (a negative slice keeps some)
    if context_tokens <= params.threshold:
        return []
    turns = list(uncleared_turns)
    count = turn - params.keep - turns[0] + 1 if turns else 0
    return _clear(turns[:count], params)


def select_only_if_it_frees_something(context_tokens, uncleared_turns, turn, params):
    # freed-per-turn: a placeholder as large as the result frees 0, which is not less than clear_at_least 0
    if context_tokens <= params.threshold:
        return []
    candidates = [t for t in uncleared_turns if t <= turn - params.keep]
    if len(candidates) * (params.tool_result - params.placeholder) <= 0:
        return []
    return _clear(candidates, params)


def select_all_but_keep(context_tokens, uncleared_turns, turn, params):
    # older-than-the-newest-keep: the candidates are turns <= turn - keep, not all but the last keep entries
    if context_tokens <= params.threshold:
        return []
    turns = list(uncleared_turns)
    return _clear(turns[:len(turns) - params.keep] if params.keep else turns, params)


def _cost(input_tokens, previous_input, rewrote, params):
    if previous_input is None or rewrote:
        return params.cache_write * input_tokens
    return params.cache_read * previous_input + params.cache_write * (input_tokens - previous_input)


def cost_rounded(input_tokens, previous_input, rewrote, params):
    # read-previous-write-new: the cost is the number itself (0.1 x 11 is 1.1), not rounded to whole tokens
    return round(_cost(input_tokens, previous_input, rewrote, params))


def cost_truncated(input_tokens, previous_input, rewrote, params):
    # read-previous-write-new: the cost is the number itself, not cut to an int
    return int(_cost(input_tokens, previous_input, rewrote, params))


def cost_new_part_by_remainder(input_tokens, previous_input, rewrote, params):
    # read-previous-write-new: the new part is input_tokens - previous_input, also when the input more than doubled
    if previous_input is None or rewrote:
        return params.cache_write * input_tokens
    new = input_tokens % previous_input if previous_input else input_tokens
    return params.cache_read * previous_input + params.cache_write * new


WRONG = [
    pytest.param("check", check_refusing_zero, id="check-refusing-zero"),
    pytest.param("check", check_max_tokens_alone_rejects, id="check-max-tokens-alone-rejects"),
    pytest.param("estimate_tokens", estimate_stripped, id="estimate-stripped"),
    pytest.param("estimate_tokens", estimate_ascii_up_to_128, id="estimate-ascii-up-to-128"),
    pytest.param("estimate_tokens", estimate_cjk_range, id="estimate-cjk-range"),
    pytest.param("estimate_tokens", estimate_printable_ascii, id="estimate-printable-ascii"),
    pytest.param("recall", recall_steep_above_one, id="recall-steep-above-one"),
    pytest.param("recall", recall_v_shape, id="recall-v-shape"),
    pytest.param("recall", recall_over_n_plus_one, id="recall-over-n-plus-one"),
    pytest.param("recall", recall_rounded, id="recall-rounded"),
    pytest.param("fit_position", fit_needs_four_points, id="fit-needs-four-points"),
    pytest.param("fit_position", fit_rounded, id="fit-rounded"),
    pytest.param("fit_position", fit_sorting_the_positions, id="fit-sorting-the-positions"),
    pytest.param("fit_position", fit_normalised_positions, id="fit-normalised-positions"),
    pytest.param("assemble", assemble_stripped_texts, id="assemble-stripped-texts"),
    pytest.param("assemble", assemble_case_blind, id="assemble-case-blind"),
    pytest.param("assemble", assemble_smaller_first, id="assemble-smaller-first"),
    pytest.param("assemble", assemble_kept_as_a_set, id="assemble-kept-as-a-set"),
    pytest.param("assemble", assemble_refusing_budget_zero, id="assemble-refusing-budget-zero"),
    pytest.param("trim_lines", trim_without_blank_lines, id="trim-without-blank-lines"),
    pytest.param("trim_lines", trim_through_text, id="trim-through-text"),
    pytest.param("trim_lines", trim_by_index, id="trim-by-index"),
    pytest.param("trim_lines", trim_right_stripped, id="trim-right-stripped"),
    pytest.param("trim_lines", trim_head_zero_shortcut, id="trim-head-zero-shortcut"),
    pytest.param("select_to_clear", select_by_count, id="select-by-count"),
    pytest.param("select_to_clear", select_only_if_it_frees_something, id="select-only-if-it-frees-something"),
    pytest.param("select_to_clear", select_all_but_keep, id="select-all-but-keep"),
    pytest.param("request_cost", cost_rounded, id="cost-rounded"),
    pytest.param("request_cost", cost_truncated, id="cost-truncated"),
    pytest.param("request_cost", cost_new_part_by_remainder, id="cost-new-part-by-remainder"),
]


@pytest.mark.parametrize("name, wrong", WRONG)
def test_wrong_answer_fails_the_visible_check(name, wrong):
    """The visible check (hand-written and generated cases) fails a plausible wrong answer with a × line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(CheckFailed):
        check_exercise(name, wrong)
    assert "×" in out.getvalue()


# --- honest answers written another way: every generated case still passes them ------------------

def estimate_with_isascii(text):
    ascii_chars = sum(ch.isascii() for ch in text)
    return math.ceil(ascii_chars / 4) + len(text) - ascii_chars


def recall_expanded(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (2 * pos + 1) / (2 * n)
    return half_at ** steep / (half_at ** steep + n ** steep) * (1 - 4 * middle * x + 4 * middle * x * x)


def recall_with_numpy(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = np.float64(pos + 0.5) / n
    return np.float64(1) / (1 + np.power(n / half_at, steep)) * (1 - middle * 4 * x * (1 - x))


def fit_by_polyfit(positions, accuracy, n_docs):
    x = (np.asarray(positions, dtype=float) - 0.5) / n_docs
    a, b, c = np.polyfit(x, np.asarray(accuracy, dtype=float), 2)  # c + b x + a x^2
    return float(c), float(a / 4 / c), float((-b - a) / c)


def fit_by_normal_equations(positions, accuracy, n_docs):
    x = (np.asarray(positions, dtype=float) - 0.5) / n_docs
    design = np.column_stack([np.ones_like(x), -4 * x * (1 - x), -x])
    c0, c1, c2 = np.linalg.solve(design.T @ design, design.T @ np.asarray(accuracy, dtype=float))
    return c0, c1 / c0, c2 / c0  # numpy floats: the check takes them as floats


HONEST = [
    pytest.param("estimate_tokens", estimate_with_isascii, id="estimate-with-isascii"),
    pytest.param("recall", recall_expanded, id="recall-expanded"),
    pytest.param("recall", recall_with_numpy, id="recall-with-numpy"),
    pytest.param("fit_position", fit_by_polyfit, id="fit-by-polyfit"),
    pytest.param("fit_position", fit_by_normal_equations, id="fit-by-normal-equations"),
]


@pytest.mark.parametrize("name, honest", HONEST)
def test_honest_answer_written_another_way_passes(name, honest):
    """A correct answer computed another way (another order, numpy, another solver) passes every case,
    the hidden generated ones included."""
    with contextlib.redirect_stdout(io.StringIO()):
        check_exercise(name, honest)
    expect_generated("生成的隐藏例子", name, honest)
