"""A deadline rush through nbgrader's exchange: thirty learners, real OS users, submit within the same few seconds.

Every learner starts from a copy of the release of 02-remaining in their home and hands it in with
``nbgrader submit``, all thirty processes started at once (the round trip with fetching is in
``test_exchange.py``). Some submit twice in a row, the second notebook different from the first;
then the assignment falls due and a second wave comes in late: some learners' second submission,
and some who hand in only now. The instructor collects (``nbgrader collect``, the course's
exchange) and grades (``python -m ctx_course grade --jobs 2``) with a late policy in
``deadlines.toml``.

Each notebook a learner hands in prints a line no other notebook prints (the learner's name and
which of their submissions it is) from the answer cell, so the autograded notebook shows whose
answer was run, and which of its owner's.

The five kinds of learner, by their number n (1 to 30), and their hand-worked scores
(check_remaining is worth 3 points; the model answer passes it, the cache fields left out fail it:
remaining(1,000,000, 800,000, 50,000, 20,000, 64,000) gives 916,000 instead of 66,000):

- n % 5 == 1: the mistake, then the model answer, both on time: 3/3;
- n % 5 == 2: the model answer, then the mistake, both on time: 0/3 (the later one counts);
- n % 5 == 3: the mistake on time, the model answer late: 3/3, late;
- n % 5 == 4: the model answer once, on time: 3/3;
- n % 5 == 0: the model answer once, late: 3/3, late.

Late policy: 0.1 of the score per day started, at most 0.5. A submission seconds late has started
one day: on 3 points (no hand grade yet) it costs 0.3, leaving 2.7.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from pathlib import Path

import nbformat
import pytest
from classroom import COURSE_ID, open_classroom

from conftest import REMAINING_MODEL, REPO, class_builder

pytestmark = pytest.mark.heavy

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"
LEARNERS = 30
MISTAKE = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - input - max_tokens
    return left, left < window / 10
'''
# (wave, answer) of each submission, in order, by n % 5 (see the module docstring).
PLANS = {
    1: (("on time", MISTAKE), ("on time", REMAINING_MODEL)),
    2: (("on time", REMAINING_MODEL), ("on time", MISTAKE)),
    3: (("on time", MISTAKE), ("late", REMAINING_MODEL)),
    4: (("on time", REMAINING_MODEL),),
    0: (("late", REMAINING_MODEL),),
}
WAVES = ("on time", "late")
POLICY = {"late": "per-day", "share_per_day": 0.1, "cap": 0.5}
SUBMIT_TIMEOUT = 900  # seconds one nbgrader submit may take: thirty start at once on a machine of two cores
PAUSE = 1.0  # seconds between the end of the first wave and the due date, and again before the second wave


def _role(n: int) -> str:
    return f"r{n:02d}"


def _plan(n: int):
    return PLANS[n % 5]


def _token(name: str, number: int) -> str:
    """The line a learner's ``number``-th submission prints: theirs alone."""
    return f"answer of {name}, submission {number}"


@pytest.fixture(scope="module")
def classroom():
    """The class: an instructor and thirty learners (real users as root), removed afterwards, also on failure."""
    room = open_classroom(tuple(_role(n) for n in range(1, LEARNERS + 1)))
    try:
        yield room
    finally:
        room.close()


