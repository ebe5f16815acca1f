"""Time grading one synthetic class several ways, side by side, in one run.

Run with ``python benchmarks/bench_grading.py`` (30 students × every assignment of solutions/;
``--students 6`` for a short run, ``--assignments 02-remaining`` for one assignment). Half of the
students hand in the model solutions, half the untouched release. Everything is written to a
temporary folder; the repository's grading/ is not touched.

The ways, each from a fresh working folder on the same submissions:

- *floor*: the notebooks executed once each, one after the other, with plain ``nbclient`` and
  nothing else (a fresh kernel per notebook, as grading needs): no gradebook, no feedback;
- *grader, 1 job* and *grader, N jobs*: what ``python -m ctx_course grade`` does (set-up,
  autograde, feedback, grades.csv), each in a fresh process of its own, timed whole (interpreter
  start included), with ``--jobs 1`` (in that process) and ``--jobs N`` (a local Dask cluster of
  N workers; default: one per core); their two grades.csv files must be byte-identical, and the
  run says whether they are;
- *an earlier version, N jobs* (with ``--baseline DIR``, a copy of an earlier version of the
  repository, e.g. ``git archive <commit> | tar -x -C DIR``): a class of the same shape built from
  that version's own course (its release and model answers), graded by that version's grader with
  ``jobs=N``, the same way, so that a change of the parallel engine is measured side by side with
  what it replaces on work of the same kind (a class built from today's release would not match
  the earlier gradebook: every read-only cell restored, other errors, other grades);
- *grader, 1 job on one core*: the same with ``--jobs 1``, that process and everything it starts
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
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctx_course.config import CONFIG_FILE, assignments, load_course_config  # noqa: E402
from ctx_course.grading.engine import default_jobs  # noqa: E402
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


def build_class(release: Path, submitted: Path, students: int, assignment_ids: list[str],
                solutions: Path = ROOT / "solutions") -> list[Path]:
    """Write ``students`` submissions of every assignment (alternately model and release); return the notebooks.

    ``solutions`` and ``release`` are one version's: the model answers and the release come from the
    course the class is graded against.
    """
    notebooks = []
    for number in range(1, students + 1):
        student = f"s{number:03d}"
        origin = solutions if number % 2 else release
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


# What each grading way runs, in a process of its own (as ``python -m ctx_course grade`` is):
# the Grader of the version on sys.path, on one core if told, without the separate evaluation if told.
GRADER_RUN = """
import json, os, sys, warnings
warnings.filterwarnings("ignore")
options = json.loads(sys.argv[1])
if options["one_core"]:  # this process and everything it starts (kernels, workers) on one core
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from ctx_course.grading.grader import Grader
grader = Grader(options["root"], work=options["work"], jobs=options["jobs"], **options["extra"])
if not options["evaluation"]:  # in this process only (--jobs 1)
    from ctx_course.grading.steps.behaviour import ScoreFromBehaviour
    try:  # a version with autograde.py: every SubmissionGrader takes its steps from there
        from ctx_course.grading import autograde
        steps = autograde.AUTOGRADE_PREPROCESSORS
        autograde.AUTOGRADE_PREPROCESSORS = [s for s in steps if s is not ScoreFromBehaviour]
    except ImportError:  # an earlier version: the Grader itself autogrades
        from nbgrader.apps import NbGraderAPI
        steps = grader.config.Autograde.autograde_preprocessors
        grader.config.Autograde.autograde_preprocessors = [s for s in steps if s is not ScoreFromBehaviour]
        grader.api = NbGraderAPI(config=grader.config)
grader.collect(options["incoming"])
report = grader.grade()
print(json.dumps({"phases": report.phases, "graded": sum(r.graded for r in report.results),
                  "results": len(report.results),
                  "notebooks": [[r.assignment, r.seconds] for r in report.results if r.graded]}))
