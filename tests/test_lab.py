"""The learner's JupyterLab (`make lab`) serves workspace/ and none of the instructor's course tools."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from ctx_course.lab import LEARNER_CONFIG, lab_command

from conftest import LESSONS, REPO, notebooks
from labserver import copy_course, start_learner_lab

pytestmark = pytest.mark.heavy  # runs notebooks or starts a server: scheduled first

NBGRADER_PLUGINS_OFF = {
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:menu",
}


def _tree(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course (config, lessons, solutions) whose learner's lab is running."""
    root = copy_course(tmp_path_factory.mktemp("course"))
    before = _tree(root)
    server = start_learner_lab(root, tmp_path_factory.mktemp("log") / "lab.log")
    yield root, server, before
    server.stop()


def test_makefile_and_conda_instructions_start_the_lab_through_ctx_course():
    """`make lab` and the README's conda line both run `python -m ctx_course lab`."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^lab: .*\n\t(.*)$", makefile, flags=re.M).group(1)
    assert "python -m ctx_course lab" in recipe and "jupyter lab" not in recipe
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    conda = next(line for line in readme.splitlines() if "conda activate ctx-workbook" in line)
    assert "python -m ctx_course lab" in conda and "jupyter lab workspace" not in readme


def test_lab_command_passes_options_through_and_puts_the_learner_config_first(tmp_path):
    """Extra options reach JupyterLab unchanged; the learner's config folder leads JUPYTER_CONFIG_PATH."""
    argv, env = lab_command(tmp_path, ["--port", "8890", "--no-browser", "--ip=0.0.0.0"])
    assert argv[1:3] == ["-m", "jupyterlab"] and argv[-4:] == ["--port", "8890", "--no-browser", "--ip=0.0.0.0"]
    assert f"--ServerApp.root_dir={tmp_path.resolve()}" in argv
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(LEARNER_CONFIG)


def test_lab_command_rejects_a_missing_workspace(tmp_path):
    """A workspace folder that does not exist raises ValueError naming `workspace`."""
    with pytest.raises(ValueError, match="workspace must be an existing folder"):
        lab_command(tmp_path / "nope")


def test_lab_serves_the_workspace(course):
    """The server's root is workspace/: its folders are the released assignments, and it runs there."""
    root, server, _ = course
    listing = server.get_json("api/contents")
    lessons = sorted(p.name for p in LESSONS.iterdir() if p.is_dir())
    assert sorted(item["name"] for item in listing["content"]) == lessons
    first = notebooks(LESSONS)[0].relative_to(LESSONS).as_posix()
    assert server.get_json(f"api/contents/{first}?content=0")["type"] == "notebook"
    assert server.get("api/contents/nbgrader_config.py")[0] == 404
    if Path("/proc").is_dir():
        assert Path(os.readlink(f"/proc/{server.process.pid}/cwd")) == (root / "workspace").resolve()


def test_formgrader_assignment_and_course_lists_are_off(course):
    """/formgrader, /assignments and /formgraders answer 404; the lab page disables their plugins and the menu."""
    _, server, _ = course
    for path in ("formgrader", "formgrader/manage_assignments", "assignments", "formgraders"):
        assert server.get(path)[0] == 404, path
    status, page = server.get("lab")
    assert status == 200
    config = json.loads(re.search(rb'id="jupyter-config-data"[^>]*>(.*?)</script>', page, flags=re.S).group(1))
    assert NBGRADER_PLUGINS_OFF <= set(config["disabledExtensions"])
    assert "@jupyter/nbgrader:validate-assignment" not in config["disabledExtensions"]


def test_validate_still_works(course):
    """POST /assignments/validate validates a workspace notebook (the untouched release fails its checks)."""
    _, server, _ = course
    path = notebooks(LESSONS)[0].relative_to(LESSONS).as_posix()
    status, body = server.post("assignments/validate", {"path": path})
    assert status == 200
    result = json.loads(body)
    assert result["success"] is True and result["value"].get("failed")


def test_lab_writes_nothing_outside_the_workspace(course):
    """After the lab was used (listing, validate, formgrader URLs), only workspace/ is new: no grading/."""
    root, server, before = course
    server.get("formgrader")
    server.post("assignments/validate", {"path": notebooks(LESSONS)[-1].relative_to(LESSONS).as_posix()})
    new = {p for p in _tree(root) - before if p.parts[0] != "workspace"}
    assert new == set() and not (root / "grading").exists()


def test_cli_prepares_the_workspace_and_hands_every_other_option_to_jupyterlab(tmp_path, monkeypatch):
    """`python -m ctx_course lab --port 8890 --no-browser --ip 127.0.0.1` copies the lessons, then passes
    those options on in order."""
    from ctx_course import cli

    shutil.copytree(LESSONS, tmp_path / "lessons")
    calls = []
    monkeypatch.setattr(cli, "exec_lab", lambda root, extra: calls.append((root, list(extra))))
    assert cli.main(["lab", "--root", str(tmp_path), "--port", "8890", "--no-browser", "--ip", "127.0.0.1"]) == 0
    assert calls == [(str(tmp_path), ["--port", "8890", "--no-browser", "--ip", "127.0.0.1"])]
    assert len(notebooks(tmp_path / "workspace")) == len(notebooks(LESSONS))


def test_other_commands_still_reject_unknown_options(capsys):
    """An option no command knows (outside `lab`) is an error, exit status 2."""
    from ctx_course import cli

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["release", "--port", "8890"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --port 8890" in capsys.readouterr().err
