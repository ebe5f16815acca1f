"""A class leaderboard for the context-policy capstone: every graded policy re-scored on hidden workloads.

Covers: finding the graded (autograded) notebooks of one assignment in a grading run's working
folder, running each one in a fresh kernel from a ``KernelPool`` made as the grading run makes its
own (``course_pool``, so whatever protects kernel launches during grading protects this too) with
one cell appended that scores the learner's policy on the hidden workloads and prints the scores
as JSON after a per-run marker, reading that JSON back, ranking the students, and writing
``leaderboard-<assignment>.csv`` and ``.png`` into the working folder.

Leaves out: grading itself (run ``python -m ctx_course grade`` first) and any defence against a
notebook that patches the reference implementation before the appended cell runs: the scores are
as trustworthy as the hidden tests of the same notebook, which run in the same kind of kernel.
Student code is never imported into this process.

Vocabulary: a *row* is one student's result: a score (lower is better, see
``ctx_reference.policy_score``), "disqualified" when the policy overflowed or lost a fact on some
hidden workload, or an error when no score could be read (the notebook has no policy, the policy
raised, the kernel died).
"""
from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
from collections.abc import Callable, Sequence, Set
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

from ctx_reference.workloads import WorkloadShape

from ..cells import is_answer, is_check_cell
from ..config import load_course_config, work_folder
from ..sandbox.kernels import KernelPool, course_pool, stop_kernel
from ..sandbox.policy import sandbox_limits

# The learner's policy in the capstone notebook.
POLICY_NAME = "my_policy"

# What the notebook's own read-only code cells give a policy, without their plots and tables:
# those cells are replaced by this one (running them would triple the time per student).
PREAMBLE = """
from ctx_reference.ledger import Zone
from ctx_reference.sim import BUILTIN_POLICIES, Clear, Compact, Protect, simulate_policy
from ctx_reference.workloads import visible_workloads
"""

# Seconds one cell may run while re-scoring (the appended cell scores six workloads in well under one).
CELL_TIMEOUT = 30

# The hidden workloads of the leaderboard: the rules of the capstone, other seeds and shapes.
HIDDEN_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape("lb-lesson-like", seed=201, turns=60, tools=(("tool", 1.0, 3_000, 3_000),),
                  needed_share=0.25, lag_min=10, lag_max=14, window=100_000, threshold=60_000, base=8_000),
    WorkloadShape("lb-huge-reads", seed=202, turns=90,
                  tools=(("grep", 0.6, 200, 800), ("read_file", 0.4, 10_000, 30_000)),
                  window=200_000, threshold=150_000),
    WorkloadShape("lb-bursty", seed=203, turns=120, bursts=5, burst_length=4, burst_tokens=10_000,
                  window=128_000, threshold=96_000, base=6_000),
    WorkloadShape("lb-small-summary", seed=204, turns=100, needed_share=0.15, lag_min=5, lag_max=40,
                  summary_capacity=8),
    WorkloadShape("lb-many-questions", seed=206, turns=80, needed_share=0.7, lag_min=2, lag_max=6,
                  window=100_000, threshold=60_000, base=8_000),
)


@dataclass(frozen=True)
class Row:
    """One student's line of the leaderboard."""

    student: str
    score: float | None = None
    safe_workloads: int = 0
    workloads: int = 0
    facts_lost: int = 0
    overflows: int = 0
    total_cost: float | None = None
    error: str = ""

    @property
    def status(self) -> str:
        """Return "scored", "disqualified" or "error"."""
        if self.error:
            return "error"
        return "scored" if self.score is not None else "disqualified"


def scoring_cell(marker: str, shapes: Sequence[WorkloadShape] = HIDDEN_SHAPES,
                 policy_name: str = POLICY_NAME) -> str:
    """Return the code appended to a learner's notebook: score the policy, print marker + JSON."""
    data = json.dumps([asdict(s) for s in shapes])
    return f'''
import json as _lb_json
try:
    from ctx_reference.policy_score import score_policy as _lb_score
    from ctx_reference.workloads import WorkloadShape as _lb_Shape, generate as _lb_generate
    _lb_shapes = [_lb_Shape(**{{**d, "tools": tuple(tuple(t) for t in d["tools"])}})
                  for d in _lb_json.loads({data!r})]
    _lb_s = _lb_score({policy_name}, [_lb_generate(s) for s in _lb_shapes], "mine")
    _lb_out = {{"score": _lb_s.score,
               "safe_workloads": sum(w.safe for w in _lb_s.workloads),
               "workloads": len(_lb_s.workloads),
               "facts_lost": sum(w.facts_lost for w in _lb_s.workloads),
               "overflows": sum(w.overflow_turn is not None for w in _lb_s.workloads),
               "total_cost": _lb_s.total_cost}}
except BaseException as _lb_e:
    _lb_out = {{"error": (type(_lb_e).__name__ + ": " + str(_lb_e))[:300]}}
print({marker!r} + _lb_json.dumps(_lb_out))
'''


