"""Tests for ctx_reference.ledger: zones, per-call measurement, the window ledger and its summary."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.i18n import using
from ctx_reference.ledger import (
    BUCKETS,
    ContextOverflowError,
    LedgerEntry,
    LongHaul,
    WindowLedger,
    Zone,
    join_buckets,
    lesson_calls,
    long_haul_calls,
    measure,
    measured_call,
    summarize,
    window_share,
    zone,
    zones_for,
)
from ctx_reference.tokens import FakeTokenizer

BUCKET_TEXTS = st.dictionaries(st.sampled_from(BUCKETS), st.text(max_size=60))


class WordTokenizer:
    """A stand-in tokenizer: one token per whitespace-separated word."""

    def count(self, text):
        return len(text.split())


def lesson_ledger(**kwargs):
    """A ledger that has recorded the lesson's six calls."""
    ledger = WindowLedger(**kwargs)
    for name, buckets in lesson_calls():
        ledger.record(name, **buckets)
    return ledger


@pytest.mark.parametrize(
    "used, expected",
    [
        (0, Zone.SAFE),
        (5_999, Zone.SAFE),  # 59.99 %
        (6_000, Zone.CAUTION),  # exactly 60 %
        (8_500, Zone.CAUTION),  # exactly 85 %
        (8_501, Zone.DANGER),  # 85.01 %
        (10_000, Zone.DANGER),  # exactly 100 %
        (10_001, Zone.OVER),  # 100.01 %
    ],
)
def test_zone_boundaries(used, expected):
    """Limit 10,000: < 60 % safe, 60-85 % caution (both ends), > 85 % up to 100 % danger, > 100 % over."""
    assert zone(used, 10_000) is expected


def test_zone_boundaries_are_exact_where_floats_are_not():
    """Limit 3: 2 tokens is 66.67 % (caution); limit 20: 17 is exactly 85 % (caution), 12 exactly 60 % (caution)."""
    assert zone(2, 3) is Zone.CAUTION
    assert zone(17, 20) is Zone.CAUTION
    assert zone(12, 20) is Zone.CAUTION
    assert zone(11, 20) is Zone.SAFE
    assert zone(18, 20) is Zone.DANGER


def test_zone_values_are_lowercase_names():
    """Zone values are the plain names safe, caution, danger, over, in that order."""
    assert [z.value for z in Zone] == ["safe", "caution", "danger", "over"]


@given(st.integers(0, 10**7), st.integers(1, 10**6))
def test_zone_is_monotonic(used, limit):
    """Property: one more token never moves a call to a lower zone."""
    order = list(Zone)
    assert order.index(zone(used, limit)) <= order.index(zone(used + 1, limit))


def test_zones_for_the_simulation_sizes():
    """Window 100,000: 59,550 safe, 60,000 caution, 61,200 caution, 89,450 danger, 98,000 danger, 103,600 over."""
    assert zones_for([59_550, 60_000, 61_200, 89_450, 98_000, 103_600], 100_000) == [
        Zone.SAFE, Zone.CAUTION, Zone.CAUTION, Zone.DANGER, Zone.DANGER, Zone.OVER,
    ]
    assert zones_for([], 100_000) == []


def test_window_share():
    """552 of 8,000 tokens is 0.069 of the window; 0 of 8,000 is 0.0."""
    assert window_share(552, 8_000) == 0.069
    assert window_share(0, 8_000) == 0.0


def test_measure_counts_every_bucket():
    """FakeTokenizer: 48 chars -> 12, 2,160 chars -> 540, missing buckets -> 0; total 552 of 8,000 is safe."""
    entry = measure({"task_state": "t" * 48, "tool_results": "r" * 2_160}, FakeTokenizer(), 8_000)
    assert dict(entry.tokens) == {"system": 0, "task_state": 12, "tool_results": 540, "history": 0}
    assert list(entry.tokens) == ["system", "task_state", "tool_results", "history"]
    assert (entry.total, entry.zone, entry.limit, entry.name) == (552, Zone.SAFE, 8_000, "")


def test_measure_total_is_the_sum_of_bucket_floors():
    """Each bucket is floored on its own: 7 + 7 chars -> 1 + 1 = 2 tokens, not (7 + 7) // 4 = 3."""
    entry = measure({"system": "x" * 7, "history": "y" * 7}, FakeTokenizer(), 100)
    assert entry.total == 2


