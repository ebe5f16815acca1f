"""Hints in steps for every exercise: from the idea to the rule most often broken, never the code.

Covers: the hints of each exercise (``HINTS``: two or three, the first the idea, the later ones
each about one rule of its ``RULES`` table), which hint comes next (``next_hint``, a pure function
of the hints, the ones already shown and the rules the last check broke: a broken rule's hint
first), the line a failed check ends with (``ask_line``) and ``hint``, which a notebook calls and
which shows the next hint each time, remembering in this kernel which ones it showed.

Leaves out: the checks themselves (``checks/``) and the record of what they saw (``attempts.py``),
the model answers (``model_answers.py``).

Vocabulary: a hint is *for* a rule when it names the mistake that breaks it; the *idea* hint is
for none. Hints are messages: the Chinese text is the id, the English is in the catalogue. Under a
grader no hint is shown and a failed check does not offer one.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .attempts import attempt, grading
from .i18n import N_, _


@dataclass(frozen=True)
class Hint:
    """One hint: its text (a message) and the name of the rule it is for (None: the idea)."""

    text: str
    rule: str | None = None


HINTS: dict[str, tuple[Hint, ...]] = {
    "check": (
        Hint(N_("三种结果对应两道门槛：先看输入一项，再看输入加上输出上限。两道门槛的先后决定了返回哪一种。")),
        Hint(N_("输入本身已经超过窗口时，请求根本发不出去：这一步要在加上 max_tokens 之前判断。"), "input-over-window"),
        Hint(N_("“超”是严格大于：合计正好等于窗口大小时还放得下。检查一下你的比较符号。"), "equal-is-not-over"),
    ),
    "estimate_tokens": (
        Hint(N_("把字符分成两类来数：码位小于 128 的（ASCII）和其余的。两类的换算比例不同。")),
        Hint(N_("ASCII 字符要整段合起来数，最后只向上取整一次；每遇到一段就取整，会多算。"),
             "ascii-counted-together"),
        Hint(N_("向上取整不是四舍五入：1 个 ASCII 字符也算 1 个 token。整数的向上取整可以只用整数运算做到。"),
             "rounded-up"),
    ),
    "remaining": (
        Hint(N_("余量就是窗口减去这次请求会占的一切：三种输入和输出上限都要减。")),
        Hint(N_("“小于十分之一”拿余量和窗口的十分之一比：窗口不是 10 的倍数时，整除会把边界挪开。"), "below-a-tenth"),
        Hint(N_("超额时余量就是负数，照实返回，不要截成 0。"), "negative-when-over"),
    ),
    "recall": (
        Hint(N_("召回率是两个系数的乘积：一个只看总长度 n，一个只看答案所在的相对位置 x。先分别写出这两个，再相乘。")),
        Hint(N_("x 取的是答案那个 token 的中点：位置加 0.5 再除以 n，不是 pos / n。"), "x-at-the-token-middle"),
        Hint(N_("位置系数在 x = 0.5 时最低，两端为 1；middle 决定最低点有多深。"), "middle-dip"),
    ),
    "fit_position": (
        Hint(N_("把模型写成对三个系数线性的形式，就能用最小二乘一次解出来：每个测量点是一行方程。")),
        Hint(N_("第 p 篇（从 1 数起）的相对位置是它的中点：(p − 0.5) / N。"), "x-from-the-position"),
        Hint(N_("解出的是乘在一起的系数，middle 和 end_drop 要各自除以第一个系数才换回原来的参数。"),
             "ratios-of-coefficients"),
    ),
    "assemble": (
        Hint(N_("分三步：先放必需项（放不下就报错），再按优先级试其余的项，最后排输出顺序。每一步单独想清楚。")),
        Hint(N_("一项进来时，先问它是不是和已经放进去的某项文字相同，再问放不放得下；顺序反了，丢弃的原因会记错。"),
             "duplicate-before-no-room"),
        Hint(N_("输出的顺序和挑选的顺序无关：稳定的项在前、动态的在后，两组里面都按输入顺序。"), "stable-first"),
    ),
    "trim_lines": (
        Hint(N_("先判断要不要裁：行数不超过 head + tail 时，全部保留。")),
        Hint(N_("省略的行数是总行数减去留下的头尾行数，说明行要用上面给的函数生成，不要自己拼文字。"),
             "omitted-count"),
        Hint(N_("不管传进来的是列表还是元组，都返回一个新的 list；放得下时也一样。"), "fits-as-a-new-list"),
    ),
    "select_to_clear": (
        Hint(N_("先决定这一轮要不要清，再决定清哪些：没超过阈值、或者腾出的不够，都什么也不清。")),
        Hint(N_("只有轮次不晚于 turn − keep 的结果能清：最新的 keep 轮总要留下。"), "older-than-the-newest-keep"),
        Hint(N_("能腾出的量是可清的个数乘以每个结果腾出的 token（结果大小减去占位符），"
                "和 clear_at_least 比，正好相等也够。"),
             "enough-to-free"),
    ),
    "request_cost": (
        Hint(N_("缓存只认和上一次一样的开头：能读缓存的是上一轮的输入，新增的部分要写入。")),
        Hint(N_("第一轮，或者这一轮改写过（清理、压缩），前面就没有可读的缓存：整段按写入价计费。"),
             "first-or-rewrite-writes-all"),
        Hint(N_("价格从 params 里取，不要写死 1.25 和 0.1。"), "prices-from-params"),
    ),
    "render": (
        Hint(N_("渲染和检查是两件事：先按固定的顺序把各段拼成文本，再单独扫一遍各字段找问题。")),
        Hint(N_("动态区的键要排序后输出，和字典里的先后无关；最后一行后面不加换行。"), "dynamic-sorted"),
        Hint(N_("警告是按字段数的：一个字段里有几个模板变量也只算一条；每条只说“不要”的规则各算一条。"),
             "one-warning-per-field"),
    ),
    "diff": (
        Hint(N_("对每个用例，看它在两版里各是通过还是失败：只有结果变了的才进列表。")),
        Hint(N_("按 cases 的顺序走，不要按 Result 里的顺序；不在 cases 里的 id 不用管。"), "in-the-order-of-cases"),
        Hint(N_("返回两个列表：修好的在前，弄坏的在后。"), "fixed-and-broke"),
    ),
    "zone": (
        Hint(N_("先检查参数，再比较 used 和 limit 的比例落在哪个区间。")),
        Hint(N_("比较百分比不用除法：把两边都乘上去，用整数比较，边界（60 %、85 %、100 %）才准确。"),
             "integers-only"),
        Hint(N_("注意每个区间两端是否包含：正好 60 % 和正好 85 % 都算 caution，正好 100 % 算 danger。"),
             "caution-60-to-85"),
    ),
    "measure": (
        Hint(N_("用传进来的 tokenizer 数每个桶，再把它们相加；结果的字典四个桶都要有。")),
        Hint(N_("每个桶分别数再相加，不要把文字拼起来一起数：取整会让两种做法的结果不同。"), "each-bucket-counted"),
        Hint(N_("没给的桶算 0，但不要往传进来的字典里补：新建一个字典，按 BUCKETS 的顺序放。"),
             "missing-bucket-is-zero"),
    ),
    "fit_rates": (
        Hint(N_("每张回执给出一条方程：ASCII 字符数 × a + 其余字符数 × b = token 数。回执多于两张时用最小二乘。")),
        Hint(N_("方程里没有常数项：不要给设计矩阵加一列 1。"), "no-intercept"),
        Hint(N_("两列成比例（或者某一列全是 0）时解不唯一，这时要报 ValueError，而不是返回一个随便的解。"),
             "underdetermined-raises"),
    ),
    "write_progress": (
        Hint(N_("先从所有 next 里只挑出一条，再按种类的优先级、种类内按轮次从新到旧，一条条试着放进预算。")),
        Hint(N_("next 留轮次最大的那条，不是列表里最后一条；轮次相同留先出现的。"), "newest-next-only"),
        Hint(N_("挑完以后，输出要按它们在 records 里原来的顺序排，而不是挑选的顺序。"), "input-order-in-a-new-list"),
    ),
    "restore": (
        Hint(N_("一行一行读：先去掉首尾空白，空行和 # 开头的行跳过，其余的每行必须是一条记录。")),
        Hint(N_("用一个完整匹配整行的模式解析 [种类] t轮次: 文字，轮次转成整数；冒号只认第一个。"), "record-format"),
        Hint(N_("格式不对的行报 ValueError，消息里要有行号（从 1 数起）和这一行的内容；种类区分大小写。"),
             "bad-line-raises"),
    ),
    "context_policy": (
        Hint(N_("先做一个只求安全的策略：越过阈值时才动手，一次腾出足够的地方。安全了再想省钱。")),
        Hint(N_("以后会被问到的事实（needed）在清掉之前要记笔记，或者留在摘要装得下的地方。"), "no-asked-fact-lost"),
        Hint(N_("动作要做得到：不能清已经清过的或受保护的结果，没有旧内容时不要压缩。"), "actions-it-can-take"),
    ),
    "beat_clear_notes": (
        Hint(N_("贵的是改写：改写次数越少、每次腾得越多，越省。")),
        Hint(N_("不会再被问到的结果不值得记笔记：清掉它们、只给要紧的记笔记，比 clear_notes 便宜。"),
             "safe-and-cheaper-than-clear-notes"),
    ),
    "beat_compact": (
        Hint(N_("压缩时留下的轮数越少，改写后的上下文越短，离下一次越过阈值越远。")),
        Hint(N_("同一轮里先清掉不会再问的结果、再压缩，只算一次改写；摘要有容量时，装不下的要紧事实改用笔记留下。"),
             "safe-and-cheaper-than-compact"),
    ),
}
"""Each exercise's hints, in the order they are shown when no broken rule picks one."""

