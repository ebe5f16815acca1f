"""nbgrader's exchange for this course: the same commands, with one clear line when something is wrong.

Covers: the exchange classes that ``nbgrader_config.py`` (the instructor's commands) and
``hub/learner/nbgrader_config.py`` (the learners' servers) plug into nbgrader through
``c.ExchangeFactory``. Each behaves as nbgrader's own, except:

- ``Submit`` refuses a notebook that is not valid notebook JSON before anything is copied, so the
  submission that counts stays the learner's earlier one; the line names the file and says how to
  repair it.
- ``ReleaseAssignment`` releases both editions: the English notebooks of ``lessons-en/`` travel in
  the released folder as ``.edition-en/``; ``FetchAssignment`` gives a learner the edition named by
  ``COURSE_EDITION`` (``en``, or the Chinese by default) under the notebooks' own names, so that a
  mixed class submits one assignment and is graded as one (the grader reads each submission's
  edition from its notebook).
- ``FetchAssignment`` names the assignments that *are* released when asked for one that is not.
- ``ReleaseFeedback`` releases every page it can: a feedback folder without the
  ``timestamp.txt`` / ``submission_secret.txt`` of an exchange submission (one brought in with
  ``python -m ctx_course grade --submissions``) is named in one line and skipped, where nbgrader
  stops with a traceback and releases nothing after it.
- every command says which folder is missing or not writable, by whom, and the command that makes
  the exchange root right.

Leaves out: moving files (nbgrader's exchange does it), grading (``grading/``).

Vocabulary: the *exchange root* is the folder shared by everyone on the hub
(``c.Exchange.root``); *inbound* holds the submissions, *outbound* the released assignments,
*feedback* the released feedback pages, one folder of each per course.
"""
from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
from pathlib import Path

import nbformat
from nbgrader.exchange.default import (
    ExchangeCollect,
    ExchangeFetchAssignment,
    ExchangeFetchFeedback,
    ExchangeList,
    ExchangeReleaseAssignment,
    ExchangeReleaseFeedback,
    ExchangeSubmit,
)

# Files nbgrader's submit writes beside the notebooks; release_feedback needs both.
SUBMISSION_FILES = ("timestamp.txt", "submission_secret.txt")
# Inside a released assignment: the English edition's notebooks (from ENGLISH_RELEASE/<assignment>/).
EDITION_FOLDER = ".edition-en"
ENGLISH_RELEASE = "lessons-en"
# The environment variable that names a learner's edition (the hub sets it per learner).
EDITION_VARIABLE = "COURSE_EDITION"
EDITIONS = ("zh_CN", "en")


def learner_edition(environ=os.environ) -> str:
    """Return the edition a learner fetches: ``COURSE_EDITION`` ("en" or "zh_CN"), the Chinese one if unset.

    Raises ValueError naming the variable and its value when it names no edition.
    """
    edition = environ.get(EDITION_VARIABLE, "").strip() or "zh_CN"
    if edition not in EDITIONS:
        raise ValueError(f"{EDITION_VARIABLE} must be one of {', '.join(EDITIONS)} (got {edition!r})")
    return edition


def root_problem(root: str | os.PathLike, *, create: bool = False) -> str | None:
    """Return one line saying why the exchange root cannot be used by this user, or None.

    With ``create`` (the instructor's release), a missing root is fine if its parent is writable.
    Example: ``root_problem("/srv/nbgrader/exchange")`` may be ``"the exchange root
    /srv/nbgrader/exchange does not exist; ..."``.
    """
    root = Path(root)
    fix = f"ask the hub's administrator to run `install -d -m 0777 {root}`"
    user = _user()
    if not root.exists():
        if create and os.access(root.parent, os.W_OK | os.X_OK):
            return None
        return f"the exchange root {root} does not exist (c.Exchange.root); {fix}"
    if not root.is_dir():
        return f"the exchange root {root} is not a folder (c.Exchange.root); {fix}"
    if not os.access(root, os.W_OK | os.X_OK):
        mode = oct(root.stat().st_mode & 0o7777)
        return f"the exchange root {root} is not writable by {user} (mode {mode}); {fix}"
    return None


