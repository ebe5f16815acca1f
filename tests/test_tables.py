"""Tests for ctx_reference.tables: number formats, alignment, and each format_* table."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.assemble import assemble, lesson_items
from ctx_reference.ledger import LedgerSummary, WindowLedger, Zone, lesson_calls
from ctx_reference.recall import ComparisonRow, RecallModel, stuff_vs_retrieve
from ctx_reference.sim import SimParams, SimResult
from ctx_reference.tables import (
    DERIVED_MARK,
    DERIVED_NOTE,
    OTHER_PARAMS_NOTE,
    display_width,
    format_assembly,
    format_facts,
    format_int,
    format_ledger_entries,
    format_ledger_summary,
    format_overflow,
    format_percent,
    format_recall,
    format_share,
    format_strategy_table,
    format_stuff_vs_retrieve,
    format_table,
    format_window_check,
    pad,
    round_half_up,
    seed_cells,
)


def _result(peak, rewrites, input_equivalent, overflow_turn, facts_asked, facts_lost):
    """A SimResult with the given headline numbers (contexts are not used by the tables)."""
    return SimResult(peak=peak, rewrites=rewrites, input_equivalent=input_equivalent,
                     overflow_turn=overflow_turn, facts_asked=facts_asked, facts_lost=facts_lost,
                     contexts=())


# The lesson's four runs with default parameters (docs/models.md §6).
LESSON_RESULTS = {
    "none": _result(98_000, 0, 249_700.0, 26, 4, 0),
    "clear": _result(59_550, 15, 1_359_425.0, None, 12, 11),
    "clear_notes": _result(61_200, 17, 1_500_744.0, None, 12, 0),
    "compact": _result(58_400, 6, 668_560.0, None, 12, 0),
}


def _row(table: str, first_cell: str) -> str:
    """Return the one line of ``table`` whose first cell is ``first_cell``."""
    lines = [line for line in table.splitlines() if line.split(" ", 1)[0] == first_cell]
    assert len(lines) == 1, table
    return lines[0]


# ---------------------------------------------------------------- numbers


def test_round_half_up_on_the_lesson_halves():
    """Seed: 4,403,187.5 displays as 4,403,188 and 894,813.5 as 894,814."""
    assert round_half_up(4_403_187.5) == 4_403_188
    assert round_half_up(894_813.5) == 894_814


def test_round_half_up_differs_from_bankers_rounding():
    """Halves go up even where round() would go to the even neighbour: 2.5 -> 3, 1,359,424.5 -> 1,359,425."""
    assert round_half_up(2.5) == 3
    assert round_half_up(1_359_424.5) == 1_359_425
    assert round_half_up(2.4999) == 2
    assert round_half_up(-2.5) == -3  # away from zero


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "12", None, True])
def test_round_half_up_rejects_non_numbers(bad):
    """A non-number or a non-finite value raises ValueError naming the argument and echoing it."""
    with pytest.raises(ValueError, match=r"value .*got"):
        round_half_up(bad)


def test_format_int_uses_thousands_separators():
    """59550 -> '59,550'; 1359425 -> '1,359,425'; 4403187.5 -> '4,403,188'; 0 -> '0'."""
    assert format_int(59_550) == "59,550"
    assert format_int(1_359_425) == "1,359,425"
    assert format_int(4_403_187.5) == "4,403,188"
    assert format_int(894_813.5) == "894,814"
    assert format_int(0) == "0"


def test_format_recall_has_three_decimals():
    """Recall shows three decimals: 0.18349 -> '0.183', 0.5 -> '0.500', 0.8181 -> '0.818'."""
    assert format_recall(0.18349) == "0.183"
    assert format_recall(0.5) == "0.500"
    assert format_recall(0.8181) == "0.818"


def test_format_percent_and_share_match_the_ledger_printout():
    """Seed: buckets 0/88/1,080/277 of 1,445 tokens are 0.0 %, 6.1 %, 74.7 %, 19.2 %."""
    assert format_share(0, 1445) == "0.0 %"
    assert format_share(88, 1445) == "6.1 %"  # 6.09 %
    assert format_share(1080, 1445) == "74.7 %"  # 74.74 %
    assert format_share(277, 1445) == "19.2 %"  # 19.17 %
    assert format_percent(1080 / 1445) == "74.7 %"


def test_format_share_of_nothing_is_zero():
    """A share of a zero whole (no calls yet) is '0.0 %', not a ZeroDivisionError."""
    assert format_share(0, 0) == "0.0 %"


def test_format_share_rejects_negative_parts():
    """A negative part raises ValueError naming 'part' and echoing the value."""
    with pytest.raises(ValueError, match=r"part must be >= 0 \(got -1\)"):
        format_share(-1, 10)


def test_format_facts_and_overflow():
    """Facts are 'lost/asked' (11/12); an overflow at turn 26 reads '第 26 轮', none reads '—'."""
    assert format_facts(11, 12) == "11/12"
    assert format_facts(0, 4) == "0/4"
    assert format_overflow(26) == "第 26 轮"
    assert format_overflow(None) == "—"


@pytest.mark.parametrize("call", [lambda: format_facts(-1, 12), lambda: format_facts(1, True),
                                  lambda: format_overflow(0), lambda: format_overflow(2.0)])
def test_bad_counts_raise_value_error(call):
    """Negative, bool or float counts raise ValueError with 'got' and the value."""
    with pytest.raises(ValueError, match="got"):
        call()


# ---------------------------------------------------------------- layout


def test_display_width_counts_cjk_as_two_columns():
    """'token' is 5 columns, '峰值' 4, '清除 + 笔记' 4 + 3 + 4 = 11, '' 0."""
    assert display_width("token") == 5
    assert display_width("峰值") == 4
    assert display_width("清除 + 笔记") == 11
    assert display_width("（推导）") == 8  # full-width brackets are wide too
    assert display_width("") == 0


def test_pad_pads_by_display_width():
    """Padding '峰值' to 6 columns adds 2 spaces, not 4; right alignment pads on the left."""
    assert pad("峰值", 6) == "峰值  "
    assert pad("59,550", 8, ">") == "  59,550"
    assert pad("too long", 3) == "too long"  # never cut


def test_pad_rejects_unknown_alignment():
    """An alignment other than '<' or '>' raises ValueError naming 'align'."""
    with pytest.raises(ValueError, match=r"align must be .* \(got '\^'\)"):
        pad("x", 3, "^")


CELL = st.text(alphabet=st.sampled_from("abcXYZ019,.峰值丢失策略（）"), min_size=1, max_size=8)


@given(st.lists(st.lists(CELL, min_size=3, max_size=3), min_size=1, max_size=6))
def test_table_lines_all_have_the_same_display_width(rows):
    """With a right-aligned last column, every line of a table is equally wide on screen, CJK or not."""
    text = format_table(["名称", "token", "占比"], rows, "<>>")
    widths = {display_width(line) for line in text.splitlines()}
    assert len(widths) == 1


def test_table_rejects_rows_of_the_wrong_length():
    """A row with fewer cells than headers raises ValueError naming 'rows'."""
    with pytest.raises(ValueError, match="rows must have 2 cells"):
        format_table(["a", "b"], [["only one"]], "<<")


# ---------------------------------------------------------------- window


def test_window_check_seed_request():
    """Seed: window 1,000,000, input 950,000, max_tokens 128,000 -> MAY_TRUNCATE, at most 50,000 out."""
    text = format_window_check(1_000_000, 950_000, 128_000)
    assert "MAY_TRUNCATE" in text
    assert "1,078,000" in text  # 950,000 + 128,000
    assert "最多还能生成 50,000 token" in text


def test_window_check_rejected_and_fits():
    """950,000 in a 200,000 window is REJECTED (0 to generate); 100,000 + 64,000 in 200,000 FITS."""
    rejected = format_window_check(200_000, 950_000, 128_000)
    assert "REJECTED" in rejected and "最多还能生成 0 token" in rejected
    fits = format_window_check(200_000, 100_000, 64_000)
    assert "FITS" in fits and "窗口还剩 36,000" in fits  # 200,000 - 164,000


def test_window_check_bad_size_names_it():
    """A window of size 0 raises ValueError naming 'size'."""
    with pytest.raises(ValueError, match=r"size must be >= 1 \(got 0\)"):
        format_window_check(0, 1, 1)


# ---------------------------------------------------------------- recall


def test_stuff_vs_retrieve_marks_derived_values():
    """0.183 (200 docs, answer in doc 100) is derived -> 推导; 0.818 (retrieve 8, 0.9) is seed -> 原课."""
    text = format_stuff_vs_retrieve(stuff_vs_retrieve(RecallModel()))
    lines = text.splitlines()
    assert lines[0].split() == ["召回率", "上下文", "token", "来源", "情形"]
    derived = [line for line in lines if line.split()[0] == "0.183"]
    seed = [line for line in lines if line.split()[0] == "0.818"]
    assert len(derived) == 1 and derived[0].split()[1:3] == ["800,000", "推导"]
    assert len(seed) == 1 and seed[0].split()[1:3] == ["32,000", "原课"]
    assert [line.split()[0] for line in lines[2:]].count("0.261") == 2  # middle=0: 0.261 twice
    assert "0.670" in text and "0.553" in text


def test_stuff_vs_retrieve_rejects_unknown_provenance():
    """A row whose provenance is neither seed nor derived raises ValueError echoing it."""
    row = ComparisonRow("x", "情形", 1_000, 0.5, "guess")
    with pytest.raises(ValueError, match=r"provenance .*got 'guess'"):
        format_stuff_vs_retrieve([row])


# ---------------------------------------------------------------- assembly


def test_assembly_table_of_the_lesson_example():
    """Seed: budget 11,000 -> used 10,920; kept rules..question in order; A's copy duplicate, C no room."""
    text = format_assembly(assemble(lesson_items(), 11_000), budget=11_000)
    assert "合计 10,920 / 11,000 token（还剩 80）" in text
    kept_part, dropped_part = text.split("丢弃")
    kept_names = ["rules", "tools", "memory", "doc A", "doc B", "time", "question"]
    numbered = [line.split()[0] for line in kept_part.splitlines() if line[:1].isdigit()]
    assert numbered == ["1", "2", "3", "4", "5", "6", "7"]
    positions = [kept_part.index(f"  {name}  ") for name in kept_names]
    assert positions == sorted(positions)
    assert "doc C" not in kept_part and "doc A (copy)" not in kept_part
    copy_line = [line for line in dropped_part.splitlines() if line.startswith("doc A (copy)")]
    c_line = [line for line in dropped_part.splitlines() if line.startswith("doc C")]
    assert len(copy_line) == 1 and "2,500" in copy_line[0] and "重复" in copy_line[0]
    assert len(c_line) == 1 and "1,500" in c_line[0] and "放不下" in c_line[0]


