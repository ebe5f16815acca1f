"""The plots' Chinese comes from the bundled font file, whatever fonts the machine has."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.ft2font import FT2Font, LoadFlags  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from ctx_reference import plots  # noqa: E402

from conftest import REPO  # noqa: E402
from plot_gallery import every_figure  # noqa: E402

MAX_FONT_BYTES = 1_000_000
NOTDEF_PROBE = "\ue000"  # a private-use code point: no font of ours maps it, so it draws as .notdef

# Draws every plot function the way the notebooks call it (tests/plot_gallery.py), printing nothing.
DRAW_EVERY_PLOT = """
import matplotlib
matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg
from plot_gallery import every_figure
for fig in every_figure():
    FigureCanvasAgg(fig).draw()
"""

# Leaves matplotlib only its own fonts (DejaVu & co.), as on a machine without any Chinese font.
HIDE_SYSTEM_FONTS = """
import os
import matplotlib
from matplotlib import font_manager
own = os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data")
font_manager.fontManager.ttflist[:] = [f for f in font_manager.fontManager.ttflist if f.fname.startswith(own)]
font_manager.fontManager._findfont_cached.cache_clear()
"""


def _drawn_characters() -> set[str]:
    """Every character of every text the plot functions draw (titles, labels, legends, ticks)."""
    chars = set()
    for fig in every_figure():
        FigureCanvasAgg(fig).draw()  # creates the tick labels
        for text in fig.findobj(Text):
            chars.update(text.get_text())
    return chars - {"\n"}


def _literal_characters() -> set[str]:
    """Every character of every string literal in plots.py and of the labels it imports."""
    chars = set()
    for node in ast.walk(ast.parse((REPO / "ctx_reference" / "plots.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            chars.update(node.value)
    for label in [*plots.STRATEGY_LABELS.values(), *plots.ZONE_LABELS.values(), plots.LOST_IN_THE_MIDDLE.model]:
        chars.update(label)
    return chars - {"\n"}


def _outline(font: FT2Font, glyph_index: int) -> np.ndarray:
    """The vertices of a glyph's outline."""
    font.set_size(32, 72)
    font.load_glyph(glyph_index, LoadFlags.NO_HINTING)
    vertices, _codes = font.get_path()
    return np.asarray(vertices).copy()


def _run_clean(code: str, tmp_path) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with an empty matplotlib config/cache folder and HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "XDG_"))}
    (tmp_path / "mpl").mkdir()
    (tmp_path / "home").mkdir()
    env.update(MPLCONFIGDIR=str(tmp_path / "mpl"), HOME=str(tmp_path / "home"),
               PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]))
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_bundled_font_is_small_and_licensed():
    """The bundled font is a file under 1 MB, shipped beside its OFL licence, named Workbook Sans SC."""
    assert plots.FONT_FILE.is_file() and plots.FONT_FILE.stat().st_size < MAX_FONT_BYTES
    assert "SIL OPEN FONT LICENSE Version 1.1" in (plots.FONT_FILE.parent / "OFL.txt").read_text(encoding="utf-8")
    assert FT2Font(str(plots.FONT_FILE)).family_name == plots.CJK_FONT


@pytest.mark.parametrize("source", ["drawn", "literals"])
def test_font_covers_every_character_a_plot_draws(source):
    """Each character of the plots' texts (as drawn, and as written in plots.py) has a glyph in the subset."""
    chars = _drawn_characters() if source == "drawn" else _literal_characters()
    assert any("\u4e00" <= c <= "\u9fff" for c in chars)  # the set does hold Chinese
    cmap = FT2Font(str(plots.FONT_FILE)).get_charmap()
    assert sorted(c for c in chars if ord(c) not in cmap) == []


@pytest.mark.heavy
def test_every_plot_draws_silently_with_an_empty_matplotlib_cache(tmp_path):
    """Drawing every plot in a fresh interpreter, empty MPLCONFIGDIR and HOME, writes nothing to stderr."""
    result = _run_clean(DRAW_EVERY_PLOT, tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.heavy
def test_every_plot_draws_silently_without_system_fonts(tmp_path):
    """With only matplotlib's own fonts (no Chinese font anywhere), every plot still draws without a warning."""
    result = _run_clean(HIDE_SYSTEM_FONTS + DRAW_EVERY_PLOT, tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


def test_chinese_labels_use_the_bundled_file_without_system_fonts(tmp_path):
    """With the system's fonts hidden, a Chinese title resolves to DejaVu Sans then the bundled file."""
    code = HIDE_SYSTEM_FONTS + textwrap.dedent("""
        from ctx_reference import plots
        fig = plots.plot_recall_vs_length()
        paths = font_manager.fontManager._find_fonts_by_props(fig.axes[0].title.get_fontproperties())
        print("\\n".join(os.path.basename(p) for p in paths))
    """)
    result = _run_clean(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["DejaVuSans.ttf", plots.FONT_FILE.name]


def test_chinese_glyphs_are_real_not_notdef_boxes():
    """Each character of a Chinese label maps to a glyph whose outline is not the .notdef box's."""
    label = "上下文越长，越难找到答案（召回率）"
    font = FT2Font(str(plots.FONT_FILE))
    indices = {c: font.get_char_index(ord(c)) for c in label}
    assert [c for c, index in indices.items() if index == 0] == []
    box = _outline(font, 0)
    assert len(box) > 0  # the .notdef box has an outline: comparing with it means something
    like_box = [c for c, index in indices.items() if len(_outline(font, index)) == 0
                or np.array_equal(_outline(font, index), box)]
    assert like_box == []


@pytest.mark.filterwarnings("ignore:Glyph 57344")  # the probe's own warning: it is meant to be missing
def test_rendered_chinese_label_differs_from_notdef_boxes():
    """A figure's Chinese label renders differently from the same number of .notdef boxes."""
    from matplotlib.figure import Figure

    def render(text: str) -> np.ndarray:
        fig = Figure(figsize=(4, 1), dpi=100)
        fig.text(0.05, 0.3, text, fontsize=20, family=[plots.LATIN_FONT, plots.cjk_font()])
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()

    label = "召回率"
    blank = render("")
    drawn, boxes = render(label), render(NOTDEF_PROBE * len(label))
    assert not np.array_equal(boxes, blank) and not np.array_equal(drawn, blank)
    assert not np.array_equal(drawn, boxes)


def test_the_font_tests_draw_every_plot_function():
    """Every public plot_* function of ctx_reference.plots is called by tests/plot_gallery.py."""
    public = {name for name in dir(plots) if name.startswith("plot_") and callable(getattr(plots, name))}
    gallery = (REPO / "tests" / "plot_gallery.py").read_text(encoding="utf-8")
    assert public == set(re.findall(r"plots\.(plot_\w+)\(", gallery))
