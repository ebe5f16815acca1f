"""Run a student's kernel inside a bubblewrap sandbox.

Covers: whether bubblewrap can sandbox kernels on this machine (``sandbox_problem``); the
limits of one kernel (``parse_memory``, ``SandboxPolicy``); and the command that starts a
kernel inside the sandbox (``SandboxPolicy.command``): a filesystem made of an allow list (the
system's programs and libraries, the interpreter and its virtual environment, the course's
package, the kernel's own folder, the only writable one), nothing else of the machine visible
(no home folder, no other folder of /tmp, no other copy of the course, whatever its path), no
network, its own process namespace (nothing it starts outlives it), no capabilities, an
address-space and a CPU-time limit, and a clean environment.

Leaves out: starting and talking to the kernel (``kernels.py``), which notebooks run
(``grading/grader.py``).

Vocabulary: a kernel's *folder* is a temporary folder outside the grading folder holding
``run/`` (its connection file and IPC sockets, shared with the grader), ``home/`` (its HOME)
and ``work/`` (the *scratch copy* of the one submission it grades, its working folder);
*hidden* paths are replaced by an empty read-only folder inside the sandbox; *exposed* paths
are bound read-only on top of a hidden one (the virtual environment, the course's package).
"""
from __future__ import annotations

import compileall
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from traitlets import Bool, Integer, Unicode
from traitlets.config import Config, Configurable

