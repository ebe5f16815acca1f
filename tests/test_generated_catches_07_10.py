"""Plausible wrong answers to notebooks 07 to 10, as a learner would write them, fail the visible check.

Each entry breaks one rule the exercise's text states, on an input that text covers, and is
written without the reference. Most of them pass every hand-written case of their exercise: the
generated cases (the bank) are what catch them.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ctx_reference.checks import CheckFailed, check_exercise
from ctx_reference.ledger import BUCKETS, LedgerEntry, Zone, zone
from ctx_reference.sessions import Record, record_tokens

# ---- 09 zone -------------------------------------------------------------------------------------


def zone_by_float_shares(used, limit):
    # integers-only: 0.6 * limit is rounded for a window such as 657,247,381,085,762,037 tokens, so 60 % reads as safe
    if limit <= 0:
        raise ValueError(f"limit must be > 0 (got {limit})")
    if used < 0:
        raise ValueError(f"used must be >= 0 (got {used})")
    if used < 0.6 * limit:
        return Zone.SAFE
    if used <= 0.85 * limit:
        return Zone.CAUTION
    if used <= limit:
        return Zone.DANGER
    return Zone.OVER


def zone_by_whole_percent(used, limit):
    # caution-60-to-85: the percent rounded down, so 86 of 101 (85.1 %) reads as caution
    if limit <= 0:
        raise ValueError(f"limit must be > 0 (got {limit})")
    if used < 0:
        raise ValueError(f"used must be >= 0 (got {used})")
    percent = used * 100 // limit
    if percent < 60:
        return Zone.SAFE
    if percent <= 85:
        return Zone.CAUTION
    if used <= limit:
        return Zone.DANGER
    return Zone.OVER


def zone_by_ratio_of_percents(used, limit):
    # integers-only: the share as a float percent, exact on round windows but not on 10**16 * 7
    if limit <= 0:
        raise ValueError(f"limit must be > 0 (got {limit})")
    if used < 0:
        raise ValueError(f"used must be >= 0 (got {used})")
    percent = used * 100 / limit
    if percent < 60:
        return Zone.SAFE
    if percent <= 85:
        return Zone.CAUTION
    if percent <= 100:
        return Zone.DANGER
    return Zone.OVER


# ---- 09 measure ----------------------------------------------------------------------------------


def _check(buckets):
    for name in buckets:
        if name not in BUCKETS:
            raise ValueError(f"unknown bucket {name!r}")


def measure_asks_the_tokenizer_about_missing_buckets(buckets, tokenizer, limit):
    # missing-bucket-is-zero: a tokenizer that counts "" as 1 gives a missing bucket 1 token
    _check(buckets)
    tokens = {name: tokenizer.count(buckets.get(name, "")) for name in BUCKETS}
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


def measure_in_the_given_order(buckets, tokenizer, limit):
    # four-buckets-in-order: the given buckets first, in the caller's order, then the missing ones
    _check(buckets)
    tokens = {name: tokenizer.count(text) for name, text in buckets.items()}
    for name in BUCKETS:
        tokens.setdefault(name, 0)
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


def measure_strips_the_texts(buckets, tokenizer, limit):
    # the-given-tokenizer: strips each text first, so spaces and newlines the tokenizer counts are lost
    _check(buckets)
    tokens = {name: tokenizer.count(buckets[name].strip()) if name in buckets else 0 for name in BUCKETS}
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


def measure_skips_empty_texts(buckets, tokenizer, limit):
    # the-given-tokenizer: an empty bucket that is given is not counted, though the tokenizer may count it
    _check(buckets)
    tokens = {name: tokenizer.count(buckets[name]) if buckets.get(name) else 0 for name in BUCKETS}
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


def measure_forgives_the_case_of_names(buckets, tokenizer, limit):
    # unknown-bucket-raises: "System" and " system" are taken for system
    given = {name.strip().lower(): text for name, text in buckets.items()}
    _check(given)
    tokens = {name: tokenizer.count(given[name]) if name in given else 0 for name in BUCKETS}
    total = sum(tokens.values())
    return LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)


# ---- 10 write_progress ---------------------------------------------------------------------------

_ORDER = ["next", "failed", "decision", "done"]


def _greedy(records, candidates, budget):
    left, kept = budget, []
    for r in sorted(candidates, key=lambda r: (_ORDER.index(r.kind), -r.turn)):
        if record_tokens(r) <= left:
            kept.append(r)
            left -= record_tokens(r)
    return kept


def write_progress_keeps_equal_records_twice(records, budget):
    # input-order-in-a-new-list: the order rebuilt by equality, so a record kept once comes back twice
    newest = max((r for r in records if r.kind == "next"), key=lambda r: r.turn, default=None)
    candidates = [r for r in records if r.kind != "next" or r is newest]
    kept = _greedy(records, candidates, budget)
    return [r for r in records if r in kept]


def write_progress_keeps_equal_nexts(records, budget):
    # newest-next-only: the newest next compared by equality, so two identical next lines both stay
    newest = max((r for r in records if r.kind == "next"), key=lambda r: r.turn, default=None)
    candidates = [r for r in records if r.kind != "next" or r == newest]
    kept = _greedy(records, candidates, budget)
    kept_ids = {id(r) for r in kept}
    return [r for r in records if id(r) in kept_ids]


def write_progress_sorts_ties_backwards(records, budget):
    # first-on-a-tie-within-a-kind: sorted oldest first and then reversed, which also reverses equal turns
    indexed = list(enumerate(records))
    nexts = [(i, r) for i, r in indexed if r.kind == "next"]
    newest = max(nexts, key=lambda p: (p[1].turn, -p[0]))[0] if nexts else None
    candidates = [(i, r) for i, r in indexed if r.kind != "next" or i == newest]
    candidates = sorted(candidates, key=lambda p: (-_ORDER.index(p[1].kind), p[1].turn))[::-1]
    left, kept = budget, set()
    for i, r in candidates:
        if record_tokens(r) <= left:
            kept.add(i)
            left -= record_tokens(r)
    return [r for i, r in indexed if i in kept]


def write_progress_newest_next_of_ties_last(records, budget):
    # first-next-on-a-tie: of two next steps of the same turn the one that comes later is kept
    indexed = list(enumerate(records))
    nexts = sorted((p for p in indexed if p[1].kind == "next"), key=lambda p: p[1].turn)
    newest = nexts[-1][0] if nexts else None
    candidates = [(i, r) for i, r in indexed if r.kind != "next" or i == newest]
    candidates.sort(key=lambda p: (_ORDER.index(p[1].kind), -p[1].turn))
    left, kept = budget, set()
    for i, r in candidates:
        if record_tokens(r) <= left:
            kept.add(i)
            left -= record_tokens(r)
    return [r for i, r in indexed if i in kept]


# ---- 10 restore ----------------------------------------------------------------------------------

_RECORD = r"\[(next|failed|decision|done)\] t(\d+): (.+)"


def restore_searches_without_anchor(progress_text):
    # record-format: re.search finds a record inside "x[done] t1: 写测试" and accepts the line
    records = []
    for number, line in enumerate(progress_text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.search(_RECORD, line)
        if match is None:
            raise ValueError(f"line {number} is not a record: {line!r}")
        records.append(Record(match.group(1), int(match.group(2)), match.group(3)))
    return records


def restore_skips_only_empty_lines(progress_text):
    # blank-and-comment-lines-skipped: a line of spaces is not empty, so it is refused as malformed
    records = []
    for number, line in enumerate(progress_text.split("\n"), start=1):
        if line == "" or line.strip().startswith("#"):
            continue
        match = re.match(_RECORD + "$", line.strip())
        if match is None:
            raise ValueError(f"line {number} is not a record: {line!r}")
        records.append(Record(match.group(1), int(match.group(2)), match.group(3)))
    return records


def restore_comments_before_stripping(progress_text):
    # stripped-first: "  # 缩进的注释" does not start with "#" until it is stripped, so it is refused
    records = []
    for number, line in enumerate(progress_text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        match = re.match(_RECORD + "$", line.strip())
        if match is None:
            raise ValueError(f"line {number} is not a record: {line!r}")
        records.append(Record(match.group(1), int(match.group(2)), match.group(3)))
    return records


def restore_allows_any_spacing(progress_text):
    # record-format: \s* after the colon accepts "[done] t1:写测试", which is not the stated format
    records = []
    for number, line in enumerate(progress_text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^\[(next|failed|decision|done)\]\s*t(\d+):\s*(.+)$", line)
        if match is None:
            raise ValueError(f"line {number} is not a record: {line!r}")
        records.append(Record(match.group(1), int(match.group(2)), match.group(3)))
    return records


def restore_kind_by_prefix(progress_text):
    # kinds-case-sensitive: the kind taken as whichever of the four the bracket starts with ("[nexts]" is next)
    records = []
    for number, line in enumerate(progress_text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^\[(\w+)\] t(\d+): (.+)$", line)
        kind = next((k for k in ("next", "failed", "decision", "done") if match and match.group(1).startswith(k)),
                    None)
        if kind is None:
            raise ValueError(f"line {number} is not a record: {line!r}")
        records.append(Record(kind, int(match.group(2)), match.group(3)))
    return records


# ---- 07 render ----------------------------------------------------------------------------------

_VARIABLE = r"\{\{\s*\w+\s*\}\}"


def _text(spec, key=None, field=str):
    lines = [f"<role>{field(spec.role)}</role>", f"<task>{field(spec.task)}</task>", "<rules>"]
    lines += [f"- {field(rule)}" for rule in spec.rules]
    lines.append("</rules>")
    lines += [f'<example index="{i}">{field(e)}</example>' for i, e in enumerate(spec.examples, start=1)]
    lines += [f"<output_format>{field(spec.output)}</output_format>", "<context>"]
    lines += [f"{k}: {spec.dynamic[k]}" for k in sorted(spec.dynamic, key=key)]
    return "\n".join(lines + ["</context>"])


def _warnings(spec, variable=_VARIABLE, blank=str.strip, prohibition=lambda rule: rule.startswith("不要")):
    fields = [spec.role, spec.task, *spec.rules, *spec.examples, spec.output]
    warnings = ["模板变量" for f in fields if re.search(variable, f)]
    warnings += ["没有输出格式"] if not blank(spec.output) else []
    warnings += ["只说了不要" for rule in spec.rules
                 if prohibition(rule) and "而是" not in rule and "改为" not in rule]
    return warnings


def render_strips_rules_before_looking_for_buyao(spec):
    # starts-with-buyao: " 不要空格开头" does not start with 不要, but stripped first it does
    return _text(spec), _warnings(spec, prohibition=lambda rule: rule.strip().startswith("不要"))


def render_matches_any_braces(spec):
    # one-warning-per-field: a lazy {{.*?}} takes "{{}}", "{{x y}}" and "{{-}}" for template variables
    return _text(spec), _warnings(spec, variable=r"\{\{.*?\}\}")


def render_blank_means_spaces(spec):
    # blank-output: strip(" ") leaves an output of "\n" or "\t", which is blank too
    return _text(spec), _warnings(spec, blank=lambda output: output.strip(" "))


def render_sorts_keys_ignoring_case(spec):
    # dynamic-sorted: sorted by lower case, "B" comes before "a" in sorted() but not here
    return _text(spec, key=str.lower), _warnings(spec)


def render_strips_the_fields(spec):
    # no-trailing-newline (the exact text): every field stripped, so " 两边有空格 " loses its spaces
    return _text(spec, field=str.strip), _warnings(spec)


def render_one_warning_for_all_rules(spec):
    # one-warning-per-field: the rules looked at as one field, so two rules with variables give one warning
    stable = [spec.role, spec.task, "\n".join(spec.rules), *spec.examples, spec.output]
    warnings = [f for f in stable if re.search(_VARIABLE, f)]
    return _text(spec), warnings + _warnings(spec)[len([f for f in [spec.role, spec.task, *spec.rules, *spec.examples,
                                                                      spec.output] if re.search(_VARIABLE, f)]):]


# ---- 08 diff -------------------------------------------------------------------------------------


def diff_zips_the_results(cases, base, next):
    # in-the-order-of-cases: pairs each case with the results' values by position, as if they were in case order
    fixed, broke = [], []
    for case, before, after in zip(cases, base.passed.values(), next.passed.values()):
        if not before and after:
            fixed.append(case.id)
        elif before and not after:
            broke.append(case.id)
    return fixed, broke


def diff_walks_the_base_result(cases, base, next):
    # in-the-order-of-cases: walks base's ids (skipping those of no case), so the order is the result's
    ids = {case.id for case in cases}
    fixed = [i for i, before in base.passed.items() if i in ids and not before and next.passed[i]]
    broke = [i for i, before in base.passed.items() if i in ids and before and not next.passed[i]]
    return fixed, broke


def diff_counts_every_failure_as_broken(cases, base, next):
    # unchanged-in-neither: a case that fails in both versions is put in broke
    fixed, broke = [], []
    for case in cases:
        if next.passed[case.id] and not base.passed[case.id]:
            fixed.append(case.id)
        elif not next.passed[case.id]:
            broke.append(case.id)
    return fixed, broke


def diff_sorts_the_ids(cases, base, next):
    # in-the-order-of-cases: the ids sorted, which is the case order only when the cases are sorted
    fixed = sorted(c.id for c in cases if not base.passed[c.id] and next.passed[c.id])
    broke = sorted(c.id for c in cases if base.passed[c.id] and not next.passed[c.id])
    return fixed, broke


# ---- 09 fit_rates --------------------------------------------------------------------------------


def _fit(receipts, is_ascii=lambda ch: ord(ch) < 128, text=lambda t: t, intercept=False):
    rows = []
    for receipt in receipts:
        ascii_chars = sum(1 for ch in text(receipt.text) if is_ascii(ch))
        rows.append([ascii_chars, len(text(receipt.text)) - ascii_chars] + ([1] if intercept else []))
    features = np.array(rows, dtype=float).reshape(-1, 3 if intercept else 2)
    tokens = np.array([receipt.prompt_tokens for receipt in receipts], dtype=float)
    if len(rows) == 0 or np.linalg.matrix_rank(features[:, :2]) < 2:
        raise ValueError(f"receipts cannot tell the two rates apart (got {len(rows)})")
    solution, *_ = np.linalg.lstsq(features, tokens, rcond=None)
    return float(solution[0]), float(solution[1])


def fit_rates_128_is_ascii(receipts):
    # ascii-below-128: "<= 128" takes the character at code point 128 for ASCII
    return _fit(receipts, is_ascii=lambda ch: ord(ch) <= 128)


def fit_rates_with_an_intercept(receipts):
    # no-intercept: a constant column fitted beside the two rates
    return _fit(receipts, intercept=True)


def fit_rates_strips_the_texts(receipts):
    # ascii-below-128: the texts stripped first, so leading and trailing spaces and newlines are not counted
    return _fit(receipts, text=str.strip)


def fit_rates_checks_scripts_not_proportions(receipts):
    # underdetermined-raises: refuses only receipts all of one script, not receipts all in one proportion
    if not any(any(ord(ch) < 128 for ch in r.text) for r in receipts) or \
            not any(any(ord(ch) >= 128 for ch in r.text) for r in receipts):
        raise ValueError("receipts must hold both scripts")
    rows = [[sum(ord(ch) < 128 for ch in r.text), sum(ord(ch) >= 128 for ch in r.text)] for r in receipts]
    solution, *_ = np.linalg.lstsq(np.array(rows, dtype=float), np.array([r.prompt_tokens for r in receipts],
                                                                         dtype=float), rcond=None)
    return float(solution[0]), float(solution[1])


WRONG = [
    ("zone", zone_by_float_shares),
    ("zone", zone_by_whole_percent),
    ("zone", zone_by_ratio_of_percents),
    ("measure", measure_asks_the_tokenizer_about_missing_buckets),
    ("measure", measure_in_the_given_order),
    ("measure", measure_strips_the_texts),
    ("measure", measure_skips_empty_texts),
    ("measure", measure_forgives_the_case_of_names),
    ("write_progress", write_progress_keeps_equal_records_twice),
    ("write_progress", write_progress_keeps_equal_nexts),
    ("write_progress", write_progress_sorts_ties_backwards),
    ("write_progress", write_progress_newest_next_of_ties_last),
    ("restore", restore_searches_without_anchor),
    ("restore", restore_skips_only_empty_lines),
    ("restore", restore_comments_before_stripping),
    ("restore", restore_allows_any_spacing),
    ("restore", restore_kind_by_prefix),
    ("render", render_strips_rules_before_looking_for_buyao),
    ("render", render_matches_any_braces),
    ("render", render_blank_means_spaces),
    ("render", render_sorts_keys_ignoring_case),
    ("render", render_strips_the_fields),
    ("render", render_one_warning_for_all_rules),
    ("diff", diff_zips_the_results),
    ("diff", diff_walks_the_base_result),
    ("diff", diff_counts_every_failure_as_broken),
    ("diff", diff_sorts_the_ids),
    ("fit_rates", fit_rates_128_is_ascii),
    ("fit_rates", fit_rates_with_an_intercept),
    ("fit_rates", fit_rates_strips_the_texts),
    ("fit_rates", fit_rates_checks_scripts_not_proportions),
]


@pytest.mark.parametrize(("exercise", "wrong"), WRONG, ids=[wrong.__name__ for _, wrong in WRONG])
def test_a_plausible_wrong_answer_fails_the_visible_check(exercise, wrong):
    """The visible check of the exercise (hand-written and generated cases) fails the wrong answer."""
    with pytest.raises(CheckFailed):
        check_exercise(exercise, wrong, quiet=True)
