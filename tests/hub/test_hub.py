"""The course on a real JupyterHub: release, fetch and submit (REST for ada, Chromium for ben), grade, feedback.

Runs docs/jupyterhub.md, "Running the course on JupyterHub" (see conftest.py), with two learners
and an instructor who are real OS users; ada works in the English edition (``COURSE_ENGLISH_LEARNERS``),
ben in the Chinese one. Hand-worked scores (as in tests/test_exchange.py): ada hands in the model
solution, in English, 3/3 on check_remaining; ben leaves out the cache fields (1,000,000 − 20,000 −
64,000 = 916,000, not 66,000), 0/3.
"""
from __future__ import annotations

import csv
import html
import json
import os
import shlex
import subprocess
import sys
import time

import pytest
from chromium import headless_chromium
from classroom import COURSE_ID

from hub.conftest import PASSWORD, leftovers, readme_blocks

from conftest import REPO, SOLUTIONS, class_builder

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"
EXAMPLE = REPO / "examples" / "class" / "submitted"
UI_TIMEOUT = 120_000  # ms


def _instructor_runs(hub, title: str) -> list:
    """Run a block of the guide's commands as the instructor, in the course folder, in the Formgrader's environment."""
    room = hub.room
    done = []
    for line in readme_blocks()[title]:
        words = shlex.split(line)
        tool = {"nbgrader": room.bin / "nbgrader", "python": room.python}[words[0]]
        done.append(room.run(room["instructor"], [str(tool), *words[1:]], cwd=room.course,
                             config_path=(room.grader_config, room.learner_config)))
    return done


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as instance:
        yield instance


@pytest.fixture(scope="module")
def ben_page(browser, hub):
    """ben, logged in to the hub with the dummy authenticator's password, in his JupyterLab."""
    ben = hub.room["ben"].name
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(f"{hub.base}/hub/login")
    page.fill("input[name=username]", ben)
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(f"**/user/{ben}/lab**", timeout=UI_TIMEOUT)
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    yield page
    page.close()


def _open_assignment_list(page) -> None:
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
    page.wait_for_selector("#released_assignments_list, #fetched_assignments_list")


@pytest.fixture(scope="module")
def trip(hub, ben_page):
    """Release; ada (REST) and ben (browser) fetch and submit; the instructor grades and releases the feedback."""
    room, seen = hub.room, {}
    ada, ben = room["ada"].name, room["ben"].name
    seen["release"] = _instructor_runs(hub, "the instructor releases")

    # ada, through the REST API of her server (the calls the Assignment List makes).
    hub.start_server(ada)
    seen["ada_list"] = hub.json("GET", f"user/{ada}/assignments?course_id={COURSE_ID}")
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    seen["ada_fetch"] = hub.json("POST", f"user/{ada}/assignments/fetch", data=form, form=True)
    seen["ada_fetched"] = (room["ada"].home / ASSIGNMENT / NOTEBOOK).read_bytes()
    answer = json.loads(_english_model())
    hub.json("PUT", f"user/{ada}/api/contents/{ASSIGNMENT}/{NOTEBOOK}",
             data={"type": "notebook", "format": "json", "content": answer})
    seen["ada_submit"] = hub.json("POST", f"user/{ada}/assignments/submit", data=form, form=True)

    # ben, in Chromium: Assignment List, Fetch, answer, Submit.
    page = ben_page
    _open_assignment_list(page)
    row = page.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
    row.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
    fetched.get_by_role("button", name="Submit").wait_for()
    answer = (EXAMPLE / "ben" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8")
    status = page.evaluate(SAVE_JS, [f"{ASSIGNMENT}/{NOTEBOOK}", answer])  # what JupyterLab's save sends
    assert status == 200, status
    fetched.get_by_role("button", name="Submit").click()
    page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).wait_for()
    seen["ben_submitted_row"] = page.locator("#submitted_assignments_list").inner_text()

    seen["grade"] = _instructor_runs(hub, "the instructor grades")

    # Feedback: ada over REST, ben with the button.
    seen["ada_feedback"] = hub.json("POST", f"user/{ada}/assignments/fetch_feedback", data=form, form=True)
    page.reload()
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    _open_assignment_list(page)
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT).first
    submitted.get_by_role("button", name="Fetch Feedback").click()
    deadline = time.monotonic() + 120
    while not list((room["ben"].home / ASSIGNMENT / "feedback").glob("*/*.html")) and time.monotonic() < deadline:
        time.sleep(0.5)
    pages = sorted((room["ben"].home / ASSIGNMENT / "feedback").glob("*/*.html"))
    if pages:
        stamp = pages[0].parent.name
        page.goto(f"{hub.base}/user/{ben}/files/{ASSIGNMENT}/feedback/{stamp}/{pages[0].name}")
        seen["ben_feedback_text"] = page.inner_text("body")
    return seen


