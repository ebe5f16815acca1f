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

CJK_RUN = 15      # consecutive Chinese characters shared with a lesson that count as copying
ASCII_RUN = 60    # consecutive ASCII characters (spaces collapsed) that count as copying

# Text quoted on purpose: a defined output format (notebook 05's omission marker) and the lesson's
# own spec strings that notebook 07 lints. They are data, not prose, and are removed before comparing.
QUOTED_DATA = ("……省略", "完整输出已保存，可按需读取", "不要输出客套话，改为直接给结论", "不要直接改代码，而是给出建议")

_CHINESE = r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef“”‘’—…·]"


def seeds_dir() -> Path | None:
    """Return the folder of the source lessons, or None when it is not available."""
    configured = os.environ.get("CTX_SEEDS_DIR")
    folder = Path(configured) if configured else REPO.parent / "shared" / "seeds"
    return folder if folder.is_dir() and any(folder.glob("*.txt")) else None


def windows(text: str, pattern: str, size: int) -> set[str]:
    """Return every `size`-character window of every run of characters matching `pattern` in `text`."""
    found = set()
    for run in re.findall(f"{pattern}{{{size},}}", text):
        found.update(run[i:i + size] for i in range(len(run) - size + 1))
    return found


def chinese_windows(text: str) -> set[str]:
    return windows(re.sub(r"\s+", "", text), _CHINESE, CJK_RUN)


def without_quoted_data(text: str) -> str:
    """Return text with every QUOTED_DATA string replaced by a separator, so that no run crosses it."""
    for quoted in QUOTED_DATA:
        text = text.replace(quoted, "\n|\n")
    return text


def ascii_windows(text: str) -> set[str]:
    return windows(re.sub(r"\s+", " ", text), r"[\x20-\x7e]", ASCII_RUN)


def markdown_cells():
    """Yield (notebook path relative to the repo, cell id, text) for every markdown cell of solutions/."""
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                yield path.relative_to(REPO), cell.get("id"), "".join(cell["source"])


def test_windows_find_a_shared_run():
    """A 15-character Chinese run and a 60-character ASCII run are found; 14 and 59 are not."""
    assert len(chinese_windows("上" * 15)) == 1 and not chinese_windows("上" * 14)
    assert len(ascii_windows("a" * 60)) == 1 and not ascii_windows("a" * 59)
    assert (chinese_windows("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌")
            & chinese_windows("x甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉y"))


def test_quoted_data_is_left_out_and_splits_runs():
    """The omission marker is not compared, and the Chinese on either side of it does not join into one run."""
    text = without_quoted_data("甲乙丙丁戊己庚辛……省略 5 行（完整输出已保存，可按需读取）……壬癸子丑寅卯辰巳")
    assert not chinese_windows(text)


def test_no_markdown_cell_copies_a_source_lesson():
    """No markdown cell of solutions/ shares 15 consecutive Chinese or 60 consecutive ASCII characters with a lesson."""
    folder = seeds_dir()
    if folder is None:
        pytest.skip("source lessons not found: set CTX_SEEDS_DIR to their folder")
    seed_text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt")))
    seed_cjk, seed_ascii = chinese_windows(seed_text), ascii_windows(seed_text)
    hits = []
    for path, cell_id, text in markdown_cells():
        text = without_quoted_data(text)
        shared = sorted(chinese_windows(text) & seed_cjk) + sorted(ascii_windows(text) & seed_ascii)
        if shared:
            hits.append(f"{path} [{cell_id}]: {shared[0]!r} (+{len(shared) - 1} more windows)")
    assert hits == [], "\n".join(hits)
