"""``python -m ctx_course``: regenerate the student release, or grade a class."""
from __future__ import annotations

import argparse
import sys

from .release import ReleaseError, generate_release


def main(argv: list[str] | None = None) -> int:
    """Run one course operation and return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ctx_course", description=__doc__)
    parser.add_argument("--root", default=".", help="course folder (holds nbgrader_config.py)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("release", help="regenerate lessons/ from solutions/")
    args = parser.parse_args(argv)
    try:
        if args.command == "release":
            for assignment_id in generate_release(args.root):
                print(f"released {assignment_id}")
    except (ValueError, ReleaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
