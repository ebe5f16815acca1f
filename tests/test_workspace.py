"""The learner's workspace is filled from the release, gets its corrections, and never loses the learner's work."""
from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from ctx_course.learner.workspace import Pending, WorkspaceError, pending_updates, prepare_workspace, update_workspace

from conftest import LESSONS, REPO, notebooks


def test_fresh_workspace_gets_every_lesson(tmp_path):
    """An empty workspace receives one copy of each released notebook: the release's, with the language_info the
    learner's kernel reports (the release stores none of its version) and nothing else changed."""
    copied = prepare_workspace(REPO, tmp_path)
    expected = [tmp_path / p.relative_to(LESSONS) for p in notebooks(LESSONS)]
    assert sorted(copied) == sorted(expected)
    assert len(copied) == len(list((REPO / "solutions").glob("*/*.ipynb")))
    for path in notebooks(LESSONS):
        mine = json.loads((tmp_path / path.relative_to(LESSONS)).read_text(encoding="utf-8"))
        release = json.loads(path.read_text(encoding="utf-8"))
        assert "version" not in release["metadata"]["language_info"]
        assert mine["metadata"]["language_info"]["version"] == platform.python_version()
        mine["metadata"]["language_info"].pop("version")
        assert mine == release


def test_learner_work_is_never_overwritten(tmp_path):
    """A notebook the learner already has stays as it is; only missing ones are copied."""
    prepare_workspace(REPO, tmp_path)
    mine = tmp_path / "02-remaining" / "remaining.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    (tmp_path / "03-recall" / "recall.ipynb").unlink()
    copied = prepare_workspace(REPO, tmp_path)
    assert copied == [tmp_path / "03-recall" / "recall.ipynb"]
    assert mine.read_text(encoding="utf-8") == "my answers"


def test_the_workspace_gets_the_glossary_of_its_release(tmp_path):
    """The Chinese glossary lands at the workspace's top, where a notebook's link ../glossary.md#cache finds it,
    and the English one does not; a stale copy is replaced by the release's, and the learner's notebooks stay as
    they are."""
    prepare_workspace(REPO, tmp_path)
    assert (tmp_path / "glossary.md").read_bytes() == (LESSONS / "glossary.md").read_bytes()
    assert not (tmp_path / "glossary.en.md").exists()
    (tmp_path / "glossary.md").write_text("旧的术语表", encoding="utf-8")
    mine = tmp_path / "02-remaining" / "remaining.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    assert prepare_workspace(REPO, tmp_path) == []
    assert (tmp_path / "glossary.md").read_bytes() == (LESSONS / "glossary.md").read_bytes()
    assert mine.read_text(encoding="utf-8") == "my answers"


