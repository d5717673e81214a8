"""Argument parsing and exit codes: the one place where outcomes become exit codes.

Exit codes: 0 ran and nothing exceeded a threshold; 1 a threshold was exceeded
(``--fail-on-shear``); 2 the input or scene cannot be handled as asked
(:class:`~..model.errors.InspectorError`: one line on stderr, no traceback, nothing
written, the input never replaced); 3 an internal error (a bug: one line, the traceback
with ``HIERARCHY_INSPECTOR_DEBUG=1``); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

from ..model.errors import InspectorError, UsageError
from ..model.thresholds import DEFAULT

EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_BUG, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def say(message: str) -> None:
    """One line on stderr, prefixed with the program's name."""
    print(f"hierarchy_inspector: {message}", file=sys.stderr, flush=True)


def require_bpy() -> None:
    """:class:`UsageError` when Blender's Python module is not importable."""
    try:
        import bpy  # noqa: F401
    except ImportError:
        raise UsageError(
            "Blender's Python module is not available: pip install bpy==5.0.1 (Python 3.11), "
            "or run blender -b -c hierarchy_inspector ..."
        ) from None


def _run(command: str, args) -> int:
    if command == "demo":
        from .demo import cmd_demo

        return cmd_demo(args)
    require_bpy()
    from . import commands  # imports the scene layer, hence bpy

    return {"report": commands.cmd_report, "export": commands.cmd_export, "fix": commands.cmd_fix}[command](args)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("blend", metavar="SCENE.blend", help="the .blend file to read (never modified)")
    p.add_argument("--scene", help="scene name (default: the file's active scene)")
    p.add_argument("--frame", type=int, help="frame to evaluate (default: the file's current frame)")
    p.add_argument(
        "--shear-threshold",
        type=float,
        default=DEFAULT.shear_deg,
        metavar="DEG",
        help=f"flag shear above this, and fix it (degrees; default {DEFAULT.shear_deg:g})",
    )
    p.add_argument(
        "--corner-threshold",
        type=float,
        default=DEFAULT.corner,
        metavar="UNITS",
        help=f"flag corner deviations above this (scene units; default {DEFAULT.corner:g})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hierarchy_inspector",
        description="Compare Blender's matrix-composed world transforms with what game engines show.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the demo scene and run every job on it")
    demo.add_argument("--out", metavar="DIR", help="folder for the demo's files (default: build/demo)")

    report = sub.add_parser("report", help="inspect a .blend and write the report")
    _add_common(report)
    report.add_argument("--json", metavar="OUT", help="write the report as JSON (schema hierarchy_inspector.report/1)")
    report.add_argument("--csv", metavar="OUT", help="write one CSV row per node")
    report.add_argument(
        "--fail-on-shear", type=float, metavar="DEG", help="exit 1 if any world or exported-local shear exceeds DEG"
    )
    report.add_argument(
        "--frames",
        metavar="START:END[:STEP]",
        help="also inspect every frame of this range (END inclusive; 'scene': the scene's range): "
        "per node its worst frame and maxima; --fail-on-shear then applies to the whole range",
    )
    report.add_argument(
        "--chart", metavar="OUT.png", help="with --frames: shear and corner deviation over time of the worst nodes"
    )
    report.add_argument("--dynamics", action="store_true", help="add velocities, accelerations and inertial terms")
    report.add_argument("--object", help="only this object's chain and everything below it")

    export = sub.add_parser("export", help="export transforms that survive")
    _add_common(export)
    export.add_argument("--target", required=True, choices=("gltf", "fbx", "accumulated"))
    export.add_argument("--out", required=True, help="OUT.glb for gltf; OUT.fbx for fbx; OUT.json for accumulated")
    export.add_argument("--csv", metavar="OUT", help="accumulated: also write the local TRS as CSV")
    export.add_argument("--z-up", action="store_true", help="gltf: keep Blender's Z-up axes (default: glTF's Y-up)")
    export.add_argument(
        "--frames",
        metavar="START:END[:STEP]",
        help="export every frame of this range (END inclusive; 'scene': the scene's range): gltf animated and "
        "exact at every frame, fbx baked at every frame, accumulated per-frame local TRS; exit 1 if the file read back is off by more "
        "than 1e-5 relative at some frame (default: a static export of the current frame)",
    )

    fix = sub.add_parser("fix", help="make the hierarchy exportable and save a fixed copy")
    _add_common(fix)
    fix.add_argument("--method", required=True, choices=("helpers", "bake"))
    fix.add_argument("--out", required=True, metavar="FIXED.blend")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message
        return int(exc.code or 0) and EXIT_INPUT
    started = time.perf_counter()
    try:
        code = _run(args.command, args)
    except InspectorError as exc:
        say(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug, not the user's input: never mistaken for exit code 1
        if os.environ.get("HIERARCHY_INSPECTOR_DEBUG"):
            traceback.print_exc()
        say(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_BUG
    if args.command != "demo" and time.perf_counter() - started > 5:
        say(f"done in {time.perf_counter() - started:.1f} s")
    return code
