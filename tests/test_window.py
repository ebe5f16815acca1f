"""Tests for ctx_reference.window: fit checks, output room, remaining room and the model table."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.window import (
    DEFAULT_WINDOW,
    MODEL_TABLE,
    Outcome,
    Window,
    model_family,
    model_limits,
    remaining,
)

SIZES = st.integers(min_value=1, max_value=2_000_000)
COUNTS = st.integers(min_value=0, max_value=3_000_000)


def test_window_check():
    """Seed: in a 1,000,000 window, 950,000 in + 128,000 out = 1,078,000 > 1,000,000 -> MAY_TRUNCATE."""
    window = Window(1_000_000)
    assert window.check(950_000, 128_000) is Outcome.MAY_TRUNCATE
    assert window.check(800_000, 128_000) is Outcome.FITS  # 928,000 <= 1,000,000
    assert window.check(1_000_001, 128_000) is Outcome.REJECTED  # the input alone is over


def test_window_check_boundaries():
    """Exactly full is FITS; one token over is MAY_TRUNCATE; an input one over the size is REJECTED."""
    window = Window(200_000)
    assert window.check(72_000, 128_000) is Outcome.FITS  # 72,000 + 128,000 = 200,000
    assert window.check(72_001, 128_000) is Outcome.MAY_TRUNCATE  # 200,001
    assert window.check(200_000, 0) is Outcome.FITS
    assert window.check(200_000, 1) is Outcome.MAY_TRUNCATE
    assert window.check(200_001, 0) is Outcome.REJECTED


def test_max_output_seed():
    """Seed: 1,000,000 - 950,000 = 50,000 tokens can still be generated."""
    assert Window(1_000_000).max_output(950_000) == 50_000


def test_max_output_edges():
    """A full window leaves 0; an input over the window (REJECTED) also gives 0, not a negative number."""
    window = Window(1_000_000)
    assert window.max_output(1_000_000) == 0
    assert window.max_output(1_200_000) == 0
    assert window.max_output(0) == 1_000_000


@given(SIZES, COUNTS, COUNTS)
def test_check_agrees_with_max_output(size, input_tokens, max_tokens):
    """A request FITS exactly when it is not rejected and max_tokens is within max_output."""
    window = Window(size)
    outcome = window.check(input_tokens, max_tokens)
    if outcome is Outcome.REJECTED:
        assert input_tokens > size
        assert window.max_output(input_tokens) == 0
    else:
        assert input_tokens + window.max_output(input_tokens) == size
        assert (outcome is Outcome.FITS) == (max_tokens <= window.max_output(input_tokens))


@given(SIZES, COUNTS, COUNTS, st.integers(min_value=0, max_value=1_000))
def test_check_never_improves_with_more_output(size, input_tokens, max_tokens, extra):
    """Asking for more output never turns MAY_TRUNCATE into FITS, and never changes REJECTED."""
    order = {Outcome.FITS: 0, Outcome.MAY_TRUNCATE: 1, Outcome.REJECTED: 2}
    window = Window(size)
    before = window.check(input_tokens, max_tokens)
    after = window.check(input_tokens, max_tokens + extra)
    assert order[after] >= order[before]
    assert (before is Outcome.REJECTED) == (after is Outcome.REJECTED)


def test_window_is_frozen():
    """A Window cannot be resized in place."""
    window = Window(1_000_000)
    with pytest.raises(AttributeError):
        window.size = 5


@pytest.mark.parametrize("bad, pattern", [
    (0, r"size must be >= 1 \(got 0\)"),
    (-1, r"size must be >= 1 \(got -1\)"),
    (1.5, r"size must be an int \(got 1.5\)"),
    (True, r"size must be an int \(got True\)"),
    ("1000", r"size must be an int \(got '1000'\)"),
])
def test_window_rejects_bad_size(bad, pattern):
    """A window of zero, a negative, a float, a bool or a str raises ValueError naming `size`."""
    with pytest.raises(ValueError, match=pattern):
        Window(bad)


@pytest.mark.parametrize("input_tokens, max_tokens, pattern", [
    (-1, 10, r"input_tokens must be >= 0 \(got -1\)"),
    (10, -5, r"max_tokens must be >= 0 \(got -5\)"),
    (10.0, 10, r"input_tokens must be an int \(got 10.0\)"),
    (10, None, r"max_tokens must be an int \(got None\)"),
    (False, 10, r"input_tokens must be an int \(got False\)"),
])
def test_check_rejects_bad_counts(input_tokens, max_tokens, pattern):
    """check() raises ValueError naming the bad count and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        Window(1_000).check(input_tokens, max_tokens)