_SHOWN: dict[str, list[int]] = {}


def next_hint(hints: Sequence[Hint], shown: Sequence[int], broken: Sequence[str]) -> int | None:
    """Return the index of the hint to show next, or None when every one was shown.

    The first hint not yet shown whose rule the last check broke (in the order of ``broken``),
    else the first not yet shown in the table's order.

    >>> hints = (Hint("idea"), Hint("a", "rule-a"), Hint("b", "rule-b"))
    >>> next_hint(hints, [], []), next_hint(hints, [], ["rule-b"]), next_hint(hints, [0, 2], ["rule-b"])
    (0, 2, 1)
    >>> next_hint(hints, [0, 1, 2], ["rule-a"]) is None
    True
    """
    left = [index for index in range(len(hints)) if index not in shown]
    for rule in broken:
        for index in left:
            if hints[index].rule == rule:
                return index
    return left[0] if left else None


def _require_exercise(exercise: str) -> None:
    if exercise not in HINTS:
        raise ValueError(f"exercise must be one of: {', '.join(sorted(HINTS))} (got {exercise!r})")


def ask_line(exercise: str) -> str:
    """Return the line a failed check of ``exercise`` ends with: how to ask for a hint (empty under a grader)."""
    _require_exercise(exercise)
    if grading():
        return ""
    return _("卡住了？运行 from ctx_reference.hints import hint; hint(\"{exercise}\") 看一条提示。").format(
        exercise=exercise)