def _english_model() -> str:
    """The English release of the assignment with the model solution in its answer cells."""
    build = class_builder()
    source = next((SOLUTIONS / ASSIGNMENT).glob("*.ipynb"))
    answers = {cell["metadata"]["nbgrader"]["grade_id"]: build.MODEL
               for cell in json.loads(source.read_text(encoding="utf-8"))["cells"]
               if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution")}
    return build.submission(REPO / "lessons-en" / ASSIGNMENT / NOTEBOOK, source, build.Work(code=answers))


SAVE_JS = """
async ([path, text]) => {
  const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || '';
  const base = document.querySelector('body').dataset.baseUrl
    || JSON.parse(document.getElementById('jupyter-config-data').textContent).baseUrl;
  const response = await fetch(`${base}api/contents/${path}`, {
    method: 'PUT', credentials: 'same-origin',
    headers: {'Content-Type': 'application/json', 'X-XSRFToken': decodeURIComponent(xsrf)},
    body: JSON.stringify({type: 'notebook', format: 'json', content: JSON.parse(text)}),
  });
  return response.status;
}
"""


def test_learner_servers_list_the_released_assignment(hub, trip):
    """ada's server, with the hub's learner configuration, lists 02-remaining as released in the course."""
    listed = [(a["course_id"], a["assignment_id"], a["status"]) for a in trip["ada_list"]["value"]]
    assert (COURSE_ID, ASSIGNMENT, "released") in listed


def test_the_english_learner_fetches_the_english_edition(hub, trip):
    """ada's server fetches the English release under the notebook's own name; ben's Chinese one is unchanged."""
    assert trip["ada_fetched"] == (REPO / "lessons-en" / ASSIGNMENT / NOTEBOOK).read_bytes()
    assert (hub.room["ben"].home / ASSIGNMENT / NOTEBOOK).is_file()
    assert not (hub.room["ada"].home / ASSIGNMENT / ".edition-en").exists()


def test_the_english_learner_reads_english_feedback(hub, trip):
    """ada's feedback page speaks English (her checks all pass); ben's speaks Chinese."""
    member = hub.room["ada"]
    graded = hub.room.course / "grading" / "feedback" / member.name / ASSIGNMENT / "remaining.html"
    assert "All 7 checks passed." in html.unescape(graded.read_text(encoding="utf-8"))


def test_fetch_and_submit_succeed(hub, trip):
    """ada's fetch and submit over REST succeed, and ben's submission appears under Submitted in his browser."""
    assert trip["ada_fetch"]["success"] and trip["ada_submit"]["success"]
    assert ASSIGNMENT in trip["ben_submitted_row"]


def test_submissions_carry_the_learners_os_names(hub, trip):
    """The inbound folder holds one submission of each learner, named by their OS user (nobody else's name)."""
    inbound = hub.room.exchange / COURSE_ID / "inbound"
    owners = sorted(p.name.split("+")[0] for p in inbound.iterdir())
    assert owners == sorted([hub.room["ada"].name, hub.room["ben"].name])


def test_scores_are_the_hand_worked_ones(hub, trip):
    """grades.csv after the guide's grading commands: ada 3/3, ben 0/3."""
    with (hub.room.course / "grading" / "grades.csv").open(newline="", encoding="utf-8") as handle:
        got = {r["student_id"]: (r["auto_score"], r["max_auto_score"]) for r in csv.DictReader(handle)
               if r["assignment"] == ASSIGNMENT}
    assert got == {hub.room["ada"].name: ("3", "3"), hub.room["ben"].name: ("0", "3")}


def test_grading_ran_as_the_unprivileged_grader(hub, trip):
    """The guide's `python -m ctx_course grade` ran as the grader's own account (not root), printed no line warning
    of root, and the gradebook and grades.csv it wrote are that account's."""
    room = hub.room
    grader = room["instructor"]
    assert hub.settings["COURSE_GRADER"] == grader.name and grader.real and grader.uid != 0
    (run,) = [done for done in trip["grade"] if "ctx_course" in done.args]
    assert run.returncode == 0 and "grading as root" not in run.stderr
    for written in ("gradebook.db", "grades.csv"):
        assert (room.course / "grading" / written).stat().st_uid == grader.uid, written


@pytest.mark.parametrize(("account", "line"), [
    ("root", "COURSE_GRADER must be an unprivileged account, not root (got 'root')"),
    ("ctx-no-such-account", "COURSE_GRADER must name an existing account (got 'ctx-no-such-account')"),
])
def test_the_hub_refuses_to_start_with_a_grader_that_is_root_or_nobody(tmp_path, account, line):
    """COURSE_GRADER=root, or an account that does not exist: jupyterhub exits with status 1 and that one line."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COURSE_GRADER": account,
           "COURSE_HUB_STATE": str(tmp_path / "state"), "COURSE_LEARNERS": "ada", "COURSE_ROOT": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "jupyterhub", "-f", str(REPO / "hub" / "jupyterhub_config.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(line), done.stderr[-2000:]


def test_each_learner_receives_their_feedback(hub, trip):
    """ada's fetched page (REST) and ben's (button) are the pages graded for them, byte for byte."""
    assert trip["ada_feedback"]["success"]
    for role in ("ada", "ben"):
        member = hub.room[role]
        pages = list((member.home / ASSIGNMENT / "feedback").glob("*/remaining.html"))
        graded = hub.room.course / "grading" / "feedback" / member.name / ASSIGNMENT / "remaining.html"
        assert len(pages) == 1 and pages[0].read_bytes() == graded.read_bytes(), role


def test_ben_reads_his_feedback_in_the_browser(hub, trip):
    """The page ben opens shows his own score of check_remaining (0 of 3) and no hidden-test line."""
    text = trip.get("ben_feedback_text", "")
    assert "remaining" in text and "0 / 3" in text, text[:500]
    assert "什么都没用" not in text and "expect_digest" not in text


def test_formgrader_is_open_to_the_instructors_group_only(hub, trip):
    """The Formgrader service answers the instructor (in formgrade-context-engineering) and refuses a learner."""
    tokens = {}
    for role in ("instructor", "ada"):
        name = hub.room[role].name
        tokens[role] = hub.json("POST", f"hub/api/users/{name}/tokens", data={"note": "suite"})["token"]
    status, body = hub.request("GET", f"services/{COURSE_ID}/formgrader", token=tokens["instructor"])
    assert status == 200 and b"Manage Assignments" in body, (status, body[:300])
    status, _ = hub.request("GET", f"services/{COURSE_ID}/formgrader", token=tokens["ada"])
    assert status == 403


def test_learner_servers_have_no_formgrader(hub, trip):
    """A learner's own server does not serve the Formgrader (the hub's learner configuration turns it off)."""
    status, _ = hub.request("GET", f"user/{hub.room['ada'].name}/formgrader")
    assert status == 404


def test_hub_check_passes_for_a_learner(hub, trip):
    """hub-check, run as a learner with the guide's settings, finds the hub answering and the exchange usable."""
    room = hub.room
    done = room.run(room["ada"], [str(room.python), "-m", "ctx_course", "hub-check", "--url", hub.base])
    assert done.stdout.startswith("hub: JupyterHub ") and f"exchange: {room.exchange} exists" in done.stdout


def test_stopping_the_hub_leaves_no_process(hub, trip, ben_page):
    """After the hub stops, no process of the class's users (servers, the Formgrader) and no proxy is left."""
    ben_page.close()
    hub.stop()
    deadline = time.monotonic() + 30
    while leftovers(hub) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert leftovers(hub) == {}