def test_assembly_without_drops_says_so():
    """A budget that fits all nine items (14,920 tokens; the copy is still a duplicate) drops only the copy."""
    text = format_assembly(assemble(lesson_items(), 20_000))
    assert "合计 12,420 token" in text  # 10,920 + doc C 1,500; no budget given, no "/"
    assert "doc C" in text.split("丢弃")[0]
    nothing = format_assembly(assemble([], 100), budget=100)
    assert "没有丢弃任何一项" in nothing and "合计 0 / 100 token" in nothing


# ---------------------------------------------------------------- simulation


def test_strategy_table_clear_row_has_the_seed_numbers_unmarked():
    """Seed: clear peaks at 59,550, loses 11/12 facts, rewrites 15 times, costs 1,359,425 (none derived)."""
    text = format_strategy_table(LESSON_RESULTS, SimParams())
    row = _row(text, "clear")
    assert row.split()[2:] == ["59,550", "11/12", "15", "1,359,425", "—"]
    assert DERIVED_MARK not in row


def test_strategy_table_marks_derived_numbers():
    """none: overflow at turn 26 is seed, 249,700 derived; clear_notes: 17 rewrites seed, 1,500,744 derived."""
    text = format_strategy_table(LESSON_RESULTS, SimParams())
    none_row = _row(text, "none")
    assert "第 26 轮" in none_row and "第 26 轮" + DERIVED_MARK not in none_row
    assert "249,700" + DERIVED_MARK in none_row and "0/4" + DERIVED_MARK in none_row
    notes_row = _row(text, "clear_notes")
    assert notes_row.split()[-3] == "17" and "1,500,744" + DERIVED_MARK in notes_row
    compact_row = _row(text, "compact")
    assert compact_row.split()[2:6] == ["58,400*", "0/12*", "6", "668,560*"]
    assert text.splitlines()[-1] == DERIVED_NOTE


