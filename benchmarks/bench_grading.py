"""Time grading a synthetic class against the floor: running the same notebooks with plain nbclient.

Run with ``python benchmarks/bench_grading.py`` (30 students × every assignment of solutions/;
``--students 6`` for a quick run). Half of the students hand in the model solutions, half the
untouched release. Everything is written to a temporary folder; the repository's grading/ is
not touched.

Reported: the grading run's total seconds (set-up, autograde, feedback, export) and seconds per
notebook; the floor — the same notebooks executed once each, one after the other, with
``nbclient`` and nothing else (a fresh kernel per notebook, as grading needs); and their ratio.
Goal: the whole grading run within 1.5 × the floor. ``--compare`` also times a run without
kernels launched ahead. Every grading run sandboxes its kernels (bubblewrap); ``--no-sandbox``
also times a run without the sandbox and reports the sandbox's cost per notebook (budget:
0.2 s). The machine's load average is printed because other processes on a small machine move
every figure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctx_course.config import assignments, load_course_config  # noqa: E402
from ctx_course.grade import Grader  # noqa: E402
from ctx_course.kernels import KERNEL_LOG_LEVEL  # noqa: E402
from ctx_course.release import generate_release  # noqa: E402

STUDENTS = 30
GOAL = 1.5  # × the floor


def build_class(release: Path, submitted: Path, students: int, assignment_ids: list[str]) -> list[Path]:
    """Write ``students`` submissions of every assignment (alternately model and release); return the notebooks."""
    notebooks = []
    for number in range(1, students + 1):
        student = f"s{number:03d}"
        origin = ROOT / "solutions" if number % 2 else release
        for aid in assignment_ids:
            target = submitted / student / aid
            shutil.copytree(origin / aid, target)
            notebooks += sorted(target.glob("*.ipynb"))
    return notebooks


def floor(notebooks: list[Path], timeout: int) -> float:
    """Execute each notebook once with plain nbclient, in its own folder; return the seconds."""
    start = time.perf_counter()
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            extra_arguments=[KERNEL_LOG_LEVEL],
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    """Build the class, measure the floor and the grading run, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=STUDENTS)
    parser.add_argument("--assignments", nargs="*", help="assignment ids (default: every one in solutions/)")
    parser.add_argument("--compare", action="store_true", help="also grade without kernels launched ahead")
    parser.add_argument("--no-sandbox", action="store_true", help="also grade without the sandbox, to measure its cost")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")

    assignment_ids = args.assignments or assignments(ROOT)
    timeout = load_course_config(ROOT).Execute.timeout
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        generate_release(ROOT, release=tmp / "release", work=tmp / "scratch")
        notebooks = build_class(tmp / "release", tmp / "incoming", args.students, assignment_ids)
        load = os.getloadavg()[0]

        floor_seconds = floor(notebooks, timeout)
        reports = {}
        runs = [(True, True)] + ([(False, True)] if args.compare else []) + ([(True, False)] if args.no_sandbox else [])
        for prelaunch, sandbox in runs:
            grader = Grader(ROOT, work=tmp / f"work-{prelaunch}-{sandbox}", prelaunch=prelaunch, sandbox=sandbox)
            grader.collect(tmp / "incoming")
            reports[prelaunch, sandbox] = grader.grade()
        load_after = os.getloadavg()[0]

    count = len(notebooks)
    lines = [
        f"bench_grading: {args.students} students × {len(assignment_ids)} assignments = {count} notebooks "
        f"(load average {load:.1f} before, {load_after:.1f} after)",
        f"  floor (nbclient, one kernel per notebook) {floor_seconds:8.1f} s  {floor_seconds / count:6.2f} s/notebook",
    ]
    for (prelaunch, sandbox), report in reports.items():
        phases = report.phases
        graded = len(report.results) - len(report.failed)
        title = "kernels launched one notebook ahead" if prelaunch else "kernel started when its notebook is due"
        title += ", sandboxed" if sandbox else ", NOT sandboxed"
        lines += [
            f"  grading run ({title}), graded {graded} of {len(report.results)}",
            f"    total                                   {report.seconds:8.1f} s  {report.seconds / count:6.2f} s/notebook"
            f"   ratio {report.seconds / floor_seconds:.2f} (goal <= {GOAL})",
            f"    set-up (gradebook from solutions/)      {phases['prepare']:8.1f} s",
            f"    autograde                               {phases['autograde']:8.1f} s  {phases['autograde'] / count:6.2f} s/notebook"
            f"   ratio {phases['autograde'] / floor_seconds:.2f}",
            f"    feedback                                {phases['feedback']:8.1f} s  {phases['feedback'] / count:6.2f} s/notebook",
            f"    grades.csv                              {phases['export']:8.1f} s",
        ]
    if (True, False) in reports:
        cost = (reports[True, True].phases["autograde"] - reports[True, False].phases["autograde"]) / count
        lines.append(f"  sandbox cost (autograde, sandboxed − not)  {cost:+6.2f} s/notebook   (budget <= 0.2)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
