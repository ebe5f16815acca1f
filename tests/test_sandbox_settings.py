"""The kernel pool and the sandbox's settings and command, without grading: limits, the allow-list, compiled
packages, the stop signal."""
from __future__ import annotations

import copy
import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctx_course.grading.autograde import grading_config
from ctx_course.grading.stopping import StopOnSignal
from ctx_course.sandbox import policy
from ctx_course.sandbox.kernels import KernelPool
from ctx_course.sandbox.policy import SYSTEM_ALLOWED, SandboxPolicy, compile_course_packages, parse_cpu, parse_memory

from conftest import REPO


def test_kernel_pool_survives_configuration_copies(tmp_path):
    """traitlets deep-copies configuration values; a copied pool must be the same pool
    (or each notebook would get its own pool and kernels would leak)."""
    pool = KernelPool(tmp_path)
    assert copy.deepcopy(pool) is pool
    assert grading_config(REPO, work=tmp_path, pool=pool).PrelaunchedExecute.pool is pool


class _FakeKernel:
    async def is_alive(self):
        return True


def _counting_pool(tmp_path, monkeypatch) -> tuple[KernelPool, list]:
    """A pool whose launches are counted instead of starting kernels."""
    pool, launched = KernelPool(tmp_path), []
    monkeypatch.setattr(pool, "_launch", lambda: launched.append(_FakeKernel()) or launched[-1])
    return pool, launched


def test_a_kernel_pool_launches_none_ahead_after_the_planned_notebooks(tmp_path, monkeypatch):
    """Three notebooks planned: three kernels in all, the last notebook's none launched ahead."""
    pool, launched = _counting_pool(tmp_path, monkeypatch)
    pool.plan(3)
    for _ in range(3):
        pool.take()
        pool.launch_next()
    assert len(launched) == 3 and pool._waiting is None


def test_a_kernel_pool_without_a_plan_always_launches_one_ahead(tmp_path, monkeypatch):
    """No plan (a caller that does not know what follows): one kernel waits after each take."""
    pool, launched = _counting_pool(tmp_path, monkeypatch)
    for _ in range(3):
        pool.take()
        pool.launch_next()
    assert len(launched) == 4 and pool._waiting is launched[-1]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_kernel_pool_refuses_a_bad_plan(tmp_path, bad):
    """The plan is a whole number of notebooks (or None); anything else names the value."""
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        KernelPool(tmp_path).plan(bad)


# ---- sandbox settings and command


def test_memory_sizes_are_read_in_binary_units():
    """2G is 2 GiB, 512M is 512 MiB, 1.5GiB is 1.5 GiB, a plain number is bytes."""
    assert parse_memory("2G") == 2 * 1024**3
    assert parse_memory("512M") == 512 * 1024**2
    assert parse_memory("1.5GiB") == 3 * 1024**3 // 2
    assert parse_memory(1024**3) == 1024**3


@pytest.mark.parametrize("bad", ["lots", "2X", "1M", True])
def test_bad_memory_limits_are_refused(bad):
    """A size that is not one, or below 64M, raises ValueError naming memory_limit and echoing it."""
    with pytest.raises(ValueError, match=f"memory_limit.*{re.escape(repr(bad))}"):
        parse_memory(bad)


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "soon"])
def test_bad_cpu_limits_are_refused(bad):
    """A CPU limit that is not a whole number of seconds >= 1 raises ValueError naming cpu_limit."""
    with pytest.raises(ValueError, match="cpu_limit"):
        parse_cpu(bad)