"""


# Whether a copy of the repository can be driven by GRADER_RUN: its Grader imports, from that copy,
# and takes the arguments and has the methods GRADER_RUN uses. Prints one JSON line.
BASELINE_PROBE = """
import inspect, json
import ctx_course
from ctx_course.grading.grader import Grader
parameters = inspect.signature(Grader).parameters
lacks = [f"argument {name}" for name in ("work", "jobs") if name not in parameters]
lacks += [f"method {name}" for name in ("collect", "grade") if not callable(getattr(Grader, name, None))]
print(json.dumps({"package": ctx_course.__file__, "lacks": lacks}))
"""
FIRST_GRADING_PACKAGE = "cfe0bc4 (2026-12-01)"  # the commit that made ctx_course/grading/
PROBE_TIMEOUT = 120  # seconds the import of an earlier Grader may take


def baseline_problem(path: Path) -> str | None:
    """Return why ``--baseline`` cannot grade with the copy of the repository at ``path``, or None if it can.

    It can when the folder holds a course (``nbgrader_config.py``, ``solutions/``) and a Grader
    that GRADER_RUN can drive: ``ctx_course/grading/grader.py``, importable from that folder (a
    short subprocess with ``PYTHONPATH`` and working folder set to it, as ``grader_run`` does),
    taking ``work`` and ``jobs`` and having ``collect`` and ``grade``. The answer is one line.
    """
    path = Path(path)
    if not path.exists():
        return "it does not exist"
    if not path.is_dir():
        return "it is not a folder"
    for needed in (CONFIG_FILE, "solutions"):
        if not (path / needed).exists():
            return f"no {needed} there (it is not a copy of the repository)"
    if not (path / "ctx_course" / "grading" / "grader.py").is_file():
        return ("no ctx_course/grading/grader.py there (it predates the grading package; "
                f"use a copy of commit {FIRST_GRADING_PACKAGE} or later)")
    env = dict(os.environ, PYTHONPATH=str(path.resolve()))
    try:
        done = subprocess.run([sys.executable, "-c", BASELINE_PROBE], cwd=path, env=env,
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"its Grader took more than {PROBE_TIMEOUT} s to import"
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return f"its Grader cannot be imported: {lines[-1].strip() if lines else f'exit status {done.returncode}'}"
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(found["package"]).resolve().is_relative_to(path.resolve()):
        return f"its ctx_course is not the one imported (that came from {Path(found['package']).parent})"
    if found["lacks"]:
        return f"its Grader lacks what this benchmark uses: {', '.join(found['lacks'])}"
    return None


def release_of(root: Path, target: Path, scratch: Path) -> Path:
    """Generate the (Chinese) release of the repository at ``root`` into ``target``, with that version's own code."""
    if root.resolve() == ROOT:
        generate_release(ROOT, release=target, work=scratch)
        return target
    code = ("import sys; from ctx_course.release import generate_release; "
            "generate_release('.', release=sys.argv[1], work=sys.argv[2])")
    done = subprocess.run([sys.executable, "-c", code, str(target), str(scratch)], cwd=root,
                          env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_grading: the release of {root} failed:\n{done.stderr[-2000:]}")
    return target


def grader_run(incoming: Path, work: Path, jobs: int, *, root: Path = ROOT, sandbox: bool = True,
               evaluation: bool = True, one_core: bool = False) -> dict:
    """Grade the class in a fresh process with the grader of the repository at ``root``; return its report.

    The report: ``seconds`` (the whole command, interpreter start included, as an instructor
    waits for it), ``phases`` and how many of the submissions were ``graded``. ``root`` may be
    a copy of an earlier version (``--baseline``). ``evaluation=False`` leaves out the separate
    evaluation of the learner's functions (``ScoreFromBehaviour``): the check cells are then
    scored from the kernel alone, as a grader without it would; what that saves is its cost.
    ``one_core`` allows the process, and every process it starts, on one core only (Linux).
    Each way runs in a process of its own so that no way inherits another's state.
    """
    options = {"root": str(root), "work": str(work), "jobs": jobs, "incoming": str(incoming),
               "evaluation": evaluation, "one_core": one_core, "extra": {} if sandbox else {"sandbox": False}}
    env = dict(os.environ, PYTHONPATH=str(root))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", GRADER_RUN, json.dumps(options)], cwd=root, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench_grading: the grader at {root} failed:\n{done.stderr[-2000:]}")
    return {"seconds": seconds, **json.loads(done.stdout.strip().splitlines()[-1])}


def error_outputs(work: Path) -> int:
    """Return how many cell outputs of the autograded notebooks under a grading folder are errors.

    Two ways that graded the same class alike have the same count. A way whose kernels could
    not import the course's package, say, would still write the same grades (the checks are
    scored from a separate evaluation) but not the same notebooks, and would do less work.
    """
    return sum(
        output.get("output_type") == "error"
        for path in sorted(work.glob("autograded/*/*/*.ipynb"))
        for cell in nbformat.read(path, as_version=4).cells
        for output in cell.get("outputs", ())
    )


def nbgrader_commands(incoming: Path, course: Path, assignment_ids: list[str]) -> tuple[float, list[str]]:
    """Grade the class with nbgrader's commands in a copy of the course; return (seconds, failed commands).

    The copy holds the course's nbgrader_config.py and solutions/; the submissions go to its
    grading/submitted/ as ``nbgrader collect`` would put them (afresh: a repeat starts over).
    """
    shutil.rmtree(course, ignore_errors=True)
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


