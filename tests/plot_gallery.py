"""Every plot function of ctx_reference.plots, called as the notebooks call it (for the font tests)."""
from __future__ import annotations

from matplotlib.figure import Figure

from ctx_reference import plots
from ctx_reference.calibrate import (
    LinearEstimate,
    held_out_receipts,
    receipt_error_by_kind,
)
from ctx_reference.ledger import WindowLedger, lesson_calls
from ctx_reference.policy import BUILTIN_POLICIES
from ctx_reference.policy_score import score_builtins, score_policy
from ctx_reference.recall import fit_position_curve
from ctx_reference.sim import STRATEGIES, SimParams, simulate
from ctx_reference.workloads import visible_workloads


def every_figure() -> list[Figure]:
    """Return one figure per way the notebooks use a plot function."""
    runs = {s: simulate(s, SimParams()) for s in STRATEGIES}
    ledger = WindowLedger()
    for name, buckets in lesson_calls():
        ledger.record(name, **buckets)
    none = list(runs["none"].contexts)
    workloads = visible_workloads()
    scores = {**score_builtins(workloads),
              "my_policy": score_policy(BUILTIN_POLICIES["clear_notes"], workloads, "my_policy")}
    fit = fit_position_curve()
    estimate_errors = {  # the shape notebook 09's section 14 passes (recorded receipts, no tokenizer needed)
        ruler: {"EstimateTokenizer": receipt_error_by_kind(held_out_receipts(ruler), LinearEstimate(0.25, 1.0))}
        for ruler in ("o200k_base", "Qwen")
    }
    return [
        plots.plot_recall_vs_length(),
        plots.plot_recall_vs_position(),
        plots.plot_toy_vs_lost_in_the_middle(),
        plots.plot_context_per_turn(runs, SimParams()),
        plots.plot_bucket_shares(list(ledger.entries), share=True, derived=True),
        plots.plot_bucket_shares(list(ledger.entries)),
        plots.plot_zones(none + [101_600], 100_000, labels=[str(t) for t in range(1, len(none) + 2)]),
        plots.plot_policy_scores(scores, highlight="my_policy"),
        plots.plot_leaderboard(["ada", "ben", "cai"], [0.8, 1.2, None]),
        plots.plot_item_analysis([("02-remaining check_remaining", 0.25), ("05-trim-lines check_trim_lines", 0.75)],
                                 [("check_remaining：超额时余量为负数", 3)]),
        plots.plot_item_analysis([], []),
        plots.plot_position_fit(fit.base, fit.middle, fit.end_drop),
        plots.plot_estimate_errors(estimate_errors),
    ]
