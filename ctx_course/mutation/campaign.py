"""Run cosmic-ray over each exercise's reference and judge every mutant by the exercise's visible check.

Covers: for one exercise (``run_exercise``), a scratch copy of its target's source, a cosmic-ray
session over it (``cosmic-ray init``), the line filter that keeps the mutations inside the
exercise's functions and text constants (``cr-filter-lines``, the tool's own filter), with the
core operators and the learner operators (``learner_operators.py``, which ``run_campaign`` first
checks cosmic-ray finds), a baseline (the unmutated copy must pass its check, or the campaign
stops: the harness would be judging itself), and the run
(``cosmic-ray exec``), whose test command for each mutant has the exercise's visible check judge
the mutant as a learner's function, as the notebook calls the check (``judge.py``; the command is
the stdlib-only ``client.py``, which hands the file to the fork server of ``server.py``, started
once per campaign). A mutant whose check runs longer than ``timeout`` seconds is ended and counted
as killed by the timeout. ``run_campaign`` runs several exercises at once, one cosmic-ray session
per exercise and process, ``jobs`` at a time (cosmic-ray's local distributor runs one session's
mutants in sequence; its sessions are independent files, so they run side by side).

Counts are kept per exercise and per operator (``ExerciseRun.operators``).

Leaves out: which survivors are reviewed (``survivors.py``) and the report (``report.py``).

Vocabulary: a *mutant* is one mutation cosmic-ray applied (operator, occurrence); it is *killed*
when the check fails on it (a × line, an error while defining it, or the timeout) and *survives*
when every visible case passes. Its *identity* is (exercise, function, the line's text, the
mutated line's text, operator): it does not move when lines are added above it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .targets import Target, targets

#: Seconds a mutant's check may run before it is ended (a check cell runs in well under 2 s).
TIMEOUT = 20.0
# cosmic-ray's own limit on the client, a backstop behind the judge's alarm.
_BACKSTOP = 15.0
CLIENT = Path(__file__).with_name("client.py")


@dataclass(frozen=True)
class Mutant:
    """One mutant that survived (or, with ``outcome``, any mutant), identified by its text."""

    exercise: str
    function: str
    operator: str
    line: str
    mutated: str
    lineno: int = 0

    @property
    def identity(self) -> tuple[str, str, str, str, str]:
        return (self.exercise, self.function, self.line, self.mutated, self.operator)


@dataclass
class ExerciseRun:
    """What the campaign found for one exercise: counts, and the survivors by identity."""

    exercise: str
    mutants: int = 0
    killed: int = 0
    timeouts: int = 0
    survivors: list[Mutant] = field(default_factory=list)
    seconds: float = 0.0
    #: operator name -> [mutants, killed] (the survivors name their operator)
    operators: dict[str, list[int]] = field(default_factory=dict)

    def as_data(self) -> dict:
        data = asdict(self)
        data["survivors"] = [asdict(m) for m in self.survivors]
        return data

    @classmethod
    def from_data(cls, data: dict) -> ExerciseRun:
        run = cls(**{**data, "survivors": []})
        run.survivors = [Mutant(**m) for m in data["survivors"]]
        return run


class CampaignError(RuntimeError):
    """The campaign could not judge an exercise (its baseline fails, or cosmic-ray failed)."""


def require_learner_operators() -> None:
    """Raise CampaignError unless cosmic-ray finds the learner operators (an install older than the entry point)."""
    from cosmic_ray.plugins import operator_names

    from .learner_operators import OPERATORS, PROVIDER

    missing = [name for name in OPERATORS if f"{PROVIDER}/{name}" not in operator_names()]
    if missing:
        raise CampaignError(f"cosmic-ray does not find the operators {PROVIDER}/{missing[0]} ...: reinstall the "
                            "package (make .venv/.installed, or pip install -e '.[test]') so that its entry points "
                            "are registered")


def _tool(name: str) -> str:
    """Return the path of one of cosmic-ray's commands, installed beside this Python."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise CampaignError(f"{name} is not installed beside {sys.executable}: pip install -e '.[test]'")
    return str(path)


def judge_command(exercise: str, path: Path, server: str) -> list[str]:
    """Return the command that has the judge server ``server`` judge the file ``path`` as ``exercise``'s answer."""
    return [sys.executable, "-I", "-S", str(CLIENT), server, exercise, str(path)]


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def session_config(target: Target, path: Path, server: str, timeout: float) -> str:
    """Return the cosmic-ray configuration (TOML) of one exercise's session over the copy ``path``."""
    command = " ".join(judge_command(target.exercise, path, server))
    lines = ", ".join(_toml_string(f"{start}-{end}") for _, start, end in target.spans)
    return "\n".join([
        "[cosmic-ray]",
        f"module-path = {_toml_string(str(path))}",
        f"timeout = {timeout + _BACKSTOP}",
        "excluded-modules = []",
        f"test-command = {_toml_string(command)}",
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
        "[cosmic-ray.filters.line-filter.lines]",
        f"{_toml_string(str(path))} = [{lines}]",
        "",
    ])


