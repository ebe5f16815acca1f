"""Sliders for notebooks 03 and 06: move a parameter, see the table and the plot redrawn.

What this covers: ``recall_view`` and ``strategy_view`` compute what one setting of the sliders
shows (a table as text and a Figure from ``ctx_reference.plots``); ``explore_recall`` and
``explore_strategies`` show it. In a notebook opened in Jupyter they show sliders that redraw
both; anywhere else (nbval, nbconvert, nbgrader, a script) they show the table and the figure
once, so that stored outputs stay static and no widget state is saved in the notebook.

How a live frontend is told apart: Jupyter Server starts a notebook's kernel with
``JPY_SESSION_NAME`` set (the notebook's path); nbclient, which nbval, nbconvert and nbgrader use,
does not, and nbgrader's autograding sets ``NBGRADER_EXECUTION``. ``CTX_WIDGETS=1`` or ``0``
overrides the guess (e.g. in an editor whose kernels lack ``JPY_SESSION_NAME``).

What it leaves out: any computation of its own (the models are in ``recall`` and ``sim``, the
plots in ``plots``, the tables in ``tables``). ipywidgets is imported only when sliders are shown.
"""
from __future__ import annotations

import os

from ctx_reference._validate import require_int, require_real
from ctx_reference.recall import DOC_TOKENS, RecallModel, answer_position
from ctx_reference.sim import STRATEGIES, SimParams, simulate

from .i18n import _

# Slider ranges (inclusive) and steps.
DOCUMENTS_RANGE = (2, 250)
MIDDLE_RANGE = (0.0, 1.0, 0.05)
KEEP_RANGE = (0, 20)
THRESHOLD_RANGE = (20_000, 100_000, 2_000)
CLEAR_AT_LEAST_RANGE = (0, 60_000, 2_000)
SUMMARY_CAPACITY_RANGE = (0, 20)
# A description as wide as its text, in either language (ipywidgets' default width cuts "Summary capacity" short).
LABEL_STYLE = {"description_width": "initial"}


def live_frontend() -> bool:
    """Return True if this kernel serves a notebook open in Jupyter (see the module docstring)."""
    override = os.environ.get("CTX_WIDGETS")
    if override in ("0", "1"):
        return override == "1"
    return "JPY_SESSION_NAME" in os.environ and "NBGRADER_EXECUTION" not in os.environ


def recall_view(documents: int, position: int, middle: float):
    """Return (table text, Figure) for ``documents`` 4,000-token documents, the answer in
    document ``position`` (1-based), and the middle penalty ``middle``.

    >>> text, fig = recall_view(200, 101, 0.3)      # the lesson's 800,000 tokens, doc index 100
    >>> text.splitlines()[-1].split()[-1]
    '0.183'
    """
    from ctx_reference.plots import plot_recall_vs_position
    from ctx_reference.tables import format_table

    require_int(documents, "documents", minimum=1)
    require_int(position, "position", minimum=1)
    if position > documents:
        raise ValueError(f"position must be <= documents ({documents}) (got {position!r})")
    model = RecallModel(middle=require_real(middle, "middle"))
    n = documents * DOC_TOKENS
    pos = answer_position(position - 1)
    row = [f"{documents:,}", f"{n:,}", _("第 {position} 篇").format(position=position), f"{model.base(n):.3f}",
           f"{model.position_factor(pos, n):.3f}", f"{model.recall(pos, n):.3f}"]
    text = format_table([_("文档数"), _("上下文 token"), _("答案位置"), _("基础召回"), _("位置系数"), _("召回率")],
                        [row], ">>>>>>")
    return text, plot_recall_vs_position(model, n, marks=[pos])


def strategy_view(keep: int, threshold: int, clear_at_least: int,
                  summary_capacity: int | None):
    """Return (table text, Figure) of the four strategies with these four parameters changed.

    >>> text, fig = strategy_view(5, 60_000, 0, None)   # the lesson's defaults
    >>> "59,550" in text and "第 26 轮" in text
    True
    """
    from ctx_reference.plots import plot_context_per_turn
    from ctx_reference.tables import format_strategy_table

    params = SimParams(keep=keep, threshold=threshold, clear_at_least=clear_at_least,
                       summary_capacity=summary_capacity)
    results = {s: simulate(s, params) for s in STRATEGIES}
    return format_strategy_table(results, params), plot_context_per_turn(results, params)


