"""Reconciling the estimate: relative errors, receipts recorded from the real rulers, and the least-squares fit."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.calibrate import (
    FIT_TEXTS,
    HELD_OUT_TEXTS,
    HELD_OUT_TOKENS,
    KINDS,
    RECEIPT_TOKENS,
    LinearEstimate,
    Receipt,
    char_counts,
    chinese_long_haul_calls,
    error_by_kind,
    fit_rates,
    held_out_receipts,
    lesson_bucket_texts,
    receipt_error_by_kind,
    relative_error,
    usage_receipts,
)
from ctx_reference.ledger import LongHaul, long_haul_calls
from ctx_reference.rulers import real_rulers
from ctx_reference.tokens import FakeTokenizer, estimate_tokens


class Estimate:
    def count(self, text):
        return estimate_tokens(text)


def _live():
    rulers, notes = real_rulers()
    if notes:
        pytest.skip("the tokenizers extra is not installed: " + "; ".join(notes))
    return rulers


def test_recorded_receipts_are_the_real_counts():
    """RECEIPT_TOKENS and HELD_OUT_TOKENS equal what each real ruler counts for every sample text today."""
    for name, ruler in _live().items():
        for kind in KINDS:
            assert RECEIPT_TOKENS[name][kind] == tuple(ruler.count(t) for t in FIT_TEXTS[kind]), (name, kind)
            assert HELD_OUT_TOKENS[name][kind] == tuple(ruler.count(t) for t in HELD_OUT_TEXTS[kind]), (name, kind)


def test_fit_and_held_out_texts_are_distinct():
    """No held-out text is also a fit text, and every kind has 3 fit texts and 2 held out."""
    for kind in KINDS:
        assert not set(FIT_TEXTS[kind]) & set(HELD_OUT_TEXTS[kind])
        assert (len(FIT_TEXTS[kind]), len(HELD_OUT_TEXTS[kind])) == (3, 2)


def test_chinese_prose_is_chinese_and_the_others_mostly_ascii():
    """Chinese prose has no ASCII character; English prose and code have no non-ASCII one."""
    for text in FIT_TEXTS["zh_prose"] + HELD_OUT_TEXTS["zh_prose"]:
        assert char_counts(text)[0] == 0
    for kind in ("en_prose", "code"):
        for text in FIT_TEXTS[kind] + HELD_OUT_TEXTS[kind]:
            assert char_counts(text)[1] == 0


def test_usage_receipts_pair_texts_with_recorded_counts():
    """usage_receipts("Qwen")["code"][1] is the second code text with Qwen's recorded 94 tokens."""
    receipt = usage_receipts("Qwen")["code"][1]
    assert receipt == Receipt(FIT_TEXTS["code"][1], 94)
    assert [len(held_out_receipts("o200k_base")[k]) for k in KINDS] == [2, 2, 2, 2]


def test_unknown_ruler_name_is_one_error():
    """usage_receipts("gpt2") raises ValueError naming ruler_name and the value."""
    with pytest.raises(ValueError, match="ruler_name must be one of o200k_base, Qwen \\(got 'gpt2'\\)"):
        usage_receipts("gpt2")


def test_relative_error_sign():
    """38 estimated for 50 real is -24 % (undercount); 60 for 50 is +20 %."""
    assert relative_error(38, 50) == pytest.approx(-0.24)
    assert relative_error(60, 50) == pytest.approx(0.2)


def test_relative_error_needs_real_tokens():
    """A real count of 0 raises ValueError naming real."""
    with pytest.raises(ValueError, match="real must be >= 1"):
        relative_error(3, 0)


def test_error_by_kind_sums_tokens_before_dividing():
    """Two English texts of 8 and 400 characters against a 1-token-per-char ruler: (2 + 100) / 408 - 1, not the mean."""
    per_char = LinearEstimate(1.0, 1.0)
    errors = error_by_kind({"en": ["a" * 8, "b" * 400]}, FakeTokenizer(), per_char)
    assert errors == {"en": pytest.approx((2 + 100) / 408 - 1)}


def test_error_by_kind_rejects_a_bare_string():
    """A kind mapped to one string (not a list of texts) raises ValueError naming the kind."""
    with pytest.raises(ValueError, match="texts_by_kind\\['zh'\\] must be a non-empty list"):
        error_by_kind({"zh": "上下文"}, FakeTokenizer(), FakeTokenizer())


def test_estimate_undercounts_json_and_fake_undercounts_chinese_under_both_real_rulers():
    """Under both real rulers: estimate_tokens undercounts JSON by over 25 %, len // 4 Chinese by over 60 %."""
    texts = {k: FIT_TEXTS[k] + HELD_OUT_TEXTS[k] for k in KINDS}
    for ruler in _live().values():
        assert error_by_kind(texts, Estimate(), ruler)["json"] < -0.25
        assert error_by_kind(texts, FakeTokenizer(), ruler)["zh_prose"] < -0.6


