"""JupyterHub configuration of a course hub for the context-engineering workbook (one machine).

Start it as root, from any folder, with the settings below in the environment
(``sudo -E jupyterhub -f hub/jupyterhub_config.py``; see the README, "Running the course on
JupyterHub"). Every person is an OS user of the machine (``useradd``); each learner's server runs
as that user (``LocalProcessSpawner``), so nbgrader's exchange sees who submitted what, and gets
the learner's configuration ``hub/learner/`` (Assignment List on, Formgrader off). The instructors'
group reaches the Formgrader, which runs as a hub service under the grader's account, in the course
folder, with ``hub/grader/`` (Formgrader on).

Settings (environment variables):

- ``COURSE_ROOT``: the course folder (a checkout of this repository), owned by ``COURSE_GRADER``.
- ``COURSE_GRADER``: the OS account the Formgrader runs as (it owns the gradebook), and so the grading
  run an instructor starts in its terminal: an unprivileged account; the hub refuses to start when it
  names root or no account (docs/sandbox.md, "Who grading runs as").
- ``COURSE_INSTRUCTORS``: hub users, comma-separated, who may open the Formgrader.
- ``COURSE_LEARNERS``: hub users, comma-separated; default: the ``id`` column of
  ``$COURSE_ROOT/grading/roster.csv``.
- ``COURSE_ENGLISH_LEARNERS``: the learners, comma-separated, who work in the English edition; also
  those whose ``edition`` column of the roster says ``en``. Their servers get ``COURSE_EDITION=en``,
  so the Assignment List fetches the English notebooks (``ctx_course/exchange.py``); the class is
  still one assignment, graded as one.
- ``COURSE_MODEL_ANSWERS``: ``on`` lets learners open the model answers (``show_solution``) and the
  sample answers of the questions (``sample_answer``) once they tried; default ``off``, a graded
  course's setting: every learner's server gets ``CTX_MODEL_ANSWERS=off``.
- ``COURSE_EXCHANGE``: nbgrader's exchange root, writable by everyone (``install -d -m 0777``).
- ``COURSE_HUB_STATE``: where the hub keeps its database, cookie secret and proxy pid file.
- ``COURSE_HUB_PASSWORD``: the one password of the dummy authenticator (a trial only: use PAM,
  OAuth or LTI for a real class; the allow list below stays the same).
- ``COURSE_HUB_PORT`` (8000), ``COURSE_HUB_API_PORT`` (8081), ``COURSE_PROXY_API_PORT`` (8001),
  ``COURSE_FORMGRADER_PORT`` (9999): ports on 127.0.0.1 (the hub's public port too: put a TLS
  proxy in front of it, or set ``c.JupyterHub.bind_url``, to serve other machines).

The proxy is ``configurable-http-proxy`` from npm: ``.hub/node_modules/.bin/`` of the repository
if it was installed there (``npm install --prefix .hub configurable-http-proxy``), else the one
on PATH (``npm install -g configurable-http-proxy``).
"""
import csv
import os
import pwd
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
COURSE_ID = "context-engineering"
SERVICE = COURSE_ID  # the Formgrader's service name: /services/context-engineering/
INSTRUCTORS_GROUP = f"formgrade-{COURSE_ID}"


def _names(value):
    return sorted({name.strip() for name in value.split(",") if name.strip()})


def _roster(path, edition=None):
    """Return the roster's ids (those whose ``edition`` column is ``edition``, if given), sorted."""
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return sorted({row["id"].strip() for row in csv.DictReader(handle) if (row.get("id") or "").strip()
                       and (edition is None or (row.get("edition") or "").strip() == edition)})


def _unprivileged(name):
    """Return ``name`` if it is an account other than root; stop the hub with one line otherwise.

    Grading runs outside the sandbox as this account (the Formgrader and its terminal): root would give any flaw
    there the whole machine, the hub's state and every learner's files.
    """
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        raise SystemExit(f"COURSE_GRADER must name an existing account (got {name!r}): useradd -m {name}") from None
    if uid == 0:
        raise SystemExit(f"COURSE_GRADER must be an unprivileged account, not root (got {name!r}): grading runs "
                         'outside the sandbox as this account (docs/sandbox.md, "Who grading runs as")')
    return name


