"""Start Jupyter servers for tests: the learner's lab exactly as `make lab` does, and the instructor's.

The learner's server is ``python -m ctx_course lab`` (the Makefile's command) with the options a test
needs passed through to JupyterLab: 127.0.0.1, a free port, a known token, no browser.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO

START_TIMEOUT = 120  # seconds for a server to answer /api/status
COURSE_FILES = ("nbgrader_config.py",)
COURSE_FOLDERS = ("lessons", "solutions")
SOLUTIONS_IN_WORKSPACE = "solutions"  # where the browser suite puts the model answers, inside workspace/


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def copy_course(target: Path, folders: tuple[str, ...] = COURSE_FOLDERS) -> Path:
    """Copy the course's config and ``folders`` of the repository into ``target``; return it."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        shutil.copy2(REPO / name, target / name)
    for name in folders:
        shutil.copytree(REPO / name, target / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return target


@dataclass
class Server:
    """A running Jupyter server: its process, address and token."""

    process: subprocess.Popen
    port: int
    token: str
    log: Path
    launched_at: float  # time.monotonic() at launch
    started_in: float | None = None  # seconds from launch to the first answer of /api/status

    def wait_ready(self) -> None:
        """Wait until the server answers /api/status; raise RuntimeError if it dies or takes too long."""
        deadline = self.launched_at + START_TIMEOUT
        while self.started_in is None:
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2):
                    self.started_in = time.monotonic() - self.launched_at  # an upper bound if waited late
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not answer within {START_TIMEOUT} s:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        separator = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{separator}token={self.token}"

    def get(self, path: str) -> tuple[int, bytes]:
        """GET ``path``; return the status and body (errors included)."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def get_json(self, path: str) -> object:
        status, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def post(self, path: str, data: dict[str, str]) -> tuple[int, bytes]:
        """POST form ``data`` to ``path`` (with the XSRF-free token header); return status and body."""
        body = urllib.parse.urlencode(data).encode()
        request = urllib.request.Request(self.url(path), data=body, method="POST",
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def put_json(self, path: str, data: object) -> tuple[int, bytes]:
        """PUT ``data`` as JSON to ``path`` (token header); return status and body."""
        request = urllib.request.Request(self.url(path), data=json.dumps(data).encode(), method="PUT",
                                         headers={"Authorization": f"token {self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def stop(self) -> None:
        """Stop the server (SIGINT twice, as Ctrl-C would; then kill) and its kernels."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            time.sleep(0.3)
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _spawn(argv: list[str], cwd: Path, port: int, token: str, log: Path, env: dict | None = None) -> Server:
    """Start a server process; do not wait for it (see ``Server.wait_ready``)."""
    handle = log.open("w")
    process = subprocess.Popen(argv, cwd=cwd, stdout=handle, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env)
    return Server(process, port, token, log, time.monotonic())


def _launch(argv: list[str], cwd: Path, port: int, token: str, log: Path, env: dict | None = None) -> Server:
    server = _spawn(argv, cwd, port, token, log, env)
    server.wait_ready()
    return server


def server_options(port: int, token: str) -> list[str]:
    """JupyterLab options of a test server: local, known port and token, no browser."""
    options = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        options.append("--allow-root")  # CI runs as root; JupyterLab refuses to otherwise
    return options


def start_learner_lab(root: Path, log: Path, extra: list[str] = (), env: dict[str, str] | None = None,
                      language: str | None = None) -> Server:
    """Start the learner's lab on the course at ``root`` the way `make lab` does (`python -m ctx_course lab`).

    ``extra`` options go to JupyterLab too, as `make lab LAB_ARGS=...` would pass them; ``env``
    adds environment variables (a test's own JupyterLab settings folder, say). ``language`` picks
    the edition as `make lab LANG=en` does (``--lang en``: lessons-en/ in workspace-en/, which
    ``root`` must then hold); without it the command gets no ``--lang`` (the Chinese edition).
    """
    port, token = free_port(), secrets.token_hex(16)
    edition = [] if language is None else ["--lang", language]
    argv = [sys.executable, "-m", "ctx_course", "lab", *edition, *server_options(port, token), *extra]
    return _launch(argv, root, port, token, log, {**os.environ, **(env or {})})


def start_formgrader(root: Path, log: Path, extra: list[str] = (), env: dict[str, str] | None = None,
                     wait: bool = True) -> Server:
    """Start the instructor's JupyterLab at the course root ``root``, as `make formgrader` does.

    With ``wait=False`` return at once; call ``wait_ready`` before using the server.
    """
    port, token = free_port(), secrets.token_hex(16)
    argv = [sys.executable, "-m", "jupyterlab", *server_options(port, token), *extra]
    env = {**os.environ, **(env or {})}  # nbgrader shells out to alembic, next to this interpreter
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    server = _spawn(argv, root, port, token, log, env)
    if wait:
        server.wait_ready()
    return server
