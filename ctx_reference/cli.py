"""Command line for the workbook's worked examples: ``ctx-reference`` or ``python -m ctx_reference``.

What this covers: one subcommand per worked example of the lessons, each printing
the table a notebook shows, with the lesson's numbers by default and any of them
changeable from the command line:

    ctx-reference sim [--keep 15] [--clear-at-least 20000] [--strategy clear] ...
    ctx-reference recall [--half-at 400000] [--steep 1.5] [--middle 0.3]
    ctx-reference assemble [--budget 11000]
    ctx-reference window [--size 1000000] [--input 950000] [--max-tokens 128000]
    ctx-reference ledger [--limit 8000]

What it leaves out: computing anything (the library modules do) and formatting
(``tables``). Option help is English; the tables are Simplified Chinese.

Exit status: 0 on success; 2 on bad input, with one line on stderr that names the
option and echoes the value (never a traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ctx_reference import tables
from ctx_reference.assemble import LESSON_BUDGET, BudgetError, assemble, lesson_items
from ctx_reference.ledger import DEFAULT_WINDOW_LIMIT_TOKENS, WindowLedger, lesson_calls
from ctx_reference.recall import RecallModel, stuff_vs_retrieve
from ctx_reference.sim import STRATEGIES, SimParams, simulate

from .i18n import _

PROG = "ctx-reference"
EXIT_OK = 0
EXIT_USAGE = 2  # bad input, as argparse itself uses
LESSON_WINDOW = 1_000_000  # tokens: the window of the lesson's window check
LESSON_INPUT = 950_000  # tokens: its input
LESSON_MAX_TOKENS = 128_000  # tokens: its max_tokens

SIM_HELP = {
    "base": "tokens sent with every request (system prompt + tool definitions)",
    "user": "tokens of the user message of each turn",
    "tool_call": "tokens of the tool call of each turn",
    "tool_result": "tokens of the tool result of each turn (it carries the turn's fact)",
    "answer": "tokens of the answer of each turn",
    "window": "context window of the simulated model",
    "threshold": "manage the context only when it is larger than this (<= window)",
    "keep": "newest turns that management never touches",
    "turns": "length of the task in turns",
    "placeholder": "tokens of the stub that replaces a cleared tool result",
    "summary_tokens": "tokens of a compaction summary",
    "summary_capacity": "facts a summary can hold ('none': all of them)",
    "note_tokens": "tokens of one note (clear_notes)",
    "clear_at_least": "clear only if it frees at least this many tokens",
    "first_question": "full turns before the first question",
    "question_every": "turns between two questions",
    "fact_lag": "a question at turn q asks for the fact of turn q - fact_lag",
    "cache_write": "price of a token written to the cache (x base input price)",
    "cache_read": "price of a token read from the cache (x base input price)",
}
"""Help of the ``sim`` option generated for each SimParams field."""


class UsageError(Exception):
    """Bad command-line input; the message is the one line shown on stderr."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


def _option(field_name: str) -> str:
    """Return the command-line spelling of a field: ``clear_at_least`` -> ``--clear-at-least``."""
    return "--" + field_name.replace("_", "-")


def _integer(text: str) -> int:
    """Parse an integer option value (``20000`` or ``20_000``)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None


def _number(text: str) -> float:
    """Parse a real-number option value."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None


def _integer_or_none(text: str) -> int | None:
    """Parse an integer option value, or ``none`` for None."""
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer or 'none' (got {text!r})") from None