def test_strategy_table_keep_15_rounds_half_up():
    """Seed: keep 15 -> clear peaks at 89,450, 0/12, 45 rewrites, 4,403,187.5 shown as 4,403,188."""
    results = {"clear": _result(89_450, 45, 4_403_187.5, None, 12, 0)}
    row = _row(format_strategy_table(results, SimParams(keep=15)), "clear")
    assert row.split()[2:] == ["89,450", "0/12", "45", "4,403,188", "—"]


def test_strategy_table_clear_at_least():
    """Seed: clear_at_least 20,000 -> 7 rewrites and 894,813.5 shown as 894,814; peak 75,660 is derived."""
    results = {"clear": _result(75_660, 7, 894_813.5, None, 12, 11)}
    row = _row(format_strategy_table(results, SimParams(clear_at_least=20_000)), "clear")
    assert row.split()[2:] == ["75,660*", "11/12*", "7", "894,814", "—"]


def test_strategy_table_summary_capacity():
    """Seed: compact with summary_capacity 2 loses 7/12 (seed); 58,400 and 668,560 are derived."""
    results = {"compact": _result(58_400, 6, 668_560.0, None, 12, 7)}
    row = _row(format_strategy_table(results, SimParams(summary_capacity=2)), "compact")
    assert row.split()[2:6] == ["58,400*", "7/12", "6*", "668,560*"]