def _show(text: str, fig) -> None:
    from IPython.display import display

    print(text)
    display(fig)


def explore_recall(documents: int = 200, position: int = 101, middle: float = 0.3, *,
                   live: bool | None = None):
    """Show ``recall_view``; in a live frontend (or ``live=True``) with three sliders.

    Returns the widget box when sliders are shown, else None.
    """
    text, fig = recall_view(documents, position, middle)
    if not (live_frontend() if live is None else live):
        _show(text, fig)
        return None
    import ipywidgets as w
    from IPython.display import display

    docs = w.IntSlider(value=documents, min=DOCUMENTS_RANGE[0], max=DOCUMENTS_RANGE[1],
                       description=_("文档数"), style=LABEL_STYLE)
    pos = w.IntSlider(value=position, min=1, max=documents, description=_("答案在第几篇"), style=LABEL_STYLE)
    mid = w.FloatSlider(value=middle, min=MIDDLE_RANGE[0], max=MIDDLE_RANGE[1],
                        step=MIDDLE_RANGE[2], description=_("中间劣势"), style=LABEL_STYLE)

    def follow(change) -> None:
        pos.max = change["new"]

    docs.observe(follow, names="value")
    out = w.interactive_output(lambda documents, position, middle: _show(
        *recall_view(documents, min(position, documents), middle)),
        {"documents": docs, "position": pos, "middle": mid})
    box = w.VBox([w.HBox([docs, pos, mid]), out])
    display(box)
    return box


def explore_strategies(params: SimParams = SimParams(), *, live: bool | None = None):
    """Show ``strategy_view`` for ``params``; in a live frontend (or ``live=True``) with four sliders
    (keep, threshold, clear_at_least, and summary capacity with an "unlimited" box).

    Returns the widget box when sliders are shown, else None.
    """
    text, fig = strategy_view(params.keep, params.threshold, params.clear_at_least,
                              params.summary_capacity)
    if not (live_frontend() if live is None else live):
        _show(text, fig)
        return None
    import ipywidgets as w
    from IPython.display import display

    keep = w.IntSlider(value=params.keep, min=KEEP_RANGE[0], max=KEEP_RANGE[1], description="keep",
                        style=LABEL_STYLE)
    threshold = w.IntSlider(value=params.threshold, min=THRESHOLD_RANGE[0], max=THRESHOLD_RANGE[1],
                            step=THRESHOLD_RANGE[2], description=_("阈值"), style=LABEL_STYLE)
    at_least = w.IntSlider(value=params.clear_at_least, min=CLEAR_AT_LEAST_RANGE[0],
                           max=CLEAR_AT_LEAST_RANGE[1], step=CLEAR_AT_LEAST_RANGE[2],
                           description="clear_at_least", style=LABEL_STYLE)
    unlimited = w.Checkbox(value=params.summary_capacity is None, description=_("摘要不限容量"),
                           indent=False, style=LABEL_STYLE)
    capacity = w.IntSlider(value=params.summary_capacity or 2, min=SUMMARY_CAPACITY_RANGE[0],
                           max=SUMMARY_CAPACITY_RANGE[1], description=_("摘要容量"), style=LABEL_STYLE)

    def draw(keep, threshold, clear_at_least, unlimited, capacity) -> None:
        _show(*strategy_view(keep, threshold, clear_at_least, None if unlimited else capacity))

    out = w.interactive_output(draw, {"keep": keep, "threshold": threshold,
                                      "clear_at_least": at_least, "unlimited": unlimited,
                                      "capacity": capacity})
    box = w.VBox([w.HBox([keep, threshold, at_least]), w.HBox([unlimited, capacity]), out])
    display(box)
    return box