class _ClearRoot:
    """Check the exchange root first and fail with ``root_problem``'s line."""

    create_root = False

    def ensure_root(self):
        problem = root_problem(self.root, create=self.create_root)
        if problem is not None:
            self.fail(problem)
        super().ensure_root()


class ReleaseAssignment(_ClearRoot, ExchangeReleaseAssignment):
    """nbgrader's release_assignment; a root it cannot use is named with its fix."""

    create_root = True

    def do_copy(self, src, dest):
        """Copy the release, and beside it, in ``EDITION_FOLDER``, the English edition's notebooks (if released)."""
        super().do_copy(src, dest)
        english = Path(self.coursedir.root) / ENGLISH_RELEASE / self.coursedir.assignment_id
        notebooks = sorted(english.glob("*.ipynb"))
        if notebooks:
            (Path(dest) / EDITION_FOLDER).mkdir()
            for notebook in notebooks:
                shutil.copyfile(notebook, Path(dest) / EDITION_FOLDER / notebook.name)

    def ensure_root(self):
        root = Path(self.root)
        if root.is_dir() and os.access(root, os.W_OK | os.X_OK) and (root.stat().st_mode & 0o777) != 0o777 \
                and root.stat().st_uid != os.getuid() and not self.coursedir.groupshared:
            mode = oct(root.stat().st_mode & 0o7777)
            self.fail(f"the exchange root {root} must be writable by everyone (mode {mode}, owned by another user); "
                      f"ask the hub's administrator to run `chmod 0777 {root}`")
        super().ensure_root()


class FetchAssignment(_ClearRoot, ExchangeFetchAssignment):
    """nbgrader's fetch_assignment; an assignment never released is named with those that are.

    The learner gets the edition ``COURSE_EDITION`` names: for the English one, each notebook of the
    release's ``EDITION_FOLDER`` takes the place of the Chinese notebook of its name (only where this
    fetch put that notebook: fetching again never overwrites a learner's work). The folder itself is
    never left in the learner's copy.
    """

    def do_copy(self, src, dest):
        try:
            edition = learner_edition()
        except ValueError as exc:
            self.fail(str(exc))
        dest = Path(dest)
        before = {path.name for path in dest.iterdir()} if dest.is_dir() else set()
        super().do_copy(src, str(dest))
        english = dest / EDITION_FOLDER
        if edition == "en":
            for notebook in sorted(english.glob("*.ipynb")):
                if notebook.name not in before:
                    shutil.copyfile(notebook, dest / notebook.name)
        shutil.rmtree(english, ignore_errors=True)

    def init_src(self):
        course, assignment = self.coursedir.course_id, self.coursedir.assignment_id
        outbound = Path(self.root) / course / "outbound"
        if course and not (outbound / assignment).is_dir():
            released = sorted(p.name for p in outbound.iterdir() if p.is_dir()) if outbound.is_dir() else []
            shown = ", ".join(released) if released else "none yet"
            self.fail(f"assignment {assignment!r} has not been released in course {course!r} (released: {shown}); "
                      f"check its name, or ask your instructor to release it "
                      f"(nbgrader release_assignment {assignment})")
        super().init_src()


class Submit(_ClearRoot, ExchangeSubmit):
    """nbgrader's submit; a notebook that is not valid notebook JSON stops it before anything is copied."""

    def init_src(self):
        super().init_src()
        problem = notebook_problem(self.src_path)
        if problem is not None:
            self.fail(problem)


