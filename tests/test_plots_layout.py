"""Every figure is laid out for both editions: the same axes width in Chinese and English, titles and legends
that fit.

English labels are often twice as wide as their Chinese; a legend attached under the axes, or a title
wider than its panel, then squeezes the axes or runs into the next one. Each figure of
``tests/plot_gallery.py`` (every plot function, called as the notebooks call it) is drawn in both
languages and measured in pixels after constrained layout.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ctx_reference.i18n import using  # noqa: E402

from plot_gallery import every_figure  # noqa: E402

SAME_WIDTH = 0.9  # an axes keeps at least this share of its width in the other language
ROW_SHARE = 0.6  # the axes of one row together span at least this share of the figure
SLACK = 2.0  # pixels: rounding of text extents


def _laid_out(language: str) -> list[Figure]:
    with using(language):
        figures = every_figure()
        for fig in figures:
            fig.draw_without_rendering()
    return figures


@pytest.fixture(scope="module")
def figures() -> dict[str, list[Figure]]:
    return {language: _laid_out(language) for language in ("zh_CN", "en")}


def _axes(fig: Figure) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def _ids(figures) -> list[str]:
    return [f"{i}:{fig.axes[0].get_gid() or i}" for i, fig in enumerate(figures)]


def test_the_gallery_draws_the_same_figures_in_both_languages(figures):
    assert len(figures["zh_CN"]) == len(figures["en"]) >= 13
    assert [len(_axes(f)) for f in figures["zh_CN"]] == [len(_axes(f)) for f in figures["en"]]


@pytest.mark.parametrize("index", range(13))
def test_every_axes_has_the_same_width_in_both_languages(figures, index):
    """Each axes is, within 10 %, as wide in English as in Chinese, and the axes of a row span most of the figure
    (the English legend of 06's context plot once squeezed its axes to a fifth of the figure)."""
    widths = {}
    for language, laid in figures.items():
        fig = laid[index]
        widths[language] = [ax.get_window_extent().width / fig.bbox.width for ax in _axes(fig)]
        rows: dict[float, float] = {}
        for ax in _axes(fig):
            box = ax.get_window_extent()
            rows[round(box.y0)] = rows.get(round(box.y0), 0.0) + box.width / fig.bbox.width
        assert min(rows.values()) >= ROW_SHARE, (language, rows)
    for zh, en in zip(widths["zh_CN"], widths["en"], strict=True):
        assert en >= SAME_WIDTH * zh and zh >= SAME_WIDTH * en, widths


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_titles_fit_their_axes_and_do_not_touch(figures, language):
    """An axes title is no wider than its axes, a figure title than the figure; titles side by side stay apart."""
    for index, fig in enumerate(figures[language]):
        boxes = []
        for ax in _axes(fig):
            title = ax.title.get_window_extent()
            if ax.get_title():
                assert title.width <= ax.get_window_extent().width + SLACK, (index, ax.get_title())
                boxes.append(title)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b), (index, a, b)
        suptitle = getattr(fig, "_suptitle", None)  # the Text of fig.suptitle
        if suptitle is not None:
            assert suptitle.get_window_extent().width <= fig.bbox.width + SLACK, (index, suptitle.get_text())


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_legends_lie_inside_the_figure(figures, language):
    """No legend, of an axes or of the figure, is cut off at the figure's edge."""
    for index, fig in enumerate(figures[language]):
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
        for legend in legends:
            box = legend.get_window_extent()
            assert (box.x0 >= -SLACK and box.y0 >= -SLACK and box.x1 <= fig.bbox.width + SLACK
                    and box.y1 <= fig.bbox.height + SLACK), (index, box)
