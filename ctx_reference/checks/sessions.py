"""Visible check cases of notebook 10, sessions (hand-written literals).

``write_progress`` is checked on three small records whose costs are worked out by hand
(``estimate_tokens`` of their lines: 8, 11 and 11 tokens), so each ✗ line points at one rule:
the order of kinds, skipping a record that does not fit, keeping only the newest next step,
newest first within a kind, and returning the kept records in input order. ``restore`` is
checked on small progress files: header and blank lines skipped, file order kept, a malformed
line refused with ValueError.
"""
from ctx_reference.sessions import Record, restore as reference_restore, write_progress as reference_write_progress

from .runner import CheckCase

_DONE = Record("done", 1, "建好用户表")        # "[done] t1: 建好用户表" -> 3 + 5 = 8 tokens
_FAILED = Record("failed", 2, "缓存加锁：死锁")  # 4 + 7 = 11 tokens
_NEXT = Record("next", 3, "给导出接口加分页")     # 3 + 8 = 11 tokens


def _kinds(records) -> list[str]:
    """Return the kinds of the returned records, in order."""
    return [r.kind for r in records]


def _turns(records) -> list[int]:
    """Return the turns of the returned records, in order."""
    return [r.turn for r in records]


#: The reference functions that ARE each exercise: answering with them scores 0.
REFERENCES = {"write_progress": (reference_write_progress,), "restore": (reference_restore,)}


CASES: dict[str, tuple[CheckCase, ...]] = {
    "write_progress": (
        CheckCase(
            "预算 30：三条（8 + 11 + 11 = 30 token）正好都放得下，按原来的顺序返回",
            args=([_DONE, _FAILED, _NEXT], 30),
            expect=["done", "failed", "next"],
            project=_kinds,
        ),
        CheckCase(
            "预算 25：先放 next（11），再放 failed（11），done（8）放不进剩下的 3",
            args=([_DONE, _FAILED, _NEXT], 25),
            expect=["failed", "next"],
            project=_kinds,
        ),
        CheckCase(
            "预算 19：放了 next 剩 8，failed（11）放不下就跳过，done（8）正好放得下",
            args=([_DONE, _FAILED, _NEXT], 19),
            expect=["done", "next"],
            project=_kinds,
        ),
        CheckCase(
            "两条 next（第 20、40 轮），预算充足：只留最新的一条",
            args=([Record("next", 20, "写接口"), Record("next", 40, "写测试")], 1_000),
            expect=[40],
            project=_turns,
        ),
        CheckCase(
            "三条 done 各 8 token，预算 16：留最新的两条（第 2、3 轮）",
            args=([Record("done", t, "建好用户表") for t in (1, 2, 3)], 16),
            expect=[2, 3],
            project=_turns,
        ),
        CheckCase("预算 0：什么都不留", args=([_DONE, _FAILED, _NEXT], 0), expect=[], project=_kinds),
        CheckCase("没有记录：返回空列表", args=([], 100), expect=[], project=_kinds),
    ),
    "restore": (
        CheckCase(
            "标题行和空行跳过，按文件里的顺序读回",
            args=("# progress\n[next] t3: 给导出接口加分页\n\n[done] t1: 建好用户表",),
            expect=[_NEXT, _DONE],
        ),
        CheckCase(
            "只有标题行：没有记录",
            args=("# progress",),
            expect=[],
        ),
        CheckCase(
            "一行 failed 记录：种类、轮次、文字都要读对",
            args=("# progress\n[failed] t12: 改成异步：测试不稳定",),
            expect=[Record("failed", 12, "改成异步：测试不稳定")],
        ),
        CheckCase(
            "格式不对的一行（TODO: 写测试）要报 ValueError",
            args=("# progress\nTODO: 写测试",),
            raises=ValueError,
        ),
    ),
}
