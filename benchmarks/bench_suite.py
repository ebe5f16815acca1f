"""Measure the test suite against its floor: one serial execution of every solution notebook.

Run with ``python benchmarks/bench_suite.py`` from the repository root (the environment active).
It first executes every notebook of ``solutions/`` once, one after another, with ``nbclient`` in
this one process (a fresh kernel for each notebook, as nbval gives each), in both editions (the
English notebooks built from ``solutions/`` and ``i18n/en``, run with ``CTX_LANG=en``): the floor,
what any suite that executes each notebook of each edition at least once must spend. One process,
because a process per notebook would add an interpreter's start and its imports to every notebook
and so raise the floor. Then it runs
``python -m pytest -q`` as ``make test`` does, and prints both wall times (``time.perf_counter``)
and their ratio.
``--floor-only`` skips the suite. The machine's load average is printed before and after each
part, because other processes on a small machine move every figure.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def floor_seconds(notebooks: list[Path], env: dict[str, str] | None = None) -> float:
    """Return the wall time of executing ``notebooks`` one after another in this process, each in a
    fresh kernel started in the notebook's folder (with ``env`` as the kernel's environment)."""
    import nbformat
    from nbclient import NotebookClient

    start = time.perf_counter()
    for notebook in notebooks:
        node = nbformat.read(notebook, as_version=4)
        client = NotebookClient(node, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(notebook.parent)}})
        client.execute(env=dict(os.environ) if env is None else env)
    return time.perf_counter() - start


def english_notebooks(folder: Path) -> list[Path]:
    """Write the English source notebooks into ``folder`` (one sub-folder per assignment); return them in order."""
    import json

    sys.path.insert(0, str(ROOT))
    from ctx_course.editions.check import english_notebook

    written = []
    for source in sorted(ROOT.glob("solutions/*/*.ipynb")):
        target = folder / source.parent.name / source.name
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(english_notebook(ROOT, source.parent.name), ensure_ascii=False), encoding="utf-8")
        written.append(target)
    return written


def suite_seconds(durations: int = 0) -> tuple[float, str, list[str]]:
    """Return the wall time of ``python -m pytest -q`` at the repository root, its last line and, with
    ``durations``, pytest's table of that many slowest set-ups and calls."""
    extra = [f"--durations={durations}"] if durations else []
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=ROOT,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    table = []
    if durations and (heads := [i for i, line in enumerate(lines) if "slowest" in line and "durations" in line]):
        table = [line for line in lines[heads[0] + 1:] if re.match(r"\s*\d+\.\d+s ", line)][:durations]
    return seconds, lines[-1] if lines else f"pytest exited with {done.returncode}", table


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    """Print the report; return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor-only", action="store_true", help="time the notebooks only, not the suite")
    parser.add_argument("--durations", metavar="N", type=int, default=0,
                        help="also print pytest's N slowest set-ups and calls (pytest --durations=N)")
    args = parser.parse_args(argv)
    notebooks = sorted(ROOT.glob("solutions/*/*.ipynb"))
    print(f"bench_suite: {len(notebooks)} solution notebooks in 2 editions, {os.cpu_count()} cores")
    load = _load()
    chinese = floor_seconds(notebooks)
    with tempfile.TemporaryDirectory(prefix="bench-suite-en-") as folder:
        english = floor_seconds(english_notebooks(Path(folder)), env={**os.environ, "CTX_LANG": "en"})
    floor = chinese + english
    print(f"  floor (each notebook once, serially)  {floor:7.1f} s   ({chinese:.1f} s Chinese + {english:.1f} s "
          f"English)   load average {load} before, {_load()} after")
    if args.floor_only:
        return 0
    load = _load()
    suite, summary, table = suite_seconds(args.durations)
    print(f"  suite (python -m pytest)               {suite:7.1f} s   load average {load} before, {_load()} after")
    print(f"  suite / floor                          {suite / floor:7.2f} ×   ({summary})")
    if table:
        print(f"  the {len(table)} slowest set-ups and calls (pytest --durations):")
        print("\n".join(f"    {line.strip()}" for line in table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
