"""Cut the Chinese font the plots ship with: a subset of Noto Sans CJK SC, renamed.

    python scripts/subset_font.py [--source FONT] [--index N] [--output PATH]

The source is Noto Sans CJK (SIL Open Font License 1.1), for example the
Simplified Chinese face of Debian's ``fonts-noto-cjk``
(``/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc``, face "Noto Sans CJK SC")
or ``NotoSansCJKsc-Regular.otf`` / ``NotoSansSC-Regular.otf`` from the noto-cjk
release. The subset keeps:

* printable ASCII, Latin-1 symbols and the general punctuation, arrows and maths
  operators a label may use;
* CJK symbols and punctuation (U+3000-U+303F) and the full-width forms (U+FF01-U+FF5E);
* every character of every string literal in ``ctx_reference/`` and ``ctx_course/``
  and of every source notebook in ``solutions/``: the plot titles, labels and
  legends, whatever a notebook passes to a plot function, and the whole vocabulary
  of the course's text, which a learner's own labels are likely to draw on;
* a safety set of about 1,200 frequent characters (``scripts/common_chars.txt``).

Every glyph costs about 340 bytes, so the set is kept to what a plot of this
workbook may plausibly show (the file stays well under 1 MB).

The family is renamed (``FAMILY`` below): a modified version must not pose as the
original, and a distinct name lets matplotlib pick this file even where the full
Noto Sans CJK SC is installed. Needs fontTools (``pip install -e ".[test]"``); the
workbook itself does not.
"""
from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
DEFAULT_OUTPUT = REPO / "ctx_reference" / "fonts" / "WorkbookSansSC-Regular.otf"
SOURCE_FAMILY = "Noto Sans CJK SC"
FAMILY = "Workbook Sans SC"
POSTSCRIPT_NAME = "WorkbookSansSC-Regular"

RANGES = [
    (0x0020, 0x007E),  # printable ASCII
    (0x00A0, 0x00FF),  # Latin-1 symbols: × ° · ±
    (0x2010, 0x2016),  # dashes
    (0x2018, 0x2019),  # single quotes
    (0x201C, 0x201D),  # double quotes
    (0x2020, 0x2022),  # daggers, bullet
    (0x2025, 0x2026),  # ellipses
    (0x2030, 0x2030),  # per mille
    (0x2190, 0x2199),  # arrows
    (0x2460, 0x2473),  # circled numbers
    (0x3000, 0x303F),  # CJK symbols and punctuation: 、。「」《》【】
    (0xFF01, 0xFF5E),  # full-width forms: ，：；（）！？％
]
SYMBOLS = "−±×÷≈≠≤≥∞√∑∏∈→←↑↓■□▲△▼▽◆◇○●★☆✓※"  # maths, shapes and marks a label may use
COMMON_CHARS = Path(__file__).with_name("common_chars.txt")


def common_characters(path: Path = COMMON_CHARS) -> set[str]:
    """Return the characters of the safety set (lines starting with # are comments)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return set("".join(line.strip() for line in lines if not line.startswith("#")))


def string_literals(path: Path) -> set[str]:
    """Return the characters of every string literal in a Python file."""
    chars = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            chars.update(node.value)
    return chars


def notebook_text(path: Path) -> set[str]:
    """Return the characters of every cell source of a notebook."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return set("".join("".join(cell["source"]) for cell in notebook["cells"]))


def wanted_characters(repo: Path = REPO) -> set[str]:
    """Return every character the subset must hold (see the module docstring)."""
    chars = {chr(c) for low, high in RANGES for c in range(low, high + 1)} | set(SYMBOLS)
    for package in ("ctx_reference", "ctx_course"):
        for path in sorted((repo / package).rglob("*.py")):
            chars |= string_literals(path)
    for path in sorted((repo / "solutions").glob("*/*.ipynb")):
        chars |= notebook_text(path)
    chars |= common_characters()
    return {c for c in chars if c.isprintable() or c == " "}


def open_source(source: str, index: int | None) -> TTFont:
    """Open the source font; in a collection, the face named SOURCE_FAMILY unless ``index`` is given."""
    if not source.lower().endswith((".ttc", ".otc")):
        return TTFont(source, recalcTimestamp=False)
    if index is not None:
        return TTFont(source, fontNumber=index, recalcTimestamp=False)
    for number in range(64):
        font = TTFont(source, fontNumber=number, recalcTimestamp=False)
        if font["name"].getDebugName(1) == SOURCE_FAMILY:
            return font
    raise SystemExit(f"error: no face named {SOURCE_FAMILY!r} in {source}")


def rename(font: TTFont) -> None:
    """Give the subset its own family name; keep the copyright and licence records."""
    names = {1: FAMILY, 2: "Regular", 3: f"{POSTSCRIPT_NAME};subset", 4: f"{FAMILY} Regular",
             6: POSTSCRIPT_NAME, 16: FAMILY, 17: "Regular"}
    table = font["name"]
    table.names = [record for record in table.names if record.nameID not in names and record.nameID != 18]
    for name_id, value in names.items():
        table.setName(value, name_id, 3, 1, 0x409)
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [POSTSCRIPT_NAME]
        top = cff.topDictIndex[0]
        top.FullName = f"{FAMILY} Regular"
        top.FamilyName = FAMILY


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=DEFAULT_SOURCE, help="Noto Sans CJK font or collection")
    parser.add_argument("--index", type=int, help="face number in a collection (default: the SC face)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    args = parser.parse_args(argv)
    font = open_source(args.source, args.index)
    chars = wanted_characters()
    cmap = font.getBestCmap()
    missing = sorted(c for c in chars if ord(c) not in cmap)
    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.hinting = False
    options.desubroutinize = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    rename(font)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    font.save(output)
    kept = len(TTFont(output).getBestCmap())
    print(f"{output}: {kept} characters, {output.stat().st_size:,} bytes")
    if missing:
        print(f"not in the source font ({len(missing)}): {''.join(missing)!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
