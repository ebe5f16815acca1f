"""``python -m ctx_course``: regenerate the student release, prepare a learner's workspace, open it in JupyterLab,
bring corrections of the release into it, show the learner's progress, or grade a class."""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ctx_reference.i18n import _, normalize, using

from .config import assignments
from .editions.translate import EDITIONS
from .grading.records import WorkerRefused
from .learner.lab import exec_lab
from .learner.progress import progress_report
from .learner.workspace import (
    WORKSPACE,
    WORKSPACES,
    WorkspaceError,
    format_pending,
    format_updated,
    pending_updates,
    prepare_workspace,
    update_workspace,
)
from .release import ReleaseError, generate_editions
from .sandbox.policy import SandboxUnavailable

# The example class shipped with the repository (see examples/README.md).
EXAMPLE_SUBMISSIONS = Path("examples", "class", "submitted")
EXAMPLE_ROSTER = Path("examples", "class", "roster.csv")
EXAMPLE_WORK = Path("grading", "example")
EXAMPLE_DEADLINES = Path("examples", "class", "deadlines.toml")
DEFAULT_ROSTER = "roster.csv"  # looked for in the working folder
# What --root names, by what the verb reads there.
HOLDS_CONFIG = "course folder (holds nbgrader_config.py)"
HOLDS_LESSONS = "course folder (holds lessons/)"