Run = tuple[float, float | None, float, dict | None]  # (seconds, CPU seconds, wall seconds, report) of one run


def median_runs(ways: list[tuple[str, Callable[[], Run]]], repeat: int) -> dict[str, Run]:
    """Run every way ``repeat`` times, every other round in the opposite order; return each way's run of median seconds.

    The machine's drift then counts for each way alike. Ways are kept in their order.
    """
    runs: dict[str, list[Run]] = {}
    for round_ in range(repeat):
        for way, run in ways if round_ % 2 == 0 else ways[::-1]:
            runs.setdefault(way, []).append(run())
    return {way: sorted(runs[way], key=lambda r: r[0])[(len(runs[way]) - 1) // 2] for way, _ in ways}


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """Return the command line's arguments; a bad one ends the program with one line naming it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=STUDENTS, help=f"class size (default {STUDENTS})")
    parser.add_argument("--assignments", nargs="*", help="assignment ids (default: every one in solutions/)")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="jobs of the parallel run (default: one per core)")
    parser.add_argument("--repeat", type=int, default=1, metavar="K",
                        help="run every way K times, every other round in the opposite order, and report the "
                             "run of median time of each (the machine's drift then counts for each way alike)")
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
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be at least 1 (got {args.repeat})")
    if args.baseline is not None and (problem := baseline_problem(args.baseline)) is not None:
        raise SystemExit(f"bench_grading: --baseline {args.baseline}: {problem}")
    return args


def main(argv: list[str] | None = None) -> None:
    """Build the class, time each way, print the table."""
    args = parse_arguments(argv)
    warnings.filterwarnings("ignore")

    assignment_ids = args.assignments or assignments(ROOT)
    timeout = load_course_config(ROOT).Execute.timeout
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        tmp = Path(tmp)
        generate_release(ROOT, release=tmp / "release", work=tmp / "scratch")
        notebooks = build_class(tmp / "release", tmp / "incoming", args.students, assignment_ids)
        if args.baseline is not None:
            # the earlier version grades a class made from its own course: its release and model answers
            baseline = args.baseline.resolve()
            old_ids = [aid for aid in assignment_ids if (baseline / "solutions" / aid).is_dir()]
            release_of(baseline, tmp / "release-old", tmp / "scratch-old")
            old_notebooks = build_class(tmp / "release-old", tmp / "incoming-old", args.students, old_ids,
                                        solutions=baseline / "solutions")
        load_before = os.getloadavg()[0]

        # busy: (core-seconds, wall seconds of the call) of each way; with --repeat, the run of median wall time
        seconds, busy, reports = {}, {}, {}

        def grade(way: str, work: str, jobs: int, incoming: str = "incoming", **options):
            def run():
                shutil.rmtree(tmp / work, ignore_errors=True)  # each repeat grades the class afresh
                report, wall, used = measured(grader_run, tmp / incoming, tmp / work, jobs, **options)
                return report["seconds"], used, wall, report
            return way, run

        def plain(way: str, function, *arguments):
            def run():
                result, wall, used = measured(function, *arguments)
                value = result[0] if isinstance(result, tuple) else result
                return value, used, wall, {"result": result}
            return way, run

        many = f"grader, {args.jobs} jobs"
        ways = [plain("floor", floor, notebooks, timeout), grade("grader, 1 job", "work-1", 1),
                grade(many, "work-n", args.jobs)]
        if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= args.jobs > 1:
            ways.append(grade("grader, 1 job, one core", "work-core", 1, one_core=True))
        if args.baseline is not None:
            ways.append(grade("earlier version, N jobs", "work-old", args.jobs, "incoming-old",
                              root=args.baseline.resolve()))
        if args.kernel_scoring:
            ways.append(grade("grader, 1 job, kernel scoring", "work-kernel", 1, evaluation=False))
        if args.no_sandbox:
            ways.append(grade("grader, 1 job, no sandbox", "work-open", 1, sandbox=False))
        ways.append(plain("nbgrader's commands", nbgrader_commands, tmp / "incoming", tmp / "nbgrader", assignment_ids))
        for way, (value, used, wall, report) in median_runs(ways, args.repeat).items():
            seconds[way], busy[way] = value, (used, wall)
            reports[way] = report
        nbgrader_seconds, nbgrader_failures = reports.pop("nbgrader's commands")["result"]
        reports.pop("floor")
        csv = {work: (tmp / work / "grades.csv").read_bytes() for work in ("work-1", "work-n", "work-old")
               if (tmp / work / "grades.csv").is_file()}
        errors = {work: error_outputs(tmp / work) for work in ("work-1", "work-n", "work-old") if (tmp / work).is_dir()}
        load_after = os.getloadavg()[0]

    count = len(notebooks)
    reference = seconds[f"grader, {args.jobs} jobs"]
    lines = [
        f"bench_grading: {args.students} students × {len(assignment_ids)} assignment(s) = {count} notebooks, "
        f"{os.cpu_count()} cores, load average {load_before:.1f} before, {load_after:.1f} after"
        + (f"; each way the median of {args.repeat} runs, alternately in opposite orders" if args.repeat > 1 else ""),
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
    one, single, old = reports["grader, 1 job"], reports.get("grader, 1 job, one core"), reports.get(
        "earlier version, N jobs")
    for title, key in (("--jobs 1", "grader, 1 job"), (f"--jobs {args.jobs}", many)):
        report = reports[key]
        phases = report["phases"]
        lines.append(
            f"  grader {title:<9} set-up {phases['prepare']:5.1f} s, autograde {phases['autograde']:6.1f} s, "
            f"feedback {phases['feedback']:5.1f} s, grades.csv {phases['export']:4.1f} s; "
            f"graded {report['graded']} of {report['results']}"
        )

    def over(slow: dict, fast: str) -> str:
        """How many times the throughput of ``slow`` the way ``fast`` has, whole and autograde phase alone."""
        whole = slow["seconds"] / seconds[fast]
        phase = slow["phases"]["autograde"] / reports[fast]["phases"]["autograde"]
        return f"{whole:.2f}× the throughput (autograde phase alone {phase:.2f}×)"

    same = "byte-identical" if csv.get("work-1") == csv["work-n"] else "DIFFERENT"
    labels = (("work-1", "--jobs 1"), ("work-n", f"--jobs {args.jobs}"), ("work-old", "earlier version"))
    lines += [
        f"  {args.jobs} jobs over 1: {over(one, many)}",
        *([f"  {args.jobs} jobs on {args.jobs} cores over 1 job on one core: {over(single, many)}"]
          if single is not None else []),
        f"  grades.csv of --jobs 1 and --jobs {args.jobs}: {same}",
        *([f"  --jobs {args.jobs} over the earlier version's: {over(old, many)} (each on a class of its own "
           f"course: {len(old_notebooks)} notebooks there, {count} here; per notebook "
           f"{old['seconds'] / len(old_notebooks) / (seconds[many] / count):.2f}×)"] if old is not None else []),
        "  error outputs in the autograded notebooks (equal when each way did the same work): "
        + ", ".join(f"{name} {errors[work]}" for work, name in labels if work in errors),
        f"  whole run over nbgrader's commands: {reference / nbgrader_seconds:.2f}× the wall time",
        *([f"  sandbox cost: {(one['seconds'] - seconds['grader, 1 job, no sandbox']) / count:+.2f} s per notebook"]
          if args.no_sandbox else []),
        *([f"  separate evaluation: {(one['seconds'] - seconds['grader, 1 job, kernel scoring']) / count:+.2f} s "
           f"per notebook ({one['seconds'] / seconds['grader, 1 job, kernel scoring']:.2f}× the time without it, "
           "--jobs 1)"] if args.kernel_scoring else []),
        f"  nbgrader's commands: {len(assignment_ids) * len(NBGRADER_STEPS)} run, {len(nbgrader_failures)} failed",
        "  (CPU s: what the whole machine was busy with during the way, kernels and workers included;",
        f"  cores busy = CPU s / the way's wall time, at most {os.cpu_count()}; other load on the machine counts too)",
        *(f"    {failure}" for failure in nbgrader_failures),
        *per_assignment({titles[way]: report for way, report in reports.items() if "notebooks" in report}),
    ]
    print("\n".join(lines))


def per_assignment(reports: dict[str, dict]) -> list[str]:
    """Return the table of seconds per notebook (the grader's own time for one submission) by assignment and way.

    ``reports`` maps a way's title to its report, whose ``notebooks`` are (assignment, seconds) of
    each graded submission. A way that graded no notebook of an assignment shows "–".
    """
    titles = list(reports)
    rows = sorted({assignment for report in reports.values() for assignment, _seconds in report["notebooks"]})
    lines = ["  seconds per notebook, by assignment (each notebook's own grading time, mean over its students):",
             "  " + f"{'assignment':<24}" + "".join(f" {title[:26]:>26}" for title in titles)]
    for row in rows:
        cells = []
        for title in titles:
            times = [seconds for assignment, seconds in reports[title]["notebooks"] if assignment == row]
            cells.append(f" {sum(times) / len(times):26.2f}" if times else f" {'–':>26}")
        lines.append("  " + f"{row:<24}" + "".join(cells))
    return lines


if __name__ == "__main__":
    main()
