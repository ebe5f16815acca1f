"""The glossaries: one English term for each Chinese term, used that way everywhere, and links that open in the lab.

``glossary.en.md`` ends with a table of the two editions' terms (Chinese | English). Fails on: a
term the notebooks lean on that the table lacks; a row that offers two English words for one
Chinese term (a Chinese term with two senses has a row per sense, the sense in brackets); a
catalogue entry, of a notebook or of the messages, whose Chinese uses a term and whose English
uses none of the table's words for it; a glossary link of a released notebook that does not open
inside the release (the lab's root is the workspace the release is copied to) or names an anchor
the glossary lacks.
"""
from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest

from ctx_course.editions.translate import read_catalogue

from conftest import REPO

GLOSSARY, GLOSSARY_EN = REPO / "glossary.md", REPO / "glossary.en.md"
RELEASES = {"zh_CN": REPO / "lessons", "en": REPO / "lessons-en"}
CATALOGUES = sorted((REPO / "i18n" / "en").glob("*.po")) + sorted(
    (REPO / "ctx_reference" / "locale" / "en" / "messages").glob("*.po"))

# Terms the notebooks lean on: each is used in the Chinese text of two notebooks or more (checked below).
LEANED_ON = (
    "预算", "缓存", "前缀", "断点", "清除", "压缩", "笔记", "摘要", "轮", "溢出", "峰值", "召回", "位置效应",
    "检索", "账本", "水位区", "分词器", "会话", "进度文件", "交接", "策略", "输入当量", "改写", "阈值", "占位符",
    "参考实现", "练习", "检查格", "工具结果", "工具定义", "系统提示词", "提示词", "思考", "长任务", "种子",
    "对话历史", "读缓存", "上下文账本", "估算", "工具输出", "工具调用", "用例", "修好", "弄坏", "截断",
    "摘要容量", "缓存命中", "提示缓存",
)

# Terms that are everyday words too, where the English says what the sentence means: not checked.
EVERYDAY = {"注意": "the zone caution, and everyday 'note that', 'notice'"}

# Catalogue entries whose English does without the table's word, each reviewed: (catalogue, Chinese term,
# a piece of the entry's English) → why.
REVIEWED = {
    ("ctx_reference.tables.po", "超出窗口", "exceeds the window"): "a verb: the input exceeds the window",
    ("ctx_reference.tables.po", "安全", "plenty of room"): "the zone's description, beside its name",
    ("ctx_reference.tables.po", "危险", "nearly full"): "the zone's description, beside its name",
    ("06-strategies.po", "分数", "# 06 ·"): "一部分数字: 分数 is not a word there",
    ("01-window-math.po", "摘要", "the digest compares"): "摘要 as a hash: the digest of a hidden test",
    ("06-strategies.po", "轮", "Where the fact was lost"): "a column header: where (at which turn) it was lost",
    ("06-strategies.po", "轮", "previous response"): "上一轮响应: the previous response",
    ("06-strategies.po", "按需压缩", '"on demand": on_demand'): "a short label beside the function on_demand",
    ("06-strategies.po", "压缩", '"on demand": on_demand'): "a short label beside the function on_demand",
    ("ctx_reference.tables.po", "策略", "Cheapest safe built-in"): "a column header: the built-in ones",
    ("09-context-ledger.po", "检索", "search results"): "检索结果: what a search tool returned",
    ("10-sessions.po", "交接", "hand over"): "交接班: a shift handing over",
    ("ctx_reference.checks.po", "练习", "Go back to {name} first"): "the exercise is named by its function",
    ("ctx_reference.checks.po", "练习", "finish {which} first"): "the exercise is named by its function",
    ("ctx_reference.checks.po", "练习", "Go back to {which} and"): "the exercise is named by its function",
}
# Words whose inflections do not start with the word.
FORMS = {"broke": r"\bbr(?:oke|eak)\w*"}


def _terms() -> list[tuple[list[str], str, list[str]]]:
    """Return the rows of glossary.en.md's term table: (the Chinese variants, their sense, the English words)."""
    text = GLOSSARY_EN.read_text(encoding="utf-8")
    rows = text[text.index("| Chinese | English |"):].splitlines()[2:]
    terms = []
    for row in rows:
        if not row.startswith("|"):
            break
        chinese, english = (cell.strip() for cell in row.strip("|").split("|"))
        sense = re.search(r"（(.*)）$", chinese)
        if sense and not chinese.startswith("（"):
            chinese = chinese[: sense.start()]
        terms.append(([c.strip() for c in re.split(r"[、/]", chinese) if c.strip()],
                      sense.group(1) if sense and not row.startswith("| （") else "",
                      [e.strip() for e in re.split(r"[,/]", english) if e.strip()]))
    return terms


TERMS = _terms()