def main(argv: list[str] | None = None) -> int:
    """Run one course operation and return the exit status (0 done, 1 some submissions failed, 2 bad input)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    args.extra = extra
    if args.extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(args.extra)}")
    try:
        return args.run(args)
    except WorkspaceError as exc:  # a notebook or the manifest cannot be read: nothing was changed
        with using(_edition(args)):
            print(_("error: {error}；没有改动任何文件").format(error=exc), file=sys.stderr)
        return 2
    # bad input, bubblewrap or a worker refused, a Dask scheduler that cannot be reached: one line
    except (ValueError, ReleaseError, SandboxUnavailable, WorkerRefused, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _edition(args: argparse.Namespace) -> str:
    """The edition a verb works in (``--lang``), or the Chinese one when it names none or a bad one."""
    try:
        return normalize(getattr(args, "lang", "zh_CN"))
    except ValueError:
        return "zh_CN"


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every verb; each sub-parser's ``run`` default is the function that does the verb."""
    parser = argparse.ArgumentParser(prog="python -m ctx_course", description=__doc__)
    parser.add_argument("--root", default=".", help=HOLDS_CONFIG)
    config, lessons = _root_option(HOLDS_CONFIG), _root_option(HOLDS_LESSONS)
    edition = argparse.ArgumentParser(add_help=False)
    edition.add_argument("--lang", default="zh_CN", metavar="LANG",
                         help="the edition: zh_CN (lessons/ into workspace/, the default) or en "
                              "(lessons-en/ into workspace-en/, JupyterLab and the checks in English)")
    work = argparse.ArgumentParser(add_help=False)
    work.add_argument("--work", metavar="DIR", help="working folder (default: grading/ as in nbgrader_config.py)")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("release", help="regenerate lessons/ and lessons-en/ from solutions/ and i18n/").set_defaults(
        run=_release)
    sub.add_parser(
        "api-check", help="validate the notebooks' request bodies against the installed SDKs, list their new values",
        description="What `make api-check` runs in a temporary environment with the newest anthropic and openai "
        "SDKs: tests/test_api_requests.py against them, then every thinking type, context edit type, content "
        "block type and model id that differs between the SDKs and the course (ctx_course/api_check.py).",
    ).set_defaults(run=_api_check)
    sub.add_parser(
        "workspace", parents=[edition], help=f"copy the lessons a learner does not have yet into {WORKSPACE}/"
    ).set_defaults(run=_workspace)
    sub.add_parser(
        "lab", parents=[lessons, edition],
        help=f"prepare {WORKSPACE}/ and open it in JupyterLab, without the instructor's tools",
        description=f"Copy the lessons a learner does not have yet into {WORKSPACE}/, then start "
        f"JupyterLab there with nbgrader's Formgrader, Assignment List and Course List turned off. "
        "Every other option goes to JupyterLab (--port 8890, --no-browser, --ip 127.0.0.1, ...).",
    ).set_defaults(run=_lab)
    sub.add_parser(
        "update", parents=[lessons, edition],
        help=f"bring the current release into the notebooks of {WORKSPACE}/ that changed since they were copied",
        description=f"For every notebook of {WORKSPACE}/ whose release (lessons/) changed since it was copied: "
        f"copy the old file to {WORKSPACE}/backups/<time>/, then take the new version of every cell you did not edit "
        "and keep your answers and every cell you edited as they are. Close those notebooks in JupyterLab first.",
    ).set_defaults(run=_update)
    sub.add_parser(
        "progress", parents=[lessons, edition],
        help=f"show, per notebook of {WORKSPACE}/, the checks passed, the questions answered and what to open next",
        description=f"Read the saved notebooks of {WORKSPACE}/ (workspace-en/ with --lang en) without running them "
        "and print, per notebook, the check cells passed by their last saved run and the questions answered, "
        "then the notebook to open next.",
    ).set_defaults(run=_progress)
    _add_grade(sub, config, work)
    check = sub.add_parser(
        "hub-check",
        help="check that the course hub answers and the exchange root can be used (from any account)",
        description="Ask the hub's REST API for its version and check that nbgrader's exchange root exists and "
        "is writable by this account. One line each; one error: line (exit status 2) for what is wrong.",
    )
    check.add_argument("--url", default="http://127.0.0.1:8000", help="the hub's address (default: %(default)s)")
    check.add_argument("--exchange", metavar="DIR",
                       help="the exchange root (default: $COURSE_EXCHANGE, else /srv/nbgrader/exchange)")
    check.set_defaults(run=_hub_check)
    board = sub.add_parser(
        "leaderboard", parents=[config, work],
        help="re-score the graded policies of an assignment on hidden workloads; write a CSV and a PNG",
        description="Run every graded notebook of the assignment (in <work>/autograded) in a fresh "
        "kernel, score its policy on the hidden workloads and write leaderboard-<assignment>.csv "
        "and .png into the working folder. Grade first.",
    )
    board.add_argument("assignment", help="assignment id, e.g. 11-capstone")
    board.add_argument("--no-sandbox", action="store_true",
                       help="run student code without the bubblewrap sandbox (not recommended)")
    board.add_argument("--jobs", metavar="N", type=int, default=1,
                       help="notebooks scored at once, by a local Dask cluster of N worker processes (default: 1)")
    board.add_argument("--cluster", metavar="ADDRESS", help="score on the workers of an existing Dask scheduler")
    board.set_defaults(run=_leaderboard)
    export = sub.add_parser(
        "export", parents=[config, work],
        help="write the gradebook's grades as a CSV an LMS imports (Canvas) or one row per student and cell",
        description="Write the grades of the gradebook (after `grade`) as Canvas's gradebook import CSV "
        "(students matched by the roster's lms_user_id; those without one are listed) or as a long CSV "
        "(student, assignment, notebook, cell, score, max).",
    )
    export.add_argument("--format", choices=("canvas", "long"), required=True,
                        help="canvas: Canvas's import CSV; long: one row per cell")
    export.add_argument("--to", metavar="CSV", help="where to write (default: <work>/canvas.csv or <work>/cells.csv)")
    export.add_argument("--ids", metavar="CSV",
                        help="Canvas's id of each assignment: a CSV with columns assignment,lms_id")
    export.set_defaults(run=_export)
    items = sub.add_parser(
        "items", parents=[config, work],
        help="item analysis: the share of the class that passed each check cell and what each hidden test caught",
        description="Read the gradebook and the autograded notebooks (after `grade`) and write items.csv and "
        "items.png into the working folder: per check cell the share of the class that passed, per hidden test "
        "how many submissions it was the first to fail.",
    )
    items.add_argument("assignment", nargs="*", help="only these assignments (default: all)")
    items.set_defaults(run=_items)
    similar = sub.add_parser(
        "similarity", parents=[config, work],
        help="report answers of one assignment that are unusually alike, and answers alike the model answer",
        description="Compare the answer cells of every submission in <work>/submitted with copydetect (winnowing, "
        "as MOSS does), the released template excluded; write similarity.csv and similarity.html into the "
        "working folder. Reads the submissions only: no score changes.",
    )
    similar.add_argument("assignment", nargs="*", help="only these assignments (default: all)")
    similar.add_argument("--threshold", metavar="SHARE", type=float, default=0.5,
                         help="report two students when this share of one's answer is in the other's (default 0.5)")
    similar.add_argument("--model-threshold", metavar="SHARE", type=float, default=0.8,
                         help="report a student when this share of her answer is in the model answer (default 0.8)")
    similar.set_defaults(run=_similarity)
    _add_i18n(sub)
    return parser


