"""Time the four-strategy simulation: default runs, one long run, and a parameter sweep.

Run with ``python benchmarks/bench_sim.py``. Prints the best of several repeats for each
case (wall time, ``time.perf_counter``). Goals: the sweep and the 100,000-turn run each
under one second.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

from ctx_reference.sim import STRATEGIES, SimParams, simulate

REPEATS = 5  # best-of-N
LONG_TURNS = 100_000
# clear and clear_notes keep a 610-token stub of every turn, so their context keeps
# growing; a window this large lets them run all 100,000 turns (~61M tokens at the end).
LONG_WINDOW = 100_000_000
SWEEP_KEEPS = range(1, 31)  # keep 1..30
SWEEP_THRESHOLDS = tuple(30_000 + i * 60_000 // 29 for i in range(30))  # 30,000..90,000


def best_of(repeats: int, run) -> float:
    """Return the shortest wall time, in seconds, of ``repeats`` calls of ``run()``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def sweep() -> int:
    """Run every strategy over the keep × threshold grid; return the number of runs."""
    base = SimParams()
    runs = 0
    for keep in SWEEP_KEEPS:
        for threshold in SWEEP_THRESHOLDS:
            params = replace(base, keep=keep, threshold=threshold)
            for strategy in STRATEGIES:
                simulate(strategy, params)
                runs += 1
    return runs


def main() -> None:
    """Print the report."""
    lines = [f"bench_sim (best of {REPEATS})"]
    for strategy in STRATEGIES:
        seconds = best_of(REPEATS, partial(simulate, strategy))
        lines.append(f"  default {strategy:<12} {seconds * 1e6:9.1f} µs")

    long_runs = [
        ("compact", SimParams(turns=LONG_TURNS)),
        ("clear", SimParams(turns=LONG_TURNS, window=LONG_WINDOW)),
        ("clear_notes", SimParams(turns=LONG_TURNS, window=LONG_WINDOW)),
    ]
    for strategy, params in long_runs:
        result = simulate(strategy, params)
        seconds = best_of(REPEATS, partial(simulate, strategy, params))
        lines.append(f"  {LONG_TURNS:,} turns {strategy:<12} {seconds * 1e3:9.1f} ms"
                     f"  ({len(result.contexts):,} requests, {result.rewrites:,} rewrites,"
                     f" peak {result.peak:,})")

    runs = sweep()
    seconds = best_of(REPEATS, sweep)
    lines.append(f"  sweep {len(SWEEP_KEEPS)} keeps x {len(SWEEP_THRESHOLDS)} thresholds"
                 f" x {len(STRATEGIES)} strategies = {runs:,} runs:"
                 f" {seconds * 1e3:.1f} ms ({seconds / runs * 1e6:.1f} µs/run)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
