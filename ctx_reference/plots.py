"""Matplotlib figures of the workbook: every ``plot_*`` function takes data and returns a Figure.

What this covers: the pictures the notebooks show -- the toy recall curve against
context length and against position (the U), the toy beside a measured curve
(Lost in the Middle), context size per turn under the four simulated strategies,
the ledger's buckets per call, and per-request zones of the window.

What it leaves out: computing (the library modules do), showing and saving. The
figures are ``matplotlib.figure.Figure`` objects made without pyplot, so nothing
is registered in pyplot's global list of open figures and nothing is drawn twice
in a notebook: leave the figure as the last expression of a cell (or call
``display(fig)``, or ``fig.savefig(path)``). ``plt.show()`` does not know about
these figures.

Chinese text: titles and labels are Simplified Chinese. matplotlib's bundled
DejaVu Sans has no Chinese glyphs, so the package ships its own: a subset of
Noto Sans CJK SC named "Workbook Sans SC" (``fonts/``, SIL Open Font License).
``cjk_font`` registers that file by path -- no installed font and no font cache
is needed -- and every figure uses it as the fallback of DejaVu Sans for its
texts. A character outside the subset still draws as a box, and matplotlib then
warns ("Glyph ... missing from font"); ``scripts/subset_font.py`` cuts the font
again with the characters the plots use.

Vocabulary:
    gid -- the id a plotted artist carries (``line.get_gid()``): ``"threshold"``,
           ``"window"``, ``"context:clear"``, ``"rewrites:clear"``, ``"overflow:none"``,
           ``"zone:60"`` ... so that notebooks and tests can find a line by meaning.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter

from ctx_reference.calibrate import KIND_LABELS
from ctx_reference.ledger import (
    BUCKETS,
    CAUTION_FROM_PERCENT,
    DANGER_ABOVE_PERCENT,
    OVER_ABOVE_PERCENT,
    Zone,
    zones_for,
)
from ctx_reference.recall import DOC_TOKENS, LOST_IN_THE_MIDDLE, MeasuredCurve, RecallModel, answer_position
from ctx_reference.tables import STRATEGY_LABELS, Labels

from .i18n import N_, _

if TYPE_CHECKING:
    from ctx_reference.ledger import LedgerEntry
    from ctx_reference.policy_score import PolicyScore
    from ctx_reference.sim import SimParams, SimResult

FIGSIZE = (8.0, 4.5)  # inches: one panel
WIDE_FIGSIZE = (11.0, 4.5)  # inches: two panels side by side
PERCENT = 100
LATIN_FONT = "DejaVu Sans"  # matplotlib's bundled font, first in every family list
FONT_FILE = Path(__file__).with_name("fonts") / "WorkbookSansSC-Regular.otf"
"""The bundled Chinese font: a subset of Noto Sans CJK SC (see fonts/README.md)."""
CJK_FONT = "Workbook Sans SC"  # its family name

STRATEGY_COLORS = {"none": "#7f7f7f", "clear": "#1f77b4", "clear_notes": "#2ca02c", "compact": "#ff7f0e"}
BUCKET_COLORS = {"system": "#8c564b", "task_state": "#9467bd", "tool_results": "#1f77b4", "history": "#ff7f0e"}
ZONE_COLORS = {Zone.SAFE: "#4c9f70", Zone.CAUTION: "#e0a030", Zone.DANGER: "#d1495b", Zone.OVER: "#7b1e3a"}
ZONE_LABELS = Labels({Zone.SAFE: N_("safe 安全"), Zone.CAUTION: N_("caution 注意"), Zone.DANGER: N_("danger 危险"),
                      Zone.OVER: N_("over 超出")})
TOY_LABEL = N_("玩具模型，参数是编的")  # shown as _(TOY_LABEL)
DEFAULT_LENGTH_RANGE = (1_000, 2_000_000)  # tokens: x range of plot_recall_vs_length
DEFAULT_LENGTH_POINTS = 121
DEFAULT_POSITION_POINTS = 201
LESSON_CONTEXT = 800_000  # tokens: the lesson's 200 stuffed documents
HEADROOM = 1.1  # y axis reaches this multiple of the highest line or bar
RECALL_HEADROOM = 1.25  # the same for the recall-by-position curve
MIN_RECALL_AXIS = 0.05  # top of that y axis at the least, for a curve close to 0
MAX_ZONE_TICKS = 20  # at most this many labelled bars in plot_zones
TITLE_SHARE = 0.96  # a figure's title may take this share of its width
LEGEND_COLUMNS = 2  # columns of a legend under the axes: long English labels fit in two


# ---------------------------------------------------------------- fonts and helpers


def cjk_font() -> str:
    """Register the bundled Chinese font with matplotlib by file; return its family name.

    The file is added to the running font manager once (``fontManager.addfont``),
    so figures find it whatever fonts the machine has and whatever matplotlib's
    font cache holds.

    Used by every plot function of this module.
    """
    path = str(FONT_FILE)
    if not any(entry.fname == path for entry in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(path)
    return CJK_FONT


def _finish(fig: Figure) -> Figure:
    """Give every text of ``fig`` the bundled Chinese font as the fallback of DejaVu Sans, then fit its titles."""
    family = cjk_font()
    for text in fig.findobj(Text):
        text.set_fontfamily([LATIN_FONT, family])
    _fit_titles(fig)
    return fig


_BREAK = re.compile(r"[\u3400-\u9fff][，、：；）]?|[^\s\u3400-\u9fff]+\s*|\s+")  # data: punctuation
"""The pieces a title may break between: a Chinese character (with the punctuation after it), a word."""


def _wrapped(title: Text, width: float) -> str:
    """Return the text of ``title`` broken into lines no wider than ``width`` pixels (a piece never splits)."""
    lines: list[str] = []
    line = ""
    for piece in _BREAK.findall(title.get_text()):
        title.set_text((line + piece).rstrip())
        if line.strip() and title.get_window_extent().width > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def _fit_titles(fig: Figure) -> None:
    """Break every title wider than its axes (the suptitle: than the figure) onto more lines.

    The same figure is laid out for either language: an English title is often twice as wide
    as its Chinese text, and two side by side would run into each other. The figure is laid out
    once to measure; constrained layout makes room for the extra lines when it is drawn.
    """
    fig.draw_without_rendering()
    fitted = [(ax.title, ax.get_window_extent().width) for ax in fig.axes if ax.get_visible()]
    suptitle = getattr(fig, "_suptitle", None)  # the Text of fig.suptitle (get_suptitle gives only its string)
    if suptitle is not None:
        fitted.append((suptitle, fig.bbox.width * TITLE_SHARE))
    for title, width in fitted:
        if title.get_text() and title.get_window_extent().width > width:
            title.set_text(_wrapped(title, width))


def _thousands(value: float, _position: object = None) -> str:
    """Tick formatter: 60000 -> '60,000'."""
    return f"{value:,.0f}"


def _token_counts(values: object, name: str) -> list[int]:
    """Return ``values`` as a list of ints >= 0, or raise ValueError naming ``name``."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of token counts (got {values!r})")
    try:
        items = list(values)  # type: ignore[call-overload]  # anything iterable; TypeError if not
    except TypeError:
        raise ValueError(f"{name} must be a sequence of token counts (got {values!r})") from None
    counts = []
    for index, value in enumerate(items):
        if isinstance(value, bool):
            raise ValueError(f"{name}[{index}] must be an int (got {value!r})")
        try:
            count = operator.index(value)
        except TypeError:
            raise ValueError(f"{name}[{index}] must be an int (got {value!r})") from None
        if count < 0:
            raise ValueError(f"{name}[{index}] must be >= 0 (got {value!r})")
        counts.append(count)
    return counts


