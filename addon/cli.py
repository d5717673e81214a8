"""The command line: ``python -m hierarchy_inspector <command> ...``.

Exit codes: 0 ran and nothing exceeded a threshold, 1 a threshold was exceeded,
2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    """Bad input from the user: reported as one line on stderr, exit code 2."""


def _cmd_demo(args: argparse.Namespace) -> int:
    from .core_demo import demo_text

    print(demo_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hierarchy_inspector",
        description="Compare Blender's matrix-composed world transforms with what game engines show.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the analysis on the built-in examples")
    demo.add_argument("--out", metavar="DIR", help="folder for the demo's files (default: build/demo)")
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"hierarchy_inspector: {exc}", file=sys.stderr)
        return 2
