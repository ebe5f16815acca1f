"""Cost of each ruler: microseconds per thousand characters counted, and what loading a real one costs.

Run with ``python benchmarks/bench_rulers.py`` (the real rulers need the ``tokenizers`` extra;
without it they are listed as unavailable). Counts the workbook's sample texts of every kind and
the lesson's six calls (``ctx_reference.calibrate``) with each ruler, best of several repeats
(CPU time, ``time.process_time``, and wall time), and prints the cost per thousand characters; then the time
to load each real ruler (read and verify the data file, build the encoding) in a fresh
interpreter, and the size its package and everything it requires take on disk. Nothing here is
asserted: the figures are quoted in notebook 09 with the machine they were measured on.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import time

from ctx_reference.calibrate import FIT_TEXTS, HELD_OUT_TEXTS, KINDS, LinearEstimate, lesson_bucket_texts
from ctx_reference.rulers import RULER_SPECS, real_rulers
from ctx_reference.tokens import FakeTokenizer, estimate_tokens

REPEATS = 15  # best-of-N
ROUNDS = 20  # passes over the texts per timed run
LOAD_REPEATS = 3  # fresh interpreters per real ruler


class Estimate:
    """The workbook's estimate (estimate_tokens) as a ruler."""

    def count(self, text: str) -> int:
        return estimate_tokens(text)


def texts() -> list[str]:
    """Return every sample text and every bucket text of the lesson's calls."""
    found = [t for kind in KINDS for t in FIT_TEXTS[kind] + HELD_OUT_TEXTS[kind]]
    return found + [t for group in lesson_bucket_texts().values() for t in group]


def best_of(repeats: int, run) -> tuple[float, float]:
    """Return the shortest (CPU time, wall time), in seconds, of ``repeats`` calls of ``run()``.

    CPU time (``time.process_time``) is the figure to quote on a shared machine: other processes
    stretch the wall time, not the CPU this process spends.
    """
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def load_seconds(name: str) -> tuple[float, float]:
    """Return the best (CPU, wall) seconds of loading the real ruler ``name`` in a new interpreter, imports included."""
    code = (
        "import time; t, c = time.perf_counter(), time.process_time(); "
        "from ctx_reference.rulers import RULER_SPECS, load_ruler; "
        f"load_ruler(next(s for s in RULER_SPECS if s.name == {name!r})); "
        "print(time.process_time() - c, time.perf_counter() - t)"
    )
    runs = [subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
            for _ in range(LOAD_REPEATS)]
    return min(float(cpu) for cpu, _ in runs), min(float(wall) for _, wall in runs)


def requirements(distribution: str) -> set[str]:
    """Return ``distribution`` and every installed distribution it requires, directly or not (extras left out)."""
    found: set[str] = set()
    todo = [distribution]
    while todo:
        name = re.split(r"[<>=!~ \[;(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in found:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found.add(name)
        todo += [r for r in dist.requires or () if "extra ==" not in r]
    return found


def installed_mb(distributions: set[str]) -> float:
    """Return the size on disk of the installed distributions' files, in MB."""
    total = 0
    for name in distributions:
        dist = importlib.metadata.distribution(name)
        for file in dist.files or ():
            path = dist.locate_file(file)
            if os.path.isfile(path):
                total += os.path.getsize(path)
    return total / 1e6


def main() -> None:
    """Print the report."""
    sample = texts()
    chars = sum(len(t) for t in sample)
    reals, notes = real_rulers()
    rulers = {"FakeTokenizer": FakeTokenizer(), "estimate_tokens": Estimate(),
              "LinearEstimate": LinearEstimate(0.28, 0.8), **reals}
    print(f"bench_rulers: {len(sample)} texts, {chars:,} characters, {ROUNDS} passes per run")
    cpu = " ".join(filter(None, [platform.machine(), platform.processor()]))
    print(f"  machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f} before")
    fake_cost = None
    print(f"  {'ruler':<16} {'CPU µs':>9} {'wall µs':>9}  per 1,000 characters (best of {REPEATS})")
    for name, ruler in rulers.items():
        cpu, wall = best_of(REPEATS, lambda r=ruler: [r.count(t) for _ in range(ROUNDS) for t in sample])
        per_kchar, wall_per_kchar = (seconds / (ROUNDS * chars) * 1000 * 1e6 for seconds in (cpu, wall))
        fake_cost = fake_cost or per_kchar
        print(f"  {name:<16} {per_kchar:9.2f} {wall_per_kchar:9.2f}  ({per_kchar / fake_cost:6.0f} × FakeTokenizer)")
    for note in notes:
        print(f"  unavailable: {note}")
    for spec in RULER_SPECS:
        if spec.name in reals:
            needs = requirements(spec.distribution)
            size = installed_mb(needs)
            cpu, wall = load_seconds(spec.name)
            print(f"  load {spec.name:<11} {cpu:5.2f} s CPU ({wall:.2f} s wall) in a fresh interpreter; "
                  f"{spec.distribution} and the {len(needs) - 1} packages it requires take {size:.1f} MB")
    if reals:
        needs = requirements("tiktoken")
        print(f"  tiktoken and the {len(needs) - 1} packages it requires take {installed_mb(needs):.1f} MB "
              "(some of them, like requests, come with JupyterLab anyway)")


if __name__ == "__main__":
    main()
