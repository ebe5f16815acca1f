"""The projections notebook 07's check cell imports by this path (the released notebooks name it).

Covers: turning what the learner's function returned into the plain data its cases compare, or into a
sentence saying what came back instead.

Leaves out: the cases (``exercises/w07_*.py``), which use these projections too.
"""
from __future__ import annotations

from ..i18n import N_, _

#: What a projection returns when the two results agree line by line (in the reader's language: the
#: cases comparing with it are marked ``message``).
SAME_TEXT = N_("与期望文本逐行一致")


def _split(result):
    """Return (text, warnings) from a render result, or a string saying what is wrong with it."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return None, _("返回值应该是 (文本, 警告列表) 两个值，实际是 {result!r}").format(result=result)
    text, warnings = result
    if type(text) is not str:
        return None, _("第一个返回值应该是字符串，实际是 {text!r}").format(text=text)
    if type(warnings) is not list:
        return None, _("第二个返回值应该是警告列表（list），实际是 {warnings!r}").format(warnings=warnings)
    for w in warnings:
        if type(w) is not str or not w.strip():
            return None, _("每条警告都应该是非空字符串，实际有一条是 {warning!r}").format(warning=w)
    return (text, list(warnings)), None


def warning_count(result):
    """Project a render result to its number of warnings (or a description of the problem)."""
    parts, problem = _split(result)
    return problem if problem else len(parts[1])


def lines_and_count(result):
    """Project a render result to (the text's lines, the number of warnings), or say what is wrong with it.

    All the text states of the result: the exact text (as lines, so that a feedback line reads
    them) and how many warnings, not their wording or order. For ``PromptSpec("R", "T")``:
    (['<role>R</role>', '<task>T</task>', '<rules>', '</rules>', '<output_format></output_format>',
    '<context>', '</context>'], 1).
    """
    parts, problem = _split(result)
    return problem if problem else (parts[0].split("\n"), len(parts[1]))




def last_lines(count):
    """Return a projection to the last `count` lines of the rendered text."""

    def project(result):
        parts, problem = _split(result)
        return problem if problem else parts[0].split("\n")[-count:]

    return project


def same_text_as(expected):
    """Return a projection that says SAME_TEXT, or where the rendered text first differs."""
    want = expected.split("\n")

    def project(result):
        parts, problem = _split(result)
        if problem:
            return problem
        got = parts[0].split("\n")
        for number, (w, g) in enumerate(zip(want, got), start=1):
            if w != g:
                return _("第 {number} 行不同：应为 {want!r}，实际是 {got!r}").format(number=number, want=w, got=g)
        if len(got) > len(want):
            return _("多出了 {count} 行，从 {first!r} 开始（最后一行 </context> 后面不要换行）").format(
                count=len(got) - len(want), first=got[len(want)])
        if len(got) < len(want):
            return _("少了 {count} 行，缺的第一行是 {first!r}").format(count=len(want) - len(got), first=want[len(got)])
        return _(SAME_TEXT)

    return project
