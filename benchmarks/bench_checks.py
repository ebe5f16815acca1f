"""Time every check cell of the lab: each solution notebook executed as a learner's lab runs it.

Each notebook of ``solutions/`` has its hidden tests taken out (the lab has none) and is executed
by ``nbclient`` in this process, a fresh kernel for each notebook, one after another; the time of
each check cell (the cells with an nbgrader ``grade_id`` that call ``check_exercise``) is read from
the kernel's own timestamps (from the cell's ``execute_input`` to its ``execute_reply``). The goal:
every check cell finishes in at most 2 s. Run: ``python benchmarks/bench_checks.py``; ``--lang en``
runs the English edition's messages (``CTX_LANG``). The figures move with the machine's load, which
is printed with them. Beside each cell's seconds stands the number of generated cases it ran, read from
its "✓ … generated cases" line (0 where the cell has none, or where a case failed).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS\n?", re.S)
GOAL = 2.0
#: The ✓ line of a cell's generated cases, in either edition: "另外 7,227 个生成的例子" or "7,227 more generated cases".
CASES = re.compile(r"另外 ([\d,]+) 个生成的例子|([\d,]+) more generated cases")


def lab_notebook(path: Path) -> nbformat.NotebookNode:
    """Return the solution notebook at ``path`` with its hidden tests taken out, as the lab runs its checks."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.source = HIDDEN.sub("", cell.source)
    return notebook


def _seconds(cell: nbformat.NotebookNode) -> float:
    timing = cell.metadata["execution"]
    start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def _cases(cell: nbformat.NotebookNode) -> int:
    streams = [output for output in cell.get("outputs", ()) if output.get("output_type") == "stream"]
    text = "".join(output.get("text", "") for output in streams)
    return sum(int((a or b).replace(",", "")) for a, b in CASES.findall(text))


def check_times(path: Path) -> list[tuple[str, int, float]]:
    """Return (grade id, generated cases, seconds) for every check cell of the notebook at ``path``, run as in the
    lab."""
    notebook = lab_notebook(path)
    NotebookClient(notebook, timeout=600, kernel_name="python3", record_timing=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return [(cell.metadata["nbgrader"]["grade_id"], _cases(cell), _seconds(cell)) for cell in notebook.cells
            if cell.cell_type == "code" and "check_exercise(" in cell.source
            and cell.metadata.get("nbgrader", {}).get("grade_id")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default=None, help="the edition's language for the messages (CTX_LANG)")
    options = parser.parse_args(argv)
    if options.lang:
        os.environ["CTX_LANG"] = options.lang
    print(f"cores {os.cpu_count()}, load average before {os.getloadavg()[0]:.1f}")
    rows = []
    started = time.perf_counter()
    for path in sorted(ROOT.glob("solutions/*/*.ipynb")):
        for grade_id, cases, seconds in check_times(path):
            rows.append((path.parent.name, grade_id, seconds))
            print(f"{path.parent.name:22} {grade_id:26} {cases:6d} cases {seconds:6.2f} s", flush=True)
    slowest = max(rows, key=lambda row: row[2])
    print(f"slowest: {slowest[0]} {slowest[1]} {slowest[2]:.2f} s (goal {GOAL:.0f} s); "
          f"{len(rows)} check cells in {time.perf_counter() - started:.0f} s; "
          f"load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