class Collect(_ClearRoot, ExchangeCollect):
    """nbgrader's collect; a submission in the name of an OS user who does not own it is left out and named.

    ``nbgrader submit --student=NAME`` lets anyone hand in under a classmate's name, later than
    the classmate, and nbgrader's collect only warns. Here such a submission is not collected (the
    named student's own latest one is), when NAME is an account of this machine, as on the hub.
    """

    def init_src(self):
        super().init_src()
        if not self.check_owner:
            return
        chosen, forged = [], []
        for record in self.src_records:
            name = record["username"]
            if _owner(self._inbound(record), name):
                chosen.append(record)
                continue
            pattern = os.path.join(self.inbound_path, f"{glob.escape(name)}+{self.coursedir.assignment_id}+*")
            records = self._sort_by_timestamp([self._path_to_record(path) for path in glob.glob(pattern)])
            forged += [r["filename"] for r in records if not _owner(self._inbound(r), name)]
            chosen += [r for r in records if _owner(self._inbound(r), name)][:1]  # their own latest
        self.src_records = chosen
        if forged:
            self.log.warning("not collected, not owned by the student it names (handed in by another account): %s",
                             ", ".join(sorted(forged)))

    def _inbound(self, record: dict) -> str:
        return os.path.join(self.inbound_path, record["filename"])


class List(_ClearRoot, ExchangeList):
    """nbgrader's list (the Assignment List asks it), with the exchange root checked first."""


class FetchFeedback(_ClearRoot, ExchangeFetchFeedback):
    """nbgrader's fetch_feedback, with the exchange root checked first."""


class ReleaseFeedback(_ClearRoot, ExchangeReleaseFeedback):
    """nbgrader's release_feedback; feedback of a submission not made through the exchange is skipped and named."""

    def copy_files(self):
        pattern = self.coursedir.format_path(self.coursedir.feedback_directory, "*", self.coursedir.assignment_id)
        unreturnable = sorted(
            Path(folder).parent.name
            for folder in glob.glob(pattern)
            if glob.glob(os.path.join(folder, "*.html"))
            and not all(os.path.isfile(os.path.join(folder, name)) for name in SUBMISSION_FILES)
        )
        if unreturnable:
            excluded = [s for s in self.coursedir.student_id_exclude.split(",") if s]
            self.coursedir.student_id_exclude = ",".join(sorted({*excluded, *unreturnable}))
            self.log.warning(
                "not released, no %s (not submitted through the exchange, so the learner cannot fetch it; "
                "hand the page over another way): %s",
                " / ".join(SUBMISSION_FILES), ", ".join(unreturnable),
            )
        super().copy_files()


def notebook_problem(folder: str | os.PathLike) -> str | None:
    """Return one line naming the first notebook under ``folder`` that is not a valid notebook, or None.

    Example: ``"remaining.ipynb is not valid notebook JSON (Expecting ',' delimiter: line 12 column 5); ..."``.
    """
    folder = Path(folder)
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        name = path.relative_to(folder)
        fix = ("nothing was submitted and your earlier submission still counts; open it in JupyterLab and save it "
               "again, or rename it and fetch the assignment again, then submit")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return f"{name} is not valid notebook JSON ({_first_line(exc)}); {fix}"
        try:
            nbformat.validate(nbformat.from_dict(data))
        except Exception as exc:
            return f"{name} is not a valid notebook ({_first_line(exc)}); {fix}"
    return None


def _owner(path: str, name: str) -> bool:
    """Return whether ``path`` is owned by the OS user ``name``; True when no such user exists here."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return True
    return os.stat(path).st_uid == uid


def _first_line(exc: Exception, limit: int = 120) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


def use_course_exchange(config) -> None:
    """Plug this module's exchange classes into an nbgrader Config (``use_course_exchange(c)`` in a config file)."""
    for step, cls in (("release_assignment", ReleaseAssignment), ("fetch_assignment", FetchAssignment),
                      ("submit", Submit), ("collect", Collect), ("list", List),
                      ("release_feedback", ReleaseFeedback), ("fetch_feedback", FetchFeedback)):
        setattr(config.ExchangeFactory, step, f"{cls.__module__}.{cls.__qualname__}")
