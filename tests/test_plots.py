"""Tests for ctx_reference.plots: each function returns a Figure with the lines, labels and values it promises."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ctx_reference import plots  # noqa: E402
from ctx_reference.ledger import BUCKETS, WindowLedger, lesson_calls  # noqa: E402
from ctx_reference.recall import RecallModel  # noqa: E402
from ctx_reference.sim import STRATEGIES, SimParams, simulate  # noqa: E402


def _line(fig: Figure, gid: str):
    """Return the one line of ``fig`` whose gid is ``gid``."""
    found = [line for ax in fig.axes for line in ax.lines if line.get_gid() == gid]
    assert len(found) == 1, [line.get_gid() for ax in fig.axes for line in ax.lines]
    return found[0]


def _draw(fig: Figure) -> None:
    """Render ``fig`` with Agg, as a notebook or savefig would."""
    FigureCanvasAgg(fig).draw()


@pytest.fixture(scope="module")
def lesson_runs():
    """The four strategies under the lesson's parameters."""
    return {strategy: simulate(strategy, SimParams()) for strategy in STRATEGIES}


@pytest.fixture(scope="module")
def lesson_entries():
    """The ledger entries of the lesson's six calls."""
    ledger = WindowLedger()
    for name, buckets in lesson_calls():
        ledger.record(name, **buckets)
    return ledger.entries


# ---------------------------------------------------------------- recall


def test_recall_vs_length_shape_and_values():
    """One axes, log x; base recall is 0.500 at 400,000 and 0.261 at 800,000; half_at line at 400,000."""
    fig = plots.plot_recall_vs_length(RecallModel(), [400_000, 800_000])
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [round(y, 3) for y in _line(fig, "base").get_ydata()] == [0.5, 0.261]
    assert [round(y, 3) for y in _line(fig, "middle").get_ydata()] == [0.35, 0.183]  # x 0.7 in the middle
    assert list(_line(fig, "half_at").get_xdata()) == [400_000, 400_000]
    assert "参数是编的" in ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel() == "召回率"


def test_recall_vs_length_default_lengths_span_1k_to_2m():
    """By default the curve runs from 1,000 to 2,000,000 tokens in 121 points."""
    xs = list(_line(plots.plot_recall_vs_length(), "base").get_xdata())
    assert (xs[0], xs[-1], len(xs)) == (1_000, 2_000_000, 121)


@pytest.mark.parametrize("lengths", [[], [0], [1.5], "400000"])
def test_recall_vs_length_rejects_bad_lengths(lengths):
    """Empty, zero, fractional or string lengths raise ValueError naming 'lengths'."""
    with pytest.raises(ValueError, match="lengths"):
        plots.plot_recall_vs_length(RecallModel(), lengths)


def test_recall_vs_position_marks_the_lesson_cases():
    """800,000 tokens: answer in doc 100 -> 0.183, in doc 199 -> 0.260; without the middle effect 0.261."""
    fig = plots.plot_recall_vs_position(RecallModel(), 800_000)
    marks = [line for line in fig.axes[0].lines if line.get_gid() == "mark"]
    assert [round(float(m.get_ydata()[0]), 3) for m in marks] == [0.183, 0.26]
    assert round(float(_line(fig, "flat").get_ydata()[0]), 3) == 0.261
    u = _line(fig, "recall").get_ydata()
    assert min(u) < u[0] and min(u) < u[-1]  # a U: the middle is lowest
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("0.183" in t and "推导" in t for t in texts)


def test_recall_vs_position_rejects_marks_outside_the_context():
    """A mark at or past n raises ValueError naming the mark and echoing it."""
    with pytest.raises(ValueError, match=r"marks\[0\] must be < n=1000 \(got 1000\)"):
        plots.plot_recall_vs_position(RecallModel(), 1_000, marks=[1_000])
    with pytest.raises(ValueError, match=r"n must be an int >= 1 \(got 0\)"):
        plots.plot_recall_vs_position(RecallModel(), 0)


def test_toy_beside_lost_in_the_middle():
    """Two panels; measured 75.8/57.2/53.8/55.4/63.2 % at 1/5/10/15/20, closed-book 56.1 %; toy labelled invented."""
    fig = plots.plot_toy_vs_lost_in_the_middle()
    assert len(fig.axes) == 2
    measured = _line(fig, "measured")
    assert list(measured.get_xdata()) == [1, 5, 10, 15, 20]
    assert list(measured.get_ydata()) == [75.8, 57.2, 53.8, 55.4, 63.2]
    assert list(_line(fig, "closed_book").get_ydata()) == [56.1, 56.1]
    toy = _line(fig, "toy")
    assert toy.get_label() == "玩具模型，参数是编的"
    assert len(toy.get_xdata()) == 20
    assert "参数是编的" in fig.axes[0].get_title()
    assert "Liu et al. 2023" in fig.axes[1].get_title()
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim() == (0.0, 100.0)