def format_hint(exercise: str, hints: Sequence[Hint], index: int) -> str:
    """Return hint ``index`` of ``exercise`` as shown: its number out of the total, then its text."""
    return _("提示 {number}/{total}（{exercise}）：{text}").format(
        number=index + 1, total=len(hints), exercise=exercise, text=_(hints[index].text))


def hint(exercise: str) -> None:
    """Print the next hint of ``exercise``: the one for the rule its last check broke, else the next in order.

    Example (notebook 02): ``hint("remaining")`` prints ``提示 1/3（remaining）：余量就是……``; called
    again after a check that broke the rule about a negative margin, it prints that rule's hint.
    """
    _require_exercise(exercise)
    if grading():
        print(_("评分时不提供提示。"))
        return
    hints = HINTS[exercise]
    shown = _SHOWN.setdefault(exercise, [])
    index = next_hint(hints, shown, attempt(exercise).failed)
    if index is None:
        print(_("{exercise} 的 {total} 条提示都已经看过了：再读一遍上面的 × 行，它写出了输入、期望和你的结果。").format(
            exercise=exercise, total=len(hints)))
        return
    shown.append(index)
    print(format_hint(exercise, hints, index))


def forget() -> None:
    """Forget which hints this kernel showed, as a restarted kernel does."""
    _SHOWN.clear()


__all__ = ["HINTS", "Hint", "ask_line", "format_hint", "forget", "hint", "next_hint"]
