"""One class graded three times on a loaded machine gives the same bytes: feedback, autograded notebooks, grades.

The class is four notebook-02 submissions: the model answer, the stub, the model answer
followed by a loop that prints a number every 20 ms (the kernel flushes its stdout every 0.2 s
or so, so where the text is cut into messages depends on the machine's load), and the model answer
with its check cell deleted (the grader puts it back: with the same cell id on every run). Two CPU-bound
processes run beside the grader for the three runs (``--jobs 1``, ``--jobs 2``, ``--jobs 1``).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctx_course.cli import main
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

ASSIGNMENT = "02-remaining"
PRINTER = MODEL + '''
import time

for step in range(40):
    print(step, end=" ")
    time.sleep(0.02)
print()
'''
STUB = "raise NotImplementedError()"
# What the runs write that must be the same bytes each time (the gradebook and the manifest are the run's own).
COMPARED = ("feedback", "autograded", "grades.csv")


def _files(work: Path) -> dict[str, bytes]:
    found = {}
    for name in COMPARED:
        path = work / name
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        found.update({str(p.relative_to(work)): p.read_bytes() for p in paths})
    return found


@pytest.fixture(scope="module")
def loaded_runs(tmp_path_factory, make_class):
    """The class graded three times into three folders while two CPU-bound processes run beside the grader."""
    tmp = tmp_path_factory.mktemp("same-bytes")
    incoming = make_class(tmp / "incoming", {"ada": MODEL, "ben": STUB, "cai": PRINTER, "dan": MODEL})
    deleter = incoming / "dan" / ASSIGNMENT / "remaining.ipynb"
    notebook = json.loads(deleter.read_text(encoding="utf-8"))
    notebook["cells"] = [c for c in notebook["cells"]
                         if c["metadata"].get("nbgrader", {}).get("grade_id") != "check_remaining"]
    deleter.write_text(json.dumps(notebook, ensure_ascii=False, indent=1), encoding="utf-8")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    runs = []
    try:
        for number, jobs in enumerate(("1", "2", "1"), start=1):
            work = tmp / f"run{number}"
            status = main(["grade", "--root", str(REPO), "--work", str(work), "--submissions", str(incoming),
                           "--jobs", jobs])
            runs.append({"status": status, "files": _files(work)})
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return runs


def test_every_run_grades_the_class(loaded_runs):
    """Each run exits 0 and writes four feedback pages and four autograded notebooks."""
    assert [run["status"] for run in loaded_runs] == [0, 0, 0]
    for run in loaded_runs:
        names = set(run["files"])
        assert "grades.csv" in names
        for student in ("ada", "ben", "cai", "dan"):
            assert f"feedback/{student}/{ASSIGNMENT}/remaining.html" in names
            assert f"autograded/{student}/{ASSIGNMENT}/remaining.ipynb" in names

def test_three_loaded_runs_write_the_same_bytes(loaded_runs):
    """Every compared file of the second and third run is byte for byte the first run's."""
    first = loaded_runs[0]["files"]
    for run in loaded_runs[1:]:
        assert sorted(run["files"]) == sorted(first)
        differing = [name for name in first if run["files"][name] != first[name]]
        assert differing == []


def test_the_printed_loop_is_one_output(loaded_runs):
    """cai's answer cell printed 40 numbers in many flushes: its autograded notebook holds them as one output."""
    import nbformat

    text = loaded_runs[0]["files"][f"autograded/cai/{ASSIGNMENT}/remaining.ipynb"].decode("utf-8")
    notebook = nbformat.reads(text, as_version=4)
    printed = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
               if o.get("output_type") == "stream" and "39" in o.get("text", "")]
    assert [o["text"] for o in printed] == [" ".join(str(i) for i in range(40)) + " \n"]
