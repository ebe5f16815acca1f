"""The course map: what each released notebook teaches, what it needs first, and how long it takes.

Covers: the facts of one released notebook, read from the notebook itself in the learner's
edition (its title, the notebooks its "Prerequisites" line names, the words of its prose, its
exercises and its questions), an estimated time computed from them by one stated formula
(``estimated_minutes``), and the start page of a workspace (``start_page``): a notebook that lists
the eleven with links, links the edition's glossary and holds a cell that shows the learner's
progress (``ctx_course.learner.progress``).

Leaves out: how fast a given learner reads or codes (the formula's rates are a middle estimate,
said so on the page) and the time a kernel takes to run a notebook's cells.

Vocabulary: an *exercise* is an answer code cell (nbgrader ``solution``), a *question* an answer
markdown cell; *prose* is the text of the markdown cells that are not answers, without code spans,
link targets and math; a *CJK character* is one of the CJK Unified Ideographs (U+4E00–U+9FFF) or
their extension A (U+3400–U+4DBF); a *word* is a run of Latin letters or digits.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctx_reference.i18n import _, using

from ..cells import is_answer
from ..editions.translate import GLOSSARY, METADATA_KEY

START_PAGE = "start-here.ipynb"
"""The start page's name at the workspace's top: the notebook the learner's lab opens first."""
WORDS_PER_MINUTE = 150  # words of English prose read per minute, with the code and figures between them
CJK_PER_MINUTE = 300  # CJK characters of Chinese prose read per minute, likewise
MINUTES_PER_EXERCISE = 15  # writing one function and running its check until it passes
MINUTES_PER_QUESTION = 5  # writing a few sentences
ROUNDED_TO = 5  # minutes: an estimate is rounded up to a multiple of this