# Defaults: the address space of one kernel, and the CPU seconds one notebook may use.
DEFAULT_MEMORY_LIMIT = "2G"
DEFAULT_CPU_LIMIT = 600
# How to get bubblewrap, said whenever it is missing or refused.
INSTALL_HINT = "install it (`apt install bubblewrap`) or pass --no-sandbox to grade without one"
# Folders no kernel may see (besides the course's solutions and the grading folder); with the
# allow list below they are not in the sandbox anyway, unless an exposed folder holds one.
SYSTEM_HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/run", "/mnt", "/media", "/srv")
# What a sandbox shows of the system, read-only: programs and libraries (links kept as links).
SYSTEM_ALLOWED = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The files of /etc that a Python process and its libraries read (the loader, time zone, fonts, users).
ETC_ALLOWED = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "nsswitch.conf",
    "passwd", "group", "alternatives", "mime.types",
)
# Packages of the course a notebook imports (bound read-only even when the course is hidden).
COURSE_PACKAGES = ("ctx_reference",)
# Folders of the course's packages no graded kernel may read: the model answers (ctx_reference/model_answers.py).
COURSE_SECRETS = {"ctx_reference": ("answer_key",)}
# Installed packages a graded kernel never uses, hidden from it: ipykernel imports its debugger
# at start-up whenever it can, which is about a quarter of a kernel's start-up CPU.
UNUSED_PACKAGES = ("debugpy",)
# Environment variables passed on to a kernel (everything else, tokens included, is dropped): the
# language and time zone, and the grading run's mark (``scratch_folders.RUN_VARIABLE``, named here as
# this module imports nothing of the package: only the name of the run's folder, which finds the
# run's processes in /proc).
PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "CTX_GRADING_RUN")
# One thread for numpy's linear algebra in every sandboxed process: the grader runs one kernel per
# core already, and OpenBLAS would start a thread per core in each, which spin-wait after every
# matrix product for CPU that another kernel needs.
THREAD_LIMITS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or refused: the message says why and how to install it, in one line."""


class SandboxSettings(Configurable):
    """The sandbox settings of ``nbgrader_config.py`` (``c.SandboxSettings.memory_limit = "2G"``)."""

    enabled = Bool(True, help="run every kernel in a bubblewrap sandbox").tag(config=True)
    memory_limit = Unicode(DEFAULT_MEMORY_LIMIT, help="address space of one kernel, e.g. 2G or 512M").tag(config=True)
    cpu_limit = Integer(DEFAULT_CPU_LIMIT, help="CPU seconds one notebook's kernel may use").tag(config=True)


def sandbox_limits(
    config: Config,
    *,
    sandbox: bool | None = None,
    memory_limit: str | int | None = None,
    cpu_limit: str | int | None = None,
) -> tuple[bool, int, int]:
    """Return (sandboxed, memory limit in bytes, CPU seconds): the course's ``SandboxSettings``, with
    each argument that is not None taking the place of its setting.

    Example: with the defaults, ``sandbox_limits(config, cpu_limit=5)`` is ``(True, 2147483648, 5)``.
    """
    settings = SandboxSettings(config=config)
    sandboxed = settings.enabled if sandbox is None else bool(sandbox)
    memory = parse_memory(settings.memory_limit if memory_limit is None else memory_limit)
    cpu = parse_cpu(settings.cpu_limit if cpu_limit is None else cpu_limit)
    return sandboxed, memory, cpu


def parse_memory(value) -> int:
    """Return a memory size in bytes from ``2G``, ``512M``, ``1.5GiB`` or a number of bytes.

    Example: ``parse_memory("2G")`` is 2147483648. Anything else raises ValueError.
    """
    if isinstance(value, bool):
        raise ValueError(f"memory_limit must be a size such as 2G or 512M (got {value!r})")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if not match:
            raise ValueError(f"memory_limit must be a size such as 2G or 512M (got {value!r})")
        size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size < 64 * 1024**2:
        raise ValueError(f"memory_limit must be at least 64M (got {value!r})")
    return size


def parse_cpu(value) -> int:
    """Return a CPU-time limit in whole seconds (at least 1). Example: ``parse_cpu("300")`` is 300."""
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"cpu_limit must be a whole number of seconds (got {value!r})") from None
    if isinstance(value, bool) or seconds < 1 or str(value).strip() not in (str(seconds), f"{seconds}.0"):
        raise ValueError(f"cpu_limit must be a whole number of seconds, at least 1 (got {value!r})")
    return seconds


def sandbox_problem(bwrap: str = "bwrap") -> str | None:
    """Return one line saying why bubblewrap cannot sandbox kernels here, or None when it can.

    The test is the smallest sandbox there is: ``bwrap --ro-bind / / true``.
    """
    path = shutil.which(bwrap)
    if path is None:
        return f"cannot sandbox student code: bubblewrap ({bwrap}) is not installed; {INSTALL_HINT}"
    try:
        done = subprocess.run([path, "--ro-bind", "/", "/", "true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot sandbox student code: {path} did not run ({exc}); {INSTALL_HINT}"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"cannot sandbox student code: {path} refused to start a sandbox ({why}); {INSTALL_HINT}"
    return None


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed kernel may see and use.

    ``hidden``: folders replaced by an empty read-only folder (the course's solutions, the
    grading folder, and SYSTEM_HIDDEN); ``exposed``: folders bound read-only on top (the
    virtual environment, the course's packages). Example:
    ``SandboxPolicy.for_course(root, work).command(argv, kernel_folder)``.
    """

    hidden: tuple[str, ...]
    exposed: tuple[str, ...]
    memory_limit: int = parse_memory(DEFAULT_MEMORY_LIMIT)
    cpu_limit: int = DEFAULT_CPU_LIMIT
    bwrap: str = "bwrap"

    @classmethod
    def for_course(
        cls,
        root: str | os.PathLike,
        work: str | os.PathLike,
        *,
        memory_limit=DEFAULT_MEMORY_LIMIT,
        cpu_limit=DEFAULT_CPU_LIMIT,
        bwrap: str = "bwrap",
        hidden: Sequence[str] = (),
    ) -> SandboxPolicy:
        """Return the policy of a course at ``root`` graded into ``work``.

        The whole course folder is hidden (solutions, the grading folder, examples, .git), then
        the course's packages and the virtual environment are bound back read-only, but for their
        COURSE_SECRETS (the model answers), which stay hidden; the
        grading folder is hidden wherever it is, and so is every folder of ``hidden`` (the
        coordinator's grading folder, for a Dask worker with a scratch folder of its own).
        """
        root, work = Path(root).resolve(), Path(work).resolve()
        home = Path.home().resolve()
        hidden = [*SYSTEM_HIDDEN, str(home), str(root), str(root / "solutions"), str(work),
                  *(str(Path(h).resolve()) for h in hidden)]
        # The virtual environment and the Python it was made from (pyenv keeps it in a home folder).
        pythons = (sys.prefix, sys.base_prefix, Path(sys.executable).resolve().parent.parent)
        exposed = [str(Path(p).resolve()) for p in pythons]
        # The folders packages are imported from (a .pth file may add one outside the prefix).
        exposed += [str(Path(p).resolve()) for p in sys.path if "site-packages" in Path(p).parts and Path(p).is_dir()]
        for name in COURSE_PACKAGES:
            exposed += _package_folders(name)
            hidden += [str(Path(folder) / secret) for folder in _package_folders(name)
                       for secret in COURSE_SECRETS.get(name, ())]
        for name in UNUSED_PACKAGES:
            hidden += _package_folders(name)
        return cls(
            hidden=tuple(dict.fromkeys(hidden)),
            exposed=tuple(dict.fromkeys(exposed)),
            memory_limit=parse_memory(memory_limit),
            cpu_limit=parse_cpu(cpu_limit),
            bwrap=bwrap,
        )

    def command(self, argv: Sequence[str], folder: str | os.PathLike, env: dict | None = None) -> list[str]:
        """Return ``argv`` (a kernel's command line) wrapped to run inside the sandbox.

        The sandbox's filesystem is an allow list: the system's programs and libraries
        (SYSTEM_ALLOWED, read-only), the few files of ``/etc`` a Python process reads
        (ETC_ALLOWED), the ``exposed`` folders (read-only), an empty private ``/tmp``, and
        ``folder``, the kernel's folder (see the module's vocabulary): the only writable place,
        bound at the same path. Nothing else on the machine is there, whatever its path; a
        ``hidden`` folder inside an exposed one is replaced by an empty read-only one. The
        kernel starts in ``folder/run`` (never in a folder a student could have written a module
        into), with Python's ``-P`` (no current folder on ``sys.path``), the limits set by
        ``ulimit`` in a shell in front of it, and only the variables of PASSED_ENV, a PYTHONPATH
        naming the exposed course packages (``package_path``) and ``env``.
        """
        folder = Path(folder)
        home = folder / "home"
        args = [self.bwrap, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for path in SYSTEM_ALLOWED:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for name in ETC_ALLOWED:
            path = os.path.join("/etc", name)
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        exposed = [p for p in self.exposed if Path(p).exists()]
        for path in sorted(exposed, key=lambda p: len(Path(p).parts)):
            args += ["--ro-bind", path, path]
        # Hidden folders that an exposed one would show (the grading folder inside the venv, say).
        hidden = [h for h in self.hidden if Path(h).exists() and _inside(h, exposed)]
        for path in hidden:
            args += ["--tmpfs", path]
        args += ["--bind", str(folder), str(folder)]
        for path in hidden:  # empty and read-only once every mount point inside exists
            args += ["--remount-ro", path]
        args += ["--chdir", str(folder / "run")]
        args += [
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
        ]
        variables = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        if packages := package_path(exposed):
            variables["PYTHONPATH"] = packages
        variables.update(
            HOME=str(home),
            PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            MPLCONFIGDIR=str(home / ".matplotlib"),
            PYDEVD_DISABLE_FILE_VALIDATION="1",
            **THREAD_LIMITS,
            JPY_PARENT_PID="1",  # no connection banner, no parent poller (its parent is the sandbox's init)
            **(env or {}),
        )
        for key, value in variables.items():
            args += ["--setenv", key, value]
        argv = list(argv)
        if argv and Path(argv[0]).name.startswith("python") and "-P" not in argv[1:2]:
            argv = [argv[0], "-P", *argv[1:]]
        limits = f"ulimit -v {self.memory_limit // 1024} && ulimit -t {self.cpu_limit} && exec \"$@\""
        return [*args, "--", "/bin/sh", "-c", limits, "ctx-kernel", *argv]


def package_path(exposed: Sequence[str]) -> str:
    """Return the PYTHONPATH that makes the kernel import the course packages bound among ``exposed``.

    The grader binds the folder of each course package it imports itself (``for_course``); a
    kernel must import that very folder. Left to itself, the kernel would follow the virtual
    environment's install instead: an editable install names the checkout it was made from, so a
    course graded from any other folder (a second checkout, a copy on a grading machine) would
    import nothing, and every cell that uses the package would fail in the feedback. A parent
    folder that is a ``site-packages`` folder is on the path already; inside the sandbox any other
    parent holds nothing but the folders bound into it.

    >>> package_path(["/venv/lib/python3.11/site-packages", "/course/ctx_reference"])
    '/course'
    """
    parents = [str(Path(p).parent) for p in exposed if is_course_package(p)]
    return os.pathsep.join(dict.fromkeys(p for p in parents if Path(p).name != "site-packages"))


def is_course_package(path: str | os.PathLike) -> bool:
    """Return whether ``path`` is the folder of one of COURSE_PACKAGES (``.../ctx_reference``)."""
    return Path(path).name in COURSE_PACKAGES


def compile_course_packages() -> list[str]:
    """Write the bytecode (``__pycache__``) of COURSE_PACKAGES where it is missing or out of date.

    Every graded notebook imports ``ctx_reference`` in a fresh kernel. A sandboxed kernel sees
    the package read-only, and any kernel runs with PYTHONDONTWRITEBYTECODE if the grader does,
    so a kernel never saves what it compiles: unless the bytecode is already there, each one
    compiles the package from source again (about 30 ms of CPU per notebook). Up-to-date files
    are left as they are, so calling this before every run costs a few milliseconds. A folder
    that cannot be written (a read-only checkout) is skipped. Returns the folders compiled.
    """
    folders = [folder for name in COURSE_PACKAGES for folder in _package_folders(name)]
    for folder in folders:
        compileall.compile_dir(folder, quiet=2)
    return folders


def prepare_folder(folder: Path) -> None:
    """Create a kernel's folder: ``run/``, ``home/`` (with matplotlib's font list, so it is not rebuilt)
    and ``work/``."""
    for name in ("run", "home", "work"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    xdg_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(os.environ.get("MPLCONFIGDIR") or xdg_cache / "matplotlib")
    target = folder / "home" / ".matplotlib"
    target.mkdir(exist_ok=True)
    for font_list in cache.glob("fontlist-*.json") if cache.is_dir() else ():
        shutil.copyfile(font_list, target / font_list.name)


def _package_folders(name: str) -> list[str]:
    """Return the folders of an installed package (none if it is missing or a single module)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [str(Path(p).resolve()) for p in spec.submodule_search_locations]


def _inside(path: str, folders: Sequence[str]) -> bool:
    """Return whether ``path`` is one of ``folders`` or inside one of them."""
    return any(Path(path) == Path(f) or Path(f) in Path(path).parents for f in folders)
