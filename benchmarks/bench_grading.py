"""Time grading one synthetic class several ways, side by side, in one run.

Run with ``python benchmarks/bench_grading.py`` (30 students × every assignment of solutions/;
``--students 6`` for a short run, ``--assignments 02-remaining`` for one assignment). Half of the
students hand in the model solutions, half the untouched release. Everything is written to a
temporary folder; the repository's grading/ is not touched.

The ways, each from a fresh working folder on the same submissions:

- *floor*: the notebooks executed once each, one after the other, with plain ``nbclient`` and
  nothing else (a fresh kernel per notebook, as grading needs): no gradebook, no feedback;
- *grader, 1 job* and *grader, N jobs*: ``python -m ctx_course grade`` as a function call
  (set-up, autograde, feedback, grades.csv), with ``--jobs 1`` (in this process) and ``--jobs N``
  (a local Dask cluster of N workers; default: one per core); their two grades.csv files must be
  byte-identical, and the run says whether they are;
- *an earlier version, N jobs* (with ``--baseline DIR``, a copy of an earlier version of the
  repository, e.g. ``git archive <commit> | tar -x -C DIR``): the same class graded by that
  version's grader with ``jobs=N``, in a process of its own whose own timing is reported, so
  that a change of the parallel engine is measured side by side with what it replaces;
- *grader, 1 job on one core*: the same with ``--jobs 1``, this process and everything it starts
  (kernels included) allowed on one core only (Linux): with N jobs on N cores, what the cores add;
- *nbgrader's commands*: what an instructor types, as subprocesses in a copy of the course:
  ``nbgrader generate_assignment <a> --force``, ``nbgrader autograde <a> --force`` and
  ``nbgrader generate_feedback <a> --force`` for each assignment.

One job already keeps more than one core busy (the next kernel starts while a notebook runs),
so "N jobs over 1" is not how much more the N cores give; "N jobs on N cores over 1 job on one
core" is.

Printed: one row per way (seconds, seconds per notebook, ratio to the floor, ratio to the grader
with N jobs, the CPU seconds the machine spent and how many cores that kept busy), the grader's
phases, the speed-up of N jobs over 1, and the machine's load average before and after (other
processes on a small machine move every figure).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbgrader.apps import NbGraderAPI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctx_course.config import CONFIG_FILE, assignments, load_course_config  # noqa: E402
from ctx_course.grading.behaviour import ScoreFromBehaviour  # noqa: E402
from ctx_course.grading.engine import default_jobs  # noqa: E402
from ctx_course.grading.grader import Grader  # noqa: E402
from ctx_course.release import generate_release  # noqa: E402
from ctx_course.sandbox.kernels import KERNEL_LOG_LEVEL  # noqa: E402

STUDENTS = 30
NBGRADER_STEPS = ("generate_assignment", "autograde", "generate_feedback")


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has been busy since boot (all cores; None where /proc/stat is missing).

    Every process counts: sandboxed kernels, worker processes and commands that this process
    never waits for. On an otherwise idle machine the difference over a run is what the run used.
    """
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and waiting for I/O
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def measured(run, *args, **kwargs):
    """Call ``run``; return (its result, wall seconds of the call, machine busy core-seconds or None)."""
    busy, start = busy_seconds(), time.perf_counter()
    result = run(*args, **kwargs)
    wall, after = time.perf_counter() - start, busy_seconds()
    return result, wall, (after - busy if busy is not None and after is not None else None)


