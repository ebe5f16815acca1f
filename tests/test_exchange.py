"""nbgrader's exchange, the whole way round, with an instructor and two learners as real OS users.

The instructor releases 02-remaining; ada and ben fetch it; ada submits the release untouched,
then her model answers (the later submission must win); ben submits his realistic mistake; the
instructor collects, adds cai's submission from an LMS download (``--submissions``, no
``submission_secret.txt``), grades with ``python -m ctx_course grade``, and releases the feedback;
ada and ben fetch their own feedback pages. As root each person is a system user of their own
(see ``classroom.py``); otherwise every one is the current user and the permission checks are
skipped, with the reason.

Hand-worked scores (check_remaining is worth 3 points, the free-response questions 2 + 1):
ada's later submission is the model solution: every check passes, 3/3, and both answers wait for
the grader (3 points). Her first one, the untouched release, would score 0/3. ben leaves out the
cache fields: remaining(1,000,000, 800,000, 50,000, 20,000, 64,000) gives 1,000,000 − 20,000 −
64,000 = 916,000, not 66,000: 0/3; he answered q_cache_fields only, so 2 points wait. cai hands
in the release untouched: 0/3, nothing waits.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from html.parser import HTMLParser
from pathlib import Path

import pytest
from classroom import COURSE_ID, COURSE_PACKAGES, _link_tree, open_classroom

from conftest import REPO

pytestmark = pytest.mark.heavy

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"
EXAMPLE = REPO / "examples" / "class" / "submitted"
LMS_STUDENT = "cai"  # handed in through an LMS download, not the exchange


@pytest.fixture(scope="module")
def classroom():
    """The class: an instructor and two learners (real users as root), removed afterwards, also on failure."""
    room = open_classroom(("ada", "ben"))
    try:
        yield room
    finally:
        room.close()


@pytest.fixture(scope="module")
def trip(classroom):
    """The round trip, step by step; returns what each step left behind for the tests to check."""
    room, teacher, ada, ben = classroom, classroom["instructor"], classroom["ada"], classroom["ben"]
    seen = {}
    room.nbgrader(teacher, "release_assignment", ASSIGNMENT)
    for learner in (ada, ben):
        room.nbgrader(learner, "fetch_assignment", ASSIGNMENT)
    fetched = ada.home / ASSIGNMENT / NOTEBOOK
    seen["fetched"] = fetched.read_bytes()
    room.nbgrader(ada, "submit", ASSIGNMENT, student=True)  # the release, untouched
    room.hand_in(ada, EXAMPLE / "ada" / ASSIGNMENT / NOTEBOOK, fetched)
    room.nbgrader(ada, "submit", ASSIGNMENT, student=True)  # her answers: this one must count
    room.hand_in(ben, EXAMPLE / "ben" / ASSIGNMENT / NOTEBOOK, ben.home / ASSIGNMENT / NOTEBOOK)
    room.nbgrader(ben, "submit", ASSIGNMENT, student=True)
    if room.real_users:  # ben hands his work in under ada's name, after her: it must not replace hers
        room.nbgrader(ben, "submit", ASSIGNMENT, f"--student={ada.name}")
    seen["inbound"] = sorted(p.name for p in (room.exchange / COURSE_ID / "inbound").iterdir())
    seen["ben_looks"] = _attempts(room, ben, ada)

    seen["collect"] = room.nbgrader(teacher, "collect", ASSIGNMENT, "--update")
    lms = room.base / "lms"
    (lms / LMS_STUDENT / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(EXAMPLE / LMS_STUDENT / ASSIGNMENT / NOTEBOOK, lms / LMS_STUDENT / ASSIGNMENT / NOTEBOOK)
    for path in [lms, *lms.rglob("*")]:
        _give(path, teacher)
    seen["grade"] = room.run(teacher, [str(room.python), "-m", "ctx_course", "grade", "--submissions", str(lms),
                                       "--jobs", "1"], cwd=room.course)
    seen["release_feedback"] = room.nbgrader(teacher, "release_feedback", ASSIGNMENT)
    for learner in (ada, ben):
        room.nbgrader(learner, "fetch_feedback", ASSIGNMENT, student=True)
    return seen


def test_learners_fetch_the_release(classroom, trip):
    """The notebook a learner fetches is the committed release, byte for byte."""
    assert trip["fetched"] == (REPO / "lessons" / ASSIGNMENT / NOTEBOOK).read_bytes()


def test_every_submission_reaches_the_inbound_folder(classroom, trip):
    """Three submissions arrive, each named by its learner: ada's two and ben's one (and, with real users, the one
    ben handed in under ada's name)."""
    names = sorted(name.split("+")[0] for name in trip["inbound"])
    ada, ben = classroom["ada"].name, classroom["ben"].name
    assert names == sorted([ada, ada, ben] + ([ada] if classroom.real_users else []))


def test_submission_under_another_name_is_not_collected(classroom, trip):
    """ben's submission under ada's name, the latest in her name, is not collected (collect names it); ada's own
    later submission is, so she keeps her 3/3 (see test_scores_are_the_hand_worked_ones)."""
    _needs_real_users(classroom)
    inbound = classroom.exchange / COURSE_ID / "inbound"
    ada, ben = classroom["ada"], classroom["ben"]
    forged = [n for n in trip["inbound"] if n.startswith(ada.name + "+") and (inbound / n).stat().st_uid == ben.uid]
    assert len(forged) == 1
    said = trip["collect"].stdout + trip["collect"].stderr
    assert [line for line in said.splitlines() if "not collected" in line and forged[0] in line], said[-2000:]
    collected = (_work(classroom) / "submitted" / ada.name / ASSIGNMENT / "timestamp.txt").read_text()
    assert collected != forged[0].split("+")[2]


def test_scores_are_the_hand_worked_ones(classroom, trip):
    """grades.csv holds the scores of the module docstring: ada 3/3 (her later submission), ben 0/3, cai 0/3."""
    rows = _grades(classroom)
    got = {row["student_id"]: (row["auto_score"], row["max_auto_score"]) for row in rows}
    assert got == {classroom["ada"].name: ("3", "3"), classroom["ben"].name: ("0", "3"), LMS_STUDENT: ("0", "3")}


def test_later_submission_wins(classroom, trip):
    """What was collected for ada is her later submission: its timestamp is the later of her two."""
    ada = classroom["ada"]
    inbound = classroom.exchange / COURSE_ID / "inbound"
    stamps = sorted(name.split("+")[2] for name in trip["inbound"]
                    if name.split("+")[0] == ada.name and (inbound / name).stat().st_uid == ada.uid)
    collected = _work(classroom) / "submitted" / ada.name / ASSIGNMENT / "timestamp.txt"
    assert len(stamps) == 2 and collected.read_text() == stamps[-1]


def test_timestamp_and_secret_travel_to_the_feedback_folder(classroom, trip):
    """Each exchange submission's timestamp.txt and submission_secret.txt reach feedback/<student>/<assignment>/
    unchanged: they are the files the learner's own cache holds, which release_feedback hashes the page name from."""
    for role in ("ada", "ben"):
        member = classroom[role]
        cache = member.home / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID
        latest = sorted(cache.glob(f"{member.name}+{ASSIGNMENT}+*"))[-1]
        feedback = _work(classroom) / "feedback" / member.name / ASSIGNMENT
        for name in ("timestamp.txt", "submission_secret.txt"):
            assert (feedback / name).read_text() == (latest / name).read_text(), (role, name)


def test_each_learner_fetches_their_own_feedback(classroom, trip):
    """ada's and ben's fetched pages are the ones graded for them (byte for byte), and they differ."""
    pages = {}
    for role in ("ada", "ben"):
        member = classroom[role]
        fetched = list((member.home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT.split('-', 1)[1]}.html"))
        graded = _work(classroom) / "feedback" / member.name / ASSIGNMENT / "remaining.html"
        assert len(fetched) == 1, (role, fetched)
        assert fetched[0].read_bytes() == graded.read_bytes(), role
        pages[role] = fetched[0].read_bytes()
    assert pages["ada"] != pages["ben"]


def test_fetched_feedback_holds_no_hidden_test(classroom, trip):
    """No line of a hidden test (they exist: found in solutions/) is in a fetched feedback page, nor in the
    instructor's autograded copy (its kernel never had them)."""
    hidden = _hidden_lines()
    ada = classroom["ada"]
    autograded = (_work(classroom) / "autograded" / ada.name / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8")
    assert hidden and not any(json.dumps(line)[1:-1] in autograded for line in hidden)
    for role in ("ada", "ben"):
        member = classroom[role]
        pages = list((member.home / ASSIGNMENT / "feedback").glob("*/*.html"))
        assert pages, role
        for page in pages:
            text = _html_text(page)
            assert [line for line in hidden if line in text] == [], (role, page.name)


def test_submission_without_secret_is_named_in_the_grading_summary(classroom, trip):
    """cai's submission came through --submissions with no submission_secret.txt: the summary names it and says
    that release_feedback cannot return its page."""
    out = trip["grade"].stdout
    line = next((line for line in out.splitlines() if "submission_secret.txt" in line), "")
    assert f"{LMS_STUDENT} {ASSIGNMENT}" in line, out[-2000:]
    assert classroom["ada"].name not in line and classroom["ben"].name not in line


def test_release_feedback_names_the_page_it_cannot_release(classroom, trip):
    """release_feedback releases every page it can and says in one line which one has no secret (cai's)."""
    done = trip["release_feedback"]
    text = done.stdout + done.stderr
    lines = [line for line in text.splitlines() if LMS_STUDENT in line and "submission_secret.txt" in line]
    assert len(lines) == 1, text[-2000:]
    assert "Traceback" not in text


def test_learner_cannot_list_the_inbound_folder(classroom, trip):
    """ben cannot list the exchange's inbound folder, where every learner's submission lies."""
    _needs_real_users(classroom)
    assert trip["ben_looks"]["list inbound"] != 0


def test_learner_cannot_read_another_learners_work(classroom, trip):
    """ben can neither list ada's home nor read her notebook or her submission cache (which holds her secret)."""
    _needs_real_users(classroom)
    looks = trip["ben_looks"]
    assert looks["list ada's home"] != 0
    assert looks["read ada's notebook"] != 0
    assert looks["read ada's cache"] != 0


def test_learner_cannot_read_the_course(classroom, trip):
    """ben cannot read the instructor's course folder (solutions with hidden tests, the gradebook)."""
    _needs_real_users(classroom)
    assert trip["ben_looks"]["read solutions"] != 0


def test_control_learner_reads_own_work(classroom, trip):
    """Control for the permission checks: the same commands succeed on ben's own files."""
    _needs_real_users(classroom)
    assert trip["ben_looks"]["read own notebook"] == 0


CHECKOUT_PARTS = (*COURSE_PACKAGES, "tests", "hub", "lessons", "lessons-en", "solutions", "i18n", "pyproject.toml",
                  "nbgrader_config.py", "README.md", "LICENSE")
PROBE = """
import json, sys
sys.path.insert(0, "tests")
from classroom import open_classroom
room = open_classroom(("ada",))
try:
    ada = room["ada"]
    said = room.run(ada, [str(room.python), "-c", "import ctx_course, nbgrader; print(ctx_course.__file__)"]).stdout
    version = room.run(ada, [str(room.python), "-m", "nbgrader", "--version"], check=False)
    try:  # the control: ada cannot start the checkout's own python
        closed = room.run(ada, [sys.executable, "-c", "pass"], check=False).returncode
    except PermissionError as error:
        closed = str(error)
    print(json.dumps({"isolation": room.isolation, "base": str(room.base), "ctx_course": said.strip(),
                      "nbgrader": version.returncode, "checkout_python": closed}))
finally:
    room.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the class's users are made with useradd, which needs root")
def test_class_runs_from_a_checkout_in_a_closed_home(tmp_path):
    """A checkout with its own .venv inside a folder of mode 0700 (a clone in root's home): the class still has real
    users, who cannot run that .venv's python (the control) but import the course from the class's own folder."""
    home = tmp_path / "home"
    checkout = home / "workbook"
    checkout.mkdir(parents=True)
    home.chmod(0o700)
    for name in CHECKOUT_PARTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, checkout / name)
    venv = checkout / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    shutil.rmtree(site)
    _link_tree(Path(sysconfig.get_paths()["purelib"]), site, skip=("__editable__*", "ctx_reference-*"))
    # the checkout installed in it in editable mode, as a path (what setuptools' "compat" editable mode writes)
    (site / "__editable__.ctx_reference-0.1.0.pth").write_text(f"{checkout}\n", encoding="utf-8")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", PROBE], cwd=checkout, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["isolation"] is None
    assert seen["checkout_python"] != 0
    assert seen["ctx_course"].startswith(seen["base"] + "/"), seen
    assert seen["nbgrader"] == 0


# --------------------------------------------------------------------------------------------


def _attempts(room, ben, ada) -> dict[str, int]:
    """Exit status of each thing ben tries on what is not his (and one on what is)."""
    inbound = room.exchange / COURSE_ID / "inbound"
    cache = ada.home / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID
    tries = {
        "list inbound": ["ls", str(inbound)],
        "list ada's home": ["ls", str(ada.home)],
        "read ada's notebook": ["cat", str(ada.home / ASSIGNMENT / NOTEBOOK)],
        "read ada's cache": ["find", str(cache), "-name", "submission_secret.txt", "-exec", "cat", "{}", "+"],
        "read solutions": ["cat", str(room.course / "solutions" / ASSIGNMENT / NOTEBOOK)],
        "read own notebook": ["cat", str(ben.home / ASSIGNMENT / NOTEBOOK)],
    }
    return {what: room.run(ben, argv, check=False).returncode for what, argv in tries.items()}


def _needs_real_users(room) -> None:
    if not room.real_users:
        pytest.skip(room.isolation)


def _work(room) -> Path:
    return room.course / "grading"


def _grades(room) -> list[dict[str, str]]:
    with (_work(room) / "grades.csv").open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT]


def _hidden_lines() -> list[str]:
    """The lines (12 characters or more) of the hidden tests in the assignment's source notebook."""
    source = json.loads((REPO / "solutions" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))
    text = "".join("".join(cell["source"]) for cell in source["cells"])
    hidden = "".join(re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", text, flags=re.S))
    return [line.strip() for line in hidden.splitlines() if len(line.strip()) >= 12]


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def _html_text(path: Path) -> str:
    """The text a reader of the page sees (syntax highlighting splits code into many tags)."""
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return "".join(parser.parts)


def _give(path: Path, member) -> None:
    if member.real:
        os.chown(path, member.uid, member.gid)
