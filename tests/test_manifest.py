"""The manifest of what earlier runs graded, the digests it compares, and the plan of a run made from them."""
from __future__ import annotations

import json
from pathlib import Path

from ctx_course.grading.manifest import MANIFEST, Digests, Manifest, plan_run
from ctx_course.grading.records import GradeResult


def _course(root: Path) -> Path:
    """A course folder with one assignment's sources, the checker package and one submission."""
    (root / "solutions" / "02-remaining").mkdir(parents=True)
    (root / "solutions" / "02-remaining" / "remaining.ipynb").write_text("{}", encoding="utf-8")
    (root / "ctx_reference").mkdir()
    (root / "ctx_reference" / "window.py").write_text("X = 1\n", encoding="utf-8")
    submitted = root / "submitted" / "ada" / "02-remaining"
    submitted.mkdir(parents=True)
    (submitted / "remaining.ipynb").write_text('{"answer": 1}', encoding="utf-8")
    return submitted


def test_a_record_is_saved_at_once_and_a_failure_forgets_the_pair(tmp_path):
    """record writes manifest.json each time (a run killed midway keeps what it graded); None removes the pair."""
    manifest = Manifest.load(tmp_path)
    manifest.record(("ada", "02-remaining"), "d1")
    manifest.record(("ben", "02-remaining"), "d2")
    assert json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8")) == {
        "ada/02-remaining": "d1", "ben/02-remaining": "d2"}
    manifest.record(("ada", "02-remaining"), None)
    again = Manifest.load(tmp_path)
    assert not again.unchanged(("ada", "02-remaining"), "d1")
    assert again.unchanged(("ben", "02-remaining"), "d2") and not again.unchanged(("ben", "02-remaining"), "d3")


def test_a_manifest_that_is_not_a_json_object_is_empty(tmp_path):
    """A damaged or foreign manifest.json regrades everything instead of stopping the run."""
    for text in ("{", "[1, 2]"):
        (tmp_path / MANIFEST).write_text(text, encoding="utf-8")
        assert Manifest.load(tmp_path).entries == {}


def test_the_digest_follows_the_files_the_sources_and_the_settings(tmp_path):
    """The same files give the same digest; a changed submitted file, checker file or setting gives another."""
    submitted = _course(tmp_path)
    first = Digests(tmp_path, "sandbox=True").submission("02-remaining", submitted)
    assert Digests(tmp_path, "sandbox=True").submission("02-remaining", submitted) == first
    assert Digests(tmp_path, "sandbox=False").submission("02-remaining", submitted) != first
    (submitted / "remaining.ipynb").write_text('{"answer": 2}', encoding="utf-8")
    second = Digests(tmp_path, "sandbox=True").submission("02-remaining", submitted)
    assert second != first
    (tmp_path / "ctx_reference" / "window.py").write_text("X = 2\n", encoding="utf-8")
    assert Digests(tmp_path, "sandbox=True").submission("02-remaining", submitted) != second


def _read_back(graded: set[tuple[str, str]]):
    def read_back(student: str, assignment: str) -> GradeResult:
        return GradeResult(student, assignment, (student, assignment) in graded, 3.0, 3.0)
    return read_back


def test_a_plan_skips_what_is_unchanged_and_graded_unless_forced(tmp_path):
    """Of ada (unchanged, graded), ben (unchanged, not in the gradebook), cai (changed) and an unknown assignment,
    only ada is read back; with force nobody is; the unknown assignment is never graded."""
    manifest = Manifest.load(tmp_path)
    for student, digest in (("ada", "a"), ("ben", "b"), ("cai", "old")):
        manifest.record((student, "02-remaining"), digest)
    pairs = [("ada", "02-remaining"), ("ben", "02-remaining"), ("cai", "02-remaining"), ("dan", "99-none")]
    now = {"ada": "a", "ben": "b", "cai": "new"}
    read_back = _read_back({("ada", "02-remaining"), ("cai", "02-remaining")})

    plan = plan_run(pairs, {"02-remaining"}, manifest, lambda s, a: now[s], read_back, autograde=True, force=False)
    assert list(plan.skipped) == [("ada", "02-remaining")] and plan.skipped[("ada", "02-remaining")].skipped
    assert plan.to_grade() == [("ben", "02-remaining"), ("cai", "02-remaining")]
    assert plan.assignments() == ["02-remaining"]
    forced = plan_run(pairs, {"02-remaining"}, manifest, lambda s, a: now[s], read_back, autograde=True, force=True)
    assert forced.skipped == {} and len(forced.to_grade()) == 3
    forced.problems = {"02-remaining": "could not prepare"}
    assert forced.to_grade() == []


def test_a_plan_without_autograde_grades_nothing(tmp_path):
    """--feedback-only: no digest is taken and nothing is handed to an engine."""
    plan = plan_run([("ada", "02-remaining")], {"02-remaining"}, Manifest.load(tmp_path),
                    lambda s, a: 1 / 0, _read_back(set()), autograde=False, force=False)
    assert plan.digests == {} and plan.to_grade() == []