def _add_i18n(sub) -> None:
    i18n = sub.add_parser(
        "i18n", help="keep the English edition's catalogues up to date and check them",
        description="update: bring every catalogue (i18n/en/*.po for each notebook: its cells, its check "
        "labels and its exercises' messages; ctx_reference/locale/en/messages/*.po for the other modules' "
        "messages) up to the Chinese sources, a changed entry marked fuzzy; compile: rebuild the messages' .mo "
        "file; check: the English of one "
        "assignment (or all), entry by entry, against its Chinese; run: execute the English edition of "
        "an assignment and compare its outputs with the Chinese edition's.",
    )
    action = i18n.add_subparsers(dest="action", required=True)
    update = action.add_parser("update", help="bring the catalogues up to the sources")
    update.add_argument("--only", metavar="NAME", help="one assignment, module (dotted) or source file")
    update.set_defaults(run=_i18n_update)
    action.add_parser("compile", help="rebuild ctx_reference/locale/<lang>/LC_MESSAGES/ctx.mo").set_defaults(
        run=_i18n_compile)
    check = action.add_parser("check", help="check the English of assignments against their Chinese")
    check.add_argument("assignment", nargs="*", help="only these assignments (default: all)")
    check.set_defaults(run=_i18n_check)
    run = action.add_parser("run", help="execute the English edition of an assignment and compare outputs")
    run.add_argument("assignment", nargs="+", help="assignment ids, e.g. 06-strategies")
    run.set_defaults(run=_i18n_run)


