"""Fixtures of the hub suite: a real JupyterHub on 127.0.0.1 for a class of real OS users.

The hub is started the way docs/jupyterhub.md, "Running the course on JupyterHub", starts it:
its commands are read from that page (``readme_blocks``), the settings it exports are given
temporary values (a course copy, an exchange root, free ports), and ``jupyterhub -f`` loads the
class's copy of the repository's ``hub/jupyterhub_config.py`` through a small test configuration that adds one
service with an API token for the test to drive the hub's REST API. Everything the hub started
is stopped at the end, also when a test fails.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from classroom import Classroom, open_classroom

from conftest import REPO
from labserver import free_port

GUIDE = REPO / "docs" / "jupyterhub.md"  # the page whose commands the suite runs
HUB_START_TIMEOUT = 90
SERVER_START_TIMEOUT = 180
SUITE_SERVICE = "course-suite"
PASSWORD = secrets.token_hex(8)


def readme_blocks() -> dict[str, list[str]]:
    """Return the guide's shell blocks by their first line (a comment), as lists of command lines."""
    section = GUIDE.read_text(encoding="utf-8")
    blocks = {}
    for body in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        lines = [line for line in body.splitlines() if line.strip()]
        title = lines[0].lstrip("# ").strip()
        blocks[title] = [line.split("  #")[0].strip() for line in lines[1:] if not line.startswith("#")]
    return blocks


def exported(lines: list[str]) -> dict[str, str]:
    """The ``export NAME=value`` settings of shell lines."""
    settings = {}
    for line in lines:
        words = shlex.split(line)
        if words and words[0] == "export":
            settings.update(word.split("=", 1) for word in words[1:])
    return settings


@dataclass
class Hub:
    """A running JupyterHub: its process, address, the test's API token and the class it serves."""

    process: subprocess.Popen
    port: int
    token: str
    room: Classroom
    settings: dict[str, str]
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, *, data: dict | None = None, body: bytes | None = None,
                token: str | None = None, form: bool = False, timeout: float = 120) -> tuple[int, bytes]:
        """Send a request to the hub (or a server behind it) with a token; return status and body."""
        headers = {"Authorization": f"token {token or self.token}"}
        if data is not None:
            if form:
                body = urllib.parse.urlencode(data).encode()
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            else:
                body = json.dumps(data).encode()
                headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{self.base}/{path.lstrip('/')}", data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def json(self, method: str, path: str, **kwargs):
        status, body = self.request(method, path, **kwargs)
        assert 200 <= status < 300, (method, path, status, body[:500])
        return json.loads(body) if body else None

    def start_server(self, user: str) -> None:
        """Start ``user``'s server through the REST API and wait until the hub says it is ready."""
        status, body = self.request("POST", f"hub/api/users/{user}/server")
        assert status in (201, 202, 400), (status, body[:300])  # 400: already running
        self.wait_server(user)

    def wait_server(self, user: str) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            model = self.json("GET", f"hub/api/users/{user}")
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                return
            self.check_alive()
            time.sleep(0.5)
        raise AssertionError(f"{user}'s server was not ready after {SERVER_START_TIMEOUT} s:\n{self.tail()}")

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"jupyterhub exited with {self.process.returncode}:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Stop the hub (SIGTERM, as a service manager would): it stops every server, the service and the proxy."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def leftovers(hub: Hub) -> dict[str, list[str]]:
    """Processes the hub left: any process of the class's users, and the proxy by its API port."""
    found = {}
    for member in hub.room.members.values():
        done = subprocess.run(["pgrep", "-a", "-u", member.name], capture_output=True, text=True)
        if done.stdout.strip():
            found[member.name] = done.stdout.strip().splitlines()
    pattern = f"configurable-http-proxy.*--api-port {hub.settings['COURSE_PROXY_API_PORT']}"
    done = subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True, text=True)
    proxies = [line for line in done.stdout.strip().splitlines() if "pgrep" not in line]
    if proxies:
        found["configurable-http-proxy"] = proxies
    return found