@pytest.fixture(scope="module")
def rush(classroom):
    """Release, the two waves of submissions, collect, grade; returns what each step left and how long it took."""
    room, teacher = classroom, classroom["instructor"]
    seen: dict = {"seconds": {}}
    room.nbgrader(teacher, "release_assignment", ASSIGNMENT)
    answers = _write_answers(room)
    for n in range(1, LEARNERS + 1):  # each learner's folder, with the notebook of their first submission saved
        member = room[_role(n)]
        room.run(member, ["mkdir", "-p", str(member.home / ASSIGNMENT)])
        room.run(member, ["cp", str(answers[n][0]), str(member.home / ASSIGNMENT / NOTEBOOK)])
    for wave in WAVES:
        if wave == "late":
            time.sleep(PAUSE)
            seen["due"] = dt.datetime.now(dt.UTC)
            time.sleep(PAUSE)
        jobs = [n for n in range(1, LEARNERS + 1) if any(when == wave for when, _ in _plan(n))]
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:  # every learner's first process started at once
            outcomes = list(pool.map(_hand_in, repeat(room), jobs, repeat(wave), [answers[n] for n in jobs]))
        failed = [problem for problem in outcomes if problem]
        seen["seconds"][wave] = time.perf_counter() - start
        assert failed == [], failed[:3]
        seen.setdefault("learners", {})[wave] = len(jobs)
    seen["inbound"] = sorted(p.name for p in (room.exchange / COURSE_ID / "inbound").iterdir())

    _write_deadlines(room, seen["due"])
    start = time.perf_counter()
    seen["collect"] = room.nbgrader(teacher, "collect", ASSIGNMENT)
    seen["seconds"]["collect"] = time.perf_counter() - start
    start = time.perf_counter()
    seen["grade"] = room.run(teacher, [str(room.python), "-m", "ctx_course", "grade", "--jobs", "2"],
                             cwd=room.course, check=False, timeout=900)
    seen["seconds"]["grade"] = time.perf_counter() - start
    print(f"\ndeadline rush: {LEARNERS} learners; {len(seen['inbound'])} submissions; "
          + "; ".join(f"{wave} wave: {seen['learners'][wave]} learners in {seen['seconds'][wave]:.1f} s"
                      for wave in WAVES)
          + f"; collected {len(_collected(room))} in {seen['seconds']['collect']:.1f} s; "
          f"graded in {seen['seconds']['grade']:.1f} s")
    return seen


def test_every_submission_reaches_the_inbound_folder(classroom, rush):
    """Nothing is lost on the way in: every learner's submissions arrive, as many as each handed in, 48 in all
    (six learners of each kind: 2 + 2 + 2 + 1 + 1 submissions)."""
    got: dict[str, int] = {}
    for name in rush["inbound"]:
        got[name.split("+")[0]] = got.get(name.split("+")[0], 0) + 1
    want = {classroom[_role(n)].name: len(_plan(n)) for n in range(1, LEARNERS + 1)}
    assert got == want
    assert sum(want.values()) == 48


def test_collect_takes_each_learners_last_submission(classroom, rush):
    """The instructor's collect takes one submission per learner, thirty in all, each its owner's latest: its
    timestamp.txt is the latest of that learner's own submissions in the inbound folder."""
    assert rush["collect"].returncode == 0
    collected = _collected(classroom)
    assert sorted(collected) == sorted(classroom[_role(n)].name for n in range(1, LEARNERS + 1))
    for name, folder in collected.items():
        stamps = sorted(entry.split("+")[2] for entry in rush["inbound"] if entry.split("+")[0] == name)
        assert (folder / "timestamp.txt").read_text() == stamps[-1], name


def test_grading_runs_each_learners_last_answer(classroom, rush):
    """What ran for each learner is their own last answer: the answer cell of every autograded notebook prints that
    learner's line for their last submission, and no other."""
    assert rush["grade"].returncode == 0, rush["grade"].stdout[-3000:] + rush["grade"].stderr[-3000:]
    for n in range(1, LEARNERS + 1):
        member = classroom[_role(n)]
        path = classroom.course / "grading" / "autograded" / member.name / ASSIGNMENT / NOTEBOOK
        nb = nbformat.read(path, as_version=4)
        answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "remaining")
        printed = "".join(o.get("text", "") for o in answer.get("outputs", []) if o.get("output_type") == "stream")
        assert printed == _token(member.name, len(_plan(n))) + "\n", (member.name, printed)


def test_scores_are_the_hand_worked_ones(classroom, rush):
    """grades.csv has one row per learner with the score of their last answer (module docstring): 3/3 for the model
    answer, 0/3 for the mistake."""
    rows = _grades(classroom)
    got = {row["student_id"]: (row["auto_score"], row["max_auto_score"]) for row in rows}
    want = {classroom[_role(n)].name: ("3" if _plan(n)[-1][1] == REMAINING_MODEL else "0", "3")
            for n in range(1, LEARNERS + 1)}
    assert got == want