def graded_notebooks(work: Path, assignment: str) -> list[tuple[str, Path]]:
    """Return (student, notebook) for every autograded notebook of ``assignment``, by student id."""
    found = []
    autograded = work / "autograded"
    if autograded.is_dir():
        for folder in sorted(autograded.iterdir()):
            notebooks = sorted((folder / assignment).glob("*.ipynb"))
            if folder.is_dir() and notebooks:
                found.append((folder.name, notebooks[0]))
    return found


def lesson_cell_ids(source: Path) -> set[str]:
    """Return the ids of the source notebook's code cells that are neither solutions nor learner-owned.

    These are the read-only narrative cells (imports, tables, plots) that PREAMBLE stands in for.
    """
    nb = nbformat.read(source, as_version=4)
    return {c.get("id") for c in nb.cells
            if c.cell_type == "code" and not is_answer(c)}


def _runnable(path: Path, cell: str, narrative: Set[str] = frozenset()) -> nbformat.NotebookNode:
    """Return PREAMBLE, the learner's code cells (solutions and cells they added), the scoring cell.

    Graded check cells (with their hidden tests) and the ``narrative`` cells are left out.
    """
    nb = nbformat.read(path, as_version=4)
    preamble = nbformat.v4.new_code_cell(PREAMBLE.strip())
    preamble["id"] = "leaderboard-preamble"
    keep = [preamble]
    for c in nb.cells:
        if c.cell_type != "code" or is_check_cell(c):
            continue
        if c.get("id") in narrative and not is_answer(c):
            continue
        c.outputs = []
        keep.append(c)
    extra = nbformat.v4.new_code_cell(cell)
    extra["id"] = "leaderboard-score"
    nb.cells = [*keep, extra]
    return nb


def read_row(student: str, nb: nbformat.NotebookNode, marker: str) -> Row:
    """Return the row printed by the scoring cell of an executed notebook (an error row if none)."""
    for output in nb.cells[-1].get("outputs", []):
        if output.get("output_type") == "stream":
            for line in output.get("text", "").splitlines():
                if line.startswith(marker):
                    try:
                        data = json.loads(line[len(marker):])
                    except ValueError:
                        break
                    if "error" in data:
                        return Row(student, error=str(data["error"]))
                    fields = {k: data.get(k) for k in ("score", "safe_workloads", "workloads",
                                                       "facts_lost", "overflows", "total_cost")}
                    return Row(student, **fields)
    return Row(student, error="the scoring cell printed no result")


def score_notebook(student: str, path: Path, pool: KernelPool, marker: str,
                   timeout: int = CELL_TIMEOUT, narrative: Set[str] = frozenset()) -> Row:
    """Run one graded notebook in a fresh kernel from ``pool`` and return its row."""
    from nbclient import NotebookClient

    nb = _runnable(path, scoring_cell(marker), narrative)
    manager = pool.take()
    pool.launch_next()
    try:
        NotebookClient(nb, km=manager, timeout=timeout, allow_errors=True,
                       kernel_name="python3").execute()
    except Exception as exc:  # a dead kernel, a timeout: this student gets an error row
        return Row(student, error=f"{type(exc).__name__}: {str(exc)[:200]}")
    finally:
        stop_kernel(manager)
    return read_row(student, nb, marker)


def rank(rows: Sequence[Row]) -> list[Row]:
    """Return the rows ranked: scores low to high, then the disqualified, then errors (by id)."""
    order = {"scored": 0, "disqualified": 1, "error": 2}
    return sorted(rows, key=lambda r: (order[r.status], r.score if r.score is not None else 0.0,
                                       r.student))


