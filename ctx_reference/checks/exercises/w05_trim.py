"""The exercises of notebook 05, TrimLines (literals from docs/models.md §5).

The lesson's example (100 lines, head 3, tail 2) is checked whole and then through three
narrower views — how many lines come back, the marker line (every line that is not an input line,
with a hint to build it with ``omission_marker``), what follows the marker — so that
an off-by-one (95 vs 96 omitted, one tail line too many) gets a × line that names the exact part
that is wrong. Two boundary cases pin ``len(lines) == head + tail`` (unchanged) against
``len(lines) == head + tail + 1`` (one line omitted). The prompt's other rules each have a case:
a new list (never the object passed in), tuple input, ``tail = 0`` and ``head = 0``; every case
also checks that the argument is left unchanged.
"""
from ...i18n import N_
from ...trim import _trim
from ...trim import trim_lines as reference_trim_lines
from ..exercise import Exercise
from ..rules import Rule
from ..runner import CheckCase

MARKER_95 = "……省略 95 行（完整输出已保存，可按需读取）……"  # data

_HUNDRED = tuple(f"line {i}" for i in range(1, 101))


def _marker_lines(lines) -> list[str]:
    """Return the lines of a result of the 100-line example that are not input lines (the marker, if right), in order.

    A marker of the learner's own wording shows here as it is, beside the one expected.
    """
    return [line for line in lines if line not in _HUNDRED]


def _after_marker(lines) -> list[str]:
    """Return the lines after the first marker line (all lines if there is no marker)."""
    for index, line in enumerate(lines):
        if "省略" in line:  # data
            return list(lines[index + 1:])
    return list(lines)


#: The visible cases of ``trim_lines``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("原课的例子：line 1 … line 100，头 3 行、尾 2 行"),
        args=(list(_HUNDRED), 3, 2),
        expect=["line 1", "line 2", "line 3", MARKER_95, "line 99", "line 100"],
        returns=list,
        decides=('head-marker-tail', 'marker-text', 'lines-unchanged'),
    ),
    CheckCase(
        N_("同一个例子，一共剩几行：3（头）+ 1（说明行）+ 2（尾）= 6"),
        args=(list(_HUNDRED), 3, 2),
        expect=6,
        project=len,
        decides=('head-marker-tail',),
    ),
    CheckCase(
        N_("同一个例子，说明行：省略 100 − 3 − 2 = 95 行"),
        args=(list(_HUNDRED), 3, 2),
        expect=[MARKER_95],
        project=_marker_lines,
        hint=N_("说明行要用 omission_marker(n) 生成，一字不差，不要自己写"),
        decides=('omitted-count',),
    ),
    CheckCase(
        N_("同一个例子，说明行后面只有尾部 2 行"),
        args=(list(_HUNDRED), 3, 2),
        expect=["line 99", "line 100"],
        project=_after_marker,
        decides=('head-marker-tail',),
    ),
    CheckCase(
        N_("换一组数：10 行，头 2 行、尾 3 行，省略 10 − 2 − 3 = 5 行"),
        args=([f"第 {i} 行" for i in range(1, 11)], 2, 3),  # data
        expect=[
            "第 1 行",  # data
            "第 2 行",  # data
            "……省略 5 行（完整输出已保存，可按需读取）……",  # data
            "第 8 行",  # data
            "第 9 行",  # data
            "第 10 行",  # data
        ],
        decides=('head-marker-tail', 'omitted-count'),
    ),
    CheckCase(
        N_("正好放得下：5 行，头 3 行 + 尾 2 行 = 5，原样返回"),
        args=(["a", "b", "c", "d", "e"], 3, 2),
        expect=["a", "b", "c", "d", "e"],
        returns=list,
        fresh=True,
        decides=('fits-as-a-new-list',),
    ),
    CheckCase(
        N_("多一行就要省略：6 行，头 3 行、尾 2 行，省略 1 行"),
        args=(["a", "b", "c", "d", "e", "f"], 3, 2),
        expect=["a", "b", "c", "……省略 1 行（完整输出已保存，可按需读取）……", "e", "f"],  # data
        decides=('head-marker-tail',),
    ),
    CheckCase(
        N_("尾部 0 行：5 行，头 2 行、尾 0 行，只留头部（小心 lines[-0:] 取到的是整个列表）"),
        args=(["a", "b", "c", "d", "e"], 2, 0),
        expect=["a", "b", "……省略 3 行（完整输出已保存，可按需读取）……"],  # data
        decides=('head-marker-tail',),
    ),
    CheckCase(
        N_("头部 0 行：5 行，头 0 行、尾 2 行，只留尾部"),
        args=(["a", "b", "c", "d", "e"], 0, 2),
        expect=["……省略 3 行（完整输出已保存，可按需读取）……", "d", "e"],  # data
        decides=('head-marker-tail',),
    ),
    CheckCase(
        N_("传进来的是元组：(\"a\", \"b\", \"c\", \"d\")，头 1 行、尾 1 行，也要返回 list"),
        args=(("a", "b", "c", "d"), 1, 1),
        expect=["a", "……省略 2 行（完整输出已保存，可按需读取）……", "d"],  # data
        returns=list,
        decides=('always-a-list',),
    ),
    CheckCase(
        N_("传进来的是元组、正好放得下：(\"a\", \"b\")，头 1 行、尾 1 行，返回 list"),
        args=(("a", "b"), 1, 1),
        expect=["a", "b"],
        returns=list,
        decides=('fits-as-a-new-list', 'always-a-list'),
    ),
    CheckCase(
        N_("空列表：头 3 行、尾 2 行，返回一个新的空列表"),
        args=([], 3, 2),
        expect=[],
        returns=list,
        fresh=True,
        decides=('fits-as-a-new-list',),
    ),
)


#: The notebook these exercises belong to.
NOTEBOOK = '05-trim-lines'

#: The rules ``trim_lines``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'fits-as-a-new-list',
        N_('返回一个包含全部行的**新列表**'),
        generated=('short-enough',),
    ),
    Rule(
        'head-marker-tail',
        N_('前 `head` 行 + 一行说明 + 后 `tail` 行'),
        generated=('one-past',),
    ),
    Rule(
        'omitted-count',
        N_('说明里的数是省略的行数 `len(lines) - head - tail`'),
        generated=('many-past', 'one-past'),
    ),
    Rule(
        'marker-text',
        N_('说明行用上面的 `omission_marker(n)` 生成'),
        generated=('one-past', 'many-past'),
    ),
    Rule(
        'always-a-list',
        N_('总是返回 `list`'),
        generated=('tuples',),
    ),
    Rule(
        'lines-unchanged',
        N_('不要修改传进来的 `lines`'),
        generated=('short-enough', 'one-past', 'many-past', 'tuples'),
    ),
)


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'trim_lines', NOTEBOOK,
        references=(reference_trim_lines, _trim),
        cases=CASES,
        rules=RULES,
    ),
)
