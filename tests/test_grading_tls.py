"""Grading on a cluster over TLS, set up as docs/cluster.md says.

A real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 speak ``tls://`` with
certificates made here (one course CA; a certificate each for the scheduler, the workers and the
coordinator). The coordinator is ``python -m ctx_course grade --cluster tls://127.0.0.1:PORT`` in a
process of its own that takes its TLS settings from Dask's environment variables, as docs/cluster.md
shows. A worker whose certificate the course CA did not sign is refused by the scheduler.
"""
from __future__ import annotations

import datetime
import ipaddress
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from test_grading_dask import DASK, _alive

from ctx_course.sandbox.policy import sandbox_problem

from conftest import REPO

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

# ---- certificates


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(subject: str, key, issuer: str, issuer_key, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _write(folder: Path, stem: str, key, certificate: x509.Certificate) -> tuple[Path, Path]:
    cert_file, key_file = folder / f"{stem}.pem", folder / f"{stem}-key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_file.chmod(0o600)
    return cert_file, key_file


def make_certificates(folder: Path) -> dict[str, tuple[Path, Path]]:
    """Write a course CA and certificates for scheduler, worker, client, plus an outsider's, signed elsewhere."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    ca_key = _key()
    ca = _certificate("course CA", ca_key, "course CA", ca_key, ca=True)
    files["ca"] = _write(folder, "ca", ca_key, ca)
    for role in ("scheduler", "worker", "client"):
        key = _key()
        files[role] = _write(folder, role, key, _certificate(f"course {role}", key, "course CA", ca_key, ca=False))
    other_key = _key()
    outsider_key = _key()
    files["outsider"] = _write(
        folder, "outsider", outsider_key,
        _certificate("course worker", outsider_key, "another CA", other_key, ca=False),
    )
    return files


# ---- the cluster


class TlsCluster:
    """A TLS `dask scheduler` on 127.0.0.1 and `dask worker`s, each in a process group of its own."""

    def __init__(self, folder: Path, certs: dict[str, tuple[Path, Path]], workers: int = 2):
        self.folder, self.certs, self.processes = folder, certs, []
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / "scheduler.json"
        cert, key = certs["scheduler"]
        self.processes.append(self._start(
            "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--tls-ca-file", str(certs["ca"][0]), "--tls-cert", str(cert), "--tls-key", str(key),
            "--scheduler-file", str(self.file), log=folder / "scheduler.log",
        ))
        deadline = time.monotonic() + 120
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if not self.file.exists():
            self.stop()
            raise RuntimeError(f"the TLS scheduler did not start: {(folder / 'scheduler.log').read_text()[-2000:]}")
        self.address = json.loads(self.file.read_text())["address"]
        for number in range(workers):
            self.processes.append(self.worker(f"worker-{number}", "worker"))
        self._wait_for(workers)

    def _start(self, kind: str, *args: str, log: Path | None = None) -> subprocess.Popen:
        out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        return subprocess.Popen([str(DASK), kind, *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env={**os.environ})

    def worker(self, name: str, role: str, *, death_timeout: int = 60) -> subprocess.Popen:
        """Start a worker holding the course CA and the certificate of ``role``; its log is <name>.log."""
        cert, key = self.certs[role]
        return self._start(
            "worker", self.address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
            "--memory-limit", "0", "--death-timeout", str(death_timeout), "--name", name,
            "--tls-ca-file", str(self.certs["ca"][0]), "--tls-cert", str(cert), "--tls-key", str(key),
            log=self.folder / f"{name}.log",
        )

    def client_env(self) -> dict[str, str]:
        """The coordinator's TLS settings as Dask's environment variables (docs/cluster.md, TLS between machines)."""
        cert, key = self.certs["client"]
        return {
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(self.certs["ca"][0]),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key),
        }

    def workers(self) -> int:
        """How many workers the scheduler has, asked over TLS with the coordinator's certificate."""
        from distributed import Client
        from distributed.security import Security

        cert, key = self.certs["client"]
        security = Security(tls_ca_file=str(self.certs["ca"][0]), tls_client_cert=str(cert),
                            tls_client_key=str(key), require_encryption=True)
        with Client(self.address, security=security, timeout=60, set_as_default=False) as client:
            return len(client.scheduler_info(n_workers=-1)["workers"])

    def _wait_for(self, count: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.workers() < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{count} TLS workers did not join in {timeout} s")
            time.sleep(0.5)

    def stop(self) -> list[int]:
        """Stop every process (workers first); return their pids."""
        pids = [p.pid for p in self.processes]
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()
        return pids


def _grade(work: Path, incoming: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `python -m ctx_course grade` as the instructor does, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "ctx_course", "grade", "--root", str(REPO), "--work", str(work),
         "--submissions", str(incoming), *extra],
        env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=900,
    )


@pytest.fixture(scope="module")
def tls_run(tmp_path_factory, remaining_class):
    """The session's ``remaining_class`` (graded with --jobs 1) graded again on a TLS cluster of two workers;
    an outsider worker tried meanwhile."""
    tmp = tmp_path_factory.mktemp("tls")
    incoming = remaining_class.incoming
    cluster = TlsCluster(tmp / "cluster", make_certificates(tmp / "certs"))
    try:
        outsider = cluster.worker("outsider", "outsider", death_timeout=15)
        tls = _grade(tmp / "tls", incoming, "--cluster", cluster.address, env=cluster.client_env())
        outsider.wait(timeout=120)
        workers_after = cluster.workers()
    finally:
        pids = cluster.stop()
    return {
        "one": remaining_class, "tls": tls, "work": tmp, "address": cluster.address, "pids": pids,
        "workers_after": workers_after, "outsider_status": outsider.returncode,
        "outsider_log": (tmp / "cluster" / "outsider.log").read_text(errors="replace"),
        "scheduler_log": (tmp / "cluster" / "scheduler.log").read_text(errors="replace"),
    }


def test_a_tls_cluster_writes_the_grades_csv_of_one_job(tls_run):
    """The example class graded over tls:// gives byte for byte the grades.csv of --jobs 1, with status 0."""
    assert tls_run["address"].startswith("tls://127.0.0.1:")
    assert (tls_run["one"].status, tls_run["tls"].returncode) == (0, 0), tls_run["tls"].stderr
    one = (tls_run["one"].work / "grades.csv").read_bytes()
    tls = (tls_run["work"] / "tls" / "grades.csv").read_bytes()
    assert one == tls
    assert [line.split(b",")[0] for line in tls.splitlines()[1:]] == [b"ada", b"ben", b"cai", b"dan"]


def test_a_worker_without_a_course_certificate_never_joins(tls_run):
    """A worker whose certificate another CA signed is refused: the scheduler says so in one line of its log
    and keeps its two workers; the outsider never registers and gives up after its death timeout."""
    assert tls_run["workers_after"] == 2
    refusals = [line for line in tls_run["scheduler_log"].splitlines() if "TLS handshake failed" in line]
    assert refusals and all("certificate verify failed" in line for line in refusals), tls_run["scheduler_log"][-2000:]
    assert tls_run["outsider_status"] != 0
    assert "Registered to" not in tls_run["outsider_log"]


def test_the_tls_cluster_leaves_no_process_behind(tls_run):
    """After the cluster is stopped, pgrep finds none of its processes."""
    assert _alive(tls_run["pids"]) == []