def write_csv(rows: Sequence[Row], path: Path) -> None:
    """Write the ranked rows as CSV: rank, student, status, score and the counts behind it."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["rank", "student", "status", "score", "safe_workloads", "workloads",
                         "facts_lost", "overflows", "total_input_equivalent", "error"])
        for i, r in enumerate(rows, start=1):
            writer.writerow([i, r.student, r.status,
                             "" if r.score is None else f"{r.score:.4f}",
                             r.safe_workloads, r.workloads, r.facts_lost, r.overflows,
                             "" if r.total_cost is None else f"{r.total_cost:.1f}", r.error])


def leaderboard(root: str | os.PathLike, assignment: str, *, work: str | os.PathLike | None = None,
                sandbox: bool | None = None, jobs: int | None = 1, cluster: str | None = None,
                on_row: Callable[[Row], None] | None = None) -> tuple[list[Row], Path, Path]:
    """Re-score every graded notebook of ``assignment``; write the CSV and PNG; return rows and paths.

    With ``jobs`` above 1 (None: one per core) or a ``cluster`` address, the notebooks run on
    Dask workers, as grading does (``grading/engine.py``). Example:
    ``leaderboard(".", "11-capstone", work="grading")`` writes
    ``grading/leaderboard-11-capstone.csv`` and ``.png``.
    """
    from ctx_reference.plots import plot_leaderboard

    root = Path(root).resolve()
    config = load_course_config(root, work=work)
    work_dir = work_folder(root, config)
    found = graded_notebooks(work_dir, assignment)
    if not found:
        raise ValueError(f"assignment has no graded notebook in {work_dir / 'autograded'} "
                         f"(grade first) (got {assignment!r})")
    sources = sorted((root / "solutions" / assignment).glob("*.ipynb"))
    narrative = lesson_cell_ids(sources[0]) if sources else set()
    marker = f"LEADERBOARD-{secrets.token_hex(8)}:"
    # The grader's kernel pool: every notebook runs in the same sandbox, with the same limits, as
    # when it was graded (``sandbox=False`` only with the instructor's explicit --no-sandbox).
    sandboxed, memory, cpu = sandbox_limits(config, sandbox=sandbox)
    from ..grading.engine import check_jobs, default_jobs

    jobs = min(default_jobs() if jobs is None else check_jobs(jobs), len(found))
    if cluster is not None or jobs > 1:
        rows = _on_workers(root, work_dir, found, marker, narrative, jobs=jobs, cluster=cluster,
                           sandbox=sandboxed, memory=memory, cpu=cpu)
        for row in rows:
            if on_row is not None:
                on_row(row)
    else:
        pool = course_pool(root, work_dir, sandbox=sandboxed, memory_limit=memory, cpu_limit=cpu)
        pool.plan(len(found))
        rows = []
        try:
            for student, path in found:
                row = score_notebook(student, path, pool, marker, narrative=narrative)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
        finally:
            pool.close()
    ranked = rank(rows)
    csv_path = work_dir / f"leaderboard-{assignment}.csv"
    png_path = work_dir / f"leaderboard-{assignment}.png"
    write_csv(ranked, csv_path)
    fig = plot_leaderboard([r.student for r in ranked], [r.score for r in ranked])
    fig.savefig(png_path, dpi=120)
    return ranked, csv_path, png_path


def _on_workers(root: Path, work: Path, found, marker: str, narrative: set[str], *, jobs: int, cluster: str | None,
                sandbox: bool, memory: int, cpu: int) -> list[Row]:
    """Score every notebook on Dask workers (each sent as bytes); return the rows in the order found."""
    from ..grading.autograde import GradingSettings
    from ..grading.engine import DaskEngine
    from ..grading.fingerprint import course_fingerprint

    settings = GradingSettings(root=str(root), sandbox=sandbox, memory_limit=memory, cpu_limit=cpu,
                               hidden=(str(work),), fingerprint=course_fingerprint(root))
    with DaskEngine(settings, jobs=jobs, cluster=cluster) as engine:
        return engine.run_on_workers(score_on_worker, [(student, path.read_bytes(), marker, frozenset(narrative))
                                            for student, path in found])


def score_on_worker(student: str, notebook: bytes, marker: str, narrative: frozenset[str]):
    """The leaderboard's task: run one graded notebook with the scoring cell in a kernel of this worker."""
    from ..grading.worker import this_worker

    worker = this_worker()
    problem = worker.refusal()
    if problem is not None:
        return Row(student, error=f"worker {worker.name}: {problem}")
    pool, scratch = worker.kernel_pool()  # as grading's, without a grader
    path = scratch / "leaderboard" / student / "notebook.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(notebook)
    try:
        return score_notebook(student, path, pool, marker, narrative=set(narrative))
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)
