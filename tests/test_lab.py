"""The learner's JupyterLab (`make lab`) serves workspace/ and none of the instructor's course tools.

The English edition (`make lab LANG=en`) serves workspace-en/, a copy of lessons-en/, in English.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from ctx_course.learner.lab import LEARNER_CONFIG, lab_command

from conftest import LESSONS, REPO, IpcBlockingKernelManager, notebooks
from labserver import copy_course, start_learner_lab

pytestmark = pytest.mark.heavy  # runs notebooks or starts a server: scheduled first

NBGRADER_PLUGINS_OFF = {
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:menu",
}


TRANSLATION = "@jupyterlab/translation-extension:plugin"
NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def _tree(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course (config, lessons, solutions) whose learner's lab is running."""
    root = copy_course(tmp_path_factory.mktemp("course"))
    before = _tree(root)
    log = tmp_path_factory.mktemp("log")
    # The learner's own JupyterLab settings (what Settings writes) go to a folder of the test's.
    env = {"JUPYTERLAB_SETTINGS_DIR": str(log / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(log / "workspaces")}
    server = start_learner_lab(root, log / "lab.log", env=env)
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
    """The server's root is workspace/: its folders are the released assignments, beside the Chinese glossary and
    the start page, and it runs there."""
    root, server, _ = course
    listing = server.get_json("api/contents")
    lessons = sorted([p.name for p in LESSONS.iterdir() if p.is_dir()] + ["glossary.md", "start-here.ipynb"])
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
    monkeypatch.setattr(cli, "exec_lab", lambda root, extra, language="zh_CN": calls.append((root, list(extra))))
    assert cli.main(["lab", "--root", str(tmp_path), "--port", "8890", "--no-browser", "--ip", "127.0.0.1"]) == 0
    assert calls == [(str(tmp_path), ["--port", "8890", "--no-browser", "--ip", "127.0.0.1"])]
    assert len(notebooks(tmp_path / "workspace")) == len(notebooks(LESSONS))


def test_other_commands_still_reject_unknown_options(capsys):
    """An option no command knows (outside `lab`) is an error, exit status 2."""
    from ctx_course import cli

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["release", "--port", "8890"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --port 8890" in capsys.readouterr().err


def test_course_extra_installs_the_chinese_language_pack():
    """The `course` extra (what `make lab` installs) asks for JupyterLab's Simplified Chinese language pack."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower() for r in project["optional-dependencies"]["course"]]
    assert "jupyterlab-language-pack-zh-cn" in names


def test_lab_defaults_to_simplified_chinese_and_serves_its_translations(course):
    """The lab's default language is zh_CN and the server has the zh_CN translations of JupyterLab itself."""
    _, server, _ = course
    schema = server.get_json(f"lab/api/settings/{TRANSLATION}")["schema"]
    assert schema["properties"]["locale"]["default"] == "zh_CN"
    languages = server.get_json("lab/api/translations/")["data"]
    assert "zh_CN" in languages
    strings = server.get_json("lab/api/translations/zh_CN")["data"]["jupyterlab"]
    assert strings["menu\x04File"] == ["文件"]


def test_jupyter_news_and_update_checks_are_off(course):
    """The lab never asks about Jupyter news nor fetches it or update checks from the network by default."""
    _, server, _ = course
    properties = server.get_json(f"lab/api/settings/{NOTIFICATION}")["schema"]["properties"]
    assert properties["fetchNews"]["default"] == "false"
    assert properties["checkForUpdates"]["default"] is False


def test_learner_can_switch_the_language_back_in_settings(course):
    """Chinese is a default, not a lock: a language the learner picks in Settings is saved and read back."""
    _, server, _ = course
    status, body = server.put_json(f"lab/api/settings/{TRANSLATION}", {"raw": json.dumps({"locale": "en"})})
    assert status == 204, body[:300]
    saved = server.get_json(f"lab/api/settings/{TRANSLATION}")
    assert saved["settings"]["locale"] == "en" and saved["schema"]["properties"]["locale"]["default"] == "zh_CN"
    server.put_json(f"lab/api/settings/{TRANSLATION}", {"raw": "{}"})


def _correct(path: Path, cell_id: str, extra: str) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["id"] == cell_id:
            cell["source"] = "".join(cell["source"]) + extra
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def started(tmp_path, monkeypatch):
    """A course whose learner started (a workspace with an answer), and `make lab` that does not start a server."""
    from ctx_course import cli

    shutil.copytree(LESSONS, tmp_path / "lessons")
    monkeypatch.setattr(cli, "exec_lab", lambda root, extra, language="zh_CN": None)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["lab"]) == 0
    _correct(tmp_path / "workspace" / "02-remaining" / "remaining.ipynb", "remaining", "\n# 我的答案")
    return tmp_path


def test_lab_lists_each_changed_notebook_on_its_own_line_with_the_update_command(started, capsys):
    """No notice for an unchanged release; after two notebooks are corrected, `make lab` names each on a
    line and the command."""
    from ctx_course import cli

    capsys.readouterr()
    assert cli.main(["lab"]) == 0
    assert "课程有更新" not in capsys.readouterr().out
    changed = ["02-remaining/remaining.ipynb", "06-strategies/strategies.ipynb"]
    for name in changed:
        _correct(started / "lessons" / name, "cell-01", "\n更正")
    capsys.readouterr()
    assert cli.main(["lab"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "课程有更新：下面 2 本笔记本在你复制之后改过了。"
    assert lines[1:3] == [f"  {name}" for name in changed]
    assert "make update" in lines[3] and "starting JupyterLab" in lines[4]


def test_update_command_keeps_the_answer_and_brings_the_correction(started, capsys):
    """`python -m ctx_course update` takes the corrected narrative cell, keeps the answer, and names the backup."""
    from ctx_course import cli

    mine = started / "workspace" / "02-remaining" / "remaining.ipynb"
    _correct(started / "lessons" / "02-remaining" / "remaining.ipynb", "cell-01", "\n更正")
    capsys.readouterr()
    assert cli.main(["update"]) == 0
    out = capsys.readouterr().out
    cells = {cell["id"]: "".join(cell["source"]) for cell in json.loads(mine.read_text(encoding="utf-8"))["cells"]}
    assert cells["cell-01"].endswith("\n更正") and cells["remaining"].endswith("\n# 我的答案")
    assert out.startswith("02-remaining/remaining.ipynb：换成新版 1 格，新增 0 格，去掉 0 格；"
                          "原样保留你的答案 3 格")
    assert "旧文件备份在 workspace/backups/" in out


def test_update_command_on_a_broken_notebook_prints_one_error_and_changes_nothing(started, capsys):
    """A broken workspace notebook: exit status 2, one `error:` line naming it on stderr, no file changed."""
    from ctx_course import cli

    _correct(started / "lessons" / "02-remaining" / "remaining.ipynb", "cell-01", "\n更正")
    mine = started / "workspace" / "02-remaining" / "remaining.ipynb"
    mine.write_text("not a notebook", encoding="utf-8")
    before = {p: p.read_bytes() for p in (started / "workspace").rglob("*") if p.is_file()}
    capsys.readouterr()
    assert cli.main(["update"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: workspace/02-remaining/remaining.ipynb 不是能读的笔记本")
    assert {p: p.read_bytes() for p in (started / "workspace").rglob("*") if p.is_file()} == before


def test_make_update_runs_the_update_command():
    """`make update` runs `python -m ctx_course update`."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^update: .*\n\t(.*)$", makefile, flags=re.M).group(1)
    assert "python -m ctx_course update" in recipe


# The English edition: `python -m ctx_course lab --lang en` (`make lab LANG=en`) copies lessons-en/
# into workspace-en/ and starts JupyterLab there in English, its kernels with CTX_LANG=en.

LESSONS_EN = REPO / "lessons-en"
ENGLISH_CONFIG = LEARNER_CONFIG / "en"


def _config_path(env: dict[str, str]) -> list[str]:
    return env["JUPYTER_CONFIG_PATH"].split(os.pathsep)


def test_lab_command_in_english_puts_the_english_config_first_and_sets_ctx_lang(tmp_path, monkeypatch):
    """`language="en"`: jupyter_config/en, then jupyter_config, then the inherited path; CTX_LANG=en."""
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/somewhere/else")
    monkeypatch.setenv("CTX_LANG", "zh_CN")
    argv, env = lab_command(tmp_path, ["--no-browser"], language="en")
    assert _config_path(env) == [str(ENGLISH_CONFIG), str(LEARNER_CONFIG), "/somewhere/else"]
    assert env["CTX_LANG"] == "en"
    assert argv[1:3] == ["-m", "jupyterlab"] and argv[-1] == "--no-browser"
    assert (ENGLISH_CONFIG / "labconfig" / "default_setting_overrides.json").is_file()


def test_lab_command_in_chinese_leaves_the_english_config_out(tmp_path, monkeypatch):
    """The default edition (zh_CN) has no English config folder on the path, and its kernels get CTX_LANG=zh_CN
    even when the environment says en."""
    monkeypatch.setenv("CTX_LANG", "en")
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    _, env = lab_command(tmp_path)
    assert _config_path(env) == [str(LEARNER_CONFIG)] and env["CTX_LANG"] == "zh_CN"
    _, env = lab_command(tmp_path, language="en_US.UTF-8")  # a locale name stands for its edition
    assert _config_path(env)[0] == str(ENGLISH_CONFIG) and env["CTX_LANG"] == "en"


@pytest.mark.parametrize("language", ["fr", "", "english"])
def test_lab_command_and_exec_lab_reject_an_unknown_language(tmp_path, monkeypatch, language):
    """A language that is no edition raises ValueError naming `lang`, before anything is started."""
    from ctx_course.learner import lab

    monkeypatch.setattr(lab.os, "execve", lambda *args: pytest.fail("exec_lab started a server"))
    (tmp_path / "workspace").mkdir()
    with pytest.raises(ValueError, match=r"^lang must be one of zh_CN, en \(got "):
        lab_command(tmp_path, language=language)
    with pytest.raises(ValueError, match=r"^lang must be one of zh_CN, en \(got "):
        lab.exec_lab(tmp_path, language=language)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_cli_lab_in_english_prepares_workspace_en_and_leaves_workspace_alone(tmp_path, monkeypatch, capsys):
    """`python -m ctx_course lab --lang en` copies lessons-en/ into workspace-en/, starts the English lab
    there with the other options, and changes nothing in the Chinese workspace/."""
    from ctx_course import cli

    shutil.copytree(LESSONS, tmp_path / "lessons")
    shutil.copytree(LESSONS_EN, tmp_path / "lessons-en")
    calls = []
    monkeypatch.setattr(cli, "exec_lab",
                        lambda root, extra, language="zh_CN": calls.append((root, list(extra), language)))
    assert cli.main(["lab", "--root", str(tmp_path)]) == 0  # the learner already works in Chinese
    _correct(tmp_path / "workspace" / "02-remaining" / "remaining.ipynb", "remaining", "\n# 我的答案")
    chinese = _files(tmp_path / "workspace")
    capsys.readouterr()
    assert cli.main(["lab", "--root", str(tmp_path), "--lang", "en", "--no-browser", "--port", "8890"]) == 0
    assert calls[-1] == (str(tmp_path), ["--no-browser", "--port", "8890"], "en")
    english = notebooks(tmp_path / "workspace-en")
    assert [p.relative_to(tmp_path / "workspace-en") for p in english] == [
        p.relative_to(LESSONS_EN) for p in notebooks(LESSONS_EN)]
    assert all([c["source"] for c in json.loads(p.read_text(encoding="utf-8"))["cells"]] == [
        c["source"] for c in json.loads((LESSONS_EN / p.relative_to(tmp_path / "workspace-en")).read_text(
            encoding="utf-8"))["cells"]] for p in english)
    assert all(json.loads(p.read_text(encoding="utf-8"))["metadata"].get("ctx_edition") == "en" for p in english)
    assert _files(tmp_path / "workspace") == chinese
    out = capsys.readouterr().out
    assert f"workspace-en/ holds your copies of the lessons ({len(english)} new)" in out
    assert cli.main(["lab", "--root", str(tmp_path), "--lang", "en"]) == 0  # a second start copies nothing
    assert "(0 new)" in capsys.readouterr().out and _files(tmp_path / "workspace") == chinese


def test_cli_lab_with_a_bad_language_or_no_english_release_prints_one_error(tmp_path, monkeypatch, capsys):
    """`--lang fr`, or `--lang en` on a course without lessons-en/: exit status 2, one `error:` line, no server."""
    from ctx_course import cli

    shutil.copytree(LESSONS, tmp_path / "lessons")
    monkeypatch.setattr(cli, "exec_lab", lambda *args, **kwargs: pytest.fail("the lab was started"))
    capsys.readouterr()
    assert cli.main(["lab", "--root", str(tmp_path), "--lang", "fr"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: --lang must be one of zh_CN, en (got 'fr')")
    assert cli.main(["lab", "--root", str(tmp_path), "--lang", "en"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "lessons-en/" in err[0]
    assert not (tmp_path / "workspace-en").exists() and not (tmp_path / "workspace").exists()


def _make_dry_run(*arguments: str, lang: str | None = None) -> str:
    """The recipe line of `make -n <arguments>` that runs ctx_course; ``lang`` is LANG in make's environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LANG")}
    if lang is not None:
        env["LANG"] = lang
    done = subprocess.run(["make", "-n", "-C", str(REPO), *arguments], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    (line,) = [line for line in done.stdout.splitlines() if "python -m ctx_course" in line]
    return line


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("target", ["lab", "update"])
def test_make_lang_en_on_the_command_line_picks_the_english_edition(target):
    """`make -n lab LANG=en` runs `python -m ctx_course lab --lang en` (and `update` the same)."""
    assert f"python -m ctx_course {target} --lang en" in _make_dry_run(target, "LANG=en")
    assert f"python -m ctx_course {target} --lang en" in _make_dry_run(target, "LANG=en", lang="zh_CN.UTF-8")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("target", ["lab", "update"])
@pytest.mark.parametrize("lang", ["en_US.UTF-8", "en", None])
def test_plain_make_stays_chinese_whatever_the_locale(target, lang):
    """Plain `make -n lab` runs `--lang zh_CN`, even with LANG=en_US.UTF-8 (a locale) in the environment."""
    line = _make_dry_run(target, lang=lang)
    assert f"python -m ctx_course {target} --lang zh_CN" in line and "--lang en" not in line


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lab_lang_en_still_passes_lab_args():
    """`make -n lab LANG=en LAB_ARGS="--port 8890"`: the edition option first, then the learner's options."""
    line = _make_dry_run("lab", "LANG=en", "LAB_ARGS=--port 8890 --no-browser")
    assert line.rstrip().endswith("python -m ctx_course lab --lang en --port 8890 --no-browser")


def _environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


@pytest.fixture(scope="module")
def english_course(tmp_path_factory):
    """A copy of the course with both releases whose learner's lab runs in English (`make lab LANG=en`)."""
    root = copy_course(tmp_path_factory.mktemp("course-en"), ("lessons", "lessons-en", "solutions"))
    log = tmp_path_factory.mktemp("log-en")
    env = {"JUPYTERLAB_SETTINGS_DIR": str(log / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(log / "workspaces")}
    server = start_learner_lab(root, log / "lab.log", env=env, language="en")
    yield root, server
    server.stop()


def test_english_lab_defaults_to_english(english_course):
    """The English lab's default interface language (the translation extension's locale) is en, not zh_CN."""
    _, server = english_course
    schema = server.get_json(f"lab/api/settings/{TRANSLATION}")["schema"]
    assert schema["properties"]["locale"]["default"] == "en"
    assert server.get_json(f"lab/api/settings/{TRANSLATION}")["settings"].get("locale", "en") == "en"


def test_english_lab_serves_workspace_en(english_course):
    """The English lab's root is workspace-en/: its folders are those of lessons-en/, beside the English glossary
    alone and the start page, its notebooks the English edition; it runs there, and workspace/ is not made."""
    root, server = english_course
    listing = server.get_json("api/contents")
    lessons = sorted([p.name for p in LESSONS_EN.iterdir() if p.is_dir()] + ["glossary.en.md", "start-here.ipynb"])
    assert sorted(item["name"] for item in listing["content"]) == lessons
    first = notebooks(LESSONS_EN)[0].relative_to(LESSONS_EN).as_posix()
    model = server.get_json(f"api/contents/{first}")
    assert model["type"] == "notebook" and model["content"]["metadata"]["ctx_edition"] == "en"
    assert server.get("api/contents/nbgrader_config.py")[0] == 404
    assert not (root / "workspace").exists()
    if Path("/proc").is_dir():
        assert Path(os.readlink(f"/proc/{server.process.pid}/cwd")) == (root / "workspace-en").resolve()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the server's environment in /proc")
def test_each_lab_gives_its_kernels_the_language_of_its_edition(english_course, course):
    """The English server (whose kernels inherit its environment) runs with CTX_LANG=en, the Chinese one zh_CN."""
    assert _environment_of(english_course[1].process.pid)["CTX_LANG"] == "en"
    assert _environment_of(course[1].process.pid)["CTX_LANG"] == "zh_CN"


def test_english_lab_keeps_the_instructor_tools_off(english_course):
    """The learner's config is still on the English lab's path: Formgrader 404, nbgrader's plugins disabled."""
    _, server = english_course
    assert server.get("formgrader")[0] == 404
    status, page = server.get("lab")
    assert status == 200
    config = json.loads(re.search(rb'id="jupyter-config-data"[^>]*>(.*?)</script>', page, flags=re.S).group(1))
    assert NBGRADER_PLUGINS_OFF <= set(config["disabledExtensions"])


def test_the_lab_opens_on_the_start_page(course):
    """The lab's front page is the workspace's start page (the course map), not the Launcher: the server sends
    its address to /lab/tree/start-here.ipynb, and the page is there."""
    _, server, _ = course
    with urllib.request.urlopen(server.url(""), timeout=30) as response:
        assert response.status == 200
        assert urllib.parse.urlparse(response.geturl()).path == "/lab/tree/start-here.ipynb"
    assert server.get_json("api/contents/start-here.ipynb?content=0")["type"] == "notebook"


def test_lab_command_leaves_a_default_url_the_caller_names(tmp_path):
    """`make lab LAB_ARGS=--LabApp.default_url=/lab` keeps the caller's front page: the start page is not added."""
    argv, _ = lab_command(tmp_path, ["--LabApp.default_url=/lab"])
    assert [arg for arg in argv if "default_url" in arg] == ["--LabApp.default_url=/lab"]
    argv, _ = lab_command(tmp_path)
    assert "--LabApp.default_url=/lab/tree/start-here.ipynb" in argv


def test_opening_a_workspace_notebook_changes_none_of_its_metadata(course):
    """The python3 kernel the lab starts (the lab's interpreter and Jupyter paths) reports exactly the
    language_info and kernel spec every notebook of the workspace stores. JupyterLab writes the kernel's into the
    notebook only where they differ, so opening a notebook does not mark it modified. A release notebook opened
    as it is would be (it stores no version)."""
    root, _, _ = course
    workspace = root / "workspace"
    _, env = lab_command(workspace)
    manager = IpcBlockingKernelManager(kernel_name="python3")
    manager.start_kernel(env=env, cwd=str(workspace))
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        info = client.kernel_info(reply=True, timeout=30)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    spec = {"name": "python3", "display_name": manager.kernel_spec.display_name,
            "language": manager.kernel_spec.language}
    opened = [*notebooks(workspace), workspace / "start-here.ipynb"]
    assert len(opened) == len(notebooks(LESSONS)) + 1
    for path in opened:
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert metadata["language_info"] == info, path
        assert metadata["kernelspec"] == spec, path
    release = json.loads(notebooks(LESSONS)[0].read_text(encoding="utf-8"))["metadata"]["language_info"]
    assert release != info and release == {key: value for key, value in info.items() if key != "version"}
