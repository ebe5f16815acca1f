"""The notebooks teach in their own words: no markdown cell copies a long run of text from a source lesson.

The source lessons are not part of the repository. Their folder is read from the environment
variable CTX_SEEDS_DIR, or else from ``../shared/seeds`` next to the repository root; the test is
skipped, with the reason, when neither exists.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO

RUN = 15          # shared characters (whitespace removed, punctuation kept) that count as copying
MIN_CHINESE = 3   # ... when the run holds at least this many Chinese characters
ASCII_RUN = 60    # consecutive ASCII characters (spaces collapsed) that count as copying

# Text quoted on purpose: a defined output format (notebook 05's omission marker) and the lesson's
# own spec strings that notebook 07 lints. They are data, not prose, and are removed before comparing.
QUOTED_DATA = ("……省略", "完整输出已保存，可按需读取", "不要输出客套话，改为直接给结论", "不要直接改代码，而是给出建议")

SEPARATOR = "\x00"   # put where text was left out: no run crosses it
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def seeds_dir() -> Path | None:
    """Return the folder of the source lessons, or None when it is not available."""
    configured = os.environ.get("CTX_SEEDS_DIR")
    folder = Path(configured) if configured else REPO.parent / "shared" / "seeds"
    return folder if folder.is_dir() and any(folder.glob("*.txt")) else None


def mixed_windows(text: str) -> set[str]:
    """Return every RUN-character window of `text` with whitespace removed that holds at least
    MIN_CHINESE Chinese characters.

    Digits, Latin words and punctuation stay in the window, so a copied sentence is found even
    where a number or a product name breaks its Chinese ("已经弃用的 Sonnet 4.5）是 20 万").
    A window needs a few Chinese characters so that a shared name joined by one 的
    ("Anthropic 的 context editing") does not count as copied prose.
    """
    squeezed = re.sub(r"\s+", "", text)
    found = set()
    for i in range(len(squeezed) - RUN + 1):
        window = squeezed[i:i + RUN]
        if SEPARATOR not in window and len(_HAN.findall(window)) >= MIN_CHINESE:
            found.add(window)
    return found


def without_quoted_data(text: str) -> str:
    """Return text with every QUOTED_DATA string replaced by SEPARATOR, so that no run crosses it."""
    for quoted in QUOTED_DATA:
        text = text.replace(quoted, SEPARATOR)
    return text


def ascii_windows(text: str) -> set[str]:
    """Return every ASCII_RUN-character window of the runs of printable ASCII in `text` (spaces collapsed)."""
    found = set()
    for run in re.findall(f"[\\x20-\\x7e]{{{ASCII_RUN},}}", re.sub(r"\s+", " ", text)):
        found.update(run[i:i + ASCII_RUN] for i in range(len(run) - ASCII_RUN + 1))
    return found


def markdown_cells(edition: str = "zh_CN"):
    """Yield (notebook path, cell id, text) for every markdown cell of solutions/, in ``edition``."""
    from ctx_course.editions.check import english_notebook

    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if edition == "en":
            notebook = english_notebook(REPO, path.parent.name)
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                yield path.relative_to(REPO), cell.get("id"), "".join(cell["source"])


def test_windows_find_a_shared_run():
    """A 15-character Chinese run and a 60-character ASCII run are found; 14 and 59 are not."""
    assert len(mixed_windows("上" * 15)) == 1 and not mixed_windows("上" * 14)
    assert len(ascii_windows("a" * 60)) == 1 and not ascii_windows("a" * 59)
    assert (mixed_windows("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌")
            & mixed_windows("x甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉y"))


def test_a_run_broken_by_digits_or_latin_words_is_found():
    """Chinese broken by a model name and numbers, spaced differently, still shares a window, though
    its longest run of Chinese characters and Chinese punctuation is only 12 characters long."""
    lesson = "其他家族（包括已经弃用的Sonnet 4.5）是20万。"
    copy = "其他家族（包括已经弃用的 Sonnet 4.5）是 20 万。"
    assert mixed_windows(lesson) & mixed_windows(copy)
    assert max(len(run) for run in re.findall(r"[\u3400-\u9fff\uff00-\uffef]+", copy)) == 12


def test_a_latin_name_joined_by_one_chinese_character_is_not_prose():
    """'Anthropic 的 context editing' has one Chinese character: it gives no window; with three it does."""
    assert not mixed_windows("Anthropic 的 context editing")
    assert mixed_windows("Anthropic 的上下文 editing")


def test_quoted_data_is_left_out_and_splits_runs():
    """The omission marker is not compared, and the text on either side of it does not join into one run."""
    text = without_quoted_data("甲乙丙丁戊己庚辛……省略 5 行（完整输出已保存，可按需读取）……壬癸子丑寅卯辰巳")
    assert not any("省略" in w or ("辛" in w and "壬" in w) for w in mixed_windows(text))


@pytest.mark.parametrize("edition", ["zh_CN", "en"])
def test_no_markdown_cell_copies_a_source_lesson(edition):
    """No markdown cell of solutions/, in either edition, shares a 15-character run holding Chinese, or 60
    consecutive ASCII characters, with a lesson (whitespace removed, punctuation kept)."""
    folder = seeds_dir()
    if folder is None:
        pytest.skip("source lessons not found: set CTX_SEEDS_DIR to their folder")
    seed_text = SEPARATOR.join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt")))
    seed_mixed, seed_ascii = mixed_windows(seed_text), ascii_windows(seed_text)
    hits = []
    for path, cell_id, text in markdown_cells(edition):
        text = without_quoted_data(text)
        shared = sorted(mixed_windows(text) & seed_mixed) + sorted(ascii_windows(text) & seed_ascii)
        if shared:
            hits.append(f"{path} [{cell_id}]: {shared[0]!r} (+{len(shared) - 1} more windows)")
    assert hits == [], "\n".join(hits)