def _run(command: Sequence[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CampaignError(f"{' '.join(command[:2])} failed ({done.returncode}): {done.stderr[-2000:]}")


def _changed(diff: str) -> tuple[str, str]:
    """Return (original line(s), mutated line(s)) of a cosmic-ray diff, each stripped and joined by newlines."""
    removed, added = [], []
    for line in diff.split("\n"):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            removed.append(line[1:].strip())
        elif line.startswith("+"):
            added.append(line[1:].strip())
    return "\n".join(removed), "\n".join(added)


def run_exercise(exercise: str, server: str, timeout: float = TIMEOUT) -> ExerciseRun:
    """Run the mutation campaign of one exercise, its mutants judged by ``server``; return counts and survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    all_targets = targets()
    if exercise not in all_targets:
        raise ValueError(f"exercise must be one of: {', '.join(all_targets)} (got {exercise!r})")
    target = all_targets[exercise]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"mutation-{exercise}-") as folder:
        work = Path(folder)
        path = work / target.filename
        path.write_text(target.source, encoding="utf-8")
        baseline = subprocess.run(judge_command(exercise, path, server), capture_output=True, text=True,
                                  timeout=timeout + _BACKSTOP)
        if baseline.returncode != 0:
            raise CampaignError(f"{exercise}: the unmutated reference fails its own check: "
                                f"{(baseline.stdout + baseline.stderr)[-2000:]}")
        config, session = work / "cosmic-ray.toml", work / "session.sqlite"
        config.write_text(session_config(target, path, server, timeout), encoding="utf-8")
        _run([_tool("cosmic-ray"), "init", str(config), str(session)], work)
        _run([_tool("cr-filter-lines"), str(session), "--config", str(config)], work)
        _run([_tool("cosmic-ray"), "exec", str(config), str(session)], work)
        run = ExerciseRun(exercise)
        with use_db(str(session), WorkDB.Mode.open) as db:
            for item, result in db.completed_work_items:
                if result.worker_outcome in (WorkerOutcome.SKIPPED, WorkerOutcome.NO_TEST):
                    continue
                if result.worker_outcome != WorkerOutcome.NORMAL:
                    raise CampaignError(f"{exercise}: cosmic-ray could not run a mutant: {result.output}")
                (mutation,) = item.mutations
                run.mutants += 1
                tally = run.operators.setdefault(mutation.operator_name, [0, 0])
                tally[0] += 1
                if result.test_outcome == TestOutcome.KILLED:
                    run.killed += 1
                    tally[1] += 1
                    run.timeouts += int("timeout" in (result.output or "").split("\n", 1)[0])
                    continue
                if result.test_outcome != TestOutcome.SURVIVED:
                    raise CampaignError(f"{exercise}: mutant judged {result.test_outcome}: {result.output}")
                line, mutated = _changed(result.diff or "")
                lineno = mutation.start_pos[0]
                run.survivors.append(Mutant(exercise, target.function_at(lineno) or "?", mutation.operator_name,
                                            line, mutated, lineno))
    run.survivors.sort(key=lambda m: (m.lineno, m.operator, m.mutated))
    run.operators = dict(sorted(run.operators.items()))
    run.seconds = round(time.perf_counter() - started, 1)
    return run


@contextmanager
def judge_server(timeout: float = TIMEOUT) -> Iterator[str]:
    """Start the fork server of ``server.py`` for the duration of the block; yield its socket's path."""
    with tempfile.TemporaryDirectory(prefix="mutation-judge-") as folder:
        path = str(Path(folder) / "judge.sock")
        command = [sys.executable, "-m", "ctx_course.mutation", "serve", path, "--limit", str(timeout)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise CampaignError(f"the judge server did not start (exit status {process.wait()})")
            yield path
        finally:
            process.terminate()
            process.wait()


def run_campaign(exercises: Iterable[str], jobs: int = 0, timeout: float = TIMEOUT,
                 progress: Callable[[ExerciseRun], None] | None = None) -> dict[str, ExerciseRun]:
    """Run the campaigns of ``exercises``, ``jobs`` at a time (0: one per core); return them in the given order."""
    names = list(exercises)
    jobs = jobs or os.cpu_count() or 1
    require_learner_operators()
    results: dict[str, ExerciseRun] = {}
    with judge_server(timeout) as server:

        def one(name: str) -> ExerciseRun:
            run = run_exercise(name, server, timeout)
            if progress is not None:
                progress(run)
            return run

        # the longest sources first, so that the last session to finish is a short one
        size = {name: sum(end - start for _, start, end in targets()[name].spans) for name in names}
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for run in pool.map(one, sorted(names, key=lambda name: -size[name])):
                results[run.exercise] = run
    return {name: results[name] for name in names}