def _positive_int(value: object, name: str) -> int:
    """Return ``value`` if it is an int >= 1 (bool excluded), else raise ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1 (got {value!r})")
    return value


def _require_model(model: object) -> RecallModel:
    if not isinstance(model, RecallModel):
        raise ValueError(f"model must be a RecallModel (got {model!r})")
    return model


def default_lengths() -> list[int]:
    """Return context lengths from 1,000 to 2,000,000 tokens, evenly spaced on a log scale.

    >>> lengths = default_lengths()
    >>> lengths[0], lengths[-1], len(lengths)
    (1000, 2000000, 121)

    Used by ``plot_recall_vs_length``.
    """
    low, high = DEFAULT_LENGTH_RANGE
    steps = DEFAULT_LENGTH_POINTS - 1
    return [round(low * (high / low) ** (i / steps)) for i in range(DEFAULT_LENGTH_POINTS)]


# ---------------------------------------------------------------- recall


def plot_recall_vs_length(model: RecallModel = RecallModel(), lengths: Sequence[int] | None = None) -> Figure:
    """Return a figure of the toy recall against context length (log x axis).

    Two curves: the base recall (no position effect, gid ``"base"``) and the
    recall of an answer in the exact middle (gid ``"middle"``); a dotted vertical
    line at ``half_at`` (gid ``"half_at"``), where the base recall is 0.5.
    With the lesson's model the base curve passes 0.500 at 400,000 and 0.261 at
    800,000 tokens.

    Used by the recall notebook.
    """
    _require_model(model)
    lengths = default_lengths() if lengths is None else _token_counts(lengths, "lengths")
    if not lengths:
        raise ValueError(f"lengths must hold at least one length (got {lengths!r})")
    if min(lengths) < 1:
        raise ValueError(f"lengths must all be >= 1 (got {min(lengths)!r})")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.plot(lengths, [model.base(n) for n in lengths], color="#1f77b4", gid="base",
            label=_("基础召回率（答案在两端）"))
    ax.plot(lengths, [model.recall(n // 2, n) for n in lengths], color="#d1495b", linestyle="--",
            gid="middle", label=_("答案在正中间"))
    ax.axvline(model.half_at, color="gray", linestyle=":", gid="half_at",
               label=_("half_at = {half_at:,.0f} token：基础召回率 0.5").format(half_at=model.half_at))
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.set_ylim(0, 1)
    ax.set_xlabel(_("上下文长度（token，对数刻度）"))
    ax.set_ylabel(_("召回率"))
    ax.set_title(_("上下文越长，越难找到答案（{toy}）").format(toy=_(TOY_LABEL)))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower left")
    return _finish(fig)


def plot_recall_vs_position(
    model: RecallModel = RecallModel(),
    n: int = LESSON_CONTEXT,
    points: int = DEFAULT_POSITION_POINTS,
    marks: Sequence[int] | None = None,
) -> Figure:
    """Return a figure of the toy recall against where the answer sits in an ``n``-token context.

    The U (gid ``"recall"``), the flat line of the same context without the
    middle effect (gid ``"flat"``, the recall at either end), and one marker per
    position in ``marks`` (gid ``"mark"``), annotated with its recall and
    labelled 推导 (the lesson does not quote these values). By default
    the marks are the answer in the middle document and in the last document of
    ``n // 4,000`` documents: for the lesson's 800,000 tokens, documents 100
    (0.183) and 199 (0.260).

    Used by the recall notebook.
    """
    _require_model(model)
    _positive_int(n, "n")
    points = _positive_int(points, "points")
    if points < 2:
        raise ValueError(f"points must be >= 2 (got {points!r})")
    if marks is None:
        n_docs = n // DOC_TOKENS
        marks = [answer_position(n_docs // 2), answer_position(n_docs - 1)] if n_docs >= 2 else []
    marks = _token_counts(marks, "marks")
    for index, pos in enumerate(marks):
        if pos >= n:
            raise ValueError(f"marks[{index}] must be < n={n} (got {pos!r})")
    positions = sorted({round(i * (n - 1) / (points - 1)) for i in range(points)})
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.plot([PERCENT * p / n for p in positions], [model.recall(p, n) for p in positions],
            color="#1f77b4", gid="recall", label=_("召回率"))
    ax.axhline(model.base(n), color="gray", linestyle="--", gid="flat",
               label=_("不计中间劣势（middle=0）：{recall:.3f}").format(recall=model.base(n)))
    for pos in marks:
        value = model.recall(pos, n)
        x = PERCENT * pos / n
        ax.plot([x], [value], marker="o", color="#d1495b", linestyle="none", gid="mark")
        align = "right" if x > 90 else "left" if x < 10 else "center"
        ax.annotate(_("第 {document} 篇：{recall:.3f}（推导）").format(document=pos // DOC_TOKENS + 1, recall=value),
                    (x, value), textcoords="offset points", xytext=(0, -16), ha=align)
    ax.set_xlim(0, PERCENT)
    ax.set_ylim(0, max(model.base(n) * RECALL_HEADROOM, MIN_RECALL_AXIS))
    ax.set_xlabel(_("答案在上下文中的位置（%）"))
    ax.set_ylabel(_("召回率"))
    ax.set_title(_("{n:,} token 的上下文：中间最难找到（{toy}）").format(n=n, toy=_(TOY_LABEL)))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center")
    return _finish(fig)


def plot_toy_vs_lost_in_the_middle(
    model: RecallModel = RecallModel(),
    curve: MeasuredCurve = LOST_IN_THE_MIDDLE,
    doc_tokens: int = DOC_TOKENS,
) -> Figure:
    """Return two panels: the toy's U over the documents of ``curve`` beside the measured curve.

    Left (gid ``"toy"``, labelled 玩具模型，参数是编的): the toy's recall, in %, for
    the answer in document 1 .. ``curve.n_documents`` of a context of that many
    ``doc_tokens``-token documents. Right (gid ``"measured"``): the measured
    accuracy at ``curve.positions`` (Lost in the Middle: 75.8 / 57.2 / 53.8 /
    55.4 / 63.2 % for GPT-3.5-Turbo at positions 1 / 5 / 10 / 15 / 20 of 20) and a
    horizontal line at the closed-book accuracy (gid ``"closed_book"``, 56.1 %).
    Both panels share the y axis, 0 to 100 %.

    Used by the recall notebook.
    """
    _require_model(model)
    if not isinstance(curve, MeasuredCurve):
        raise ValueError(f"curve must be a MeasuredCurve (got {curve!r})")
    _positive_int(doc_tokens, "doc_tokens")
    n_docs = curve.n_documents
    n = n_docs * doc_tokens
    docs = list(range(1, n_docs + 1))
    fig = Figure(figsize=WIDE_FIGSIZE, layout="constrained")
    toy_ax, real_ax = fig.subplots(1, 2, sharey=True)
    toy_ax.plot(docs, [PERCENT * model.recall(answer_position(d - 1, doc_tokens), n) for d in docs],
                marker="o", markersize=4, color="#1f77b4", gid="toy", label=_(TOY_LABEL))
    toy_ax.set_title(_("玩具模型（参数是编的）：{documents} 篇 × {doc_tokens:,} token").format(
        documents=n_docs, doc_tokens=doc_tokens))
    toy_ax.set_xlabel(_("答案所在文档的位置"))
    toy_ax.set_ylabel(_("找到答案的比例（%）"))
    real_ax.plot(curve.positions, curve.accuracy_percent, marker="s", color="#d1495b", gid="measured",
                 label=_("实测：{model}").format(model=curve.model))
    real_ax.axhline(curve.closed_book_percent, color="gray", linestyle="--", gid="closed_book",
                    label=_("闭卷（不给文档）：{percent} %").format(percent=curve.closed_book_percent))
    real_ax.set_title(_("实测：{model}，{documents} 篇文档（Liu et al. 2023）").format(
        model=curve.model, documents=curve.n_documents))
    real_ax.set_xlabel(_("答案所在文档的位置"))
    for ax in (toy_ax, real_ax):
        ax.set_xticks(sorted({1, *curve.positions, n_docs}))
        ax.set_ylim(0, PERCENT)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower center")
    fig.suptitle(_("同样是 U 形：左边是编出来的玩具模型，右边是论文里的测量"))
    return _finish(fig)


# ---------------------------------------------------------------- simulation


def plot_context_per_turn(results: Mapping[str, SimResult], params: SimParams) -> Figure:
    """Return the managed context of every request, turn by turn, one line per strategy.

    ``results`` maps a strategy to its ``SimResult``; ``params`` is the
    ``SimParams`` of the runs. Lines: ``"context:<strategy>"`` (the contexts sent),
    ``"rewrites:<strategy>"`` (markers at the turns whose management rewrote the
    context, i.e. broke the cache), ``"overflow:<strategy>"`` (an X at the size of
    the request that no longer fit -- turn 26 for ``none`` with the lesson's
    numbers, at 8,000 + 26 × 3,600 = 101,600), ``"threshold"`` (60,000) and ``"window"`` (100,000).

    Used by the long-task simulation notebook.
    """
    if not isinstance(results, Mapping) or not results:
        raise ValueError(f"results must be a non-empty mapping strategy -> SimResult (got {results!r})")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    for strategy, result in results.items():
        color = STRATEGY_COLORS.get(strategy)
        contexts = list(result.contexts)
        turns = list(range(1, len(contexts) + 1))
        label = (_("{strategy}（{label}）").format(strategy=strategy, label=STRATEGY_LABELS[strategy])
                 if strategy in STRATEGY_LABELS else strategy)
        (line,) = ax.plot(turns, contexts, color=color, linewidth=1.5, gid=f"context:{strategy}", label=label)
        sent = [t for t in getattr(result, "rewrite_turns", ()) if t <= len(contexts)]
        ax.plot(sent, [contexts[t - 1] for t in sent], marker="o", markersize=4, linestyle="none",
                color=line.get_color(), gid=f"rewrites:{strategy}", label="_nolegend_")
        if result.overflow_turn is not None:
            # The rejected request: the last context sent plus one turn, unless management rewrote it
            # on that turn (its size is not recorded then, so the X sits on the window line).
            rewrote_last = result.overflow_turn in getattr(result, "rewrite_turns", ())
            rejected = params.window if rewrote_last or not contexts else contexts[-1] + params.turn_tokens
            ax.plot([result.overflow_turn], [rejected], marker="X", markersize=10, linestyle="none",
                    color=line.get_color(), gid=f"overflow:{strategy}", label="_nolegend_")
            ax.annotate(_("{strategy}：第 {turn} 轮溢出").format(strategy=strategy, turn=result.overflow_turn),
                        (result.overflow_turn, rejected), textcoords="offset points", xytext=(6, -14))
    ax.axhline(params.threshold, color="#e0a030", linestyle="--", gid="threshold",
               label=_("阈值 {threshold:,}").format(threshold=params.threshold))
    ax.axhline(params.window, color="#d1495b", linestyle="-", gid="window",
               label=_("窗口 {window:,}").format(window=params.window))
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], marker="o", linestyle="none", color="black", markersize=4))
    labels.append(_("改写（缓存失效）"))
    # Under the axes, in the figure: constrained layout gives it the rows it needs, the axes keep the width.
    fig.legend(handles, labels, loc="outside lower center", ncol=LEGEND_COLUMNS, frameon=False)
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.set_xlim(0, params.turns + 1)
    ax.set_ylim(0, params.window * HEADROOM)
    ax.set_xlabel(_("轮次"))
    ax.set_ylabel(_("发送的上下文（token）"))
    ax.set_title(_("每轮发送的上下文：四种策略（重建的模拟）"))
    ax.grid(True, alpha=0.3)
    return _finish(fig)


# ---------------------------------------------------------------- ledger


def plot_bucket_shares(entries: Sequence[LedgerEntry], share: bool = False, derived: bool = False) -> Figure:
    """Return stacked bars, one per call, of the tokens (or shares) of the four buckets.

    ``entries`` are ``ledger.LedgerEntry`` values. One bar container per bucket,
    in ``ledger.BUCKETS`` order, each labelled with its bucket name. With
    ``share=True`` every bar is the call's split in % (sums to 100). With
    ``derived=True`` the title says the per-call split is derived (true of
    ``ledger.lesson_calls()``, whose totals alone the lesson quotes).

    Used by the context-ledger notebook.
    """
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence) or not entries:
        raise ValueError(f"entries must be a non-empty list of LedgerEntry (got {entries!r})")
    names = [entry.name or f"#{i}" for i, entry in enumerate(entries, start=1)]
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    bottoms = [0.0] * len(entries)
    for bucket in BUCKETS:
        values = []
        for entry in entries:
            tokens = entry.tokens.get(bucket, 0)
            if share:
                values.append(PERCENT * tokens / entry.total if entry.total else 0.0)
            else:
                values.append(float(tokens))
        ax.bar(names, values, bottom=bottoms, color=BUCKET_COLORS.get(bucket), label=bucket, gid=f"bucket:{bucket}")
        bottoms = [b + v for b, v in zip(bottoms, values)]
    if share:
        ax.set_ylim(0, PERCENT)
        ax.set_ylabel(_("占本次调用的比例（%）"))
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.set_ylabel(_("token"))
    ax.set_xlabel(_("调用"))
    ax.set_title(_("每次调用里四个桶各占多少（每次调用的拆分是推导值）") if derived else _("每次调用里四个桶各占多少"))
    ax.legend(loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig)


def plot_zones(contexts: Sequence[int], limit: int, labels: Sequence[str] | None = None) -> Figure:
    """Return one bar per request, coloured by its ledger zone, with lines at 60 %, 85 % and 100 % of ``limit``.

    ``contexts`` are tokens per request (a ``SimResult.contexts`` or the totals of
    ledger entries); ``labels`` name the bars (default 1, 2, ...). Lines carry
    gids ``"zone:60"``, ``"zone:85"``, ``"zone:100"`` (with a 100,000 window: at
    60,000, 85,000 and 100,000 tokens).

    Used by the context-ledger notebook.
    """
    counts = _token_counts(contexts, "contexts")
    if not counts:
        raise ValueError(f"contexts must hold at least one request (got {contexts!r})")
    zones = zones_for(counts, limit)
    if labels is None:
        labels = [str(i) for i in range(1, len(counts) + 1)]
    else:
        labels = [str(label) for label in labels]
        if len(labels) != len(counts):
            raise ValueError(f"labels must have one name per request, {len(counts)} (got {len(labels)})")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.bar(range(len(counts)), counts, color=[ZONE_COLORS[z] for z in zones], gid="requests")
    for percent, color in ((CAUTION_FROM_PERCENT, ZONE_COLORS[Zone.CAUTION]),
                           (DANGER_ABOVE_PERCENT, ZONE_COLORS[Zone.DANGER]),
                           (OVER_ABOVE_PERCENT, ZONE_COLORS[Zone.OVER])):
        ax.axhline(limit * percent / PERCENT, color=color, linestyle="--", gid=f"zone:{percent}",
                   label=_("{percent} %：{tokens:,}").format(percent=percent, tokens=limit * percent // PERCENT))
    step = max(1, len(counts) // MAX_ZONE_TICKS)
    ax.set_xticks(range(0, len(counts), step), labels[::step])
    handles, names = ax.get_legend_handles_labels()
    present = [z for z in Zone if z in zones]
    handles += [Patch(color=ZONE_COLORS[z]) for z in present]
    names += [ZONE_LABELS[z] for z in present]  # Labels: in the reader's language
    ax.legend(handles, names, loc="upper left", fontsize="small")
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.set_ylim(0, max(max(counts), limit) * HEADROOM)
    ax.set_xlabel(_("请求"))
    ax.set_ylabel(_("上下文（token）"))
    ax.set_title(_("每次请求占窗口多少：{limit:,} token 的窗口").format(limit=limit))
    return _finish(fig)


# ---------------------------------------------------------------- policies


def plot_policy_scores(scores: Mapping[str, PolicyScore], highlight: str | None = None) -> Figure:
    """Return total input equivalent against facts lost, one point per policy.

    ``scores`` maps a policy name to its ``PolicyScore``; ``highlight`` names the learner's
    (drawn as a large star). A policy that overflowed on some workload is drawn as an X.
    Points: ``gid="policy:<name>"``. Used by the capstone notebook.
    """
    if not isinstance(scores, Mapping) or not scores:
        raise ValueError(f"scores must be a non-empty mapping name -> PolicyScore (got {scores!r})")
    if highlight is not None and highlight not in scores:
        raise ValueError(f"highlight must be one of the policies {list(scores)!r} (got {highlight!r})")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    for name, s in scores.items():
        lost = sum(w.facts_lost for w in s.workloads)
        overflowed = any(w.overflow_turn is not None for w in s.workloads)
        mine = name == highlight
        color = "#d1495b" if mine else STRATEGY_COLORS.get(name, "#555555")
        marker = "*" if mine else ("X" if overflowed else "o")
        ax.plot([lost], [s.total_cost], marker=marker, markersize=18 if mine else 9,
                linestyle="none", color=color, gid=f"policy:{name}")
        shown = _("{name}（溢出）").format(name=name) if overflowed else name
        ax.annotate(shown, (lost, s.total_cost), textcoords="offset points",
                    xytext=(8, 6), color=color if mine else "black")  # the font has no bold face
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.set_xlim(left=-1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(_("丢失的事实（所有任务合计）"))
    ax.set_ylabel(_("输入当量（所有任务合计）"))
    ax.set_title(_("各策略：花费与丢失的事实（越靠左下越好；溢出的任务提前结束，花费偏低）"))
    ax.grid(True, alpha=0.3)
    return _finish(fig)


def plot_leaderboard(names: Sequence[str], scores: Sequence[float | None]) -> Figure:
    """Return horizontal bars of ranked scores (lower is better); None scores show as 出局.

    ``names`` and ``scores`` are in rank order. Bars: ``gid="score:<name>"``.
    Used by the class leaderboard (``python -m ctx_course leaderboard``).
    """
    if len(names) != len(scores):
        raise ValueError(f"scores must have one value per name ({len(names)}) (got {len(scores)})")
    fig = Figure(figsize=(FIGSIZE[0], max(2.5, 0.35 * len(names) + 1)), layout="constrained")
    ax = fig.add_subplot()
    shown = [s for s in scores if s is not None]
    top = max(shown, default=1.0)
    for i, (name, score) in enumerate(zip(names, scores)):
        y = len(names) - 1 - i
        if score is None:
            ax.barh([y], [top], color="#dddddd", gid=f"score:{name}")
            ax.text(top * 0.02, y, _("出局"), va="center")
        else:
            ax.barh([y], [score], color="#2e86ab" if score < 1 else "#e0a030", gid=f"score:{name}")
            ax.text(score, y, f" {score:.3f}", va="center")
    ax.axvline(1.0, color="#d1495b", linestyle="--", label=_("最便宜的安全内置策略 = 1"))
    ax.set_yticks(range(len(names)), list(reversed(list(names))))
    ax.set_xlabel(_("得分：花费 ÷ 最便宜的安全内置策略（几何平均，越低越好）"))
    ax.set_title(_("全班排行榜（隐藏任务）"))
    ax.legend(loc="lower right")
    return _finish(fig)


def plot_item_analysis(checks: Sequence[tuple[str, float]], caught: Sequence[tuple[str, int]]) -> Figure:
    """Return two panels of bars: each check cell's share of the class that passed, what each hidden test caught.

    ``checks`` is (name, share passed in [0, 1]) hardest first; ``caught`` is (name, submissions
    that failed first on that hidden test) most first. Bars: ``gid="check:<name>"`` and
    ``gid="hidden:<name>"``. Used by the item analysis (``python -m ctx_course items``).
    """
    for name, share in checks:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError(f"share passed of {name!r} must be between 0 and 1 (got {share!r})")
    rows = max(len(checks), len(caught), 1)
    fig = Figure(figsize=(FIGSIZE[0] * 1.6, max(2.5, 0.32 * rows + 1.2)), layout="constrained")
    left, right = fig.subplots(1, 2)
    for i, (name, share) in enumerate(checks):
        left.barh([len(checks) - 1 - i], [share], color="#2e86ab" if share >= 0.5 else "#d1495b", gid=f"check:{name}")
        left.text(share, len(checks) - 1 - i, f" {share:.0%}", va="center")
    left.set_yticks(range(len(checks)), [name for name, _ in reversed(list(checks))])
    left.set_xlim(0, 1.15)
    left.xaxis.set_major_formatter(PercentFormatter(1.0))
    left.set_title(_("检查格：全班通过的比例（越短越难）"))
    for i, (name, count) in enumerate(caught):
        right.barh([len(caught) - 1 - i], [count], color="#e0a030", gid=f"hidden:{name}")
        right.text(count, len(caught) - 1 - i, f" {count}", va="center")
    right.set_yticks(range(len(caught)), [name for name, _ in reversed(list(caught))])
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_xlabel(_("人数"))
    right.set_title(_("隐藏测试：没有通过的人数（只算第一个没有通过的）"))
    if not caught:
        right.text(0.5, 0.5, _("没有数据"), ha="center", va="center", transform=right.transAxes)
    return _finish(fig)


def plot_position_fit(base: float, middle: float, end_drop: float,
                      curve: MeasuredCurve = LOST_IN_THE_MIDDLE) -> Figure:
    """Return the measured accuracy by position and the fitted toy curve through it.

    The curve is ``base * (1 - middle * 4x(1 - x) - end_drop * x)`` with x = (p - 0.5) / N,
    drawn in percent. Lines: ``"measured"`` (points), ``"fit"``. Used by notebook 03-recall.
    """
    for name, value in (("base", base), ("middle", middle), ("end_drop", end_drop)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number (got {value!r})")
    n = curve.n_documents
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.plot(curve.positions, curve.accuracy_percent, "o", color="#d1495b", markersize=8,
            gid="measured", label=_("实测（{model}，{documents} 篇）").format(model=curve.model, documents=n))
    grid = [1 + i * (n - 1) / 200 for i in range(201)]
    fitted = [100 * base * (1 - middle * 4 * x * (1 - x) - end_drop * x)
              for x in ((p - 0.5) / n for p in grid)]
    ax.plot(grid, fitted, color="#2e86ab", gid="fit",
            label=_("拟合：base {base:.3f}，middle {middle:.3f}，end_drop {end_drop:.3f}").format(
                base=base, middle=middle, end_drop=end_drop))
    ax.axhline(curve.closed_book_percent, color="#7f7f7f", linestyle=":",
               label=_("闭卷 {percent} %").format(percent=curve.closed_book_percent))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # a document's number is whole
    ax.set_xlabel(_("答案所在文档的位置（第几篇）"))
    ax.set_ylabel(_("准确率（%）"))
    ax.set_title(_("玩具模型的位置曲线，用最小二乘拟合到实测"))
    ax.legend(loc="upper center")
    ax.grid(True, alpha=0.3)
    return _finish(fig)


# ---------------------------------------------------------------- reconciling the estimate


ESTIMATE_COLORS = {"FakeTokenizer": "#7f7f7f", "EstimateTokenizer": "#1f77b4"}  # the same in every figure
OTHER_ESTIMATE_COLORS = ("#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")  # the other estimates, in order


def plot_estimate_errors(errors: Mapping[str, Mapping[str, Mapping[str, float]]],
                         kind_labels: Mapping[str, str] | None = None) -> Figure:
    """Return grouped bars of the relative error of each estimate, by kind of text: one panel per real ruler.

    ``errors[real][estimate][kind]`` is (estimate - real) / real, e.g.
    ``{"o200k_base": {"FakeTokenizer": {"zh_prose": -0.69, ...}, ...}, "Qwen": {...}}``;
    every panel shows the same estimates and kinds. ``kind_labels`` names the kinds on the x
    axis (default: ``calibrate.KIND_LABELS`` in the reader's language, other keys as they are).
    Bars below 0 undercount: the ledger's alarm would ring late. The bars carry gids
    ``"error:<real>:<estimate>"``; FakeTokenizer and EstimateTokenizer keep their colours
    (`ESTIMATE_COLORS`) from figure to figure.

    Used by the context-ledger notebook (section "对账：校准估算").
    """
    if not isinstance(errors, Mapping) or not errors:
        raise ValueError(f"errors must be a non-empty mapping of real ruler to estimates (got {errors!r})")
    first = next(iter(errors.values()))
    if not isinstance(first, Mapping) or not first:
        raise ValueError(f"errors[...] must be a non-empty mapping of estimate to kinds (got {first!r})")
    estimates = list(first)
    kinds = list(next(iter(first.values())))
    for real, by_estimate in errors.items():
        if not isinstance(by_estimate, Mapping) or list(by_estimate) != estimates:
            raise ValueError(f"errors[{real!r}] must have the estimates {estimates} (got {by_estimate!r})")
        for estimate, by_kind in by_estimate.items():
            if not isinstance(by_kind, Mapping) or list(by_kind) != kinds:
                raise ValueError(f"errors[{real!r}][{estimate!r}] must have the kinds {kinds} (got {by_kind!r})")
    labels = [str((KIND_LABELS if kind_labels is None else kind_labels).get(kind, kind)) for kind in kinds]
    fig = Figure(figsize=(WIDE_FIGSIZE[0], WIDE_FIGSIZE[1] * len(errors)), layout="constrained")
    width = 0.8 / len(estimates)
    axes = fig.subplots(len(errors), 1, sharex=True, squeeze=False)[:, 0]
    others = iter(OTHER_ESTIMATE_COLORS * len(estimates))
    colors = {e: ESTIMATE_COLORS[e] if e in ESTIMATE_COLORS else next(others) for e in estimates}
    for ax, (real, by_estimate) in zip(axes, errors.items(), strict=True):
        for i, (estimate, by_kind) in enumerate(by_estimate.items()):
            offsets = [k + (i - (len(estimates) - 1) / 2) * width for k in range(len(kinds))]
            ax.bar(offsets, [PERCENT * by_kind[kind] for kind in kinds], width,
                   color=colors[estimate], label=estimate, gid=f"error:{real}:{estimate}")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel(_("相对误差（%）"))
        ax.set_title(_("以 {real} 的实际 token 数为准：低于 0 是少算").format(real=real))
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    axes[-1].set_xticks(range(len(kinds)), labels)
    axes[-1].set_xlabel(_("文本的种类"))
    return _finish(fig)