def test_the_english_workspace_gets_only_the_english_glossary(tmp_path):
    """`make lab LANG=en` fills workspace-en/ with lessons-en/ and the English glossary alone; a Chinese glossary
    that an earlier version copied there is removed."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "glossary.md").write_text("# 术语表\n", encoding="utf-8")
    prepare_workspace(REPO, tmp_path, language="en")
    assert (tmp_path / "glossary.en.md").read_bytes() == (REPO / "lessons-en" / "glossary.en.md").read_bytes()
    assert not (tmp_path / "glossary.md").exists()
    mine = json.loads((tmp_path / "02-remaining" / "remaining.ipynb").read_text(encoding="utf-8"))
    assert mine["metadata"]["ctx_edition"] == "en"
    assert [cell["source"] for cell in mine["cells"]] == [cell["source"] for cell in json.loads(
        (REPO / "lessons-en" / "02-remaining" / "remaining.ipynb").read_text(encoding="utf-8"))["cells"]]


def test_folder_without_lessons_is_rejected(tmp_path):
    """A root with no lessons/ folder raises ValueError naming `root`."""
    with pytest.raises(ValueError, match="root must hold a lessons/ folder"):
        prepare_workspace(tmp_path, tmp_path / "ws")


# A learner who has begun: answers written, one demo cell changed; then the release is corrected.
NOTEBOOK = "02-remaining/remaining.ipynb"
ANSWER = "def remaining(window, read, write, input, max_tokens):\n    return window - read - write - input, False\n"
WRITTEN = "缓存读写也占窗口。"
DEMO_EDIT = "# 我自己试一下\nprint(1 + 1)\n"


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _edit(path: Path, edits: dict[str, str]) -> None:
    """Replace the source of the cells with these ids."""
    notebook = _read(path)
    for cell in notebook["cells"]:
        if cell["id"] in edits:
            cell["source"] = edits[cell["id"]]
    _write(path, notebook)


def _source(path: Path, cell_id: str) -> str | None:
    for cell in _read(path)["cells"]:
        if cell["id"] == cell_id:
            return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return None


def _bytes(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def course(tmp_path):
    """A course folder with a copy of the release, and a workspace where the learner answered 02 and edited a demo."""
    root = tmp_path / "course"
    shutil.copytree(LESSONS, root / "lessons")
    prepare_workspace(root)
    _edit(root / "workspace" / NOTEBOOK, {"remaining": ANSWER, "q_cache_fields": WRITTEN, "cell-12": DEMO_EDIT})
    return root


def _correct_release(root: Path) -> dict[str, str]:
    """Correct 02 in the course's lessons/: a narrative cell, the check cell, a demo the learner edited, a new cell."""
    path = root / "lessons" / NOTEBOOK
    corrections = {
        "cell-01": _source(path, "cell-01") + "\n（更正：三个字段都算。）",
        "check_remaining": _source(path, "check_remaining") + "\n# 更正后的检查",
        "cell-12": _source(path, "cell-12") + "\n# 更正后的演示",
    }
    _edit(path, corrections)
    notebook = _read(path)
    new_cell = {"cell_type": "markdown", "id": "cell-02-note", "metadata": {}, "source": "新增的说明"}
    notebook["cells"].insert(3, new_cell)
    _write(path, notebook)
    return corrections


def test_fresh_workspace_records_the_release_of_every_copy(tmp_path):
    """The manifest holds, per copied notebook, the SHA-256 of the released file and every cell id of it."""
    prepare_workspace(REPO, tmp_path)
    manifest = json.loads((tmp_path / ".lessons-manifest.json").read_text(encoding="utf-8"))["notebooks"]
    assert sorted(manifest) == [p.relative_to(LESSONS).as_posix() for p in notebooks(LESSONS)]
    for path in notebooks(LESSONS):
        entry = manifest[path.relative_to(LESSONS).as_posix()]
        assert entry["release"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert sorted(entry["cells"]) == sorted(cell["id"] for cell in _read(path)["cells"])


def test_an_unchanged_release_leaves_nothing_pending(course):
    """With answers written but the release as it was, no notebook is listed for an update."""
    assert pending_updates(course) == []


def test_a_corrected_release_is_listed_and_updated_without_losing_answers(course):
    """After a correction, the notebook is pending; the update brings every untouched cell, keeps answers and edits."""
    corrections = _correct_release(course)
    mine = course / "workspace" / NOTEBOOK
    old = mine.read_bytes()
    others = {p: b for p, b in _bytes(course / "workspace").items()
              if p.as_posix() not in (NOTEBOOK, ".lessons-manifest.json")}
    assert pending_updates(course) == [Pending(NOTEBOOK, recorded=True)]

    [done] = update_workspace(course, now=datetime(2026, 12, 1, 9, 30))
    assert _source(mine, "remaining") == ANSWER and _source(mine, "q_cache_fields") == WRITTEN
    assert _source(mine, "cell-12") == DEMO_EDIT  # edited by the learner: kept, and reported as behind the release
    assert _source(mine, "cell-01") == corrections["cell-01"]
    assert _source(mine, "check_remaining") == corrections["check_remaining"]
    assert [c["id"] for c in _read(mine)["cells"]] == [c["id"] for c in _read(course / "lessons" / NOTEBOOK)["cells"]]
    assert done.report.kept_behind == ("cell-12",) and set(done.report.updated) == {"cell-01", "check_remaining"}
    assert done.backup == course / "workspace" / "backups" / "2026-12-01-093000" / NOTEBOOK
    assert done.backup.read_bytes() == old
    assert {p: b for p, b in _bytes(course / "workspace").items() if p in others} == others
    assert pending_updates(course) == [] and update_workspace(course) == []


def test_an_unreadable_notebook_stops_the_update_with_nothing_changed(course):
    """A workspace notebook that is not valid JSON makes the update raise WorkspaceError naming it; nothing written."""
    _correct_release(course)
    (course / "workspace" / NOTEBOOK).write_text('{"cells": [', encoding="utf-8")
    before = _bytes(course / "workspace")
    with pytest.raises(WorkspaceError, match="remaining.ipynb 不是能读的笔记本"):
        update_workspace(course)
    assert _bytes(course / "workspace") == before


def _workspace_before_manifests(root: Path) -> Path:
    """A workspace made the way `make lab` made it before manifests: plain copies, no record."""
    for lesson in notebooks(root / "lessons"):
        destination = root / "workspace" / lesson.relative_to(root / "lessons")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lesson, destination)
    return root / "workspace"


