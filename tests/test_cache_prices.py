"""Tests for ctx_reference.cache_prices: the multiples of the input price come from the pages' dollar figures."""
import pytest

from ctx_reference.cache_prices import CACHE_PRICES, TTLS, cache_multiples, cache_price


def test_sonnet_5_is_the_lessons_prices():
    """Sonnet 5: a 5-minute write $2.50 and a read $0.20 on a $2 input are the lesson's 1.25 and 0.1; the 1-hour
    write, $4, is 2 (Sonnet 5 overview page)."""
    assert cache_multiples("claude-sonnet-5") == (1.25, 0.1)
    assert cache_multiples("claude-sonnet-5", "1h") == (2.0, 0.1)


def test_sonnet_5_5_reads_at_half_sonnet_5s_rate():
    """Sonnet 5.5: the same prices but a read of $0.10, "half the Claude Sonnet 5 rate": 0.05 of the input price
    (zh-CN Sonnet 5.5 migration guide)."""
    assert cache_multiples("claude-sonnet-5-5") == (1.25, 0.05)
    assert cache_multiples("claude-sonnet-5-5", "1h") == (2.0, 0.05)
    assert cache_price("claude-sonnet-5-5").read * 2 == cache_price("claude-sonnet-5").read


def test_every_row_writes_dearer_for_longer_and_reads_cheaper_than_input():
    """For every model: read < input < 5-minute write < 1-hour write, and a fact id per row."""
    assert TTLS == ("5m", "1h")
    for row in CACHE_PRICES:
        assert row.read < row.input < row.write_5m < row.write_1h, row
        assert row.fact.startswith("prices.")


@pytest.mark.parametrize("args, message", [
    (("claude-opus-5",), r"model must be one of claude-sonnet-5, claude-sonnet-5-5; .* \(got 'claude-opus-5'\)"),
    (("claude-sonnet-5", "1d"), r"ttl must be one of '5m', '1h' \(got '1d'\)"),
    ((5,), r"model must be a str \(got 5\)"),
])
def test_bad_input_is_named(args, message):
    """A model the table does not list, an unknown time to live or a non-str model raise naming the argument."""
    with pytest.raises(ValueError, match=message):
        cache_multiples(*args)