def _root_option(holds: str) -> argparse.ArgumentParser:
    """Return a parent parser with a verb's own ``--root`` (the one before the verb stays the default)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--root", default=argparse.SUPPRESS, help=holds)
    return parent


def _add_grade(sub, config: argparse.ArgumentParser, work: argparse.ArgumentParser) -> None:
    grade = sub.add_parser(
        "grade", parents=[config, work],
        help="autograde every submission, write feedback and grades.csv",
        description="Autograde every submission in the working folder's submitted/ "
        "(grading/submitted by default), write the feedback HTML and grades.csv. "
        "Every kernel runs in a bubblewrap sandbox. Exit status: 0 all graded, 1 some could not be "
        "graded (listed, or the gradebook's server stayed unreachable, or the working folder's disk filled up: "
        "run again for the rest), "
        "2 bad input or no sandbox, 128 + the signal's number when stopped by SIGTERM/SIGINT "
        "(what was graded is written).",
    )
    grade.add_argument("--submissions", metavar="DIR", help="collect <student>/<assignment>/ folders from DIR first")
    grade.add_argument("--roster", metavar="CSV",
                       help=f"students to register (default: <work>/{DEFAULT_ROSTER} if present)")
    grade.add_argument("--timeout", metavar="S", type=int,
                       help="seconds one cell may run (default: nbgrader_config.py)")
    grade.add_argument(
        "--jobs", metavar="N", type=int,
        help="submissions graded at once, by a local Dask cluster of N worker processes (default: one per core)",
    )
    grade.add_argument(
        "--cluster", metavar="ADDRESS",
        help="grade on the workers of an existing Dask scheduler, e.g. tls://grader.example.org:8786 (see README)",
    )
    grade.add_argument(
        "--example",
        action="store_true",
        help=f"grade the example class: --submissions {EXAMPLE_SUBMISSIONS} --roster {EXAMPLE_ROSTER} "
             f"--work {EXAMPLE_WORK} --deadlines {EXAMPLE_DEADLINES}",
    )
    grade.add_argument(
        "--feedback-only",
        action="store_true",
        help="run no notebook: rewrite feedback and grades.csv from the gradebook (after grading by hand)",
    )
    grade.add_argument(
        "--deadlines",
        metavar="TOML",
        help="due dates, extensions and late policy (default: deadlines.toml beside nbgrader_config.py)",
    )
    grade.add_argument("--verbose", action="store_true", help="print nbgrader's log of every submission that failed")
    grade.add_argument("--force", action="store_true",
                       help="regrade every submission, also those unchanged since the last run")
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run student code without the bubblewrap sandbox, with your privileges (not recommended)",
    )
    grade.add_argument("--memory-limit", metavar="SIZE",
                       help="address space of one kernel, e.g. 2G or 512M (default: nbgrader_config.py)")
    grade.add_argument("--cpu-limit", metavar="S",
                       help="CPU seconds one notebook's kernel may use (default: nbgrader_config.py)")
    grade.set_defaults(run=_grade)


# --------------------------------------------------------------------------------------------
# The verbs: each takes the parsed arguments and returns the exit status.


def _release(args: argparse.Namespace) -> int:
    from .editions.answer_key import write_answer_keys
    from .editions.hidden_table import write_hidden_table

    table = write_hidden_table(args.root)  # first: a hidden test naming no stated rule stops the release at once
    print(f"wrote the rules each hidden test decides: {table.name} (docs/rules.md)")
    for language, released in generate_editions(args.root).items():
        for assignment_id in released:
            print(f"released {assignment_id} ({language})")
    for path in write_answer_keys(args.root):
        print(f"wrote the answer key {Path(path).name} (show_solution, sample_answer)")
    return 0


def _api_check(args: argparse.Namespace) -> int:
    from ctx_course.api_check import main

    return main()


def _i18n_update(args: argparse.Namespace) -> int:
    from .editions.catalogues import report, update_all

    for path in update_all(args.root, only=args.only):
        print(f"updated {path}")
    left = report(args.root)
    for name, count in left.items():
        print(f"{name}: {count} left to translate")
    return 0


def _i18n_compile(args: argparse.Namespace) -> int:
    from .editions.catalogues import compile_messages, locale_folder

    for path in compile_messages(locale_folder(args.root)):
        print(f"compiled {path}")
    return 0


def _i18n_check(args: argparse.Namespace) -> int:
    from .editions.check import check_assignment

    return _report_editions(args.root, args.assignment or assignments(args.root), check_assignment,
                            "the English edition agrees with the Chinese")


def _i18n_run(args: argparse.Namespace) -> int:
    from .editions.check import run_assignment

    return _report_editions(args.root, args.assignment, run_assignment,
                            "the English edition ran; every output agrees with the Chinese")


def _report_editions(root: str, assignment_ids, compare, agreed: str) -> int:
    """Print what ``compare(root, assignment)`` finds for each assignment (or ``agreed``); 1 if it found any."""
    problems = 0
    for assignment in assignment_ids:
        found = compare(root, assignment)
        for line in found or [agreed]:
            print(f"{assignment}: {line}")
        problems += len(found)
    return 1 if problems else 0


def _workspace(args: argparse.Namespace) -> int:
    language = normalize(args.lang, argument="--lang")
    with using(language):
        copied = prepare_workspace(args.root, language=language)
        for path in copied:
            print(f"copied {path}")
        print(f"{WORKSPACES[language]}/ holds your copies of the lessons ({len(copied)} new)")
        _print_lines(format_pending(pending_updates(args.root, language=language),
                                    _update_command(args.root, language)))
    return 0


def _lab(args: argparse.Namespace) -> int:
    language = normalize(args.lang, argument="--lang")
    with using(language):
        copied = prepare_workspace(args.root, language=language)
        _print_lines(format_pending(pending_updates(args.root, language=language),
                                    _update_command(args.root, language)))
    print(f"{WORKSPACES[language]}/ holds your copies of the lessons ({len(copied)} new); starting JupyterLab there")
    exec_lab(args.root, args.extra, language=language)
    return 0


def _update(args: argparse.Namespace) -> int:
    language = normalize(args.lang, argument="--lang")
    with using(language):
        done = update_workspace(args.root, language=language)
        for updated in done:
            _print_lines(format_updated(updated))
        changed = sum(updated.report.changed for updated in done)
        if done:
            print(_("更新完成：{changed} 本笔记本有格子换成了新版").format(changed=changed))
        else:
            print(_("没有要更新的笔记本：{workspace}/ 里每本都是照现在的 {lessons}/ 复制或更新的").format(
                workspace=WORKSPACES[language], lessons=EDITIONS[language]))
    return 0


def _progress(args: argparse.Namespace) -> int:
    language = normalize(args.lang, argument="--lang")
    folder = Path(args.root) / WORKSPACES[language]
    with using(language):
        if not folder.is_dir():
            lab = "make lab" + ("" if language == "zh_CN" else f" LANG={language}")
            print(_("error: 还没有 {folder}/：先运行 {lab}，它会复制笔记本并打开 JupyterLab").format(
                folder=WORKSPACES[language], lab=lab), file=sys.stderr)
            return 2
        print(progress_report(folder, language))
    return 0


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        print(line)


def _update_command(root: str, language: str = "zh_CN") -> str:
    """The command that updates the workspace, as the learner would type it."""
    lang = "" if language == "zh_CN" else f" --lang {language}"
    if Path(root).resolve() == Path.cwd().resolve():
        make = "make update" + ("" if language == "zh_CN" else f" LANG={language}")
        return _("{make}（或者 python -m ctx_course update{lang}）").format(make=make, lang=lang)
    return f"python -m ctx_course update{lang} --root {root}"


def _grade(args: argparse.Namespace) -> int:
    """Grade a class and print one line per submission and a summary; return the exit status."""
    import os

    from .grading.disk_space import DiskFull
    from .grading.grader import Grader
    from .grading.reconnect import GradebookUnreachable
    from .grading.report import format_log, format_outcome, format_start, format_summary
    from .grading.run_as import ACKNOWLEDGED, course_owner, root_warning
    from .scratch_folders import grading_run

    root = Path(args.root)
    students = _check_grade_arguments(args, root)
    warning = root_warning(os.geteuid(), course_owner(root), str(root.resolve()), sys.executable,
                           os.environ.get(ACKNOWLEDGED, ""))
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)

    from nbformat.warnings import MissingIDFieldWarning
    from sqlalchemy.exc import SAWarning

    # nbgrader's gradebook and its restored cells (which lack an id) warn; neither is ours to fix.
    warnings.filterwarnings("ignore", category=SAWarning)
    warnings.filterwarnings("ignore", category=MissingIDFieldWarning)
    grader = Grader(
        root,
        work=args.work,
        timeout=args.timeout,
        sandbox=False if args.no_sandbox or args.feedback_only else None,  # --feedback-only runs no kernel
        memory_limit=args.memory_limit,
        cpu_limit=args.cpu_limit,
        jobs=args.jobs,
        cluster=args.cluster,
        deadlines=args.deadlines,
    )
    if args.submissions is not None and not args.feedback_only:
        grader.collect(args.submissions)
    grader.register(students or [])

    line_open = []  # a progress line waits for its outcome

    def on_start(index, total, student, assignment):
        print(format_start(index, total, student, assignment), end=" ", flush=True)
        line_open.append(True)

    def on_result(index, total, result):
        print(format_outcome(result), flush=True)
        line_open.clear()
        if args.verbose and not result.graded and result.log:
            print(format_log(result), file=sys.stderr)

    try:
        with grading_run():  # every process of the run marked, every temporary file in the run's folder
            report = grader.grade(autograde=not args.feedback_only, force=args.force, on_start=on_start,
                                  on_result=on_result)
    except (GradebookUnreachable, DiskFull) as exc:  # what was written stays; the next run grades the rest
        if line_open:
            print(flush=True)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(format_summary(report, base=Path.cwd()))
    if report.stopped_by:
        return report.stop_status
    return 1 if report.failed else 0


def _check_grade_arguments(args: argparse.Namespace, root: Path):
    """Check every argument of ``grade`` and its value; return the roster's students (None: no roster).

    Runs before bubblewrap, the gradebook or a Dask cluster is looked for, so that a mistyped option
    is one line naming it (ValueError) on any machine, one without bubblewrap included. ``--example``
    fills in its paths here; without ``--roster``, the roster is ``<work>/roster.csv`` if there is one.
    """
    from .config import load_course_config, submitted_folder, work_folder
    from .grading.deadlines import load_deadlines
    from .grading.engine import check_cluster, check_jobs
    from .grading.submissions import find_submissions, read_roster
    from .sandbox.policy import parse_cpu, parse_memory

    if args.example:
        if args.submissions or args.roster:
            raise ValueError("--example cannot be combined with --submissions or --roster")
        args.submissions = str(root / EXAMPLE_SUBMISSIONS)
        args.roster = str(root / EXAMPLE_ROSTER)
        args.work = args.work or str(root / EXAMPLE_WORK)
        args.deadlines = args.deadlines or str(root / EXAMPLE_DEADLINES)
    if args.submissions is not None:
        if not Path(args.submissions).is_dir():
            raise ValueError(f"--submissions must be a folder of <student>/<assignment>/ folders "
                             f"(got {args.submissions!r})")
        find_submissions(args.submissions)  # a folder named like no student id is refused by its name
    if args.work is not None and Path(args.work).exists() and not Path(args.work).is_dir():
        raise ValueError(f"--work must be a folder (got {args.work!r})")
    for option, name, check, value in (("--jobs", "jobs", check_jobs, args.jobs),
                                       ("--cluster", "cluster", check_cluster, args.cluster),
                                       ("--memory-limit", "memory_limit", parse_memory, args.memory_limit),
                                       ("--cpu-limit", "cpu_limit", parse_cpu, args.cpu_limit)):
        if value is not None:
            _checked_option(option, name, check, value)
    course = _checked_option("--timeout", "timeout", lambda t: load_course_config(root, work=args.work, timeout=t),
                             args.timeout)  # --root (holds nbgrader_config.py) and --work too
    if args.deadlines is not None:
        if not Path(args.deadlines).is_file():
            raise ValueError(f"--deadlines must be a TOML file of due dates (got {args.deadlines!r})")
        load_deadlines(root, args.deadlines)  # a bad entry is named with its file
    submitted = submitted_folder(root.resolve(), course)
    if (args.submissions is None or args.feedback_only) and not submitted.is_dir():
        raise ValueError(f"no submissions to grade: {submitted} does not exist (collect first, or pass --submissions)")
    default_roster = work_folder(root.resolve(), course) / DEFAULT_ROSTER
    if args.roster is None and default_roster.is_file():
        return read_roster(default_roster)
    return None if args.roster is None else _checked_option("--roster", "roster", read_roster, args.roster)


def _checked_option(option: str, name: str, check, value):
    """Return ``check(value)``; its ValueError, which names the parameter ``name``, is raised naming ``option``."""
    try:
        return check(value)
    except ValueError as exc:
        text = str(exc)
        raise ValueError(option + text.removeprefix(name) if text.startswith(f"{name} ") else text) from None


def _hub_check(args: argparse.Namespace) -> int:
    """Print the hub's version and the exchange root's state; raise ValueError (one line) for a problem."""
    import os

    from .exchange import root_problem
    from .hubcheck import hub_version

    version = hub_version(args.url)
    print(f"hub: JupyterHub {version} answers at {args.url}")
    exchange = args.exchange or os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")
    problem = root_problem(exchange)
    if problem is not None:
        raise ValueError(problem)
    print(f"exchange: {exchange} exists and is writable by this account")
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    """Re-score the graded policies, print one line per student and where the files went."""
    from .term.leaderboard import leaderboard

    def on_row(row):
        shown = row.error or ("disqualified" if row.score is None else f"{row.score:.3f}")
        print(f"{row.student}: {shown}", flush=True)

    rows, csv_path, png_path = leaderboard(args.root, args.assignment, work=args.work,
                                           sandbox=False if args.no_sandbox else None, jobs=args.jobs,
                                           cluster=args.cluster, on_row=on_row)
    print(f"{len(rows)} students ranked: {csv_path} and {png_path}")
    return 0


def _export(args: argparse.Namespace) -> int:
    """Write one export of the gradebook and say where, and which students it could not match."""
    from .term.export import export_grades_for_lms, gradebook_location, read_lms_ids

    db_url, course_id, work = gradebook_location(args.root, args.work)
    target = Path(args.to) if args.to else work / ("canvas.csv" if args.format == "canvas" else "cells.csv")
    ids = read_lms_ids(args.ids) if args.ids else None
    path, unmatched = export_grades_for_lms(db_url, course_id, args.format, target, ids)
    print(f"wrote {path}")
    if unmatched:
        print("Left out (no lms_user_id on the roster, Canvas could not match them): " + ", ".join(unmatched))
    return 0


def _items(args: argparse.Namespace) -> int:
    """Write the item analysis (CSV and PNG) and name the hardest check cell and the hidden test that caught most."""
    from .term.export import gradebook_location
    from .term.item_analysis import CHECK, HIDDEN, item_analysis, items_figure, write_items_csv

    db_url, course_id, work = gradebook_location(args.root, args.work)
    items = item_analysis(db_url, course_id, work, args.assignment)
    if not items:
        hint = ", or check the assignment ids" if args.assignment else ""
        raise ValueError(f"no graded check cell in {work} (grade first{hint})")
    csv_path = write_items_csv(items, work / "items.csv")
    png_path = work / "items.png"
    items_figure(items).savefig(png_path, dpi=120)
    checks = [i for i in items if i.kind == CHECK]
    hardest = min(checks, key=lambda i: i.share_passed)
    print(f"{len(checks)} check cells: {csv_path} and {png_path}")
    print(f"Hardest check cell: {hardest.assignment} {hardest.cell} ({hardest.passed} of {hardest.submissions} passed)")
    caught = [i for i in items if i.kind == HIDDEN and i.failed]
    if caught:
        most = max(caught, key=lambda i: i.failed)
        print(f"Hidden test that caught most: {most.assignment} {most.cell} {most.hidden_test!r} ({most.failed})")
    return 0


def _similarity(args: argparse.Namespace) -> int:
    """Write the similarity report (CSV and HTML) and print one line per pair found."""
    from .config import load_course_config, work_folder
    from .term.similarity import format_similarity_html, similarity_report, write_similarity_csv

    root = Path(args.root).resolve()
    work = work_folder(root, load_course_config(root, work=args.work))
    if not (work / "submitted").is_dir():
        raise ValueError(f"no submissions to compare: {work / 'submitted'} does not exist (collect first, or --work)")
    pairs = similarity_report(root, work, args.assignment, args.threshold, args.model_threshold)
    csv_path = write_similarity_csv(pairs, work / "similarity.csv")
    html_path = work / "similarity.html"
    html_path.write_text(format_similarity_html(pairs, args.threshold, args.model_threshold), encoding="utf-8")
    for p in pairs:
        print(f"{p.assignment}: {p.first} / {p.second}  {p.first_share:.0%} / {p.second_share:.0%}  ({p.kind})")
    print(f"{len(pairs)} pair(s): {csv_path} and {html_path} (no score was changed)")
    return 0