def test_a_copy_made_before_manifests_with_only_answers_is_recorded_and_gets_later_corrections(tmp_path):
    """An unrecorded notebook differing from the release only in its answers is recorded: later corrections reach it."""
    root = tmp_path / "course"
    shutil.copytree(LESSONS, root / "lessons")
    workspace = _workspace_before_manifests(root)
    _edit(workspace / NOTEBOOK, {"remaining": ANSWER})
    assert prepare_workspace(root) == [] and pending_updates(root) == []
    corrections = _correct_release(root)
    update_workspace(root)
    assert _source(workspace / NOTEBOOK, "cell-01") == corrections["cell-01"]
    assert _source(workspace / NOTEBOOK, "remaining") == ANSWER


def test_a_copy_made_before_manifests_with_other_edits_is_updated_conservatively(tmp_path):
    """An unrecorded notebook with an edited demo is pending, unrecorded; cells differing from the release are kept."""
    root = tmp_path / "course"
    shutil.copytree(LESSONS, root / "lessons")
    workspace = _workspace_before_manifests(root)
    _edit(workspace / NOTEBOOK, {"remaining": ANSWER, "cell-12": DEMO_EDIT})
    old_narrative = _source(workspace / NOTEBOOK, "cell-01")
    _correct_release(root)
    assert pending_updates(root) == [Pending(NOTEBOOK, recorded=False)]
    [done] = update_workspace(root)
    mine = workspace / NOTEBOOK
    assert _source(mine, "cell-12") == DEMO_EDIT and _source(mine, "remaining") == ANSWER
    assert _source(mine, "cell-01") == old_narrative  # no record: it cannot be told from an edit, so it is kept
    assert _source(mine, "cell-02-note") == "新增的说明" and done.report.added == ("cell-02-note",)
    assert pending_updates(root) == []


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_copy_made_before_manifests_in_a_git_checkout_is_merged_against_the_release_it_came_from(tmp_path):
    """In a git checkout, an unrecorded copy is merged against its release found in history: untouched cells update."""
    root = tmp_path / "course"
    shutil.copytree(LESSONS, root / "lessons")
    _git(root, "init", "-q")
    _git(root, "add", "lessons")
    _git(root, "commit", "-q", "-m", "release 1")
    workspace = _workspace_before_manifests(root)
    _edit(workspace / NOTEBOOK, {"remaining": ANSWER, "cell-12": DEMO_EDIT})
    corrections = _correct_release(root)
    _git(root, "commit", "-q", "-am", "release 2")
    assert pending_updates(root) == [Pending(NOTEBOOK, recorded=False, from_history=True)]
    [done] = update_workspace(root)
    mine = workspace / NOTEBOOK
    assert _source(mine, "cell-01") == corrections["cell-01"]
    assert _source(mine, "check_remaining") == corrections["check_remaining"]
    assert _source(mine, "cell-12") == DEMO_EDIT and _source(mine, "remaining") == ANSWER
    assert done.from_history and done.report.kept_behind == ("cell-12",) and done.report.added == ("cell-02-note",)


def test_a_damaged_manifest_is_one_clear_error(course):
    """A manifest that is not JSON makes the workspace operations raise WorkspaceError naming it."""
    (course / "workspace" / ".lessons-manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(WorkspaceError, match=r"\.lessons-manifest\.json 不是有效的版本记录"):
        pending_updates(course)
