"""Time the two grader-side digest steps, and what they add to grading the model answers.

Run with ``python benchmarks/bench_hidden_digests.py`` (``--grade`` also grades the model answers
of every assignment twice, with and without the digest steps, in a temporary folder).

Reported: milliseconds to rewrite every check cell of solutions/ (``strip_digests``, what
``StripDigests`` does per submission), milliseconds for ``CompareDigests`` on one notebook
(reading the expected digests from a gradebook and judging its check cells), and with
``--grade`` the seconds of both grading runs. The machine's load average is printed because
other processes on a small machine move every figure.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctx_course.config import assignments  # noqa: E402
from ctx_course.grading.grader import Grader  # noqa: E402
from ctx_course.grading.hidden_digests import CompareDigests, StripDigests, expected_digests, strip_digests  # noqa: E402
from ctx_reference.checks.hidden import REPORT_PREFIX  # noqa: E402

REPEAT = 20


def check_cells() -> list[tuple[str, nbformat.NotebookNode]]:
    """Return (notebook name, cell) for every check cell of solutions/ with hidden digests."""
    found = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and expected_digests(cell.source):
                found.append((path.stem, cell))
    return found


def time_strip(cells) -> float:
    start = time.perf_counter()
    for _ in range(REPEAT):
        for _, cell in cells:
            strip_digests(cell.source)
    return (time.perf_counter() - start) / REPEAT * 1000


def time_compare(cells, folder: Path) -> float:
    """Milliseconds for CompareDigests on a notebook of every check cell, each with right reports."""
    url = f"sqlite:///{folder / 'gradebook.db'}"
    nb = nbformat.v4.new_notebook()
    with Gradebook(url) as gb:
        gb.add_assignment("a")
        gb.add_notebook("nb", "a")
        for number, (_, cell) in enumerate(cells):
            name = f"check_{number}"
            gb.add_grade_cell(name, "nb", "a", max_score=1, cell_type="code")
            gb.add_source_cell(name, "nb", "a", cell_type="code", source=cell.source, locked=True, checksum="x")
            lines = "".join(
                REPORT_PREFIX + json.dumps({"label": label, "digest": digest}, ensure_ascii=False) + "\n"
                for label, digest in expected_digests(cell.source).items()
            )
            copy = nbformat.v4.new_code_cell(strip_digests(cell.source))
            copy.metadata.nbgrader = {"grade": True, "grade_id": name, "solution": False, "locked": True, "points": 1}
            copy.outputs = [nbformat.v4.new_output("stream", name="stderr", text=lines)]
            nb.cells.append(copy)
    resources = {"nbgrader": {"db_url": url, "notebook": "nb", "assignment": "a", "student": "s"}}
    start = time.perf_counter()
    for _ in range(REPEAT):
        fresh = nbformat.from_dict(nb)
        fresh, out = CompareDigests().preprocess(fresh, dict(resources))
        assert not any(out["ctx_digests"].values()), out["ctx_digests"]
    return (time.perf_counter() - start) / REPEAT * 1000


def grade_models(folder: Path, digest_steps: bool) -> tuple[float, float]:
    spec = importlib.util.spec_from_file_location("build_class", ROOT / "examples" / "build_class.py")
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build
    spec.loader.exec_module(build)
    grader = Grader(ROOT, work=folder / "work")
    if not digest_steps:  # as grading ran before the digest steps existed
        for name in ("sanitize_preprocessors", "autograde_preprocessors"):
            steps = grader.config.Autograde[name]
            grader.config.Autograde[name] = [s for s in steps if s not in (StripDigests, CompareDigests)]
        grader.api = NbGraderAPI(config=grader.config)
    for aid in assignments(ROOT):
        (released,) = sorted((ROOT / "lessons" / aid).glob("*.ipynb"))
        (source,) = sorted((ROOT / "solutions" / aid).glob("*.ipynb"))
        ids = [c.metadata.nbgrader["grade_id"] for c in nbformat.read(source, as_version=4).cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
        target = folder / "incoming" / "model" / aid
        target.mkdir(parents=True)
        work = build.Work(code={gid: build.MODEL for gid in ids})
        (target / released.name).write_text(build.submission(released, source, work), encoding="utf-8")
    grader.collect(folder / "incoming")
    start = time.perf_counter()
    report = grader.grade()
    seconds = time.perf_counter() - start
    points = sum(r.auto_score for r in report.results), sum(r.max_auto_score for r in report.results)
    print(f"  {'with' if digest_steps else 'without'} digest steps: {seconds:.1f} s, autograde "
          f"{report.phases['autograde']:.1f} s, {points[0]:g}/{points[1]:g} points")
    return seconds, report.phases["autograde"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grade", action="store_true", help="also grade the model answers with and without the steps")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cells = check_cells()
    labels = sum(len(expected_digests(cell.source)) for _, cell in cells)
    print(f"{len(cells)} check cells with {labels} hidden digests")
    print(f"strip_digests, every check cell: {time_strip(cells):.1f} ms")
    folder = Path(tempfile.mkdtemp(prefix="bench-digests-"))
    try:
        print(f"CompareDigests, one notebook of all {len(cells)} check cells: {time_compare(cells, folder):.1f} ms")
        if args.grade:
            print("grading the model answers of every assignment:")
            grade_models(folder / "without", False)
            grade_models(folder / "with", True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
