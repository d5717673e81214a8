"""The ``audit`` and ``audit-file`` command lines (parsing only: nothing here imports bpy)."""

from __future__ import annotations

import argparse
import os

from ..model.audit.records import parse_shard
from ..model.thresholds import DEFAULT, parse_threshold

#: Seconds one file may take before its worker is stopped and the file recorded as timed out.
DEFAULT_TIMEOUT = 300.0


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _whole(text: str, least: int) -> int:
    """A whole number ``>= least``; :class:`argparse.ArgumentTypeError` saying so (a
    ValueError would show argparse's own words: "invalid _positive_int value")."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {least}, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, not {value}")
    return value


def _positive_int(text: str) -> int:
    return _whole(text, 1)


def _count(text: str) -> int:
    return _whole(text, 0)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0 (and finite), not {text}")
    return value


def add_thresholds(p: argparse.ArgumentParser, fixes: bool = False) -> None:
    """``--shear-threshold`` and ``--corner-threshold`` (``fixes``: the command also
    fixes what is over the shear threshold)."""
    p.add_argument(
        "--shear-threshold",
        type=parse_threshold,
        default=DEFAULT.shear_deg,
        metavar="DEG",
        help=f"flag shear above this{', and fix it' if fixes else ''} (degrees; default {DEFAULT.shear_deg:g})",
    )
    p.add_argument(
        "--corner-threshold",
        type=parse_threshold,
        default=DEFAULT.corner,
        metavar="UNITS",
        help=f"flag corner deviations above this (scene units; default {DEFAULT.corner:g})",
    )


def add_allow_missing(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-missing-libraries",
        action="store_true",
        help="go on when library files the scene links are missing (what they hold is left out; "
        "default: exit 2 naming them)",
    )


def add_audit_parser(sub, add_verbose) -> None:
    """Add ``audit`` (the user's command) and ``audit-file`` (one worker's file) to ``sub``."""
    audit = sub.add_parser(
        "audit",
        help="inspect every .blend under folders (--jobs worker processes); JSON Lines, table, HTML",
        description="Inspect every .blend under the given folders (recursively) and files with --jobs worker "
        "processes (each takes many files in turn; a crash or hang costs only its file), and write DIR/audit.jsonl "
        "(one line per file), DIR/summary.txt and DIR/index.html. "
        "With --merge, the arguments are the output folders of earlier runs (e.g. shards) to combine.",
    )
    audit.add_argument(
        "paths",
        nargs="+",
        metavar="FOLDER_OR_FILE",
        help="folders (searched recursively for .blend files) and .blend files; with --merge, audit folders",
    )
    audit.add_argument("--out", required=True, metavar="DIR", help="folder for audit.jsonl, summary.txt, index.html")
    audit.add_argument(
        "--jobs", type=_positive_int, default=os.cpu_count() or 1, help="worker processes at once (default: CPUs)"
    )
    audit.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"stop a file's worker after this long (default {DEFAULT_TIMEOUT:g})",
    )
    audit.add_argument(
        "--resume", action="store_true", help="skip files already in DIR/audit.jsonl with the same modification time"
    )
    audit.add_argument(
        "--shard",
        type=_shard,
        metavar="K/N",
        help="only the K-th of N stable slices (hash of the path relative to the folder given)",
    )
    audit.add_argument("--merge", action="store_true", help="combine the audit folders given as arguments into --out")
    audit.add_argument("--pictures", type=_count, default=12, metavar="COUNT", help="files with pictures (worst first)")
    audit.add_argument(
        "--fail-on-shear", type=parse_threshold, metavar="DEG", help="exit 1 if any file's shear exceeds DEG"
    )
    add_thresholds(audit)
    add_allow_missing(audit)
    add_verbose(audit)

    many = sub.add_parser("audit-worker", help="files named on stdin, one by one (what audit's workers run)")
    add_thresholds(many)
    add_allow_missing(many)
    add_verbose(many)

    worker = sub.add_parser("audit-file", help="one file of an audit")
    worker.add_argument("blend", metavar="SCENE.blend")
    worker.add_argument("--result", required=True, metavar="OUT.json", help="where the file's record is written")
    worker.add_argument("--picture", metavar="OUT.png", help="draw the worst nodes here when something is flagged")
    add_thresholds(worker)
    add_allow_missing(worker)
    add_verbose(worker)
