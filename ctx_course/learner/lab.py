"""Start JupyterLab for a learner: in ``workspace/``, without the instructor's course tools.

The repository root is an nbgrader course folder (``nbgrader_config.py``). A server started there
would hand the learner the Formgrader with every assignment, create ``grading/gradebook.db`` in the
learner's checkout, and complain about nbgrader's exchange in "Assignment List". The learner's server
therefore runs with ``workspace/`` as its working folder and root (no ``nbgrader_config.py`` is
reachable from there), and with ``jupyter_config/`` first on ``JUPYTER_CONFIG_PATH``, a Jupyter
configuration folder that turns the Formgrader, Assignment List and Course List off (server
extensions and JupyterLab plugins alike) and keeps the Validate button. The lab opens on the
workspace's start page (``course_map.START_PAGE``: the course map and the learner's progress)
rather than on the Launcher, unless the caller names another ``default_url``.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ctx_reference.i18n import ENVIRONMENT, normalize

from .course_map import START_PAGE
from .workspace import WORKSPACES

LEARNER_CONFIG = Path(__file__).with_name("jupyter_config")
"""Jupyter configuration folder of the learner's server (see its README.md)."""
EDITION_CONFIG = {"zh_CN": None, "en": LEARNER_CONFIG / "en"}
"""A configuration folder put before ``LEARNER_CONFIG`` for an edition: the English one sets JupyterLab's language."""


def lab_command(
    workspace: str | os.PathLike, extra_args: Sequence[str] = (), *, language: str = "zh_CN"
) -> tuple[list[str], dict[str, str]]:
    """Return the command line and environment that start the learner's JupyterLab in ``workspace``.

    ``extra_args`` go to JupyterLab unchanged (``--port 8890``, ``--no-browser``, ``--ip 0.0.0.0``).
    ``language`` is the edition: its kernels get ``CTX_LANG`` (the messages of ``ctx_reference``) and
    JupyterLab its interface language (``--lang en``: English). The lab opens the start page first.
    Example: ``lab_command("workspace", ["--no-browser"])[0][-1] == "--no-browser"``.
    """
    language = normalize(language, argument="lang")
    workspace = Path(workspace).resolve()
    if not workspace.is_dir():
        raise ValueError(f"workspace must be an existing folder (got {str(workspace)!r})")
    named = any("default_url" in arg for arg in extra_args)
    opening = [] if named else [f"--LabApp.default_url=/lab/tree/{START_PAGE}"]
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={workspace}", *opening, *extra_args]
    env = dict(os.environ)
    inherited = [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
    ours = [str(folder) for folder in (EDITION_CONFIG[language], LEARNER_CONFIG) if folder is not None]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join([*ours, *inherited])
    env[ENVIRONMENT] = language
    return argv, env


def exec_lab(root: str | os.PathLike = ".", extra_args: Sequence[str] = (), *, language: str = "zh_CN") -> None:
    """Replace this process with the learner's JupyterLab, working in the edition's workspace under ``root``.

    The caller prepares the workspace first (``prepare_workspace``). Does not return.
    """
    workspace = Path(root).resolve() / WORKSPACES[normalize(language, argument="lang")]
    argv, env = lab_command(workspace, list(extra_args), language=language)
    sys.stdout.flush()
    os.chdir(workspace)
    os.execve(argv[0], argv, env)