# ---------------------------------------------------------------- simulation


def test_context_per_turn_threshold_and_window_lines(lesson_runs):
    """The threshold line lies at 60,000 tokens and the window line at 100,000."""
    fig = plots.plot_context_per_turn(lesson_runs, SimParams())
    assert len(fig.axes) == 1
    assert list(_line(fig, "threshold").get_ydata()) == [60_000, 60_000]
    assert list(_line(fig, "window").get_ydata()) == [100_000, 100_000]


def test_context_per_turn_lines_follow_the_runs(lesson_runs):
    """clear peaks at 59,550; none sends 25 requests and its X marks the rejected 8,000 + 26 × 3,600 =
    101,600 at turn 26."""
    fig = plots.plot_context_per_turn(lesson_runs, SimParams())
    assert max(_line(fig, "context:clear").get_ydata()) == 59_550
    assert max(_line(fig, "context:compact").get_ydata()) == 58_400
    none = _line(fig, "context:none")
    assert list(none.get_xdata())[-1] == 25
    overflow = _line(fig, "overflow:none")
    assert (list(overflow.get_xdata()), list(overflow.get_ydata())) == ([26], [101_600])
    assert [line.get_gid() for line in fig.axes[0].lines].count("overflow:clear") == 0


def test_context_per_turn_marks_every_rewrite(lesson_runs):
    """Rewrite markers: 15 for clear, 17 for clear_notes, 6 for compact, 0 for none."""
    fig = plots.plot_context_per_turn(lesson_runs, SimParams())
    counts = {s: len(_line(fig, f"rewrites:{s}").get_xdata()) for s in STRATEGIES}
    assert counts == {"none": 0, "clear": 15, "clear_notes": 17, "compact": 6}


def test_context_per_turn_has_a_chinese_legend(lesson_runs):
    """The legend names each strategy, the threshold, the window and the rewrite marker."""
    fig = plots.plot_context_per_turn(lesson_runs, SimParams())
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # under the axes, in the figure
    assert "阈值 60,000" in labels and "窗口 100,000" in labels and "改写（缓存失效）" in labels
    assert any(label.startswith("clear（") for label in labels)


def test_context_per_turn_rejects_empty_results():
    """An empty mapping raises ValueError naming 'results'."""
    with pytest.raises(ValueError, match="results"):
        plots.plot_context_per_turn({}, SimParams())


# ---------------------------------------------------------------- ledger


def test_bucket_shares_stack_the_lesson_totals(lesson_entries):
    """Seed: over the six calls the bars add up to 0 / 88 / 1,080 / 277 tokens per bucket."""
    fig = plots.plot_bucket_shares(lesson_entries)
    containers = fig.axes[0].containers
    assert [c.get_label() for c in containers] == list(BUCKETS)
    totals = [sum(bar.get_height() for bar in c) for c in containers]
    assert totals == [0, 88, 1080, 277]
    assert len(containers[0]) == 6  # one bar per call


def test_bucket_shares_in_percent_sum_to_100(lesson_entries):
    """With share=True each call's bar reaches 100 %."""
    fig = plots.plot_bucket_shares(lesson_entries, share=True, derived=True)
    containers = fig.axes[0].containers
    for i in range(6):
        assert sum(c[i].get_height() for c in containers) == pytest.approx(100)
    assert "推导" in fig.axes[0].get_title()


def test_zones_lines_and_colours():
    """Lines at 60 %, 85 %, 100 % of 100,000; bars of 59,550 / 61,200 / 89,450 / 100,001 are
    safe/caution/danger/over."""
    fig = plots.plot_zones([59_550, 61_200, 89_450, 100_001], 100_000)
    assert [list(_line(fig, f"zone:{p}").get_ydata()) for p in (60, 85, 100)] == [
        [60_000, 60_000], [85_000, 85_000], [100_000, 100_000]]
    bars = fig.axes[0].containers[0]
    colours = [to_hex(bar.get_facecolor()) for bar in bars]
    expected = [plots.ZONE_COLORS[z] for z in plots.Zone]  # SAFE, CAUTION, DANGER, OVER
    assert colours == expected


@pytest.mark.parametrize("contexts, limit", [([], 100), ([-1], 100), ([10], 0)])
def test_zones_reject_bad_input(contexts, limit):
    """No requests, a negative size or a zero limit raise ValueError."""
    with pytest.raises(ValueError):
        plots.plot_zones(contexts, limit)