def _add_sim_options(parser: argparse.ArgumentParser) -> None:
    """Add one option per SimParams field, its type taken from the field's default."""
    parse: Callable[[str], object]
    for f in dataclasses.fields(SimParams):
        default = f.default
        if default is None:
            parse, shown, metavar = _integer_or_none, "none", "N|none"
        elif isinstance(default, float):
            parse, shown, metavar = _number, f"{default:g}", "X"
        else:
            parse, shown, metavar = _integer, f"{default:,}", "N"
        help_text = SIM_HELP.get(f.name, f.name.replace("_", " "))
        parser.add_argument(
            _option(f.name),
            dest=f.name,
            type=parse,
            default=default,
            metavar=metavar,
            help=f"{help_text} (lesson: {shown})",
        )


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``ctx-reference`` with its subcommands."""
    parser = _Parser(prog=PROG, description="Worked examples of the context-engineering workbook.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    sim = commands.add_parser("sim", help="four context strategies over a long task")
    sim.add_argument(
        "--strategy",
        action="append",
        choices=STRATEGIES,
        help="show only this strategy (repeat for several; default: all four)",
    )
    _add_sim_options(sim)

    recall = commands.add_parser("recall", help="toy recall model: stuff everything vs retrieve")
    defaults = RecallModel()
    recall.add_argument("--half-at", type=_number, default=defaults.half_at, metavar="TOKENS",
                        help=f"context length where recall halves (lesson: {defaults.half_at:,})")
    recall.add_argument("--steep", type=_number, default=defaults.steep, metavar="X",
                        help=f"how fast recall falls around half-at (lesson: {defaults.steep})")
    recall.add_argument("--middle", type=_number, default=defaults.middle, metavar="X",
                        help=f"how much lower the middle is than the ends, 0..1 (lesson: {defaults.middle})")

    assembly = commands.add_parser("assemble", help="the lesson's context assembly with its drop log")
    assembly.add_argument("--budget", type=_integer, default=LESSON_BUDGET, metavar="TOKENS",
                          help=f"token budget (lesson: {LESSON_BUDGET:,})")

    window = commands.add_parser("window", help="will a request fit its context window")
    window.add_argument("--size", type=_integer, default=LESSON_WINDOW, metavar="TOKENS",
                        help=f"context window (lesson: {LESSON_WINDOW:,})")
    window.add_argument("--input", type=_integer, default=LESSON_INPUT, metavar="TOKENS",
                        help=f"input tokens of the request (lesson: {LESSON_INPUT:,})")
    window.add_argument("--max-tokens", type=_integer, default=LESSON_MAX_TOKENS, metavar="TOKENS",
                        help=f"output cap asked for (lesson: {LESSON_MAX_TOKENS:,})")

    ledger = commands.add_parser("ledger", help="the context ledger of the lesson's six calls")
    ledger.add_argument("--limit", type=_integer, default=DEFAULT_WINDOW_LIMIT_TOKENS, metavar="TOKENS",
                        help=f"window limit per call (lesson: {DEFAULT_WINDOW_LIMIT_TOKENS:,})")
    return parser


def _describe_params(params: SimParams) -> str:
    """Return the line above the strategy table saying how the params differ from the lesson's."""
    changed = [
        f"{f.name}={getattr(params, f.name)}"
        for f in dataclasses.fields(params)
        if getattr(params, f.name) != f.default
    ]
    if not changed:
        return _("参数：原课的默认值")
    return _("参数：原课的默认值，但 {changes}").format(changes=_("，").join(changed))


def run_sim(args: argparse.Namespace) -> str:
    """Return the strategy table for the SimParams given on the command line."""
    params = SimParams(**{f.name: getattr(args, f.name) for f in dataclasses.fields(SimParams)})
    chosen = [s for s in STRATEGIES if s in args.strategy] if args.strategy else list(STRATEGIES)
    results = {strategy: simulate(strategy, params) for strategy in chosen}
    return _describe_params(params) + "\n" + tables.format_strategy_table(results, params)


def run_recall(args: argparse.Namespace) -> str:
    """Return the stuff-versus-retrieve table for the recall model given on the command line."""
    model = RecallModel(half_at=args.half_at, steep=args.steep, middle=args.middle)
    return tables.format_stuff_vs_retrieve(stuff_vs_retrieve(model))


def run_assemble(args: argparse.Namespace) -> str:
    """Return the lesson's assembly under the budget given on the command line."""
    return tables.format_assembly(assemble(lesson_items(), args.budget), budget=args.budget)


def run_window(args: argparse.Namespace) -> str:
    """Return the window check of the request given on the command line."""
    return tables.format_window_check(args.size, args.input, args.max_tokens)


def run_ledger(args: argparse.Namespace) -> str:
    """Return the per-call table and the summary of the lesson's six calls under ``--limit``."""
    ledger = WindowLedger(window_limit_tokens=args.limit)
    for name, buckets in lesson_calls():
        ledger.record(name, **buckets)
    return (tables.format_ledger_entries(ledger.entries, derived=True)
            + "\n\n" + tables.format_ledger_summary(ledger.summary()))


COMMANDS = {
    "sim": run_sim,
    "recall": run_recall,
    "assemble": run_assemble,
    "window": run_window,
    "ledger": run_ledger,
}


LIBRARY_NAMES = {
    "sim": {f.name: _option(f.name) for f in dataclasses.fields(SimParams)},
    "recall": {"half_at": "--half-at", "steep": "--steep", "middle": "--middle"},
    "assemble": {"budget": "--budget"},
    "window": {"size": "--size", "input_tokens": "--input", "max_tokens": "--max-tokens"},
    "ledger": {"window_limit_tokens": "--limit"},
}
"""Per subcommand: the library's name of a value -> the option that set it."""


def _error_line(error: ValueError, command: str) -> str:
    """Return the one stderr line for a library ValueError, naming the option it is about.

    The library says ``keep must be >= 0 (got -1)``; on the command line the reader typed
    ``--keep``, so the line reads ``argument --keep: keep must be >= 0 (got -1)``.
    """
    message = " ".join(str(error).split())  # one line, whatever the library wrote
    option = LIBRARY_NAMES[command].get(message.split(" ", 1)[0])
    if isinstance(error, BudgetError):
        option = "--budget"
    prefix = f"argument {option}: " if option else ""
    return f"{PROG} {command}: error: {prefix}{message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ctx-reference`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    >>> main(["window"])  # doctest: +ELLIPSIS
    窗口...
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as done:  # --help and --version print and exit through here
        return EXIT_OK if done.code is None else int(done.code)
    try:
        text = COMMANDS[args.command](args)
    except ValueError as error:
        print(_error_line(error, args.command), file=sys.stderr)
        return EXIT_USAGE
    print(text)
    return EXIT_OK