def _kill_leftovers(hub: Hub) -> None:
    """Last resort after a failure: end the processes of this class's own users and this hub's proxy, by id."""
    for lines in leftovers(hub).values():
        for line in lines:
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


@pytest.fixture(scope="session")
def classroom():
    """The class (an instructor and two learners as real users), removed at the end."""
    if os.geteuid() != 0:
        pytest.skip("the hub suite needs root: JupyterHub's LocalProcessSpawner starts each learner's server as "
                    "that OS user, and the class's users are made with useradd")
    room = open_classroom(("ada", "ben"))
    try:
        yield room
    finally:
        room.close()


@pytest.fixture(scope="session")
def hub(classroom, tmp_path_factory):
    """JupyterHub started as docs/jupyterhub.md starts it, for ``classroom``; stopped at the end, also on failure."""
    room = classroom
    blocks = readme_blocks()
    start = blocks["start the hub"]
    command = shlex.split(next(line for line in start if "jupyterhub" in line and not line.startswith("export")))
    # the class's copy of the repository's hub/ (the learners' servers read learner/ beside it)
    config = room.base / command[command.index("-f") + 1]
    state = room.base / "hub-state"
    state.mkdir(mode=0o700)
    settings = {
        "COURSE_ROOT": str(room.course),
        "COURSE_GRADER": room["instructor"].name,
        "COURSE_INSTRUCTORS": room["instructor"].name,
        "COURSE_LEARNERS": ",".join([room["ada"].name, room["ben"].name]),
        "COURSE_ENGLISH_LEARNERS": room["ada"].name,  # ada works in the English edition
        "COURSE_EXCHANGE": str(room.exchange),
        "COURSE_HUB_STATE": str(state),
        "COURSE_HUB_PASSWORD": PASSWORD,
        "COURSE_HUB_PORT": str(free_port()),
        "COURSE_HUB_API_PORT": str(free_port()),
        "COURSE_PROXY_API_PORT": str(free_port()),
        "COURSE_FORMGRADER_PORT": str(free_port()),
    }
    assert set(exported(start)) <= set(settings), "the guide exports a setting the suite does not set"
    token = secrets.token_hex(24)
    test_config = state / "suite_config.py"
    test_config.write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(config)!r})  # noqa: F821\n"
        f"c.JupyterHub.services.append({{'name': {SUITE_SERVICE!r}, 'api_token': {token!r}}})\n"
        f"c.JupyterHub.load_roles.append({{'name': {SUITE_SERVICE!r}, 'services': [{SUITE_SERVICE!r}], 'scopes': "
        "['admin:users', 'admin:servers', 'access:servers', 'tokens', 'list:users', 'read:users', "
        "'list:services', 'read:services']})\n",
        encoding="utf-8",
    )
    env = {key: os.environ[key] for key in ("LANG", "LC_ALL", "TZ") if key in os.environ}
    env.update(settings, HOME=str(state), PATH=os.pathsep.join([str(room.bin), "/usr/local/bin", "/usr/bin", "/bin"]))
    log = state / "jupyterhub.log"
    handle = log.open("w")
    process = subprocess.Popen([str(room.python), "-m", "jupyterhub", "-f", str(test_config)], cwd=state, env=env,
                               stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = Hub(process, int(settings["COURSE_HUB_PORT"]), token, room, settings, log)
    try:
        deadline = time.monotonic() + HUB_START_TIMEOUT
        while True:
            status, _ = server.request("GET", "hub/api/", timeout=5) if _listening(server.port) else (0, b"")
            if status == 200:
                break
            server.check_alive()
            if time.monotonic() > deadline:
                raise AssertionError(f"the hub did not answer within {HUB_START_TIMEOUT} s:\n{server.tail()}")
            time.sleep(0.3)
        yield server
    finally:
        server.stop()
        _kill_leftovers(server)
        handle.close()


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0
