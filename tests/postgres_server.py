"""A throw-away PostgreSQL server for tests: ``initdb`` and ``pg_ctl`` on a Unix socket in a temporary folder.

No port is opened (``listen_addresses=''``) and nothing outside the folder is touched. PostgreSQL
refuses to run as root, so as root the server runs as the system user ``postgres`` (Debian's
``postgresql`` package creates it), owning the folder.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

# Debian installs one folder of binaries per major version.
BINARIES = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
SERVER_USER = "postgres"


def binaries() -> Path | None:
    """Return the folder of the newest PostgreSQL binaries installed, or None."""
    return BINARIES[-1].parent if BINARIES else None


class PostgresServer:
    """One PostgreSQL cluster in a temporary folder, started by ``start()`` and removed by ``stop()``."""

    def __init__(self):
        self.bin = binaries()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
        self.folder = Path(tempfile.mkdtemp(prefix="ctx-pg-", dir="/tmp"))
        self.data = self.folder / "data"
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            entry = pwd.getpwnam(SERVER_USER)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
            self._as_user = ["runuser", "-u", SERVER_USER, "--"]

    def _run(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self._as_user, *argv], check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", f"--username={SERVER_USER}",
                  "--encoding=UTF8", "--no-sync")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options(), "-l",
                  str(self.folder / "log"), "-w", "-t", "60", "start")

    def create_database(self, name: str) -> str:
        """Create a database; return its SQLAlchemy URL (the Unix socket of this server)."""
        self._run(str(self.bin / "createdb"), "-h", str(self.folder), "-U", SERVER_USER, name)
        return f"postgresql+psycopg2://{SERVER_USER}@/{name}?host={self.folder}"

    def outage(self, seconds: float) -> None:
        """Stop the server (fast: open connections are cut), leave it down ``seconds``, start it again."""
        import time

        self.outage_begin()
        time.sleep(seconds)
        self.outage_end()

    def outage_begin(self) -> None:
        """Stop the server as a crash would look to its clients (fast: open connections are cut)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def outage_end(self) -> None:
        """Start the stopped server again, with its data."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options(), "-l",
                  str(self.folder / "log"), "-w", "-t", "60", "start")

    def running(self) -> bool:
        """Whether the server is up (``pg_ctl status``)."""
        done = subprocess.run([*self._as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "status"],
                              capture_output=True, text=True, timeout=60)
        return done.returncode == 0

    def _options(self) -> str:
        return f"-k {self.folder} -c listen_addresses='' -c fsync=off -c max_connections=50"

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
