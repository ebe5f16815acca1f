"""Load the course's nbgrader configuration, optionally redirected to another folder.

Covers: reading ``nbgrader_config.py`` from a course root and pointing the release folder, the
working folder (gradebook, submissions, autograded notebooks, feedback) and the timeout elsewhere,
for tests and benchmarks that must not touch the instructor's gradebook; and what every path into
nbgrader needs first: its tools on PATH, the gradebook's schema version read in this process, and
one database engine per gradebook.

Vocabulary: *root* is the folder holding ``nbgrader_config.py``, ``solutions/`` and ``lessons/``;
*work* is the folder for everything a grading run writes (``grading/`` by default).
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

CONFIG_FILE = "nbgrader_config.py"
WORK_DIRS = ("submitted", "autograded", "feedback", "solution", "source_with_tests")


def put_tools_on_path() -> None:
    """Put this interpreter's ``bin/`` on PATH: nbgrader shells out to ``alembic`` from there.

    Needed whenever nbgrader creates a gradebook and the environment was not activated
    (``.venv/bin/python -m ctx_course …``, pytest run from an IDE).
    """
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def gradebook_schema_head() -> str:
    """Return the newest revision of nbgrader's gradebook schema, read from its migration scripts.

    nbgrader stamps every new gradebook with it. nbgrader itself asks ``alembic heads`` in a
    subprocess, which costs about 3 s of CPU per new gradebook (each grading worker, each fresh
    grading folder); reading the same scripts here takes milliseconds. Example: ``"e43177bfe90b"``.
    """
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    heads = ScriptDirectory(ALEMBIC_DIR).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"nbgrader's gradebook migrations must have one head (got {heads!r})")
    return heads[0]


def read_schema_in_process() -> None:
    """Make nbgrader stamp new gradebooks with ``gradebook_schema_head()`` instead of a subprocess."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = gradebook_schema_head


def share_gradebook_engines() -> None:
    """Make every ``Gradebook`` of one database in this process use the same SQLAlchemy engine.

    nbgrader opens the gradebook several times for each notebook it autogrades, each time with a
    new engine, which compiles every SQL statement afresh: about a sixth of the grader's own CPU.
    One engine per database URL keeps its compiled statements; closing a gradebook still gives
    its connections back (``engine.dispose()``), and worker processes build engines of their own.
    """
    import nbgrader.api

    nbgrader.api.create_engine = _shared_engine


@functools.cache
def _shared_engine(url: str, **options):
    import sqlalchemy

    return sqlalchemy.create_engine(url, **options)


# Any number the course's runs agree on: the PostgreSQL advisory lock held while a gradebook is created.
CREATE_LOCK = 7_216_001


def create_gradebook(db_url: str, course_id: str) -> None:
    """Create the tables of the gradebook at ``db_url`` and its course rows if they are missing.

    Several runs from several folders may start at once on one PostgreSQL database: there, an
    advisory lock makes them create the tables one after the other (the second finds them). The
    rows are the course's and nbgrader's ``default_course``: nbgrader's own steps open the gradebook
    without a course id, and opening it adds that row when it is missing, so two runs opening it
    for the first time at once would both add it and one would fail on the duplicate.
    """
    import sqlalchemy
    from nbgrader.api import Gradebook

    if not db_url.startswith("postgresql"):
        with Gradebook(db_url, course_id), Gradebook(db_url):
            return
    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text(f"SELECT pg_advisory_lock({CREATE_LOCK})"))
            try:
                with Gradebook(db_url, course_id), Gradebook(db_url):
                    pass
            finally:
                connection.execute(sqlalchemy.text(f"SELECT pg_advisory_unlock({CREATE_LOCK})"))
    finally:
        engine.dispose()


def load_course_config(
    root: str | os.PathLike = ".",
    *,
    work: str | os.PathLike | None = None,
    release: str | os.PathLike | None = None,
    timeout: int | None = None,
) -> Config:
    """Return the nbgrader Config of the course at ``root``, with optional redirections.

    Example: ``load_course_config(".", work=tmp)`` keeps the repository's solutions but writes the
    gradebook and every grading folder under ``tmp``. Also puts the tools nbgrader calls on PATH,
    has it read the gradebook's schema version in this process and share one engine per gradebook.
    """
    put_tools_on_path()
    read_schema_in_process()
    share_gradebook_engines()
    root = Path(root).resolve()
    if not (root / CONFIG_FILE).is_file():
        raise ValueError(f"root must be a course folder containing {CONFIG_FILE} (got {str(root)!r})")
    config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    if work is not None:
        work = Path(work).resolve()
        work.mkdir(parents=True, exist_ok=True)
        for name in WORK_DIRS:
            setattr(config.CourseDirectory, f"{name}_directory", str(work / name))
        config.CourseDirectory.db_url = f"sqlite:///{work / 'gradebook.db'}"
    if release is not None:
        config.CourseDirectory.release_directory = str(Path(release).resolve())
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds (got {timeout!r})")
        config.Execute.timeout = timeout
    return config


def work_folder(root: Path, config: Config) -> Path:
    """Return the folder a grading run writes to: the parent of the configured ``submitted/``."""
    return submitted_folder(root, config).parent


def submitted_folder(root: Path, config: Config) -> Path:
    """Return the configured folder of submissions, ``<work>/submitted`` (relative to ``root`` unless absolute)."""
    submitted = Path(config.CourseDirectory.submitted_directory)
    return submitted if submitted.is_absolute() else root / submitted


def assignments(root: str | os.PathLike = ".") -> list[str]:
    """Return the assignment ids of the course, in reading order (the folders of ``solutions/``).

    Example: ``["01-window-math", "02-remaining", …, "10-sessions"]``.
    """
    source = Path(root) / "solutions"
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))