def test_max_output_rejects_bad_input():
    """max_output() of a negative input raises ValueError naming `input_tokens`."""
    with pytest.raises(ValueError, match=r"input_tokens must be >= 0 \(got -3\)"):
        Window(1_000).max_output(-3)


def test_remaining_seed():
    """Seed: 1,000,000 - (800,000 + 50,000 + 20,000) - 64,000 = 66,000 < 100,000 -> compact."""
    assert remaining(1_000_000, 800_000, 50_000, 20_000, 64_000) == (66_000, True)


def test_remaining_without_cache_fields_is_wrong():
    """Counting only input_tokens (read = write = 0) gives 1,000,000 - 20,000 - 64,000 = 916,000: no compact."""
    assert remaining(1_000_000, 0, 0, 20_000, 64_000) == (916_000, False)


def test_remaining_threshold_is_strict():
    """left == window / 10 does not compact; one token less does (100,000 vs 99,999 in 1,000,000)."""
    assert remaining(1_000_000, 800_000, 0, 36_000, 64_000) == (100_000, False)
    assert remaining(1_000_000, 800_000, 0, 36_001, 64_000) == (99_999, True)


def test_remaining_threshold_with_uneven_window():
    """With window 15, a tenth is 1.5: left 1 compacts, left 2 does not (no integer rounding of the tenth)."""
    assert remaining(15, 0, 0, 14, 0) == (1, True)
    assert remaining(15, 0, 0, 13, 0) == (2, False)


def test_remaining_over_committed_is_negative():
    """Over-committed: 200,000 - (150,000 + 10,000 + 5,000) - 64,000 = -29,000, and compact is True."""
    assert remaining(200_000, 150_000, 10_000, 5_000, 64_000) == (-29_000, True)


@given(SIZES, COUNTS, COUNTS, COUNTS, COUNTS)
def test_remaining_compact_whenever_left_is_small(window, read, write, input_tokens, max_tokens):
    """compact is True exactly when 10 * left < window, and every cached token lowers left by one."""
    left, compact = remaining(window, read, write, input_tokens, max_tokens)
    assert compact == (10 * left < window)
    assert remaining(window, read + 1, write, input_tokens, max_tokens)[0] == left - 1
    assert remaining(window, read, write + 1, input_tokens, max_tokens)[0] == left - 1


