"""No wrong implementation of an exercise shows all ✓ and then fails the hidden tests.

The rule, for every exercise: every mutant that fails a hidden test fails the visible check too.
Two sets of mutants are held to it:

- hand-written ones: one per rule the exercise's prompt states, plus mistakes learners make in
  practice (an ``assemble`` that treats every text it has *seen* as a duplicate, ``[:-keep]``,
  kinds read in any case, ...). Each must fail the visible check and the hidden tests: one that
  passed both would mean a stated rule nobody tests. Each is tagged with the rule of the
  exercise's ``RULES`` table it breaks (``@mutant(*A, rule="stable-first")``) and must fail a
  visible case listed for THAT rule; every rule has at least one mutant;
- generated ones: every one-token edit of the model answer (a comparison flipped between strict
  and not, ``==``/``!=``, ``in``/``not in``, an integer ±1, ``and``/``or``, ``+``/``-``, a
  ``not`` dropped). Many of them are harmless or fail both; none may fail the hidden tests alone.

The hidden tests run in-process: the code cells before the check cell are executed once
(``notebook_cells.prefix_namespace``), the check cell's visible part runs with the model answer,
then the mutant is bound to the exercise's name and the hidden tests are exec'd.
"""
from __future__ import annotations

import ast
import contextlib
import io
import math
import re

import numpy as np
import pytest

from ctx_reference import Assembly, BudgetError, FakeTokenizer, LedgerEntry, Zone, omission_marker, zone
from ctx_reference.checks import ADAPTERS, EXERCISES, RULES, CheckFailed, check_exercise
from ctx_reference.checks.runner import run_cases
from ctx_reference.i18n import using
from ctx_reference.ledger import BUCKETS
from ctx_reference.policy import Clear, Compact
from ctx_reference.sessions import Record, record_tokens
from ctx_reference.window import Outcome

from notebook_cells import cells, check_cell, check_parts, grade_id, prefix_namespace, source

MUTANTS: dict[tuple[str, str], list] = {}


#: The rule of the exercise's text each mutant breaks: (folder, exercise, function name) → rule name.
BREAKS: dict[tuple[str, str, str], str] = {}


def mutant(folder: str, name: str, *, rule: str):
    """Register the decorated function as a wrong implementation of exercise ``name`` that breaks ``rule``."""

    def register(func):
        MUTANTS.setdefault((folder, name), []).append(func)
        BREAKS[folder, name, func.__name__] = rule
        return func

    return register


# ---- 01 check --------------------------------------------------------------------------------
W = ("01-window-math", "check")


@mutant(*W, rule="equal-is-not-over")
def check_input_equal_counts_as_over(size, input_tokens, max_tokens):
    if input_tokens >= size:
        return Outcome.REJECTED
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS


@mutant(*W, rule="equal-is-not-over")
def check_total_equal_counts_as_over(size, input_tokens, max_tokens):
    if input_tokens > size:
        return Outcome.REJECTED
    if input_tokens + max_tokens >= size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS


@mutant(*W, rule="input-over-window")
def check_total_tested_first(size, input_tokens, max_tokens):
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    if input_tokens > size:
        return Outcome.REJECTED
    return Outcome.FITS


@mutant(*W, rule="returns-an-outcome")
def check_returns_names(size, input_tokens, max_tokens):
    if input_tokens > size:
        return "REJECTED"
    if input_tokens + max_tokens > size:
        return "MAY_TRUNCATE"
    return "FITS"


@mutant(*W, rule="total-over-window")
def check_ignores_max_tokens(size, input_tokens, max_tokens):
    return Outcome.REJECTED if input_tokens > size else Outcome.FITS


# ---- 01 estimate_tokens ----------------------------------------------------------------------
E = ("01-window-math", "estimate_tokens")


def _split(text):
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return ascii_chars, len(text) - ascii_chars


@mutant(*E, rule="rounded-up")
def estimate_round_instead_of_ceiling(text):
    a, other = _split(text)
    return round(a / 4) + other


@mutant(*E, rule="rounded-up")
def estimate_floor(text):
    a, other = _split(text)
    return a // 4 + other


@mutant(*E, rule="returns-an-int")
def estimate_float(text):
    a, other = _split(text)
    return a / 4 + other


@mutant(*E, rule="ascii-counted-together")
def estimate_ceiling_per_run(text):
    runs = re.findall(r"[\x00-\x7f]+", text)
    return sum(math.ceil(len(run) / 4) for run in runs) + _split(text)[1]


@mutant(*E, rule="other-one-each")
def estimate_everything_by_four(text):
    return math.ceil(len(text) / 4)


@mutant(*E, rule="ascii-four-to-a-token")
def estimate_one_per_character(text):
    return len(text)


@mutant(*E, rule="returns-an-int")
def estimate_returns_float_of_right_value(text):
    a, other = _split(text)
    return float(math.ceil(a / 4) + other)


# ---- 02 remaining ----------------------------------------------------------------------------
R = ("02-remaining", "remaining")


@mutant(*R, rule="every-field-counts")
def remaining_without_cache(window, read, write, input, max_tokens):
    left = window - input - max_tokens
    return left, left < window / 10


