"""Check, from any account, that the course hub answers and nbgrader's exchange root can be used.

Covers: asking the hub's REST API for its version (``hub_problem``) and reusing the exchange's own
check of the root (``ctx_course.exchange.root_problem``); ``python -m ctx_course hub-check``
prints one line for each, or one ``error:`` line saying what is wrong and how to fix it.

Leaves out: starting the hub (``hub/jupyterhub_config.py``), the exchange commands themselves.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000"
TIMEOUT = 10  # seconds to wait for the hub's answer


def hub_version(url: str, timeout: float = TIMEOUT) -> str:
    """Return the JupyterHub version that answers at ``url``; raise ValueError with one line if none does.

    Example: ``hub_version("http://127.0.0.1:8000")`` is ``"6.1.1"`` while the course hub runs.
    """
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"--url must be the hub's address, such as {DEFAULT_URL} (got {url!r})")
    api = url.rstrip("/") + "/hub/api/"
    fix = "start it (see docs/jupyterhub.md) or check --url / COURSE_HUB_PORT"
    try:
        with urllib.request.urlopen(api, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        raise ValueError(f"{api} answered {error.code} {error.reason}: is {url} a JupyterHub? {fix}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ValueError(f"no JupyterHub answers at {url} ({reason}); {fix}") from None
    try:
        return str(json.loads(body)["version"])
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{api} did not answer as a JupyterHub does (no version); {fix}") from None
