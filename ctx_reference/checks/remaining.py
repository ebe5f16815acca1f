"""Visible check cases of notebook 02, Remaining (literals from SPEC §3)."""
from .runner import CheckCase

CASES: dict[str, tuple[CheckCase, ...]] = {
    "remaining": (
        CheckCase(
            "课上的例子：窗口 1,000,000，读缓存 800,000，写缓存 50,000，普通输入 20,000，max_tokens 64,000",
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
    ),
}