def test_sandbox_command_hides_the_course_and_limits_the_kernel(tmp_path):
    """The command unshares network and PIDs, dies with the grader, binds only the kernel's
    folder writable, and sets both limits."""
    work = tmp_path / "grading"
    work.mkdir()
    policy = SandboxPolicy.for_course(REPO, work, memory_limit="1G", cpu_limit=7)
    argv = policy.command(["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "k.json"], tmp_path / "kernel")
    assert {"--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv"} <= set(argv)
    pairs = list(zip(argv, argv[1:]))
    assert [a for a, b in pairs if a in ("--bind", "--bind-try")] == ["--bind"]
    assert ("--bind", str(tmp_path / "kernel")) in pairs
    assert "ulimit -v 1048576 && ulimit -t 7" in argv[argv.index("-c") + 1]
    assert argv[argv.index("/usr/bin/python3") + 1] == "-P"


def test_sandbox_filesystem_is_an_allow_list(tmp_path):
    """Only the system folders, a few files of /etc, the exposed folders and the kernel's folder
    are mounted: not /, not the course folder, not the grading folder, not the host's /tmp."""
    work = tmp_path / "grading"
    work.mkdir()
    policy = SandboxPolicy.for_course(REPO, work)
    argv = policy.command(["python3"], tmp_path / "kernel")
    sources = [b for a, b in zip(argv, argv[1:]) if a in ("--ro-bind", "--bind")]
    allowed = [*SYSTEM_ALLOWED, *policy.exposed, str(tmp_path / "kernel")]
    assert [s for s in sources if not s.startswith("/etc/") and not any(Path(s) == Path(a) for a in allowed)] == []
    assert "/" not in sources and str(REPO) not in sources and str(work) not in sources
    assert ("--tmpfs", "/tmp") in list(zip(argv, argv[1:]))


def test_sandbox_hides_the_debugger_a_graded_kernel_never_uses(tmp_path):
    """debugpy's folder is an empty read-only folder in the sandbox, mounted after the virtual
    environment it lies in (so ipykernel starts without loading a debugger)."""
    [debugpy] = importlib.util.find_spec("debugpy").submodule_search_locations
    argv = SandboxPolicy.for_course(REPO, tmp_path / "grading").command(["python3"], tmp_path / "kernel")
    pairs = list(zip(argv, argv[1:]))
    venv = str(Path(sys.prefix).resolve())
    assert pairs.index(("--ro-bind", venv)) < pairs.index(("--tmpfs", str(Path(debugpy).resolve())))
    assert ("--remount-ro", str(Path(debugpy).resolve())) in pairs


@pytest.mark.skipif(policy.sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")
def test_a_sandboxed_kernel_imports_the_course_package_the_grader_bound(tmp_path, monkeypatch):
    """A course graded from another folder than the one the environment was installed from (a
    copy of the checkout): the sandboxed kernel imports the copy's ctx_reference, the folder
    the policy binds, and not the install's (which is not in the sandbox at all)."""
    course = tmp_path / "course-copy"
    shutil.copytree(REPO / "ctx_reference", course / "ctx_reference", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(policy, "_package_folders", lambda name: [str(course / name)])
    work = tmp_path / "grading"
    work.mkdir()
    sandbox = SandboxPolicy.for_course(course, work)
    kernel = tmp_path / "kernel"
    policy.prepare_folder(kernel)
    code = "import ctx_reference, ctx_reference.checks; print(ctx_reference.__file__)"
    done = subprocess.run(sandbox.command([sys.executable, "-c", code], kernel), capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, str(course / "ctx_reference" / "__init__.py")), done.stderr
    # the answer process's policy (no course package bound) is given no such path
    without = dataclasses.replace(sandbox, exposed=tuple(p for p in sandbox.exposed if Path(p).name != "ctx_reference"))
    assert "PYTHONPATH" not in without.command(["python3"], kernel)


@pytest.mark.skipif(policy.sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="on one core BLAS starts no thread anyway")
def test_a_sandboxed_process_multiplies_matrices_on_one_thread(tmp_path):
    """numpy's BLAS starts no thread of its own in the sandbox, however many cores there are
    (each would spin after every product, taking CPU from the other kernels)."""
    sandbox = SandboxPolicy.for_course(REPO, tmp_path / "grading")
    policy.prepare_folder(tmp_path / "kernel")
    code = "import os, numpy; a = numpy.ones((300, 300)); a @ a; print(len(os.listdir('/proc/self/task')))"
    done = subprocess.run(sandbox.command([sys.executable, "-c", code], tmp_path / "kernel"), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "1"), done.stderr


def test_course_packages_are_compiled_so_no_kernel_compiles_them(tmp_path, monkeypatch):
    """After compile_course_packages, a kernel that may not write bytecode (read-only package,
    PYTHONDONTWRITEBYTECODE) loads every module of ctx_reference from bytecode, none from source."""
    package = tmp_path / "packages" / "ctx_reference"
    shutil.copytree(REPO / "ctx_reference", package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(policy, "_package_folders", lambda name: [str(package)])
    assert compile_course_packages() == [str(package)]
    modules = sorted(str(path) for path in package.rglob("*.py"))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(package.parent))
    code = "import ctx_reference, ctx_reference.checks, ctx_reference.plots, ctx_reference.widgets, ctx_reference.cli"
    done = subprocess.run([sys.executable, "-v", "-P", "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = [line for line in done.stderr.splitlines() if str(package) in line]
    from_source = [line for line in loaded
                   if line.startswith("# code object from") and line.rstrip("'").endswith(".py")]
    from_bytecode = [line for line in loaded if line.startswith("# code object from") and ".pyc" in line]
    assert from_source == [] and len(from_bytecode) >= 10, loaded[:20]
    assert all(Path(importlib.util.cache_from_source(module)).is_file() for module in modules)


def test_stop_on_signal_records_sigterm_instead_of_dying():
    """Inside StopOnSignal a SIGTERM to this very process is recorded (and on_stop called once);
    outside it the previous handler is back."""
    import os
    import signal

    calls = []
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignal(on_stop=lambda: calls.append(1)) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
    assert (stop.signal, stop.number, calls) == ("SIGTERM", signal.SIGTERM, [1])
    assert signal.getsignal(signal.SIGTERM) is before