def test_measure_uses_the_injected_tokenizer():
    """A word-counting tokenizer gives 3 + 2 = 5 tokens; with limit 6 that is 83.3 %, caution."""
    entry = measure({"system": "you are helpful", "history": "earlier answer"}, WordTokenizer(), 6)
    assert (entry.tokens["system"], entry.tokens["history"], entry.total, entry.zone) == (3, 2, 5, Zone.CAUTION)


@given(BUCKET_TEXTS)
def test_measuring_never_changes_the_prompt(buckets):
    """Property: measure leaves the buckets dict equal to a copy taken before, and the joined prompt unchanged."""
    before = dict(buckets)
    prompt_before = join_buckets(buckets)
    measure(buckets, FakeTokenizer(), 8_000)
    assert buckets == before
    assert join_buckets(buckets) == prompt_before


@given(BUCKET_TEXTS)
def test_measured_call_returns_the_same_prompt_with_or_without_ledger(buckets):
    """Property: the prompt sent is identical with the ledger on or off; on records 1 entry."""
    ledger = WindowLedger()
    assert measured_call(ledger, "call", buckets) == measured_call(None, "call", buckets) == join_buckets(buckets)
    assert len(ledger.entries) == 1


def test_ledger_off_records_nothing():
    """Off mode: six calls through measured_call(None, ...) give the same six prompts and record no entry anywhere."""
    watching = WindowLedger()
    off = [measured_call(None, name, buckets) for name, buckets in lesson_calls()]
    on = [measured_call(watching, name, buckets) for name, buckets in lesson_calls()]
    assert off == on
    assert len(watching.entries) == 6
    idle = WindowLedger()
    for name, buckets in lesson_calls():
        measured_call(None, name, buckets)
    assert idle.entries == ()
    assert idle.summary().calls == 0


def test_join_buckets_order_and_separator():
    """Non-empty buckets are joined in system, task_state, tool_results, history order with a blank line."""
    assert join_buckets({"history": "H", "system": "S", "tool_results": "", "task_state": "T"}) == "S\n\nT\n\nH"
    assert join_buckets({}) == ""


def test_lesson_calls_reproduce_the_per_call_counts():
    """Derived split: per-call totals 20, 552, 472, 244, 74, 83 (= 0+20, 12+540, 12+460, 14+80+150, 14+60, 16+67)."""
    ledger = lesson_ledger()
    assert [e.name for e in ledger.entries] == ["plan", "research_1", "research_2", "summarize", "review", "report"]
    assert [e.total for e in ledger.entries] == [20, 552, 472, 244, 74, 83]
    assert [dict(e.tokens) for e in ledger.entries][3] == {
        "system": 0, "task_state": 14, "tool_results": 80, "history": 150,
    }


def test_seed_summary():
    """Seed: 6 calls, buckets 0/88/1,080/277 (sum 1,445), peak 552 of 8,000 (safe), 0 over.

    Shares: 0/1445 = 0.0 %, 88/1445 = 6.09 %, 1080/1445 = 74.74 %, 277/1445 = 19.17 %.
    """
    summary = lesson_ledger().summary()
    assert summary.calls == 6
    assert dict(summary.bucket_tokens) == {"system": 0, "task_state": 88, "tool_results": 1_080, "history": 277}
    assert summary.total_tokens == 1_445
    assert (summary.peak, summary.limit, summary.peak_zone, summary.calls_over) == (552, 8_000, Zone.SAFE, 0)
    assert summary.peak_name == "research_1"
    shares = {bucket: round(share * 100, 1) for bucket, share in summary.bucket_shares.items()}
    assert shares == {"system": 0.0, "task_state": 6.1, "tool_results": 74.7, "history": 19.2}


def test_shares_sum_to_one():
    """The four bucket shares of the seed run add up to 1 (within float rounding)."""
    assert sum(lesson_ledger().summary().bucket_shares.values()) == pytest.approx(1.0)


