"""Time the class leaderboard of 11-capstone for a class of 30 (goal: under one minute).

Run with ``python benchmarks/bench_leaderboard.py`` from the repository root after
``python examples/build_class.py``. It fills a temporary working folder with 30 graded notebooks,
cycling through the example capstone submissions (model answer, never clear, broken, compact),
placed where a grading run leaves them (``autograded/<student>/11-capstone/``), then runs
``ctx_course.term.leaderboard.leaderboard`` once and prints the wall time (``time.perf_counter``).
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from ctx_course.term.leaderboard import leaderboard

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "capstone" / "submitted"
STUDENTS = 30
ASSIGNMENT = "11-capstone"


def main() -> None:
    examples = sorted(EXAMPLE.glob(f"*/{ASSIGNMENT}/*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="ctx-leaderboard-") as tmp:
        work = Path(tmp)
        for i in range(STUDENTS):
            source = examples[i % len(examples)]
            folder = work / "autograded" / f"s{i:02d}" / ASSIGNMENT
            folder.mkdir(parents=True)
            shutil.copy(source, folder / source.name)
        start = time.perf_counter()
        rows, _, _ = leaderboard(ROOT, ASSIGNMENT, work=work)
        seconds = time.perf_counter() - start
    statuses = {s: sum(r.status == s for r in rows) for s in ("scored", "disqualified", "error")}
    print(f"leaderboard of {len(rows)} students: {seconds:.1f} s "
          f"({seconds / len(rows):.2f} s per student; {statuses})")


if __name__ == "__main__":
    main()
