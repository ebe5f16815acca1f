"""The grading run's configuration: gradebook schema and engines, where the release goes, the preprocessors named."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.dbutil import ALEMBIC_DIR
from nbgrader.preprocessors import Execute
from traitlets.utils.importstring import import_item

from ctx_course.config import gradebook_schema_head, load_course_config, share_gradebook_engines
from ctx_course.grading.autograde import grading_config
from ctx_course.grading.steps.preprocessors import (
    AUTOGRADE_PREPROCESSORS,
    FEEDBACK_PREPROCESSORS,
    CapOutput,
    HideHiddenTests,
)
from ctx_course.sandbox.execute import PrelaunchedExecute
from ctx_course.sandbox.kernels import KernelPool

from conftest import REPO

# ---- configuration


def test_new_gradebooks_are_stamped_with_the_newest_schema_revision(tmp_path):
    """The revision read in process is the one no other migration of nbgrader's builds on, and a
    new gradebook carries it (nbgrader's own `alembic heads` subprocess gives the same)."""
    revisions, parents = set(), set()
    for script in Path(ALEMBIC_DIR, "versions").glob("*.py"):
        text = script.read_text(encoding="utf-8")
        revisions |= set(re.findall(r"^revision\s*=\s*['\"](\w+)['\"]", text, flags=re.M))
        parents |= set(re.findall(r"^down_revision\s*=\s*['\"](\w+)['\"]", text, flags=re.M))
    assert revisions - parents == {gradebook_schema_head()}
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(gradebook_schema_head(),)]


def test_gradebooks_of_one_database_share_an_engine_and_still_close(tmp_path):
    """Two gradebooks of one file use one engine; one closed, the other and a third still write and read."""
    share_gradebook_engines()  # what every path into nbgrader does (load_course_config)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    first, second = Gradebook(url), Gradebook(url)
    assert first.engine is second.engine
    first.add_student("ada")
    first.close()
    second.add_student("ben")
    second.close()
    with Gradebook(url) as third:
        assert sorted(s.id for s in third.students) == ["ada", "ben"]
    with Gradebook(f"sqlite:///{tmp_path / 'other.db'}") as other:
        assert other.engine is not third.engine and other.students == []


def test_grading_config_never_writes_the_release_into_lessons(tmp_path):
    """The grading run's release folder is <work>/release, the preprocessors are ours."""
    config = grading_config(REPO, work=tmp_path)
    assert config.CourseDirectory.release_directory == str(tmp_path.resolve() / "release")
    assert CapOutput in config.Autograde.autograde_preprocessors
    assert HideHiddenTests in config.GenerateFeedback.preprocessors


def test_nbgrader_config_names_the_preprocessors_the_grading_run_uses(tmp_path):
    """nbgrader_config.py configures exactly the grading run's preprocessors; in process, only
    step 1 differs: PrelaunchedExecute runs the notebooks in place of nbgrader's Execute."""
    configured = load_course_config(REPO)
    autograde = [import_item(name) for name in configured.Autograde.autograde_preprocessors]
    feedback = [import_item(name) for name in configured.GenerateFeedback.preprocessors]
    assert autograde == AUTOGRADE_PREPROCESSORS
    assert feedback == FEEDBACK_PREPROCESSORS

    in_process = grading_config(REPO, work=tmp_path, pool=KernelPool(tmp_path))
    steps = in_process.Autograde.autograde_preprocessors
    assert len(steps) == len(autograde)
    assert [(n, a, b) for n, (a, b) in enumerate(zip(autograde, steps)) if a is not b] == [
        (0, Execute, PrelaunchedExecute)
    ]
    assert in_process.GenerateFeedback.preprocessors == feedback