def on_one_core(run, *args, **kwargs):
    """Call ``run`` with this process, and every process it starts meanwhile, allowed on one core only."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        return run(*args, **kwargs)
    finally:
        os.sched_setaffinity(0, allowed)


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


def grader_run(incoming: Path, work: Path, jobs: int, sandbox: bool = True, evaluation: bool = True):
    """Grade the class with this course's grader; return its ClassReport.

    ``evaluation=False`` (one job only) leaves out the separate evaluation of the learner's
    functions (``ScoreFromBehaviour``): the check cells are then scored from the kernel alone, on
    their visible part, as a grader without it would; what that saves is the evaluation's cost.
    """
    grader = Grader(ROOT, work=work, jobs=jobs, sandbox=sandbox)
    if not evaluation:
        steps = grader.config.Autograde.autograde_preprocessors
        grader.config.Autograde.autograde_preprocessors = [s for s in steps if s is not ScoreFromBehaviour]
        grader.api = NbGraderAPI(config=grader.config)
    grader.collect(incoming)
    return grader.grade()


# What the earlier version runs, in a process whose ctx_course and ctx_reference are that version's.
BASELINE_RUN = """
import json, sys, warnings
warnings.filterwarnings("ignore")
from ctx_course.grading.grader import Grader
grader = Grader(sys.argv[1], work=sys.argv[2], jobs=int(sys.argv[3]))
grader.collect(sys.argv[4])
report = grader.grade()
print(json.dumps({"seconds": report.seconds, "phases": report.phases}))
"""


def baseline_run(baseline: Path, incoming: Path, work: Path, jobs: int) -> dict:
    """Grade the class with the grader of an earlier version at ``baseline``; return its seconds and phases."""
    env = dict(os.environ, PYTHONPATH=str(baseline))
    done = subprocess.run([sys.executable, "-c", BASELINE_RUN, str(baseline), str(work), str(jobs), str(incoming)],
                          cwd=baseline, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def nbgrader_commands(incoming: Path, course: Path, assignment_ids: list[str]) -> tuple[float, list[str]]:
    """Grade the class with nbgrader's commands in a copy of the course; return (seconds, failed commands).

    The copy holds the course's nbgrader_config.py and solutions/; the submissions go to its
    grading/submitted/ as ``nbgrader collect`` would put them.
    """
    course.mkdir(parents=True)
    shutil.copy(ROOT / CONFIG_FILE, course / CONFIG_FILE)
    shutil.copytree(ROOT / "solutions", course / "solutions")
    shutil.copytree(incoming, course / "grading" / "submitted")
    failures = []
    start = time.perf_counter()
    for aid in assignment_ids:
        for step in NBGRADER_STEPS:
            done = subprocess.run(
                [sys.executable, "-m", "nbgrader", step, aid, "--force"],
                cwd=course, capture_output=True, text=True,
            )
            if done.returncode != 0:
                failures.append(f"nbgrader {step} {aid}: " + (done.stderr.strip().splitlines() or ["?"])[-1])
    return time.perf_counter() - start, failures


def main(argv: list[str] | None = None) -> None:
    """Build the class, time each way, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=STUDENTS, help=f"class size (default {STUDENTS})")
    parser.add_argument("--assignments", nargs="*", help="assignment ids (default: every one in solutions/)")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="jobs of the parallel run (default: one per core)")
    parser.add_argument("--baseline", metavar="DIR", type=Path,
                        help="also grade with N jobs using the earlier version of the repository copied to DIR")
    parser.add_argument("--kernel-scoring", action="store_true",
                        help="also grade with 1 job without the separate evaluation, to measure its cost per notebook")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="also grade with 1 job without the sandbox, to measure its cost per notebook "
                             "(budget 0.2 s)")
    args = parser.parse_args(argv)
    if args.students < 1:
        raise SystemExit(f"--students must be at least 1 (got {args.students})")
    warnings.filterwarnings("ignore")

    assignment_ids = args.assignments or assignments(ROOT)
    timeout = load_course_config(ROOT).Execute.timeout
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        tmp = Path(tmp)
        generate_release(ROOT, release=tmp / "release", work=tmp / "scratch")
        notebooks = build_class(tmp / "release", tmp / "incoming", args.students, assignment_ids)
        load_before = os.getloadavg()[0]

        seconds, busy = {}, {}  # busy: (core-seconds, wall seconds of the call) of each way
        seconds["floor"], wall, used = measured(floor, notebooks, timeout)
        busy["floor"] = (used, wall)
        one, wall, used = measured(grader_run, tmp / "incoming", tmp / "work-1", jobs=1)
        seconds["grader, 1 job"], busy["grader, 1 job"] = one.seconds, (used, wall)
        many, wall, used = measured(grader_run, tmp / "incoming", tmp / "work-n", jobs=args.jobs)
        seconds[f"grader, {args.jobs} jobs"], busy[f"grader, {args.jobs} jobs"] = many.seconds, (used, wall)
        single = None
        if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= args.jobs > 1:
            single, wall, used = measured(on_one_core, grader_run, tmp / "incoming", tmp / "work-core", jobs=1)
            seconds["grader, 1 job, one core"], busy["grader, 1 job, one core"] = single.seconds, (used, wall)
        old = None
        if args.baseline is not None:
            old, wall, used = measured(baseline_run, args.baseline.resolve(), tmp / "incoming", tmp / "work-old",
                                       args.jobs)
            seconds["earlier version, N jobs"], busy["earlier version, N jobs"] = old["seconds"], (used, wall)
        if args.kernel_scoring:
            kernel_run, wall, used = measured(
                grader_run, tmp / "incoming", tmp / "work-kernel", jobs=1, evaluation=False)
            seconds["grader, 1 job, kernel scoring"] = kernel_run.seconds
            busy["grader, 1 job, kernel scoring"] = (used, wall)
        if args.no_sandbox:
            open_run, wall, used = measured(grader_run, tmp / "incoming", tmp / "work-open", jobs=1, sandbox=False)
            seconds["grader, 1 job, no sandbox"], busy["grader, 1 job, no sandbox"] = open_run.seconds, (used, wall)
        (nbgrader_seconds, nbgrader_failures), wall, used = measured(
            nbgrader_commands, tmp / "incoming", tmp / "nbgrader", assignment_ids)
        seconds["nbgrader's commands"], busy["nbgrader's commands"] = nbgrader_seconds, (used, wall)
        identical = (tmp / "work-1" / "grades.csv").read_bytes() == (tmp / "work-n" / "grades.csv").read_bytes()
        same_as_old = old is not None and (
            (tmp / "work-old" / "grades.csv").read_bytes() == (tmp / "work-n" / "grades.csv").read_bytes())
        load_after = os.getloadavg()[0]

    count = len(notebooks)
    reference = seconds[f"grader, {args.jobs} jobs"]
    lines = [
        f"bench_grading: {args.students} students × {len(assignment_ids)} assignment(s) = {count} notebooks, "
        f"{os.cpu_count()} cores, load average {load_before:.1f} before, {load_after:.1f} after",
        f"  {'way':<40} {'seconds':>8} {'s/notebook':>11} {'× floor':>8} {f'× {args.jobs} jobs':>9} "
        f"{'CPU s':>7} {'cores busy':>10}",
    ]
    titles = {
        "floor": "floor (nbclient, one kernel per notebook)",
        "grader, 1 job": "grader, --jobs 1",
        f"grader, {args.jobs} jobs": f"grader, --jobs {args.jobs}",
        "nbgrader's commands": "nbgrader's commands (3 per assignment)",
        "grader, 1 job, no sandbox": "grader, --jobs 1 --no-sandbox",
        "grader, 1 job, kernel scoring": "grader, --jobs 1, no separate evaluation",
        "grader, 1 job, one core": "grader, --jobs 1, on one core",
        "earlier version, N jobs": f"earlier version, --jobs {args.jobs}",
    }
    for key, value in seconds.items():
        core_seconds, wall = busy[key]
        used = f"{core_seconds:7.1f} {core_seconds / wall:10.2f}" if core_seconds is not None else f"{'–':>7} {'–':>10}"
        lines.append(
            f"  {titles[key]:<40} {value:8.1f} {value / count:11.2f} {value / seconds['floor']:8.2f} "
            f"{value / reference:9.2f} {used}"
        )
    for title, report in (("--jobs 1", one), (f"--jobs {args.jobs}", many)):
        phases = report.phases
        lines.append(
            f"  grader {title:<9} set-up {phases['prepare']:5.1f} s, autograde {phases['autograde']:6.1f} s, "
            f"feedback {phases['feedback']:5.1f} s, grades.csv {phases['export']:4.1f} s; "
            f"graded {len(report.results) - len(report.failed)} of {len(report.results)}"
        )
    lines += [
        f"  {args.jobs} jobs over 1: {one.seconds / many.seconds:.2f}× the throughput "
        f"(autograde phase alone {one.phases['autograde'] / many.phases['autograde']:.2f}×)",
        *([f"  {args.jobs} jobs on {args.jobs} cores over 1 job on one core: {single.seconds / many.seconds:.2f}× "
           f"the throughput (autograde phase alone {single.phases['autograde'] / many.phases['autograde']:.2f}×)"]
          if single is not None else []),
        f"  grades.csv of --jobs 1 and --jobs {args.jobs}: {'byte-identical' if identical else 'DIFFERENT'}",
        *([f"  --jobs {args.jobs} over the earlier version's: {old['seconds'] / many.seconds:.2f}× the throughput "
           f"(autograde phase alone {old['phases']['autograde'] / many.phases['autograde']:.2f}×); grades.csv "
           f"{'byte-identical' if same_as_old else 'DIFFERENT'}"] if old is not None else []),
        f"  whole run over nbgrader's commands: {reference / nbgrader_seconds:.2f}× the wall time",
        *([f"  sandbox cost: {(one.seconds - seconds['grader, 1 job, no sandbox']) / count:+.2f} s per notebook"]
          if args.no_sandbox else []),
        *([f"  separate evaluation: {(one.seconds - kernel_run.seconds) / count:+.2f} s per notebook "
           f"({one.seconds / kernel_run.seconds:.2f}× the time without it, --jobs 1)"]
          if args.kernel_scoring else []),
        f"  nbgrader's commands: {len(assignment_ids) * len(NBGRADER_STEPS)} run, {len(nbgrader_failures)} failed",
        "  (CPU s: what the whole machine was busy with during the way, kernels and workers included;",
        f"  cores busy = CPU s / the way's wall time, at most {os.cpu_count()}; other load on the machine counts too)",
        *(f"    {failure}" for failure in nbgrader_failures),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