def _stem(word: str) -> str:
    """``compaction`` → ``compact``, ``notes`` → ``note``, ``write`` → ``writ``: what its inflections start with."""
    word = word.lower()
    for ending in ("ation", "ion", "ing", "al", "ed", "es", "s", "y", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _pattern(english: str) -> re.Pattern:
    """The uses of an English term: its words inflected, in either order, at most three words apart
    ("cache read": "read from the cache")."""
    words = [FORMS.get(word.lower(), rf"\b{re.escape(_stem(word))}\w*") for word in re.findall(r"[A-Za-z_]+", english)
             if word.lower() not in ("the", "a", "an")]
    gap = r"(?:\W+\w+){0,3}?\W+"
    orders = [words] if len(words) != 2 else [words, words[::-1]]
    return re.compile("|".join(gap.join(order) for order in orders), re.I)


def _markdown_of(language_folder: Path) -> dict[str, str]:
    """The markdown of each notebook of a folder of assignments, joined."""
    found = {}
    for path in sorted(language_folder.glob("*/*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found[path.parent.name] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return found


def test_the_table_covers_every_term_the_notebooks_lean_on():
    """Each term of LEANED_ON is in two notebooks' Chinese or more, and the table gives its English."""
    markdown = _markdown_of(REPO / "solutions")
    rare = [term for term in LEANED_ON if sum(term in text for text in markdown.values()) < 2]
    assert rare == [], f"used in fewer than two notebooks, so not leaned on: {rare}"
    listed = {variant for chinese, _sense, _english in TERMS for variant in chinese}
    assert [term for term in LEANED_ON if term not in listed] == []


def test_every_chinese_term_has_one_english_word_per_sense():
    """A row gives one English word (or one per Chinese variant, in order); a term in two rows has a sense in
    each; no English word stands for two terms."""
    seen: dict[str, list[str]] = {}
    for chinese, sense, english in TERMS:
        assert len(english) in (1, len(chinese)), f"{chinese}: {english} offers more than one word"
        assert not any("(" in word for word in english if not word.startswith("(")), f"{chinese}: {english}"
        for variant in chinese:
            seen.setdefault(variant, []).append(sense)
    twice = {term: senses for term, senses in seen.items() if len(senses) > 1 and not all(senses)}
    assert twice == {}, f"a term in two rows needs its sense in both: {twice}"
    words = [word.lower() for _chinese, _sense, english in TERMS for word in set(english)]
    assert sorted({w for w in words if words.count(w) > 1}) == []


def test_the_two_glossaries_explain_the_same_words():
    """glossary.md and glossary.en.md have the same anchors (a notebook's link works in both editions)."""
    def anchors(path: Path) -> set[str]:
        return set(re.findall(r'<a id="([^"]+)"></a>', path.read_text(encoding="utf-8")))

    assert anchors(GLOSSARY) == anchors(GLOSSARY_EN)
    assert "cache" in anchors(GLOSSARY_EN)


def _uses() -> list[tuple[str, str, str, str, list[str]]]:
    """(catalogue, Chinese term, the entry's Chinese, its English, the English words allowed) per use of a term."""
    allowed: dict[str, list[str]] = {}
    for chinese, _sense, english in TERMS:
        for index, variant in enumerate(chinese):
            allowed.setdefault(variant, []).extend(english if len(english) == 1 else [english[index]])
    uses = []
    for path in CATALOGUES:
        for message in read_catalogue(path):
            if not (message.id and message.string):
                continue
            for term, words in allowed.items():
                if term in message.id and not term.startswith("（") and term not in EVERYDAY:
                    uses.append((path.name, term, message.id, message.string, words))
    return uses


def test_the_catalogues_use_each_term_as_the_table_gives_it():
    """Wherever a notebook's or a message's Chinese uses a term of the table, its English uses the table's word
    (in any inflection) or quotes the Chinese; the few entries that need neither are reviewed in REVIEWED."""
    reviewed = set()
    drifting = []
    for catalogue, term, chinese, english, words in _uses():
        if term in english or any(_pattern(word).search(english) for word in words):
            continue
        why = [key for key in REVIEWED if key[:2] == (catalogue, term) and key[2] in english]
        if why:
            reviewed.update(why)
            continue
        at = chinese.index(term)
        drifting.append(f"{catalogue}: {term} → {words} in …{chinese[max(0, at - 15):at + 15]}… → {english[:90]!r}")
    assert drifting == [], "\n".join(drifting)
    assert sorted(set(REVIEWED) - reviewed) == [], "reviewed entries that no longer occur: remove them"


GLOSSARY_LINK = re.compile(r"\]\(([^)#\s]*glossary[^)#\s]*\.md)(?:#([^)\s]+))?\)")


@pytest.mark.parametrize("language", sorted(RELEASES))
def test_every_glossary_link_of_a_release_opens_inside_it(language):
    """Each glossary link of a released notebook resolves to a file at the release's top (so inside the lab's
    root once copied to the workspace), the edition's own glossary, with the anchor it names."""
    release = RELEASES[language]
    own = "glossary.md" if language == "zh_CN" else "glossary.en.md"
    links = 0
    for assignment, text in _markdown_of(release).items():
        for target, anchor in GLOSSARY_LINK.findall(text):
            resolved = posixpath.normpath(posixpath.join(assignment, target))
            assert resolved == own, f"{release.name}/{assignment}: links {target}, which is {resolved}, not {own}"
            if anchor:
                assert f'<a id="{anchor}"></a>' in (release / resolved).read_text(encoding="utf-8"), (assignment,
                                                                                                      anchor)
            links += 1
    assert links >= 10