def test_lateness_is_recorded_for_the_late_wave(classroom, rush):
    """The learners whose last submission came after the due date are late, and only they: a day started costs
    0.3 of their 3 points (2.7 left); everyone else has no lateness and keeps 3 or 0."""
    rows = {row["student_id"]: row for row in _grades(classroom)}
    for n in range(1, LEARNERS + 1):
        name, (wave, answer) = classroom[_role(n)].name, _plan(n)[-1]
        row = rows[name]
        if wave == "late":
            assert (row["late_penalty"], row["score"]) == ("0.3", "2.7"), row
            assert row["late_hours"] != "" and float(row["late_hours"]) < 1, row  # seconds late: "0.00" hours
        else:
            assert (row["late_hours"], row["late_penalty"]) == ("", ""), row
            assert row["score"] == ("3" if answer == REMAINING_MODEL else "0"), row


def test_timestamps_in_the_gradebook_are_the_submissions(classroom, rush):
    """The gradebook keeps each submission's own time (what the late policy reads): for every learner, the
    timestamp of the last submission, on the right side of the due date."""
    from nbgrader.api import Gradebook

    due = rush["due"]
    with Gradebook(f"sqlite:///{classroom.course / 'grading' / 'gradebook.db'}", COURSE_ID) as gb:
        for n in range(1, LEARNERS + 1):
            member = classroom[_role(n)]
            stamp = gb.find_submission(ASSIGNMENT, member.name).timestamp.replace(tzinfo=dt.UTC)
            written = (_collected(classroom)[member.name] / "timestamp.txt").read_text()
            assert stamp == dt.datetime.strptime(written, "%Y-%m-%d %H:%M:%S.%f %Z").replace(tzinfo=dt.UTC)
            assert (stamp > due) == (_plan(n)[-1][0] == "late"), (member.name, stamp, due)


# --------------------------------------------------------------------------------------------


def _write_answers(room) -> dict[int, list[Path]]:
    """Write every learner's notebooks, one per submission, where that learner may read them; return their paths."""
    build = class_builder()
    released, source = REPO / "lessons" / ASSIGNMENT / NOTEBOOK, REPO / "solutions" / ASSIGNMENT / NOTEBOOK
    drop = room.base / "answers"
    drop.mkdir(mode=0o755)
    drop.chmod(0o755)
    answers: dict[int, list[Path]] = {}
    for n in range(1, LEARNERS + 1):
        name = room[_role(n)].name
        for number, (_, answer) in enumerate(_plan(n), start=1):
            code = f"{answer.strip()}\n\n\nprint({json.dumps(_token(name, number))})"
            path = drop / f"{name}-{number}.ipynb"
            path.write_text(build.submission(released, source, build.Work(code={"remaining": code})),
                            encoding="utf-8")
            path.chmod(0o644)
            answers.setdefault(n, []).append(path)
    return answers


def _hand_in(room, n: int, wave: str, answers: list[Path]) -> str | None:
    """Learner n's submissions of ``wave``, one after the other (the notebook of each saved first, but the first's,
    saved already); return what went wrong, or None."""
    member = room[_role(n)]
    student = [] if member.real else [f"--student={member.name}"]
    for number, (when, _) in enumerate(_plan(n)):
        if when != wave:
            continue
        if number > 0:
            room.run(member, ["cp", str(answers[number]), str(member.home / ASSIGNMENT / NOTEBOOK)])
        done = room.run(member, [str(room.bin / "nbgrader"), "submit", ASSIGNMENT, *student], check=False,
                        timeout=SUBMIT_TIMEOUT)
        if done.returncode != 0:
            return f"{member.name}: nbgrader submit exited with {done.returncode}: {done.stderr[-800:]}"
    return None


def _write_deadlines(room, due: dt.datetime) -> None:
    """Write deadlines.toml beside the course's nbgrader_config.py: ``due`` for the assignment, the late policy."""
    policy = "\n".join(f"{key} = {json.dumps(value)}" for key, value in POLICY.items())
    path = room.course / "deadlines.toml"
    path.write_text(f'[policy]\n{policy}\n\n[due]\n"{ASSIGNMENT}" = {due.isoformat()}\n', encoding="utf-8")
    teacher = room["instructor"]
    if teacher.real:
        os.chown(path, teacher.uid, teacher.gid)


def _collected(room) -> dict[str, Path]:
    submitted = room.course / "grading" / "submitted"
    if not submitted.is_dir():
        return {}
    return {folder.name: folder / ASSIGNMENT for folder in submitted.iterdir() if (folder / ASSIGNMENT).is_dir()}


def _grades(room) -> list[dict[str, str]]:
    with (room.course / "grading" / "grades.csv").open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT]