def test_lesson_bucket_texts_are_the_lesson_calls_non_empty_buckets():
    """The lesson's buckets hold 88 / 1,080 / 277 FakeTokenizer tokens, as the ledger's summary says."""
    counts = {b: sum(FakeTokenizer().count(t) for t in texts) for b, texts in lesson_bucket_texts().items()}
    assert counts == {"task_state": 88, "tool_results": 1_080, "history": 277}


def test_fit_rates_recovers_exact_rates_by_hand():
    """40 ASCII -> 10, 10 Chinese -> 15, both -> 25: the fit is exactly (0.25, 1.5)."""
    got = fit_rates([Receipt("a" * 40, 10), Receipt("中" * 10, 15), Receipt("a" * 40 + "中" * 10, 25)])
    assert got == pytest.approx((0.25, 1.5)) and all(type(v) is float for v in got)


def test_fit_rates_one_script_each_is_the_ratio_of_sums():
    """ASCII 10 -> 3 and 20 -> 5 give 130 / 500 = 0.26; Chinese 5 -> 4 and 10 -> 7 give 90 / 125 = 0.72."""
    receipts = [Receipt("a" * 10, 3), Receipt("b" * 20, 5), Receipt("字" * 5, 4), Receipt("词" * 10, 7)]
    assert fit_rates(receipts) == pytest.approx((0.26, 0.72))


@pytest.mark.parametrize("receipts", [[], [Receipt("abc", 1)], [Receipt("ab账", 2), Receipt("abab账账", 4)]])
def test_fit_rates_refuses_what_cannot_tell_the_rates_apart(receipts):
    """No receipts, one script only, or receipts in one proportion: ValueError naming receipts."""
    with pytest.raises(ValueError, match="receipts"):
        fit_rates(receipts)


def test_fit_rates_leaves_the_list_unchanged():
    """The caller's list of receipts is the same list, in the same order, after the fit."""
    receipts = [Receipt("a" * 40, 10), Receipt("中" * 10, 15)]
    copy = list(receipts)
    fit_rates(receipts)
    assert receipts == copy


@given(st.integers(1, 40), st.integers(1, 40),
       st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15)), min_size=2, max_size=8))
def test_fit_rates_recovers_any_rates_from_exact_receipts(a_quarters, b_quarters, sizes):
    """Receipts made exactly from rates a/4 and b/4 give a/4 and b/4 back, unless all collinear (ValueError)."""
    chars = [(4 * n, 4 * m) for n, m in sizes]  # multiples of 4: every receipt is a whole number of tokens
    receipts = [Receipt("x" * n + "字" * m, (a_quarters * n + b_quarters * m) // 4) for n, m in chars]
    collinear = all(n1 * m2 == n2 * m1 for n1, m1 in chars for n2, m2 in chars)
    if collinear:
        with pytest.raises(ValueError, match="receipts"):
            fit_rates(receipts)
    else:
        assert fit_rates(receipts) == pytest.approx((a_quarters / 4, b_quarters / 4), abs=1e-9)


def test_fitted_estimate_fixes_chinese_on_held_out_texts():
    """Fitted on o200k_base's receipts, the estimate's error on held-out Chinese drops from above 20 % to below 5 %."""
    receipts = [r for rs in usage_receipts("o200k_base").values() for r in rs]
    fitted = LinearEstimate(*fit_rates(receipts))
    held = held_out_receipts("o200k_base")
    assert receipt_error_by_kind(held, Estimate())["zh_prose"] > 0.2
    assert abs(receipt_error_by_kind(held, fitted)["zh_prose"]) < 0.05


def test_linear_estimate_rounds_up_after_removing_float_noise():
    """0.1 per ASCII char over 30 chars is 3 tokens (not 4 from 3.0000000000000004); 31 chars round up to 4."""
    assert LinearEstimate(0.1, 0.0).count("a" * 30) == 3
    assert LinearEstimate(0.1, 0.0).count("a" * 31) == 4


def test_linear_estimate_rejects_negative_rates():
    """A negative per_ascii raises ValueError naming it and the value."""
    with pytest.raises(ValueError, match=r"per_ascii must be a finite number >= 0 \(got -0.5\)"):
        LinearEstimate(-0.5, 1.0)


def test_chinese_long_haul_matches_the_lesson_under_the_estimate():
    """Written in Chinese, the long haul's estimate after source k is 2,465 + 520 k (5,065 at source 5)."""
    totals = [sum(estimate_tokens(t) for t in b.values()) for _, b in chinese_long_haul_calls(12)]
    assert totals == [2_465 + 520 * k for k in range(1, 13)]


def test_chinese_long_haul_is_chinese_with_one_fourth_the_fake_count():
    """Each Chinese bucket has no ASCII and as many characters as the English bucket has FakeTokenizer tokens."""
    english = long_haul_calls(3, LongHaul())
    chinese = chinese_long_haul_calls(3, LongHaul())
    for (_, en), (_, zh) in zip(english, chinese, strict=True):
        for bucket in en:
            assert char_counts(zh[bucket]) == (0, FakeTokenizer().count(en[bucket]))