COURSE_ROOT = Path(os.environ.get("COURSE_ROOT", "/srv/context-engineering"))
GRADER = _unprivileged(os.environ.get("COURSE_GRADER", "grader"))
INSTRUCTORS = _names(os.environ.get("COURSE_INSTRUCTORS", "instructor"))
LEARNERS = _names(os.environ["COURSE_LEARNERS"]) if "COURSE_LEARNERS" in os.environ else _roster(
    COURSE_ROOT / "grading" / "roster.csv")
ENGLISH = set(_names(os.environ.get("COURSE_ENGLISH_LEARNERS", ""))) | set(
    _roster(COURSE_ROOT / "grading" / "roster.csv", edition="en"))
EXCHANGE = os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")
STATE = Path(os.environ.get("COURSE_HUB_STATE", "/srv/jupyterhub"))
PORT = int(os.environ.get("COURSE_HUB_PORT", "8000"))
HUB_API_PORT = int(os.environ.get("COURSE_HUB_API_PORT", "8081"))
PROXY_API_PORT = int(os.environ.get("COURSE_PROXY_API_PORT", "8001"))
FORMGRADER_PORT = int(os.environ.get("COURSE_FORMGRADER_PORT", "9999"))
MODEL_ANSWERS = "on" if os.environ.get("COURSE_MODEL_ANSWERS", "off").strip().lower() == "on" else "off"

# The hub, its API and the proxy's API on this machine only.
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = HUB_API_PORT
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PROXY_API_PORT}"
local_proxy = REPOSITORY / ".hub" / "node_modules" / ".bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [str(local_proxy) if local_proxy.exists() else
                                   shutil.which("configurable-http-proxy") or "configurable-http-proxy"]
STATE.mkdir(parents=True, exist_ok=True)
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

# Who may log in: the learners and the instructors, nobody else.
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("COURSE_HUB_PASSWORD", "")
c.Authenticator.allow_all = False
c.Authenticator.allowed_users = set(LEARNERS) | set(INSTRUCTORS)

# Every user's server runs as that OS user, in their home folder, with the learner's configuration
# and the exchange root; the hub's Python runs it (every user must be able to read that environment).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
TOOLS = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
c.Spawner.environment = {
    "JUPYTER_CONFIG_PATH": str(HERE / "learner"),
    "COURSE_EXCHANGE": EXCHANGE,
    "PATH": TOOLS,
    "CTX_MODEL_ANSWERS": MODEL_ANSWERS,  # ctx_reference/model_answers.py: off unless the hub says on
}



def _edition(spawner):
    """Give the server of an English learner COURSE_EDITION=en (the Assignment List fetches that edition)."""
    if spawner.user.name in ENGLISH:
        spawner.environment = {**spawner.environment, "COURSE_EDITION": "en"}


c.Spawner.pre_spawn_hook = _edition

# The Formgrader: a hub service run as the grader in the course folder, open to the instructors' group.
c.JupyterHub.services = [
    {
        "name": SERVICE,
        "url": f"http://127.0.0.1:{FORMGRADER_PORT}",
        "command": [sys.executable, "-m", "jupyterhub.singleuser", "--ServerApp.default_url=/formgrader"],
        "user": GRADER,
        "cwd": str(COURSE_ROOT),
        "oauth_no_confirm": True,
        "environment": {
            "JUPYTER_CONFIG_PATH": os.pathsep.join([str(HERE / "grader"), str(HERE / "learner")]),
            "COURSE_EXCHANGE": EXCHANGE,
            "PATH": TOOLS,
        },
    },
]
c.JupyterHub.load_groups = {INSTRUCTORS_GROUP: {"users": INSTRUCTORS}}
c.JupyterHub.load_roles = [
    {
        "name": INSTRUCTORS_GROUP,
        "groups": [INSTRUCTORS_GROUP],
        "scopes": [f"access:services!service={SERVICE}", f"read:services!service={SERVICE}", "list:services"],
    },
]
# Stopping the hub stops every user's server and the proxy too.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
