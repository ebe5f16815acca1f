"""``python -m ctx_course.mutation run|report|prune|judge``: the checks' strength, measured by cosmic-ray.

``run [EXERCISE ...]`` runs the campaign (every exercise by default) and, over every exercise,
writes the last run's data and docs/mutation.md; ``report`` rewrites docs/mutation.md from the
data; ``prune`` drops the reviewed entries whose mutant that run no longer saw survive; ``judge
EXERCISE FILE`` judges one file as the exercise's answer (what the ``serve`` fork server does for
each mutant cosmic-ray makes); ``compare [EXERCISE ...]`` calls each survivor of the last run and
its reference on many calls drawn from the exercise's strategies and prints the first that tells
them apart (the evidence for a reviewed reason, ``compare.py``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .campaign import TIMEOUT, ExerciseRun, run_campaign
from .judge import judge
from .report import LAST_RUN, REPORT, load_run, mutation_markdown, save_run
from .server import serve
from .survivors import load_equivalents, review, without_stale
from .targets import targets


def _show(run: ExerciseRun) -> None:
    print(f"{run.exercise:18} {run.mutants:5} mutants  {run.killed:5} killed ({run.timeouts} by timeout)  "
          f"{len(run.survivors):3} survived  {run.seconds:7.1f} s", flush=True)


def _compare(exercises: list[str], operator: str, count: int) -> int:
    """Print, for each survivor of the last run, the first drawn call on which it and its reference differ."""
    from .compare import first_difference
    from .targets import CAPSTONE

    for name, run in load_run()["exercises"].items():
        if (exercises and name not in exercises) or name in CAPSTONE:
            continue
        for mutant in run.survivors:
            if not mutant.operator.startswith(operator):
                continue
            found = first_difference(mutant, count)
            head = f"{name} {mutant.function} {mutant.operator}: {mutant.line!r} -> {mutant.mutated!r}"
            if found is None:
                print(f"{head}\n    same outcome on every call drawn", flush=True)
            else:
                strategy, call_args, call_kwargs, expected, got = found
                print(f"{head}\n    differs on {strategy}: args={call_args!r} kwargs={call_kwargs!r}: "
                      f"reference {expected}, mutant {got}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctx_course.mutation", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="mutate every exercise's reference and run its visible check on each mutant")
    run.add_argument("exercises", nargs="*", help="exercises to run (default: all)")
    run.add_argument("--jobs", type=int, default=0, help="exercises run at once (default: one per core)")
    run.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds a mutant's check may run")
    sub.add_parser("report", help="rewrite docs/mutation.md from the last run's data")
    sub.add_parser("prune", help="drop the reviewed entries whose mutant the last full run no longer saw survive")
    one = sub.add_parser("judge", help="judge one (mutated) file as the exercise's answer, without the server")
    one.add_argument("exercise")
    one.add_argument("path")
    compare = sub.add_parser("compare", help="call the last run's survivors and their reference on drawn calls")
    compare.add_argument("exercises", nargs="*", help="exercises whose survivors to compare (default: all)")
    compare.add_argument("--operator", default="", help="only survivors of operators whose name starts so")
    compare.add_argument("--count", type=int, default=300, help="calls drawn per strategy and seed")
    serve_it = sub.add_parser("serve", help="the fork server that judges each mutant (started by run)")
    serve_it.add_argument("socket")
    serve_it.add_argument("--limit", type=float, default=TIMEOUT, help="seconds a mutant's check may run")
    args = parser.parse_args(argv)

    if args.command == "serve":
        serve(args.socket, args.limit)
        return 0

    if args.command == "judge":
        status, why = judge(args.exercise, args.path)
        print(why)
        return status
    if args.command == "compare":
        return _compare(args.exercises, args.operator, args.count)
    equivalents = load_equivalents()
    if args.command == "report":
        REPORT.write_text(mutation_markdown(load_run(), equivalents), encoding="utf-8")
        return 0
    if args.command == "prune":
        removed = without_stale(review(load_run()["exercises"].values(), equivalents).stale)
        REPORT.write_text(mutation_markdown(load_run(), load_equivalents()), encoding="utf-8")
        print(f"removed {removed} stale entries; rewrote {REPORT}")
        return 0
    names = args.exercises or list(targets())
    unknown = [name for name in names if name not in targets()]
    if unknown:
        parser.error(f"exercise must be one of: {', '.join(targets())} (got {unknown[0]!r})")
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    runs = run_campaign(names, args.jobs, args.timeout, progress=_show)
    wall = round(time.perf_counter() - started, 1)
    load = (round(load_before, 2), round(os.getloadavg()[0], 2))
    total = sum(r.mutants for r in runs.values())
    print(f"{'total':18} {total:5} mutants in {wall} s")
    finding = review(runs.values(), equivalents)
    if set(names) == set(targets()):
        save_run(runs, wall, args.jobs or os.cpu_count() or 1, load)
        REPORT.write_text(mutation_markdown(load_run(), equivalents), encoding="utf-8")
        print(f"wrote {LAST_RUN} and {REPORT}")
    for mutant in finding.unlisted:
        print(f"not listed: {mutant.exercise} {mutant.function} line {mutant.lineno} {mutant.operator}: "
              f"{mutant.line!r} -> {mutant.mutated!r}")
    for entry in finding.stale:
        print(f"stale entry (no longer survives): {entry.exercise} {entry.function} {entry.operator}: "
              f"{entry.line!r} -> {entry.mutated!r}")
    return 1 if finding.unlisted or finding.stale else 0


if __name__ == "__main__":
    sys.exit(main())