def test_empty_ledger_summary():
    """Edge: no calls -> 0 calls, peak 0 (safe), no peak name, 0 over, all buckets 0 tokens and 0.0 share."""
    summary = WindowLedger().summary()
    assert (summary.calls, summary.peak, summary.peak_name, summary.peak_zone, summary.calls_over) == (
        0, 0, "", Zone.SAFE, 0,
    )
    assert dict(summary.bucket_tokens) == {"system": 0, "task_state": 0, "tool_results": 0, "history": 0}
    assert dict(summary.bucket_shares) == {"system": 0.0, "task_state": 0.0, "tool_results": 0.0, "history": 0.0}


def test_small_window_counts_calls_over():
    """Window 500: research_1 (552) is over and research_2 (472 = 94.4 %) danger; 1 call over, peak zone over."""
    ledger = lesson_ledger(window_limit_tokens=500)
    assert [e.zone for e in ledger.entries] == [
        Zone.SAFE, Zone.OVER, Zone.DANGER, Zone.SAFE, Zone.SAFE, Zone.SAFE,
    ]
    summary = ledger.summary()
    assert (summary.calls_over, summary.peak, summary.peak_zone) == (1, 552, Zone.OVER)


def test_enforce_raises_on_the_call_over_the_window():
    """Enforce, window 500: research_1 (552 > 500) raises ContextOverflowError naming 552 and 500; it is
    still recorded."""
    ledger = WindowLedger(window_limit_tokens=500, enforce=True)
    calls = lesson_calls()
    ledger.record(calls[0][0], **calls[0][1])
    message = r"调用 'research_1' 需要 552 tokens，超过窗口上限 500 tokens"
    with pytest.raises(ContextOverflowError, match=message) as info:
        ledger.record(calls[1][0], **calls[1][1])
    with using("en"):
        english = str(ContextOverflowError("research_1", 552, 500))
    assert english == "context over the window: call 'research_1' needs 552 tokens, over the window limit of 500 tokens"
    assert (info.value.name, info.value.total, info.value.limit) == ("research_1", 552, 500)
    assert [e.name for e in ledger.entries] == ["plan", "research_1"]
    assert ledger.summary().calls_over == 1


def test_enforce_allows_exactly_the_window():
    """Enforce, window 552: the 552-token call is exactly 100 % (danger), so nothing is raised."""
    ledger = lesson_ledger(window_limit_tokens=552, enforce=True)
    assert ledger.summary().peak_zone is Zone.DANGER


def test_enforce_through_measured_call():
    """An enforcing ledger given to measured_call raises instead of returning the prompt."""
    ledger = WindowLedger(window_limit_tokens=10, enforce=True)
    with pytest.raises(ContextOverflowError):
        measured_call(ledger, "big", {"history": "h" * 44})  # 11 tokens > 10


def test_overflow_error_is_not_a_value_error():
    """ContextOverflowError is an Exception but deliberately not a ValueError (the input is well formed)."""
    assert issubclass(ContextOverflowError, Exception)
    assert not issubclass(ContextOverflowError, ValueError)


def test_without_enforce_nothing_is_raised():
    """Default (enforce off), window 500: all six calls are recorded although one is over."""
    assert len(lesson_ledger(window_limit_tokens=500).entries) == 6


def test_entries_cannot_be_changed_from_outside():
    """ledger.entries is a tuple copy: the ledger's record survives whatever the caller does with it."""
    ledger = lesson_ledger()
    entries = ledger.entries
    assert isinstance(entries, tuple)
    with pytest.raises(TypeError):
        entries[0].tokens["system"] = 99
    assert len(ledger.entries) == 6


def test_summarize_matches_the_ledger():
    """summarize(entries, limit) is what WindowLedger.summary returns for the same entries."""
    ledger = lesson_ledger()
    assert summarize(list(ledger.entries), 8_000) == ledger.summary()


