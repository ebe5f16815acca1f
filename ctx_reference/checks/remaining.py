"""Visible check cases of notebook 02, Remaining (literals from docs/models.md §3)."""
from ..window import remaining as reference_remaining
from .runner import CheckCase

REFERENCES = {"remaining": (reference_remaining,)}

CASES: dict[str, tuple[CheckCase, ...]] = {
    "remaining": (
        CheckCase(
            "原课的例子：窗口 1,000,000，读缓存 800,000，写缓存 50,000，普通输入 20,000，max_tokens 64,000",
            args=(1_000_000, 800_000, 50_000, 20_000, 64_000),
            expect=(66_000, True),
        ),
        CheckCase(
            "空窗口起步：窗口 200,000，没有缓存，输入 10,000，max_tokens 8,000",
            args=(200_000, 0, 0, 10_000, 8_000),
            expect=(182_000, False),
        ),
        CheckCase(
            "正好剩 10%：窗口 100,000，读 50,000，写 20,000，输入 10,000，max_tokens 10,000",
            args=(100_000, 50_000, 20_000, 10_000, 10_000),
            expect=(10_000, False),
        ),
        CheckCase(
            "只差 1 个 token：窗口 100,000，读 50,000，写 20,000，输入 10,001，max_tokens 10,000",
            args=(100_000, 50_000, 20_000, 10_001, 10_000),
            expect=(9_999, True),
        ),
        CheckCase(
            "超额时余量是负数：窗口 100,000，读 90,000，输入 10,000，max_tokens 8,000",
            args=(100_000, 90_000, 0, 10_000, 8_000),
            expect=(-8_000, True),
        ),
        CheckCase(
            "窗口不是 10 的倍数：窗口 1,005，输入 905，余量 100 < 100.5（十分之一不要用整除）",
            args=(1_005, 0, 0, 905, 0),
            expect=(100, True),
        ),
    ),
}