def test_strategy_table_for_other_params_says_everything_is_derived():
    """Parameters that are not one of the lesson's runs: no per-cell marks, one note for the whole table."""
    results = {"clear": _result(65_530, 23, 1_969_305.0, None, 12, 10)}
    text = format_strategy_table(results, SimParams(keep=7))
    assert DERIVED_MARK not in _row(text, "clear")
    assert text.splitlines()[-1] == OTHER_PARAMS_NOTE


def test_seed_cells_knows_the_lesson_runs():
    """clear with defaults quotes all four numbers; clear_notes only its rewrites; keep=7 is no lesson run."""
    assert seed_cells("clear", SimParams()) == {"peak", "facts", "rewrites", "input_equivalent"}
    assert seed_cells("clear_notes", SimParams()) == {"rewrites"}
    assert seed_cells("none", SimParams(keep=15)) == frozenset()
    assert seed_cells("clear", SimParams(keep=7)) is None


def test_strategy_table_does_not_mutate_its_input():
    """Formatting leaves the results mapping as it was."""
    results = dict(LESSON_RESULTS)
    format_strategy_table(results, SimParams())
    assert results == LESSON_RESULTS


def test_strategy_table_rejects_a_non_mapping():
    """A list instead of a mapping raises ValueError naming 'results'."""
    with pytest.raises(ValueError, match="results must be a mapping"):
        format_strategy_table([LESSON_RESULTS["clear"]], SimParams())


# ---------------------------------------------------------------- ledger


LESSON_SUMMARY = LedgerSummary(
    calls=6, peak=552, peak_name="research_1", peak_zone=Zone.SAFE, calls_over=0, limit=8000,
    bucket_tokens={"system": 0, "task_state": 88, "tool_results": 1080, "history": 277},
    total_tokens=1445,  # 0 + 88 + 1,080 + 277
    bucket_shares={"system": 0 / 1445, "task_state": 88 / 1445, "tool_results": 1080 / 1445,
                   "history": 277 / 1445},
)


def test_ledger_summary_headline():
    """Seed: 6 calls, peak 552 of 8,000 (safe), 0 calls over the window."""
    headline = format_ledger_summary(LESSON_SUMMARY).splitlines()[0]
    assert "6 次调用" in headline
    assert "峰值 552 / 8,000 token" in headline
    assert "safe" in headline
    assert "超出窗口 0 次" in headline


def test_ledger_summary_bucket_lines():
    """Seed: system 0 (0.0 %), task_state 88 (6.1 %), tool_results 1,080 (74.7 %), history 277 (19.2 %)."""
    text = format_ledger_summary(LESSON_SUMMARY)
    assert _row(text, "system").split() == ["system", "0", "0.0", "%"]
    assert _row(text, "task_state").split() == ["task_state", "88", "6.1", "%"]
    assert _row(text, "tool_results").split() == ["tool_results", "1,080", "74.7", "%"]
    assert _row(text, "history").split() == ["history", "277", "19.2", "%"]
    assert _row(text, "合计").split() == ["合计", "1,445", "100.0", "%"]


def test_ledger_tables_from_a_recorded_run():
    """The lesson's six recorded calls give the seed summary; the per-call table marks its split derived."""
    ledger = WindowLedger()
    for name, buckets in lesson_calls():
        ledger.record(name, **buckets)
    assert "tool_results  1,080   74.7 %" in format_ledger_summary(ledger.summary())
    entries = format_ledger_entries(ledger.entries, derived=True)
    assert "552" + DERIVED_MARK in _row(entries, "research_1")
    assert "6.9 %" in _row(entries, "research_1")  # 552 / 8,000
    assert entries.splitlines()[-1].startswith(DERIVED_MARK)
    assert DERIVED_MARK not in format_ledger_entries(ledger.entries)