def test_default_ledger_settings():
    """Defaults: window 8,000 tokens, FakeTokenizer, enforce off."""
    ledger = WindowLedger()
    assert (ledger.window_limit_tokens, ledger.tokenizer, ledger.enforce) == (8_000, FakeTokenizer(), False)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: zone(-1, 100), r"used must be >= 0 \(got -1\)"),
        (lambda: zone(1.5, 100), r"used must be an int \(got 1.5\)"),
        (lambda: zone(True, 100), r"used must be an int \(got True\)"),
        (lambda: zone(10, 0), r"limit must be >= 1 \(got 0\)"),
        (lambda: window_share(10, -8), r"limit must be >= 1 \(got -8\)"),
        (lambda: zones_for("12", 100), r"contexts must be a list or tuple of token counts \(got '12'\)"),
        (lambda: zones_for([10, -3], 100), r"contexts\[1\] must be >= 0 \(got -3\)"),
        (lambda: measure({"memory": "x"}, FakeTokenizer(), 8_000), r"unknown bucket 'memory'"),
        (lambda: measure({"history": 42}, FakeTokenizer(), 8_000), r"bucket 'history' must hold a str \(got 42\)"),
        (lambda: measure(["history"], FakeTokenizer(), 8_000), r"buckets must be a mapping .* \(got \['history'\]\)"),
        (lambda: measure({}, "len//4", 8_000), r"tokenizer must have a count\(text\) method \(got 'len//4'\)"),
        (lambda: measure({}, FakeTokenizer(), 0), r"limit must be >= 1 \(got 0\)"),
        (lambda: WindowLedger(window_limit_tokens=0), r"window_limit_tokens must be >= 1 \(got 0\)"),
        (lambda: WindowLedger(window_limit_tokens="8000"), r"window_limit_tokens must be an int \(got '8000'\)"),
        (lambda: WindowLedger(tokenizer=len), r"tokenizer must have a count\(text\) method"),
        (lambda: WindowLedger(enforce="yes"), r"enforce must be a bool \(got 'yes'\)"),
        (lambda: WindowLedger().record("x", memory="notes"), r"unknown bucket 'memory'"),
        (lambda: WindowLedger().record(7, history="h"), r"name must be a str \(got 7\)"),
        (lambda: measured_call({}, "x", {"history": "h"}), r"ledger must be a WindowLedger or None \(got \{\}\)"),
        (lambda: measured_call(None, "x", {"notes": "h"}), r"unknown bucket 'notes'"),
        (lambda: summarize(["entry"], 8_000), r"entries\[0\] must be a LedgerEntry \(got 'entry'\)"),
        (lambda: summarize([], 0), r"limit must be >= 1 \(got 0\)"),
    ],
)
def test_bad_input_is_rejected(build, match):
    """Every validation raises ValueError naming the argument (or bucket) and echoing the value."""
    with pytest.raises(ValueError, match=match):
        build()


def test_tokenizer_returning_a_non_count_is_rejected():
    """A tokenizer whose count returns -1 is rejected with a ValueError naming the bucket and the value."""

    class Broken:
        def count(self, text):
            return -1

    with pytest.raises(ValueError, match=r"tokenizer.count must return an int >= 0 \(got -1 for bucket 'system'\)"):
        measure({"system": "你是研究助理"}, Broken(), 8_000)


def test_a_missing_bucket_counts_0_whatever_the_tokenizer_says_of_the_empty_text():
    """A bucket left out is 0 tokens without asking the tokenizer: one that counts "" as 1 gives 0 for it.

    Only the given bucket is counted: "abcd" is len // 4 + 1 = 2 tokens, the three others 0, total 2.
    """

    class PlusOne:
        def count(self, text):
            return len(text) // 4 + 1

    entry = measure({"history": "abcd"}, PlusOne(), 8_000)
    assert dict(entry.tokens) == {"system": 0, "task_state": 0, "tool_results": 0, "history": 2}
    assert entry.total == 2
    assert measure({"history": ""}, PlusOne(), 8_000).total == 1  # a bucket given empty is counted


def test_ledger_entry_is_a_frozen_record():
    """A LedgerEntry cannot be reassigned and its tokens mapping is read-only."""
    entry = measure({"history": "h" * 8}, FakeTokenizer(), 8_000)
    with pytest.raises(AttributeError):
        entry.total = 0
    assert isinstance(entry, LedgerEntry) and entry.tokens["history"] == 2


# --- reserving room for the answer (max_tokens) ---------------------------------------------------

def test_reserve_output_defaults_to_measuring_the_prompt_alone():
    """Without a reservation, a prompt of exactly 8,000 of 8,000 tokens is danger, as in the lesson."""
    entry = measure({"history": "h" * 32_000}, FakeTokenizer(), 8_000)
    assert (entry.total, entry.zone, entry.reserve_output) == (8_000, Zone.DANGER, 0)