@pytest.mark.parametrize("args, pattern", [
    ((0, 0, 0, 0, 0), r"window must be >= 1 \(got 0\)"),
    ((1_000, -1, 0, 0, 0), r"read must be >= 0 \(got -1\)"),
    ((1_000, 0, -2, 0, 0), r"write must be >= 0 \(got -2\)"),
    ((1_000, 0, 0, -3, 0), r"input must be >= 0 \(got -3\)"),
    ((1_000, 0, 0, 0, -4), r"max_tokens must be >= 0 \(got -4\)"),
    ((1_000, "800", 0, 0, 0), r"read must be an int \(got '800'\)"),
    ((1e6, 0, 0, 0, 0), r"window must be an int \(got 1000000.0\)"),
])
def test_remaining_rejects_bad_input(args, pattern):
    """remaining() raises ValueError naming the bad argument and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        remaining(*args)


def test_model_table_long_context_families():
    """Seed: ten families of the lesson's list (Fable 5.1 ... Haiku 5.5, Opus 4.6-4.8 as three; Sonnet 5 is now read
    from its page) have 1,000,000 / 128,000; the docs rows say the same of Fable 5, Mythos 5, Sonnet 5 ("Context
    window: 1M tokens · Max output: 128K tokens", their overview pages) and Fable 5.2 / Mythos 5.2 ("1M | 128K", the
    Indonesian Sonnet 5 overview's comparison table)."""
    seed = [row for row in MODEL_TABLE if row.window == 1_000_000 and row.source == "seed"]
    docs = [row for row in MODEL_TABLE if row.source == "docs" and row.window == 1_000_000]
    assert len(seed) == 10
    assert sorted((row.family, row.window, row.max_output) for row in docs) == [
        ("Fable 5", 1_000_000, 128_000), ("Fable 5.2", 1_000_000, 128_000), ("Mythos 5", 1_000_000, 128_000),
        ("Mythos 5.2", 1_000_000, 128_000), ("Sonnet 5", 1_000_000, 128_000)]
    assert {row.max_output for row in seed} == {128_000}
    assert model_limits("Opus 4.7").window == 1_000_000
    assert model_limits("Haiku 5.5").max_output == 128_000
    assert {row.source for row in MODEL_TABLE} <= {"seed", "docs"}


def test_model_table_the_200k_families_of_the_docs():
    """Haiku 4.5 is current at "200K tokens / 64K tokens" (models overview); Sonnet 4.5 "retires on November 30,
    2026", so it is retired on the read date 2026-12-05, with "Max output: 64K tokens" (its overview page)."""
    haiku, sonnet = model_limits("claude-haiku-4-5"), model_limits("Sonnet 4.5")
    assert (haiku.window, haiku.max_output, haiku.status, haiku.source) == (200_000, 64_000, "current", "docs")
    assert (sonnet.window, sonnet.max_output, sonnet.status, sonnet.source) == (200_000, 64_000, "retired", "docs")
    assert sonnet.deprecated is True and haiku.deprecated is False
    assert DEFAULT_WINDOW == 200_000


def test_model_table_statuses_as_the_pages_give_them():
    """Sonnet 5 and Fable 5 are legacy ("Legacy. Released June 30, 2026" / "June 9, 2026"), Sonnet 5.5 the current
    Sonnet (Sonnet 5 overview), Fable 5.1 the current Fable by the en Fable 5 page and Fable 5.2 by the Indonesian
    Sonnet 5 page (the two disagree); every docs row says when it was read, every status is one of STATUSES."""
    status = {row.family: row.status for row in MODEL_TABLE}
    assert (status["Sonnet 5"], status["Fable 5"], status["Sonnet 5.5"]) == ("legacy", "legacy", "current")
    assert (status["Fable 5.1"], status["Fable 5.2"]) == ("current", "current")
    assert {row.status for row in MODEL_TABLE} <= {None, "current", "legacy", "retired"}
    assert all(row.read == "2026-12-05" for row in MODEL_TABLE if row.source == "docs")
    assert all(row.read == "2026-10" for row in MODEL_TABLE if row.source == "seed")
    assert len({row.family for row in MODEL_TABLE}) == len(MODEL_TABLE)


@pytest.mark.parametrize("model, family", [
    ("claude-sonnet-5", "Sonnet 5"), ("claude-opus-4-7", "Opus 4.7"), ("claude-sonnet-5-5", "Sonnet 5.5"),
    ("claude-sonnet-4-5-20250929", "Sonnet 4.5"), ("claude-fable-5", "Fable 5"), ("claude-mythos-5-1", "Mythos 5.1"),
    ("Haiku 5.5", "Haiku 5.5"), ("claude-haiku-4-5", "Haiku 4.5"), ("claude-fable-5-2", "Fable 5.2"),
])
def test_model_limits_takes_api_ids(model, family):
    """The API ids the notebooks use name their family's row: claude-sonnet-5 is Sonnet 5 (1,000,000 tokens)."""
    assert model_family(model) == family
    assert model_limits(model).family == family


@pytest.mark.parametrize("model, pattern", [
    ("Sonnet 4", r"model must be a family of MODEL_TABLE .* \(got 'Sonnet 4', family 'Sonnet 4'\)"),
    ("claude-haiku-3-5", r"model must be a family of MODEL_TABLE .* \(got 'claude-haiku-3-5', family 'Haiku 3.5'\)"),
    ("gpt-5.5", r"model must be a Claude model id such as 'claude-sonnet-5' .* \(got 'gpt-5.5'\)"),
    ("sonnet 5", r"model must be a Claude model id .* \(got 'sonnet 5'\)"),
])
def test_model_limits_refuses_a_model_it_does_not_list(model, pattern):
    """A family the table does not hold, or a name that is no Claude model, raises naming `model` instead of
    guessing 200,000."""
    with pytest.raises(ValueError, match=pattern):
        model_limits(model)


def test_model_limits_rejects_non_str():
    """model_limits() of a non-str raises ValueError naming `model`."""
    with pytest.raises(ValueError, match=r"model must be a str \(got 4.5\)"):
        model_limits(4.5)