_CODE_SPAN = re.compile(r"`[^`]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_MATH = re.compile(r"\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_TITLE = re.compile(r"^#\s+(\d\d)\s*·\s*(.+?)\s*$", re.M)
_NUMBER = re.compile(r"(?<![\d.,])(\d\d)\s*·")
_SECTION = re.compile(r"^##\s+(\d+)\.\s*(.*)$", re.M)


@dataclass(frozen=True)
class Lesson:
    """One released notebook as the course map shows it."""

    path: str  # inside the release and the workspace, e.g. "02-remaining/remaining.ipynb"
    number: str  # "02"
    title: str  # the title after "02 · "
    prerequisites: tuple[str, ...]  # numbers of the notebooks its "Prerequisites" line names, e.g. ("01",)
    words: int  # words of its prose
    cjk: int  # CJK characters of its prose
    exercises: int
    questions: int
    optional: tuple[str, ...] = ()  # numbers of the sections marked optional on first reading, e.g. ("8",)

    @property
    def minutes(self) -> int:
        """The estimated time (``estimated_minutes`` of its counts)."""
        return estimated_minutes(self.words, self.cjk, self.exercises, self.questions)


def estimated_minutes(words: int, cjk: int, exercises: int, questions: int) -> int:
    """Return the estimated minutes for a notebook: reading, plus a fixed time per exercise and per question.

    ``words / 150 + cjk / 300 + 15 × exercises + 5 × questions``, rounded up to a multiple of 5.
    Notebook 02 in English (about 900 words, 1 exercise, 2 questions): 6 + 15 + 10 = 31, so 35.

    >>> estimated_minutes(900, 0, 1, 2)
    35
    >>> estimated_minutes(0, 0, 0, 0)
    0
    """
    for name, value in (("words", words), ("cjk", cjk), ("exercises", exercises), ("questions", questions)):
        if type(value) is not int or value < 0:
            raise ValueError(f"{name} must be an int >= 0 (got {value!r})")
    raw = (words / WORDS_PER_MINUTE + cjk / CJK_PER_MINUTE + MINUTES_PER_EXERCISE * exercises
           + MINUTES_PER_QUESTION * questions)
    return ROUNDED_TO * math.ceil(raw / ROUNDED_TO - 1e-9)


def prose_counts(text: str) -> tuple[int, int]:
    """Return the words and the CJK characters of a markdown text, without its code spans, link targets and math.

    >>> prose_counts("Count the `tokens` of [the window](../glossary.en.md#window): 上下文")
    (5, 3)
    """
    text = _MATH.sub(" ", _LINK_TARGET.sub("]", _CODE_SPAN.sub(" ", text)))
    return len(_WORD.findall(text)), len(_CJK.findall(text))


def _source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def lesson_facts(path: str, notebook: Mapping, prerequisites_label: str, optional_label: str | None = None) -> Lesson:
    """Return the course map's facts of one released notebook.

    ``prerequisites_label`` is how the edition starts the line naming the notebooks to read first
    ("Prerequisites", "先修"): the numbers ``NN ·`` on the first line of the first cell that starts with it
    in bold are the prerequisites. The title is the first cell's ``# NN · title``. ``optional_label`` is
    how the edition marks a section optional on first reading: the numbers of the ``## N.`` headings that
    hold it are the optional sections.
    Raises ValueError naming ``path`` when the notebook has no such title.
    """
    cells = [cell for cell in notebook.get("cells", []) if isinstance(cell, Mapping)]
    first = _source(cells[0]) if cells else ""
    title = _TITLE.search(first)
    if title is None:
        raise ValueError(f"notebook {path!r} must start with a '# NN · title' heading")
    prerequisites: tuple[str, ...] = ()
    for line in first.splitlines():
        if line.startswith(f"**{prerequisites_label}**"):
            prerequisites = tuple(dict.fromkeys(_NUMBER.findall(line)))
            break
    words = cjk = 0
    optional: list[str] = []
    for cell in cells:
        if cell.get("cell_type") == "markdown" and not is_answer(cell):
            counted = prose_counts(_source(cell))
            words, cjk = words + counted[0], cjk + counted[1]
            if optional_label:
                optional += [m.group(1) for m in _SECTION.finditer(_source(cell)) if optional_label in m.group(2)]
    answers = [cell for cell in cells if is_answer(cell)]
    return Lesson(path=path, number=title.group(1), title=title.group(2), prerequisites=prerequisites,
                  words=words, cjk=cjk, exercises=sum(cell.get("cell_type") == "code" for cell in answers),
                  questions=sum(cell.get("cell_type") == "markdown" for cell in answers), optional=tuple(optional))


def course_map(notebooks: Sequence[tuple[str, Mapping]], language: str) -> list[Lesson]:
    """Return the facts of each released notebook (``(path, notebook)`` pairs), in the order of their numbers."""
    with using(language):
        label, optional = _("先修"), _("初读可跳过")
    return sorted((lesson_facts(path, notebook, label, optional) for path, notebook in notebooks),
                  key=lambda lesson: lesson.number)


def _cell(kind: str, cell_id: str, text: str) -> dict:
    cell: dict = {"cell_type": kind, "id": cell_id, "metadata": {}, "source": text}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _table(lessons: Sequence[Lesson]) -> str:
    paths = {lesson.number: lesson.path for lesson in lessons}
    rows = [_("| 笔记本 | 讲什么 | 先修 | 预计时间 |"), "|---|---|---|---|"]
    for lesson in lessons:
        needs = _("、").join(f"[{number}]({paths[number]})" for number in lesson.prerequisites if number in paths)
        time = _("约 {minutes} 分钟").format(minutes=lesson.minutes)
        if lesson.optional:
            time += _("（其中 {sections} 初读可跳过）").format(
                sections=_("、").join(f"§{number}" for number in lesson.optional))
        title = lesson.title.replace("|", "\\|")
        needs = needs or _("无")  # outside the f-string, where the catalogue's extraction finds it
        rows.append(f"| [{lesson.number}]({lesson.path}) | {title} | {needs} | {time} |")
    return "\n".join(rows)


def start_page(lessons: Sequence[Lesson], language: str) -> dict:
    """Return the start page of a workspace in ``language``: the course map, the glossary and a progress cell.

    The cells' text is built from ``lessons`` alone (so the same release gives the same page); the
    notebook carries the edition (``ctx_edition``) like the lessons do.
    """
    with using(language):
        total = sum(lesson.minutes for lesson in lessons)
        table = _table(lessons)
        intro = "\n".join([
            _("# 从这里开始：课程地图"),
            "",
            _("这本工作簿有 {count} 本笔记本，按编号顺序读最顺。每本都从头到尾运行一遍："
              "练习下面的检查格会告诉你哪里对、哪里不对；每本的最后有小结和“下一本”。").format(count=len(lessons)),
            "",
            _("书里没解释的术语见[术语表]({glossary})。").format(glossary=GLOSSARY[language]),
        ])
        times = _("**预计时间**怎么算：正文英文词数 ÷ {words} + 汉字数 ÷ {cjk}（分钟），"
                  "加上每个练习 {exercise} 分钟、每个问答题 {question} 分钟，向上取整到 {rounded} 分钟。"
                  "这是一个中等速度的估计，全部合计约 {hours} 小时。").format(
            words=WORDS_PER_MINUTE, cjk=CJK_PER_MINUTE, exercise=MINUTES_PER_EXERCISE, question=MINUTES_PER_QUESTION,
            rounded=ROUNDED_TO, hours=round(total / 60))
        progress = "\n".join([
            _("## 你的进度"),
            "",
            _("运行下面这一格：它读你**保存过的**笔记本（不会重新运行它们），列出每本的检查通过了几个、问答题答了几道，"
              "以及下一本该打开哪本。先在笔记本里按 Ctrl+S 保存，再来这里看。在终端里也可以运行："
              "`{command}`。").format(command="python -m ctx_course progress" + ("" if language == "zh_CN" else
                                                                             f" --lang {language}")),
        ])
    code = "from ctx_course.learner.progress import progress_report\n\nprint(progress_report(\".\"))"
    return {
        "cells": [_cell("markdown", "start-intro", intro), _cell("markdown", "start-map", table),
                  _cell("markdown", "start-times", times), _cell("markdown", "start-progress", progress),
                  _cell("code", "start-progress-run", code)],
        "metadata": {METADATA_KEY: language, "kernelspec": {"display_name": "Python 3 (ipykernel)",
                                                           "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