# ---------------------------------------------------------------- reconciling the estimate

ERRORS = {
    "o200k_base": {"FakeTokenizer": {"中文": -0.69, "JSON": -0.35}, "EstimateTokenizer": {"中文": 0.27, "JSON": -0.30}},
    "Qwen": {"FakeTokenizer": {"中文": -0.63, "JSON": -0.43}, "EstimateTokenizer": {"中文": 0.51, "JSON": -0.39}},
}


def test_estimate_errors_one_panel_per_real_ruler_bars_in_percent():
    """Two real rulers give two panels; the o200k_base panel's bars are -69 / -35 % and +27 / -30 %."""
    fig = plots.plot_estimate_errors(ERRORS)
    assert len(fig.axes) == 2
    bars = {c[0].get_gid(): [round(bar.get_height(), 6) for bar in c] for ax in fig.axes for c in ax.containers}
    assert bars["error:o200k_base:FakeTokenizer"] == [-69.0, -35.0]
    assert bars["error:o200k_base:EstimateTokenizer"] == [27.0, -30.0]
    assert bars["error:Qwen:EstimateTokenizer"] == [51.0, -39.0]
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["中文", "JSON"]
    assert "o200k_base" in fig.axes[0].get_title()


def test_estimate_errors_keep_the_colour_of_a_named_estimate():
    """EstimateTokenizer is drawn in the same colour whether it comes first or second."""
    first = plots.plot_estimate_errors({"Qwen": {"EstimateTokenizer": {"中文": 0.5}, "拟合后": {"中文": 0.06}}})
    second = plots.plot_estimate_errors({"Qwen": {"FakeTokenizer": {"中文": -0.6}, "EstimateTokenizer": {"中文": 0.5}}})
    colour = {to_hex(c[0].get_facecolor()) for fig in (first, second) for c in fig.axes[0].containers
              if c.get_label() == "EstimateTokenizer"}
    assert colour == {plots.ESTIMATE_COLORS["EstimateTokenizer"]}


def test_estimate_errors_names_kinds_with_labels():
    """kind_labels replaces the kind keys on the x axis."""
    fig = plots.plot_estimate_errors({"o200k_base": {"FakeTokenizer": {"zh_prose": -0.69}}}, {"zh_prose": "中文"})
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["中文"]


@pytest.mark.parametrize("errors", [
    {},
    {"o200k_base": {}},
    {"o200k_base": {"Fake": {"中文": -0.7}}, "Qwen": {"Estimate": {"中文": 0.5}}},
    {"o200k_base": {"Fake": {"中文": -0.7}}, "Qwen": {"Fake": {"英文": 0.3}}},
])
def test_estimate_errors_reject_ragged_input(errors):
    """No rulers, no estimates, or panels with different estimates or kinds raise ValueError naming errors."""
    with pytest.raises(ValueError, match="errors"):
        plots.plot_estimate_errors(errors)


# ---------------------------------------------------------------- all figures


def _every_figure(lesson_runs, lesson_entries):
    return [
        plots.plot_recall_vs_length(),
        plots.plot_recall_vs_position(),
        plots.plot_toy_vs_lost_in_the_middle(),
        plots.plot_context_per_turn(lesson_runs, SimParams()),
        plots.plot_bucket_shares(lesson_entries),
        plots.plot_zones(lesson_runs["clear"].contexts, 100_000),
    ]


def test_figures_stay_out_of_pyplot(lesson_runs, lesson_entries):
    """No plot function opens a pyplot figure (nothing to close, nothing drawn twice in a notebook)."""
    before = plt.get_fignums()
    figures = _every_figure(lesson_runs, lesson_entries)
    assert all(isinstance(fig, Figure) for fig in figures)
    assert plt.get_fignums() == before


def test_figures_use_the_bundled_font_as_fallback():
    """Titles use DejaVu Sans first and the bundled Chinese font for the Chinese glyphs."""
    fig = plots.plot_recall_vs_length(RecallModel(), [1_000])
    assert fig.axes[0].title.get_fontfamily() == ["DejaVu Sans", "Workbook Sans SC"]


def test_plot_functions_do_not_mutate_their_input(lesson_runs):
    """Plotting leaves the caller's contexts list and results mapping as they were."""
    contexts = [59_550, 61_200]
    plots.plot_zones(contexts, 100_000)
    assert contexts == [59_550, 61_200]
    runs = dict(lesson_runs)
    plots.plot_context_per_turn(runs, SimParams())
    assert runs == lesson_runs