@mutant(*R, rule="below-a-tenth")
def remaining_at_most_a_tenth(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left <= window / 10


@mutant(*R, rule="below-a-tenth")
def remaining_integer_division(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, left < window // 10


@mutant(*R, rule="negative-when-over")
def remaining_never_negative(window, read, write, input, max_tokens):
    left = max(window - (read + write + input) - max_tokens, 0)
    return left, left < window / 10


@mutant(*R, rule="int-and-bool-pair")
def remaining_as_list(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return [left, left < window / 10]


@mutant(*R, rule="int-and-bool-pair")
def remaining_float_left(window, read, write, input, max_tokens):
    left = window * 1.0 - (read + write + input) - max_tokens
    return left, left < window / 10


# ---- 03 recall -------------------------------------------------------------------------------
C = ("03-recall", "recall")


@mutant(*C, rule="x-at-the-token-middle")
def recall_x_without_half(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = pos / n
    return 1 / (1 + (n / half_at) ** steep) * (1 - middle * 4 * x * (1 - x))


@mutant(*C, rule="length-decay")
def recall_precedence_in_base(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (pos + 0.5) / n
    return 1 / (1 + n / half_at ** steep) * (1 - middle * 4 * x * (1 - x))


@mutant(*C, rule="middle-dip")
def recall_precedence_in_position(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (pos + 0.5) / n
    return 1 / (1 + (n / half_at) ** steep) * (1 - middle * 4 * x * 1 - x)


@mutant(*C, rule="middle-dip")
def recall_without_four(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (pos + 0.5) / n
    return 1 / (1 + (n / half_at) ** steep) * (1 - middle * x * (1 - x))


@mutant(*C, rule="middle-dip")
def recall_ignores_position(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    return 1 / (1 + (n / half_at) ** steep)


@mutant(*C, rule="length-decay")
def recall_ignores_steep(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (pos + 0.5) / n
    return 1 / (1 + n / half_at) * (1 - middle * 4 * x * (1 - x))


@mutant(*C, rule="an-unrounded-float")
def recall_rounded(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    x = (pos + 0.5) / n
    return round(1 / (1 + (n / half_at) ** steep) * (1 - middle * 4 * x * (1 - x)), 3)


# ---- 03 fit_position -------------------------------------------------------------------------
F = ("03-recall", "fit_position")


def _fit(positions, accuracy, n_docs, *, shift=-0.5, end_column=True, scale=1.0, ratios=True):
    """A configurable least-squares fit; the defaults are the rules of the exercise."""
    x = (np.asarray(positions, dtype=float) + shift) / n_docs
    columns = [np.ones_like(x), -4 * x * (1 - x)] + ([-x] if end_column else [])
    solution, *_ = np.linalg.lstsq(np.column_stack(columns), scale * np.asarray(accuracy, dtype=float), rcond=None)
    c0, c1, c2 = (list(solution) + [0.0])[:3]
    return (c0, c1 / c0, c2 / c0) if ratios else (c0, c1, c2)


@mutant(*F, rule="x-from-the-position")
def fit_x_without_half(positions, accuracy, n_docs):
    return tuple(float(v) for v in _fit(positions, accuracy, n_docs, shift=0.0))


@mutant(*F, rule="x-from-the-position")
def fit_x_plus_half(positions, accuracy, n_docs):
    return tuple(float(v) for v in _fit(positions, accuracy, n_docs, shift=0.5))


@mutant(*F, rule="three-columns")
def fit_without_end_drop_column(positions, accuracy, n_docs):
    return tuple(float(v) for v in _fit(positions, accuracy, n_docs, end_column=False))


@mutant(*F, rule="accuracy-as-a-fraction")
def fit_percentages(positions, accuracy, n_docs):
    return tuple(float(v) for v in _fit(positions, accuracy, n_docs, scale=100.0))


@mutant(*F, rule="ratios-of-coefficients")
def fit_returns_the_linear_coefficients(positions, accuracy, n_docs):
    return tuple(float(v) for v in _fit(positions, accuracy, n_docs, ratios=False))


@mutant(*F, rule="a-tuple-of-floats")
def fit_returns_a_list(positions, accuracy, n_docs):
    return [float(v) for v in _fit(positions, accuracy, n_docs)]


@mutant(*F, rule="a-tuple-of-floats")
def fit_returns_an_array(positions, accuracy, n_docs):
    return np.array(_fit(positions, accuracy, n_docs))


@mutant(*F, rule="a-tuple-of-floats")
def fit_swaps_middle_and_end_drop(positions, accuracy, n_docs):
    base, middle, end_drop = (float(v) for v in _fit(positions, accuracy, n_docs))
    return base, end_drop, middle


@mutant(*F, rule="inputs-unchanged")
def fit_sorts_the_given_lists(positions, accuracy, n_docs):
    result = tuple(float(v) for v in _fit(positions, accuracy, n_docs))
    if isinstance(accuracy, list):
        accuracy.sort()
    return result


# ---- 04 assemble -----------------------------------------------------------------------------
A = ("04-assembly", "assemble")


def _assemble(items, budget, *, dedup="text", dup_first=True, order="input", stable_first=True,
              key=None, strict=False, stop=False, check_required=True, swap_error=False, remember_seen=False):
    """A configurable assemble; the defaults are the rules of the exercise."""
    items = list(items)
    need = sum(item.tokens for item in items if item.required)
    if check_required and need > budget:
        raise BudgetError(budget, need) if swap_error else BudgetError(need, budget)
    kept = [item.required for item in items]
    texts = [item.text for item in items if item.required] if dedup == "all" else [
        item.text for item in items if item.required and item.text is not None
    ]
    used, dropped = need, []
    optional = [i for i, item in enumerate(items) if not item.required]
    for i in sorted(optional, key=key or (lambda i: -items[i].priority)):
        item = items[i]
        is_dup = dedup != "none" and (item.text in texts) and (dedup == "all" or item.text is not None)
        no_room = used + item.tokens >= budget if strict else used + item.tokens > budget
        if dup_first and is_dup:
            dropped.append((item, "duplicate"))
        elif no_room:
            dropped.append((item, "no room"))
            if remember_seen:
                texts.append(item.text)
            if stop:
                break
        elif is_dup:
            dropped.append((item, "duplicate"))
        else:
            kept[i] = True
            used += item.tokens
            texts.append(item.text)
    chosen = [item for item, keep in zip(items, kept) if keep]
    if order == "priority":
        chosen.sort(key=lambda item: -item.priority)
    if stable_first:
        chosen = [item for item in chosen if item.stable] + [item for item in chosen if not item.stable]
    return Assembly(items=chosen, used=used, dropped=dropped)


@mutant(*A, rule="duplicate-of-a-kept-item-only")
def assemble_text_seen_counts_as_duplicate(items, budget):
    """Remembers every text it looked at, kept or not: a copy of an item with no room becomes a duplicate."""
    return _assemble(items, budget, remember_seen=True)


@mutant(*A, rule="same-text-is-a-duplicate")
def assemble_no_dedup(items, budget):
    return _assemble(items, budget, dedup="none")


@mutant(*A, rule="duplicate-before-no-room")
def assemble_room_before_duplicate(items, budget):
    return _assemble(items, budget, dup_first=False)


@mutant(*A, rule="no-text-no-duplicate")
def assemble_none_texts_are_duplicates(items, budget):
    return _assemble(items, budget, dedup="all")


@mutant(*A, rule="ties-in-input-order")
def assemble_reversed_tie_order(items, budget):
    items = list(items)
    return _assemble(items, budget, key=lambda i: (-items[i].priority, -i))


@mutant(*A, rule="input-order-within-groups")
def assemble_output_by_priority(items, budget):
    return _assemble(items, budget, order="priority")


@mutant(*A, rule="stable-first")
def assemble_stable_not_first(items, budget):
    return _assemble(items, budget, stable_first=False)


@mutant(*A, rule="fit-or-skip")
def assemble_full_budget_counts_as_no_room(items, budget):
    return _assemble(items, budget, strict=True)


@mutant(*A, rule="fit-or-skip")
def assemble_stops_at_first_no_room(items, budget):
    return _assemble(items, budget, stop=True)


@mutant(*A, rule="required-over-budget-raises")
def assemble_never_raises(items, budget):
    return _assemble(items, budget, check_required=False)


@mutant(*A, rule="required-over-budget-raises")
def assemble_budget_error_arguments_swapped(items, budget):
    return _assemble(items, budget, swap_error=True)


@mutant(*A, rule="items-unchanged")
def assemble_sorts_the_input(items, budget):
    if isinstance(items, list):
        items.sort(key=lambda item: -item.priority)
    return _assemble(items, budget)


@mutant(*A, rule="required-texts-count")
def assemble_ignores_required_texts(items, budget):
    optional = [item for item in items if not item.required]
    result = _assemble(optional, budget - sum(i.tokens for i in items if i.required))
    required = [item for item in items if item.required]
    kept = required + list(result.items)
    kept = [item for item in kept if item.stable] + [item for item in kept if not item.stable]
    order = {id(item): k for k, item in enumerate(items)}
    kept.sort(key=lambda item: (not item.stable, order[id(item)]))
    return Assembly(items=kept, used=result.used + sum(i.tokens for i in required), dropped=result.dropped)


@mutant(*A, rule="required-never-duplicates")
def assemble_required_items_deduplicated(items, budget):
    """Drops a required item whose text an earlier required item has: required items are never duplicates."""
    seen, rest, copies = set(), [], []
    for item in items:
        if item.required and item.text is not None and item.text in seen:
            copies.append((item, "duplicate"))
            continue
        if item.required and item.text is not None:
            seen.add(item.text)
        rest.append(item)
    result = _assemble(rest, budget)
    return Assembly(items=result.items, used=result.used, dropped=list(result.dropped) + copies)


@mutant(*A, rule="by-priority")
def assemble_in_input_order(items, budget):
    """Tries the optional items in input order, ignoring their priority."""
    return _assemble(items, budget, key=lambda i: i)


@mutant(*A, rule="returns-an-assembly")
def assemble_returns_a_tuple(items, budget):
    result = _assemble(items, budget)
    return result.items, result.used, result.dropped


# ---- 05 trim_lines ---------------------------------------------------------------------------
T = ("05-trim-lines", "trim_lines")


@mutant(*T, rule="head-marker-tail")
def trim_negative_tail_slice(lines, head, tail):
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[-tail:]


@mutant(*T, rule="fits-as-a-new-list")
def trim_returns_the_input_object(lines, head, tail):
    if len(lines) <= head + tail:
        return lines
    lines = list(lines)
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail:]


@mutant(*T, rule="lines-unchanged")
def trim_mutates_the_input(lines, head, tail):
    if len(lines) <= head + tail:
        return list(lines)
    if isinstance(lines, list):
        lines[head:len(lines) - tail] = [omission_marker(len(lines) - head - tail)]
        return list(lines)
    lines = list(lines)
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail:]


@mutant(*T, rule="always-a-list")
def trim_rejects_tuples(lines, head, tail):
    if len(lines) <= head + tail:
        return lines[:]
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail:]


@mutant(*T, rule="always-a-list")
def trim_returns_a_tuple_for_a_tuple(lines, head, tail):
    if len(lines) <= head + tail:
        return lines[:]
    kind = type(lines)
    return lines[:head] + kind([omission_marker(len(lines) - head - tail)]) + lines[len(lines) - tail:]


@mutant(*T, rule="omitted-count")
def trim_omitted_off_by_one(lines, head, tail):
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [omission_marker(len(lines) - head - tail + 1)] + lines[len(lines) - tail:]


@mutant(*T, rule="fits-as-a-new-list")
def trim_marks_zero_omitted(lines, head, tail):
    lines = list(lines)
    if len(lines) < head + tail:
        return lines
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail:]


@mutant(*T, rule="marker-text")
def trim_own_marker_text(lines, head, tail):
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [f"……省略 {len(lines) - head - tail} 行……"] + lines[len(lines) - tail:]


@mutant(*T, rule="head-marker-tail")
def trim_tail_one_too_many(lines, head, tail):
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [omission_marker(len(lines) - head - tail)] + lines[len(lines) - tail - 1:]


# ---- 06 select_to_clear ----------------------------------------------------------------------
S = ("06-strategies", "select_to_clear")


def _select(context_tokens, uncleared_turns, turn, params, *, at_threshold=False, strictly_older=False,
            enough=lambda freed, need: freed >= need, each=None, shape=list):
    over = context_tokens >= params.threshold if at_threshold else context_tokens > params.threshold
    if not over:
        return shape([])
    limit = turn - params.keep
    candidates = [t for t in uncleared_turns if (t < limit if strictly_older else t <= limit)]
    per = params.tool_result - params.placeholder if each is None else each(params)
    if not candidates or not enough(len(candidates) * per, params.clear_at_least):
        return shape([])
    return shape(candidates)


@mutant(*S, rule="older-than-the-newest-keep")
def select_slices_off_the_newest_keep(c, u, t, p):
    """Drops the newest keep entries with [:-keep]: for keep = 0 that slice is empty, so nothing is cleared."""
    if c <= p.threshold:
        return []
    candidates = list(u)[:-p.keep]
    if not candidates or len(candidates) * (p.tool_result - p.placeholder) < p.clear_at_least:
        return []
    return candidates


@mutant(*S, rule="not-over-the-threshold")
def select_at_threshold_counts_as_over(c, u, t, p):
    return _select(c, u, t, p, at_threshold=True)


@mutant(*S, rule="older-than-the-newest-keep")
def select_keeps_one_too_many(c, u, t, p):
    return _select(c, u, t, p, strictly_older=True)


@mutant(*S, rule="enough-to-free")
def select_needs_more_than_clear_at_least(c, u, t, p):
    return _select(c, u, t, p, enough=lambda freed, need: freed > need)


@mutant(*S, rule="enough-to-free")
def select_ignores_clear_at_least(c, u, t, p):
    return _select(c, u, t, p, enough=lambda freed, need: True)


@mutant(*S, rule="freed-per-turn")
def select_ignores_placeholder(c, u, t, p):
    return _select(c, u, t, p, each=lambda params: params.tool_result)


@mutant(*S, rule="oldest-first-as-a-list")
def select_newest_first(c, u, t, p):
    return _select(c, u, t, p, shape=lambda turns: list(reversed(turns)))


@mutant(*S, rule="oldest-first-as-a-list")
def select_returns_a_tuple(c, u, t, p):
    return _select(c, u, t, p, shape=tuple)


@mutant(*S, rule="oldest-first-as-a-list")
def select_empties_the_given_list(c, u, t, p):
    chosen = _select(c, u, t, p)
    if isinstance(u, list):
        for turn in chosen:
            u.remove(turn)
    return chosen


# ---- 06 request_cost -------------------------------------------------------------------------
Q = ("06-strategies", "request_cost")


@mutant(*Q, rule="prices-from-params")
def cost_hard_coded_prices(input_tokens, previous_input, rewrote, params):
    if previous_input is None or rewrote:
        return 1.25 * input_tokens
    return 0.1 * previous_input + 1.25 * (input_tokens - previous_input)


@mutant(*Q, rule="first-or-rewrite-writes-all")
def cost_ignores_rewrite(input_tokens, previous_input, rewrote, params):
    if previous_input is None:
        return params.cache_write * input_tokens
    return params.cache_read * previous_input + params.cache_write * (input_tokens - previous_input)


@mutant(*Q, rule="read-previous-write-new")
def cost_reads_whole_input(input_tokens, previous_input, rewrote, params):
    if previous_input is None or rewrote:
        return params.cache_write * input_tokens
    return params.cache_read * input_tokens + params.cache_write * (input_tokens - previous_input)


@mutant(*Q, rule="first-or-rewrite-writes-all")
def cost_first_request_read(input_tokens, previous_input, rewrote, params):
    if previous_input is None:
        return params.cache_read * input_tokens
    if rewrote:
        return params.cache_write * input_tokens
    return params.cache_read * previous_input + params.cache_write * (input_tokens - previous_input)


@mutant(*Q, rule="read-previous-write-new")
def cost_prices_swapped(input_tokens, previous_input, rewrote, params):
    if previous_input is None or rewrote:
        return params.cache_write * input_tokens
    return params.cache_write * previous_input + params.cache_read * (input_tokens - previous_input)


# ---- 07 render -------------------------------------------------------------------------------
P = ("07-render", "render")
VARIABLE = re.compile(r"\{\{\s*\w+\s*\}\}")


def _render(spec, *, trailing="", start=1, sort=True, example_vars=True, blank_output="strip",
            every_prohibition=False, one_rule_warning=False, empty_rules=True, warnings_type=list,
            scan_dynamic=False, variable=VARIABLE, empty_output_line=True, per_variable=False,
            prohibition=lambda rule: rule.startswith("不要")):
    lines = [f"<role>{spec.role}</role>", f"<task>{spec.task}</task>"]
    if spec.rules or empty_rules:
        lines += ["<rules>"] + [f"- {rule}" for rule in spec.rules] + ["</rules>"]
    lines += [f'<example index="{k}">{e}</example>' for k, e in enumerate(spec.examples, start=start)]
    if spec.output or empty_output_line:
        lines.append(f"<output_format>{spec.output}</output_format>")
    keys = sorted(spec.dynamic) if sort else list(spec.dynamic)
    lines += ["<context>"] + [f"{key}: {spec.dynamic[key]}" for key in keys] + ["</context>"]
    stable = [spec.role, spec.task, *spec.rules, *(spec.examples if example_vars else ()), spec.output]
    if scan_dynamic:
        stable += list(spec.dynamic.values())
    if per_variable:
        warnings = [f"模板变量：{found}" for part in stable for found in variable.findall(part)]
    else:
        warnings = [f"模板变量：{part}" for part in stable if variable.search(part)]
    empty = not spec.output.strip() if blank_output == "strip" else spec.output == ""
    if empty:
        warnings.append("没有输出格式")
    bad = [r for r in spec.rules
           if prohibition(r) and (every_prohibition or ("而是" not in r and "改为" not in r))]
    warnings += ["只说了不要"] if (one_rule_warning and bad) else [f"只说了不要：{r}" for r in bad]
    return "\n".join(lines) + trailing, warnings_type(warnings)


@mutant(*P, rule="no-trailing-newline")
def render_trailing_newline(spec):
    return _render(spec, trailing="\n")


@mutant(*P, rule="examples-from-one")
def render_examples_from_zero(spec):
    return _render(spec, start=0)


@mutant(*P, rule="dynamic-sorted")
def render_dynamic_unsorted(spec):
    return _render(spec, sort=False)


@mutant(*P, rule="one-warning-per-field")
def render_examples_not_scanned(spec):
    return _render(spec, example_vars=False)


@mutant(*P, rule="blank-output")
def render_blank_output_not_warned(spec):
    return _render(spec, blank_output="exact")


@mutant(*P, rule="an-alternative-excuses")
def render_warns_every_prohibition(spec):
    return _render(spec, every_prohibition=True)


@mutant(*P, rule="one-warning-per-rule")
def render_one_warning_for_all_rules(spec):
    return _render(spec, one_rule_warning=True)


@mutant(*P, rule="empty-sections")
def render_drops_empty_rules(spec):
    return _render(spec, empty_rules=False)


@mutant(*P, rule="a-list-of-warnings")
def render_warnings_as_tuple(spec):
    return _render(spec, warnings_type=tuple)


@mutant(*P, rule="dynamic-not-checked")
def render_scans_dynamic(spec):
    return _render(spec, scan_dynamic=True)


@mutant(*P, rule="spaces-inside-braces")
def render_variables_without_spaces(spec):
    return _render(spec, variable=re.compile(r"\{\{\w+\}\}"))


@mutant(*P, rule="empty-sections")
def render_drops_empty_output_line(spec):
    return _render(spec, empty_output_line=False)


@mutant(*P, rule="one-warning-per-field")
def render_one_warning_per_variable(spec):
    return _render(spec, per_variable=True)


@mutant(*P, rule="starts-with-buyao")
def render_prohibition_anywhere_in_the_rule(spec):
    return _render(spec, prohibition=lambda rule: "不要" in rule)


# ---- 08 diff ---------------------------------------------------------------------------------
D = ("08-eval-diff", "diff")


@mutant(*D, rule="in-the-order-of-cases")
def diff_in_result_order(cases, base, next):
    wanted = {case.id for case in cases}
    ids = [key for key in base.passed if key in wanted]
    return ([i for i in ids if not base.passed[i] and next.passed[i]],
            [i for i in ids if base.passed[i] and not next.passed[i]])


@mutant(*D, rule="fixed-and-broke")
def diff_swapped(cases, base, next):
    ids = [case.id for case in cases]
    return ([i for i in ids if base.passed[i] and not next.passed[i]],
            [i for i in ids if not base.passed[i] and next.passed[i]])


@mutant(*D, rule="ids-outside-cases-ignored")
def diff_includes_ids_outside_cases(cases, base, next):
    ids = [case.id for case in cases] + [key for key in next.passed if key not in {c.id for c in cases}]
    return ([i for i in ids if not base.passed.get(i) and next.passed[i]],
            [i for i in ids if base.passed.get(i) and not next.passed[i]])


@mutant(*D, rule="two-lists")
def diff_returns_tuples(cases, base, next):
    ids = [case.id for case in cases]
    return (tuple(i for i in ids if not base.passed[i] and next.passed[i]),
            tuple(i for i in ids if base.passed[i] and not next.passed[i]))


@mutant(*D, rule="in-the-order-of-cases")
def diff_sorted_by_id(cases, base, next):
    ids = sorted(case.id for case in cases)
    return ([i for i in ids if not base.passed[i] and next.passed[i]],
            [i for i in ids if base.passed[i] and not next.passed[i]])


@mutant(*D, rule="unchanged-in-neither")
def diff_reads_only_next(cases, base, next):
    """Lists every case that passes in next as fixed and every one that fails as broke."""
    ids = [case.id for case in cases]
    return [i for i in ids if next.passed[i]], [i for i in ids if not next.passed[i]]


# ---- 09 zone ---------------------------------------------------------------------------------
Z = ("09-context-ledger", "zone")


def _zone(used, limit, *, share=None, safe_below=True, caution_upto=True, danger_upto=True, check_limit=True,
          check_used=True, message=True, as_text=False):
    if check_limit and limit <= 0:
        raise ValueError(f"limit must be > 0 (got {limit!r})" if message else "bad input")
    if check_used and used < 0:
        raise ValueError(f"used must be >= 0 (got {used!r})" if message else "bad input")
    pct = share(used, limit) if share else None
    def below(k, inclusive):
        if pct is not None:
            return pct <= k if inclusive else pct < k
        return used * 100 <= k * limit if inclusive else used * 100 < k * limit
    result = (Zone.SAFE if below(60, not safe_below) else Zone.CAUTION if below(85, caution_upto)
              else Zone.DANGER if below(100, danger_upto) else Zone.OVER)
    return result.value if as_text else result


@mutant(*Z, rule="integers-only")
def zone_float_division(used, limit):
    return _zone(used, limit, share=lambda u, n: u / n * 100)


@mutant(*Z, rule="safe-below-60")
def zone_rounded_percent(used, limit):
    return _zone(used, limit, share=lambda u, n: round(u * 100 / n))


@mutant(*Z, rule="over-above-100")
def zone_never_over(used, limit):
    """Calls everything above 85 % danger: there is no over."""
    found = _zone(used, limit)
    return Zone.DANGER if found is Zone.OVER else found


@mutant(*Z, rule="caution-60-to-85")
def zone_sixty_is_safe(used, limit):
    return _zone(used, limit, safe_below=False)


@mutant(*Z, rule="caution-60-to-85")
def zone_eighty_five_is_danger(used, limit):
    return _zone(used, limit, caution_upto=False)


@mutant(*Z, rule="danger-up-to-100")
def zone_full_is_over(used, limit):
    return _zone(used, limit, danger_upto=False)


@mutant(*Z, rule="bad-arguments-raise")
def zone_accepts_zero_limit(used, limit):
    return Zone.OVER if limit <= 0 else _zone(used, limit)


@mutant(*Z, rule="bad-arguments-raise")
def zone_accepts_negative_use(used, limit):
    return _zone(used, limit, check_used=False)


@mutant(*Z, rule="bad-arguments-raise")
def zone_error_without_names(used, limit):
    return _zone(used, limit, message=False)


@mutant(*Z, rule="a-zone-member")
def zone_returns_text(used, limit):
    return _zone(used, limit, as_text=True)


# ---- 09 measure ------------------------------------------------------------------------------
M = ("09-context-ledger", "measure")


def _measure(buckets, tokenizer, limit, *, check=True, name_it=True, all_buckets=True, order=BUCKETS):
    if check:
        for key in buckets:
            if key not in BUCKETS:
                raise ValueError(f"unknown bucket {key!r}" if name_it else "unknown bucket")
    names = order if all_buckets else [b for b in BUCKETS if b in buckets]
    tokens = {b: tokenizer.count(buckets[b]) if b in buckets else 0 for b in names}
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


@mutant(*M, rule="each-bucket-counted")
def measure_counts_joined_text(buckets, tokenizer, limit):
    entry = _measure(buckets, tokenizer, limit)
    total = tokenizer.count("".join(buckets.values()))
    return LedgerEntry(tokens=entry.tokens, total=total, zone=zone(total, limit), limit=limit)


@mutant(*M, rule="missing-bucket-is-zero")
def measure_leaves_out_missing_buckets(buckets, tokenizer, limit):
    return _measure(buckets, tokenizer, limit, all_buckets=False)


@mutant(*M, rule="unknown-bucket-raises")
def measure_ignores_unknown_buckets(buckets, tokenizer, limit):
    return _measure({k: v for k, v in buckets.items() if k in BUCKETS}, tokenizer, limit, check=False)


@mutant(*M, rule="unknown-bucket-raises")
def measure_error_without_the_name(buckets, tokenizer, limit):
    return _measure(buckets, tokenizer, limit, name_it=False)


@mutant(*M, rule="buckets-unchanged")
def measure_fills_in_empty_buckets(buckets, tokenizer, limit):
    entry = _measure(buckets, tokenizer, limit)
    for name in BUCKETS:
        buckets.setdefault(name, "")
    return entry


@mutant(*M, rule="four-buckets-in-order")
def measure_buckets_in_given_order(buckets, tokenizer, limit):
    order = list(buckets) + [b for b in BUCKETS if b not in buckets]
    return _measure(buckets, tokenizer, limit, order=order)


@mutant(*M, rule="the-given-tokenizer")
def measure_always_fake_tokenizer(buckets, tokenizer, limit):
    return _measure(buckets, FakeTokenizer(), limit)


@mutant(*M, rule="zone-of-the-total")
def measure_fixed_limit(buckets, tokenizer, limit):
    entry = _measure(buckets, tokenizer, limit)
    return LedgerEntry(tokens=entry.tokens, total=entry.total, zone=zone(entry.total, 8_000), limit=8_000)


# ---- 09 fit_rates ----------------------------------------------------------------------------
F = ("09-context-ledger", "fit_rates")


def _features(receipts, ascii_of=lambda ch: ord(ch) < 128):
    rows = [[sum(1 for ch in r.text if ascii_of(ch)), sum(1 for ch in r.text if not ascii_of(ch))] for r in receipts]
    return np.array(rows, dtype=float).reshape(-1, 2), np.array([r.prompt_tokens for r in receipts], dtype=float)


def _fit(receipts, *, ascii_of=lambda ch: ord(ch) < 128, check=True, name_it=True):
    x, y = _features(receipts, ascii_of)
    if check and (len(y) == 0 or np.linalg.matrix_rank(x) < 2):
        raise ValueError("receipts cannot tell the rates apart" if name_it else "cannot fit")
    (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(a), float(b)


@mutant(*F, rule="no-intercept")
def fit_rates_with_an_intercept(receipts):
    x, y = _features(receipts)
    if len(y) == 0 or np.linalg.matrix_rank(x) < 2:
        raise ValueError("receipts cannot tell the rates apart")
    (a, b, _), *_ = np.linalg.lstsq(np.column_stack([x, np.ones(len(y))]), y, rcond=None)
    return float(a), float(b)


@mutant(*F, rule="least-squares")
def fit_rates_ratio_of_sums_per_script(receipts):
    x, y = _features(receipts)
    if len(y) == 0 or np.linalg.matrix_rank(x) < 2:
        raise ValueError("receipts cannot tell the rates apart")
    ascii_only, other_only = x[:, 1] == 0, x[:, 0] == 0  # mixed receipts are ignored
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(y[ascii_only].sum() / x[ascii_only, 0].sum()), float(y[other_only].sum() / x[other_only, 1].sum())


@mutant(*F, rule="a-pair-of-floats")
def fit_rates_swapped(receipts):
    a, b = _fit(receipts)
    return b, a


@mutant(*F, rule="a-pair-of-floats")
def fit_rates_returns_a_list(receipts):
    return list(_fit(receipts))


@mutant(*F, rule="ascii-below-128")
def fit_rates_counts_letters_only_as_ascii(receipts):
    return _fit(receipts, ascii_of=lambda ch: ch.isascii() and ch.isalpha())


@mutant(*F, rule="ascii-below-128")
def fit_rates_counts_utf8_bytes(receipts):
    rows = [[sum(1 for ch in r.text if ord(ch) < 128), sum(len(ch.encode()) for ch in r.text if ord(ch) >= 128)]
            for r in receipts]
    x = np.array(rows, dtype=float).reshape(-1, 2)
    y = np.array([r.prompt_tokens for r in receipts], dtype=float)
    if len(y) == 0 or np.linalg.matrix_rank(x) < 2:
        raise ValueError("receipts cannot tell the rates apart")
    (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(a), float(b)


@mutant(*F, rule="least-squares")
def fit_rates_characters_per_token(receipts):
    x, y = _features(receipts)
    if len(y) == 0 or np.linalg.matrix_rank(x) < 2:
        raise ValueError("receipts cannot tell the rates apart")
    (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
    with np.errstate(divide="ignore"):  # a rate of 0 (a generated case) gives inf, not a warning
        return float(1 / a), float(1 / b)


@mutant(*F, rule="receipts-unchanged")
def fit_rates_sorts_the_receipts(receipts):
    if isinstance(receipts, list):
        receipts.sort(key=lambda r: -r.prompt_tokens)
    return _fit(receipts)


@mutant(*F, rule="underdetermined-raises")
def fit_rates_without_the_rank_check(receipts):
    x, y = _features(receipts)
    (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(a), float(b)


@mutant(*F, rule="underdetermined-raises")
def fit_rates_error_without_names(receipts):
    return _fit(receipts, name_it=False)


@mutant(*F, rule="least-squares")
def fit_rates_rounds_to_two_decimals(receipts):
    a, b = _fit(receipts)
    return round(a, 2), round(b, 2)


# ---- 10 write_progress -----------------------------------------------------------------------
WP = ("10-sessions", "write_progress")
PRIORITY = ("next", "failed", "decision", "done")


def _write(records, budget, *, order=PRIORITY, newest_first=True, nexts="newest", skip=True, header=0,
           exact_fits=True, input_order=True, tie=1):
    records = list(records)
    next_at = [i for i, r in enumerate(records) if r.kind == "next"]
    if nexts == "newest":
        kept_next = {max(next_at, key=lambda i: (records[i].turn, -i))} if next_at else set()
    elif nexts == "newest, later on a tie":
        kept_next = {max(next_at, key=lambda i: (records[i].turn, i))} if next_at else set()
    elif nexts == "last":
        kept_next = set(next_at[-1:])
    else:
        kept_next = set(next_at)
    candidates = [i for i, r in enumerate(records) if r.kind != "next" or i in kept_next]
    sign = -1 if newest_first else 1
    candidates.sort(key=lambda i: (order.index(records[i].kind), sign * records[i].turn, tie * i))
    left, kept = budget - header, []
    for i in candidates:
        cost = record_tokens(records[i])
        if cost < left or (exact_fits and cost == left):
            kept.append(i)
            left -= cost
        elif not skip:
            break
    if input_order:
        kept.sort()
    return [records[i] for i in kept]


@mutant(*WP, rule="kind-priority")
def write_done_before_failed(records, budget):
    return _write(records, budget, order=("next", "done", "decision", "failed"))


@mutant(*WP, rule="kind-priority")
def write_decision_before_failed(records, budget):
    return _write(records, budget, order=("next", "decision", "failed", "done"))


@mutant(*WP, rule="skip-what-does-not-fit")
def write_stops_at_first_misfit(records, budget):
    return _write(records, budget, skip=False)


@mutant(*WP, rule="newest-next-only")
def write_keeps_every_next(records, budget):
    return _write(records, budget, nexts="all")


@mutant(*WP, rule="newest-next-only")
def write_keeps_last_next_in_list(records, budget):
    return _write(records, budget, nexts="last")


@mutant(*WP, rule="first-next-on-a-tie")
def write_keeps_the_later_next_on_a_tie(records, budget):
    return _write(records, budget, nexts="newest, later on a tie")


@mutant(*WP, rule="first-on-a-tie-within-a-kind")
def write_later_first_on_a_tie(records, budget):
    return _write(records, budget, tie=-1)


@mutant(*WP, rule="input-order-in-a-new-list")
def write_in_priority_order(records, budget):
    return _write(records, budget, input_order=False)


@mutant(*WP, rule="newest-first-within-a-kind")
def write_oldest_first_within_kind(records, budget):
    return _write(records, budget, newest_first=False)


@mutant(*WP, rule="header-not-counted")
def write_counts_the_header(records, budget):
    return _write(records, budget, header=3)  # "# progress": 10 ASCII characters, 3 tokens


@mutant(*WP, rule="an-exact-fit-goes-in")
def write_exact_fit_left_out(records, budget):
    return _write(records, budget, exact_fits=False)


@mutant(*WP, rule="input-order-in-a-new-list")
def write_returns_the_input_when_all_fit(records, budget):
    if sum(record_tokens(r) for r in records) <= budget:
        return records
    return _write(records, budget)


@mutant(*WP, rule="records-unchanged")
def write_sorts_the_input(records, budget):
    records.sort(key=lambda r: PRIORITY.index(r.kind))
    return _write(records, budget)


# ---- 10 restore ------------------------------------------------------------------------------
RS = ("10-sessions", "restore")
LINE = r"^\[(next|failed|decision|done)\] t(\d+): (.+)$"


def _restore(text, *, skip_blank=True, comments=True, strip=True, pattern=LINE, bad="raise", reverse=False,
             container=list, flags=0):
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip() if strip else line
        if skip_blank and not stripped.strip():
            continue
        if (stripped.startswith("#") if comments else stripped == "# progress"):
            continue
        match = re.match(pattern, stripped, flags)
        if match is None:
            if bad == "skip":
                continue
            raise ValueError(f"第 {number} 行不是一条记录：{line!r}" if bad == "raise" else "格式不对")
        records.append(Record(match.group(1), int(match.group(2)), match.group(3)))
    return container(reversed(records)) if reverse else container(records)


@mutant(*RS, rule="kinds-case-sensitive")
def restore_kind_in_any_case(text):
    """Accepts [Done] and [NEXT] as kinds: the kinds are lower case."""
    return _restore(text, flags=re.IGNORECASE)


@mutant(*RS, rule="blank-and-comment-lines-skipped")
def restore_blank_lines_not_skipped(text):
    return _restore(text, skip_blank=False)


@mutant(*RS, rule="bad-line-raises")
def restore_skips_malformed_lines(text):
    return _restore(text, bad="skip")


@mutant(*RS, rule="blank-and-comment-lines-skipped")
def restore_only_skips_the_header(text):
    return _restore(text, comments=False)


@mutant(*RS, rule="stripped-first")
def restore_without_strip(text):
    return _restore(text, strip=False)


@mutant(*RS, rule="record-format")
def restore_text_stops_at_a_colon(text):
    return _restore(text, pattern=r"^\[(next|failed|decision|done)\] t(\d+): ([^:]+)$")


@mutant(*RS, rule="bad-line-raises")
def restore_error_without_the_line(text):
    return _restore(text, bad="vague")


@mutant(*RS, rule="a-list-in-file-order")
def restore_newest_line_first(text):
    return _restore(text, reverse=True)


@mutant(*RS, rule="a-list-in-file-order")
def restore_returns_a_tuple(text):
    return _restore(text, container=tuple)
# ---- 11 capstone: context_policy, beat_clear_notes, beat_compact -----------------------------
# The learner writes one policy, my_policy; three check cells run it.
CP = ("11-capstone", "context_policy")
BN = ("11-capstone", "beat_clear_notes")
BC = ("11-capstone", "beat_compact")


def _policy(view, *, keep=2, trigger=None, drop_unneeded=True, compact=True, clear_needed=False, notes=True):
    """A configurable policy; the defaults are the model answer (clear what is not needed, compact to 2).

    ``trigger(view)`` says when to act (default: over the threshold); ``clear_needed`` clears
    the needed results too (with notes if ``notes``) instead of compacting.
    """
    over = view.tokens > view.threshold if trigger is None else trigger(view)
    if not over:
        return None
    old = [r for r in view.records if r.turn <= view.turn - keep and not r.cleared and not r.protected]
    actions = []
    scratch = [r.turn for r in old if not r.needed] if drop_unneeded else []
    needed = [r.turn for r in old if r.needed] if clear_needed else []
    if scratch or needed:
        actions.append(Clear(scratch + needed, notes=needed if notes else ()))
    if compact and view.turn - keep > view.summary_upto:
        actions.append(Compact(keep))
    return actions or None


def never_manage(view):
    return None


def clear_everything_without_notes(view):
    return _policy(view, clear_needed=True, notes=False, compact=False)


def compact_every_fact(view):
    return _policy(view, drop_unneeded=False)


def compact_every_fact_keep_5(view):
    return _policy(view, keep=5, drop_unneeded=False)


def returns_the_action_name(view):
    return "compact" if view.tokens > view.threshold else None


def clears_the_same_turns_again(view):
    if view.tokens <= view.threshold:
        return None
    return Clear([r.turn for r in view.records if r.turn <= view.turn - 2])


def clear_notes_every_turn(view):
    return _policy(view, keep=5, trigger=lambda v: True, clear_needed=True, compact=False)


def compact_every_turn(view):
    return _policy(view, trigger=lambda v: True)


def own_clear_notes(view):
    """clear_notes written out: over the threshold, clear everything but 5 turns, every fact noted."""
    if view.tokens <= view.threshold:
        return None
    old = [r.turn for r in view.records if r.turn <= view.turn - 5 and not r.cleared and not r.protected]
    return Clear(old, notes=old) if old else None


def keep_eight(view):
    return _policy(view, keep=8)


def wait_for_the_window(view):
    return _policy(view, keep=5, trigger=lambda v: v.tokens > v.window)


# (policy, rule it breaks) for each check cell
for _func, _rule in ((never_manage, "never-overflows"), (clear_everything_without_notes, "no-asked-fact-lost"),
                     (compact_every_fact, "no-asked-fact-lost"), (compact_every_fact_keep_5, "no-asked-fact-lost"),
                     (returns_the_action_name, "actions-it-can-take"),
                     (clears_the_same_turns_again, "actions-it-can-take")):
    mutant(*CP, rule=_rule)(_func)
for _func in (never_manage, clear_everything_without_notes, compact_every_fact, clear_notes_every_turn,
              own_clear_notes):
    mutant(*BN, rule="safe-and-cheaper-than-clear-notes")(_func)
for _func in (never_manage, compact_every_fact_keep_5, clear_notes_every_turn, compact_every_turn, own_clear_notes,
              keep_eight, wait_for_the_window):
    mutant(*BC, rule="safe-and-cheaper-than-compact")(_func)

# Where each exercise is checked, when its check cell or the learner's name differs from check_<name>, <name>.
CELLS = {
    "context_policy": ("check_my_policy", "my_policy"),
    "beat_clear_notes": ("check_beat_clear_notes", "my_policy"),
    "beat_compact": ("check_beat_compact", "my_policy"),
}


def _cell(name):
    """Return (grade_id of the check cell, name the notebook gives the learner's function)."""
    return CELLS.get(name, (f"check_{name}", name))


ALL = [(folder, name, func) for (folder, name), funcs in MUTANTS.items() for func in funcs]


def _visible_fails(name, func, edition: str = "zh_CN") -> bool:
    with contextlib.redirect_stdout(io.StringIO()), using(edition):
        try:
            check_exercise(name, func)
        except CheckFailed:
            return True
    return False


def _hidden_fails(folder, name, func, edition: str = "zh_CN") -> bool:
    gid, bound = _cell(name)
    visible, hidden = check_parts(check_cell(folder, gid))
    namespace = prefix_namespace(folder, gid, edition)
    with contextlib.redirect_stdout(io.StringIO()), using(edition):
        exec(visible, namespace)  # with the model answer: defines what the hidden tests use
        namespace[bound] = func
        try:
            exec(hidden, namespace)
        except Exception:
            return True
    return False


@pytest.mark.parametrize("folder, name, func", ALL, ids=[f.__name__ for _, _, f in ALL])
def test_mutant_fails_visible_check(folder, name, func):
    """The wrong implementation gets at least one × line from the visible check."""
    assert _visible_fails(name, func)


@pytest.mark.parametrize("folder, name, func", ALL, ids=[f.__name__ for _, _, f in ALL])
def test_mutant_fails_hidden_tests(folder, name, func):
    """The wrong implementation also fails the hidden tests of the notebook's check cell."""
    assert _hidden_fails(folder, name, func)


@pytest.mark.heavy
@pytest.mark.parametrize("folder, name", sorted(MUTANTS))
def test_every_mutant_gets_the_same_verdicts_in_english(folder, name):
    """In the English edition (its cells before the check, messages in English) each hand-written mutant
    fails exactly what it fails in the Chinese one, visible check and hidden tests, and the model passes both."""
    verdicts = {}
    for edition in ("zh_CN", "en"):
        verdicts[edition] = [(f.__name__, _visible_fails(name, f, edition), _hidden_fails(folder, name, f, edition))
                             for f in MUTANTS[folder, name]]
    assert verdicts["en"] == verdicts["zh_CN"]
    gid, bound = _cell(name)
    model = prefix_namespace(folder, gid, "en")[bound]
    assert not _visible_fails(name, model, "en") and not _hidden_fails(folder, name, model, "en")


def test_every_exercise_has_mutants():
    """Every exercise the checker knows has at least five wrong implementations here."""
    assert {name for _, name in MUTANTS} == set(EXERCISES)
    assert all(len(funcs) >= 5 for funcs in MUTANTS.values())


# ---- every mutant breaks a stated rule, and fails a visible case of that rule ---------------------


def _failed_labels(name, func) -> set[str]:
    """Return the labels of the visible cases of exercise ``name`` that ``func`` fails."""
    func = ADAPTERS[name](func) if name in ADAPTERS else func
    with contextlib.redirect_stdout(io.StringIO()):
        outcomes = run_cases(func, EXERCISES[name])
    return {case.label for case, outcome in zip(EXERCISES[name], outcomes) if not outcome.passed}


@pytest.mark.parametrize("folder, name, func", ALL, ids=[f.__name__ for _, _, f in ALL])
def test_mutant_fails_a_visible_case_of_its_rule(folder, name, func):
    """The mutant breaks a rule the exercise states, and a visible case of THAT rule shows it (not only another one)."""
    rules = {rule.name: rule for rule in RULES[name]}
    rule = BREAKS[folder, name, func.__name__]
    assert rule in rules, f"{func.__name__}: {name} has no rule {rule!r}"
    assert _failed_labels(name, func) & set(rules[rule].visible)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_has_a_mutant(name):
    """Every rule of every exercise is broken by at least one mutant here."""
    broken = {rule for (_, exercise, _), rule in BREAKS.items() if exercise == name}
    assert [rule.name for rule in RULES[name] if rule.name not in broken] == []


@pytest.mark.parametrize("folder, name", sorted(MUTANTS))
def test_model_answer_passes_visible_and_hidden(folder, name):
    """The notebook's own answer passes both, so a failing mutant fails for its mistake alone."""
    gid, bound = _cell(name)
    answer = prefix_namespace(folder, gid)[bound]
    assert not _visible_fails(name, answer)
    assert not _hidden_fails(folder, name, answer)


# ---- every exercise: one-token edits of the model answer --------------------------------------
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
         ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult}
_EDITS = ("flip", "plus one", "minus one", "and/or", "arithmetic", "drop not")


def _sites(tree):
    """Return (edit, node, index) for every place of the tree one of _EDITS applies to, in walk order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found += [("flip", node, k) for k, op in enumerate(node.ops) if type(op) in _FLIP]
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            found += [("plus one", node, None), ("minus one", node, None)]
        elif isinstance(node, ast.BoolOp):
            found.append(("and/or", node, None))
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            found.append(("arithmetic", node, None))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.append(("drop not", node, None))
    return found


class _DropNot(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        return node.operand if node is self.target else self.generic_visit(node)


def _one_token_edits(text):
    """Yield (label, source) for every one-token edit of the source text."""
    for i in range(len(_sites(ast.parse(text)))):
        tree = ast.parse(text)
        edit, node, k = _sites(tree)[i]
        if edit == "flip":
            node.ops[k] = _FLIP[type(node.ops[k])]()
        elif edit in ("plus one", "minus one"):
            node.value += 1 if edit == "plus one" else -1
        elif edit == "and/or":
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif edit == "arithmetic":
            node.op = _ARITHMETIC[type(node.op)]()
        else:
            tree = _DropNot(node).visit(tree)
        yield f"{edit} at line {node.lineno}", ast.unparse(ast.fix_missing_locations(tree))


def _model_answer(folder, bound):
    """Return the model answer's cell source without the nbgrader solution markers."""
    (cell,) = [c for c in cells(folder) if grade_id(c) == bound]
    return "\n".join(line for line in source(cell).split("\n") if "### " not in line)


@pytest.mark.heavy
@pytest.mark.parametrize("folder, name", sorted(MUTANTS))
def test_no_one_token_edit_fails_only_the_hidden_tests(folder, name):
    """Every one-token edit of the model answer that fails the hidden tests also fails the visible check."""
    gid, bound = _cell(name)
    gaps, caught = [], 0
    for label, text in _one_token_edits(_model_answer(folder, bound)):
        namespace = dict(prefix_namespace(folder, gid))
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(text, namespace)
        except Exception:  # the edit breaks the definition itself: nothing to grade
            continue
        edited = namespace[bound]
        if _hidden_fails(folder, name, edited):
            caught += 1
            if not _visible_fails(name, edited):
                gaps.append(label)
    assert gaps == [], f"{name}: edits that pass every visible case but fail the hidden tests: {gaps}"
    assert caught > 0


def test_a_gap_is_found_when_there_is_one():
    """The edit `used < 0` → `used <= 0` of zone fails the hidden 0 / 1 case and the visible 0 / 8,000 case."""
    text = _model_answer("09-context-ledger", "zone")
    edited_text = dict(_one_token_edits(text))
    label = next(label for label, t in edited_text.items() if "used <= 0" in t)
    namespace = dict(prefix_namespace("09-context-ledger", "check_zone"))
    exec(edited_text[label], namespace)
    assert _hidden_fails("09-context-ledger", "zone", namespace["zone"])
    assert _visible_fails("zone", namespace["zone"])   # caught by the visible "0 / 8,000" case


# ---- 11 capstone: the visible workloads expose what the hidden ones test ---------------------


def _family():
    """Yield (name, policy) for simple policies: when to act × how many turns to keep × what to drop."""
    triggers = {
        "threshold": lambda v: v.tokens > v.threshold,
        "window": lambda v: v.tokens > v.window,
        "midway": lambda v: v.tokens > (v.threshold + v.window) // 2,
        "fixed 60,000": lambda v: v.tokens > 60_000,
        "early": lambda v: v.tokens > v.threshold * 3 // 4,
    }
    for keep in (0, 1, 2, 3, 5, 8):
        for when, trigger in triggers.items():
            for drop in (True, False):
                for clear_needed in (False, True):
                    yield (f"keep {keep}, {when}, drop={drop}, clear_needed={clear_needed}",
                           lambda view, k=keep, t=trigger, d=drop, c=clear_needed: _policy(
                               view, keep=k, trigger=t, drop_unneeded=d, clear_needed=c, compact=not c))


def test_a_policy_safe_on_the_visible_workloads_is_safe_on_the_hidden_ones():
    """Of 120 simple policies, every one that never overflows and loses no fact on the five visible
    workloads does the same on the hidden workloads of check_my_policy (same kinds, other numbers)."""
    from ctx_reference.policy_score import score_policy
    from ctx_reference.workloads import visible_workloads

    hidden = prefix_namespace("11-capstone", "check_beat_clear_notes")["_HIDDEN"]
    visible = visible_workloads()
    gaps = []
    for name, policy in _family():
        try:
            if score_policy(policy, visible).safe and not score_policy(policy, hidden).safe:
                gaps.append(name)
        except ValueError:  # an action the context cannot take: fails the visible check already
            pass
    assert gaps == []