def test_reserve_output_counts_in_the_zone_not_in_the_total():
    """Prompt 7,000 + reserve 1,000 = 8,000 of 8,000 is danger; reserve 1,001 makes it over; total stays 7,000."""
    exact = measure({"history": "h" * 28_000}, FakeTokenizer(), 8_000, reserve_output=1_000)
    over = measure({"history": "h" * 28_000}, FakeTokenizer(), 8_000, reserve_output=1_001)
    assert (exact.total, exact.zone) == (7_000, Zone.DANGER)
    assert (over.total, over.zone) == (7_000, Zone.OVER)


def test_reserve_output_moves_the_caution_line():
    """Prompt 3,800 of 8,000 is safe alone (47.5 %) but caution with 1,000 reserved (4,800 = 60 %)."""
    assert measure({"tool_results": "r" * 15_200}, FakeTokenizer(), 8_000).zone is Zone.SAFE
    assert measure({"tool_results": "r" * 15_200}, FakeTokenizer(), 8_000, reserve_output=1_000).zone is Zone.CAUTION


def test_enforcing_ledger_refuses_a_prompt_that_leaves_no_room_for_the_reserved_output():
    """Window 8,000, reserve 1,000: a 7,500-token prompt fits alone but is refused; the error says
    8,500 = 7,500 + 1,000."""
    ledger = WindowLedger(enforce=True, reserve_output=1_000)
    with pytest.raises(ContextOverflowError, match=r"需要 8500 tokens（提示词 7500 \+ 预留输出 1000）"):
        ledger.record("big", history="h" * 30_000)
    with using("en"):
        english = str(ContextOverflowError("big", 8_500, 8_000, reserve_output=1_000))
    assert "needs 8500 tokens (prompt 7500 + reserved output 1000)" in english
    assert len(ledger.entries) == 1 and ledger.summary().calls_over == 1


def test_summary_zone_counts_the_reservation():
    """Six lesson calls with 7,448 reserved: peak 552 + 7,448 = 8,000 is danger; with 7,449 one call is over."""
    for reserve, peak_zone, over in ((7_448, Zone.DANGER, 0), (7_449, Zone.OVER, 1)):
        ledger = WindowLedger(reserve_output=reserve)
        for name, buckets in lesson_calls():
            ledger.record(name, **buckets)
        s = ledger.summary()
        assert (s.peak, s.peak_zone, s.calls_over) == (552, peak_zone, over)


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_reserve_output_must_be_a_non_negative_int(bad):
    """A negative or non-int reserve_output raises ValueError naming the argument."""
    with pytest.raises(ValueError, match="reserve_output"):
        WindowLedger(reserve_output=bad)
    with pytest.raises(ValueError, match="reserve_output"):
        measure({}, FakeTokenizer(), 8_000, reserve_output=bad)


# --- the lesson's long haul ------------------------------------------------------------------------

def test_long_haul_source_5_uses_5065_of_8000_and_is_caution():
    """Source 5: 2,000 + 465 + 5 × (450 + 70) = 5,065 tokens, 63.3 % of 8,000 -> caution (the lesson's figure)."""
    name, buckets = long_haul_calls(5)[-1]
    entry = measure(buckets, FakeTokenizer(), 8_000)
    assert (name, entry.total, entry.zone) == ("S05", 5_065, Zone.CAUTION)


def test_long_haul_warns_at_source_5_and_dies_at_source_11():
    """Source 4 is 4,545 (safe), 5 is the first caution, 10 is 7,665 (still in), 11 is 8,185 > 8,000 (over)."""
    ledger = WindowLedger()
    zones = [ledger.record(name, **buckets).zone for name, buckets in long_haul_calls(11)]
    assert zones.index(Zone.CAUTION) + 1 == 5
    assert zones.index(Zone.OVER) + 1 == 11
    assert [e.total for e in ledger.entries][3:] == [4_545, 5_065, 5_585, 6_105, 6_625, 7_145, 7_665, 8_185]


def test_long_haul_rejects_bad_arguments():
    """sources must be >= 1 and haul a LongHaul; a negative size is refused."""
    with pytest.raises(ValueError, match=r"sources must be >= 1 \(got 0\)"):
        long_haul_calls(0)
    with pytest.raises(ValueError, match="haul"):
        long_haul_calls(3, haul={"source": 450})
    with pytest.raises(ValueError, match="source"):
        LongHaul(source=-1)
