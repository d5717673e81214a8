"""The command line's arguments: :func:`build_parser` (every command and option, one-line
errors instead of a usage block) and :func:`joined_values` (negative frames as values)."""

from __future__ import annotations

import argparse
import re

from ..model.engines.paths import ENGINE_PATH
from ..model.errors import UsageError
from ..model.frames import parse_frame
from ..model.system.memory import parse_size
from ..model.thresholds import parse_threshold
from .audit_args import add_allow_missing, add_audit_parser, add_thresholds

#: ``export --animation``: the glTF exporter's animation mode of each choice.
ANIMATION_MODES = {
    "scene": "SCENE",
    "actions": "ACTIONS",
    "active-actions": "ACTIVE_ACTIONS",
    "nla-tracks": "NLA_TRACKS",
}


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (:class:`UsageError`), not a usage block."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _frame(text: str) -> int:
    return parse_frame(text, "--frame")


def _add_verbose(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", action="store_true", help="let Blender's own log lines through (quiet by default)")


def _add_common(p: argparse.ArgumentParser) -> None:
    _add_verbose(p)
    p.add_argument("blend", metavar="SCENE.blend", help="the .blend file to read (never modified)")
    p.add_argument("--scene", help="scene name (default: the file's active scene)")
    add_allow_missing(p)
    p.add_argument("--frame", type=_frame, help="frame to evaluate (default: the file's current frame)")
    add_thresholds(p, fixes=True)


def _add_max_memory(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-memory",
        type=parse_size,
        metavar="SIZE",
        help="with --frames: the memory this run may use (e.g. 16G; default: the memory available, within the "
        "process's address-space limit); a range estimated to need more is refused before it is read",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hierarchy_inspector",
        description="Compare Blender's matrix-composed world transforms with what game engines show.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the demo scene and run every job on it")
    demo.add_argument("--out", metavar="DIR", help="folder for the demo's files (default: build/demo)")
    _add_verbose(demo)

    report = sub.add_parser("report", help="inspect a .blend and write the report")
    _add_common(report)
    report.add_argument(
        "--json", metavar="OUT", help="write the report as JSON (schema hierarchy_inspector.report/1); - for stdout"
    )
    report.add_argument("--csv", metavar="OUT", help="write one CSV row per node; - for stdout")
    report.add_argument(
        "--pictures", metavar="DIR", help="draw worst_nodes.png and deviation_chart.png into DIR (numpy only)"
    )
    report.add_argument(
        "--fail-on-shear",
        type=parse_threshold,
        metavar="DEG",
        help="exit 1 if any world or exported-local shear exceeds DEG",
    )
    report.add_argument(
        "--frames",
        metavar="START:END[:STEP]",
        help="also inspect every frame of this range (END inclusive; 'scene': the scene's range): "
        "per node its worst frame and maxima; --fail-on-shear then applies to the whole range",
    )
    _add_max_memory(report)
    report.add_argument(
        "--chart", metavar="OUT.png", help="with --frames: shear and corner deviation over time of the worst nodes"
    )
    report.add_argument(
        "--engine",
        action="append",
        choices=tuple(ENGINE_PATH),
        help="only this engine's path decides 'flagged' and exit 1 (repeatable; default: every path): gltf, unity, "
        "godot (the file's TRS composed as matrices); unreal (animated bones: each key from the file's globals, "
        "the classic importer and Interchange since 5.4); unreal-interchange or unreal-locals (from each node's "
        "local matrix: objects imported into a level, reference poses, Interchange before 5.4, Preserve Local "
        "Transform); ogre (the file's TRS accumulated)",
    )
    report.add_argument("--dynamics", action="store_true", help="add velocities, accelerations and inertial terms")
    report.add_argument("--object", help="only this object's chain and everything below it")

    export = sub.add_parser("export", help="export transforms that survive")
    _add_common(export)
    export.add_argument(
        "--target",
        required=True,
        choices=("gltf", "fbx", "usd", "accumulated"),
        help="the file to write: glTF (exact, helper nodes), FBX (exact, or accumulated with --engine), USD "
        "(exact: matrix ops, helper joints), or the accumulated TRS as JSON",
    )
    export.add_argument(
        "--out",
        required=True,
        help="OUT.glb for gltf; OUT.fbx for fbx; OUT.usd, .usda or .usdc for usd; OUT.json for accumulated",
    )
    export.add_argument("--csv", metavar="OUT", help="accumulated: also write the local TRS as CSV")
    export.add_argument("--z-up", action="store_true", help="gltf: keep Blender's Z-up axes (default: glTF's Y-up)")
    export.add_argument(
        "--all-influences",
        action="store_true",
        help="gltf: write every bone influence of a vertex (JOINTS_1 / WEIGHTS_1 ...: Babylon.js reads 8, three.js "
        "only the first 4; default: Blender's exporter keeps the 4 largest); the skinned vertices are checked with "
        "every set the file holds",
    )
    export.add_argument(
        "--engine",
        choices=tuple(ENGINE_PATH),
        help="fbx: the engine the file is for: unreal-interchange, unreal-locals or ogre write the accumulated FBX "
        "(each node's local the TRS whose accumulation lands it where Blender shows it: objects imported into an "
        "Unreal level, reference poses, Preserve Local Transform, Ogre); the others (default) the exact FBX "
        "(helper nodes where a local holds shear: glTF viewers, Unity, Godot, Unreal's animated bones)",
    )
    export.add_argument(
        "--no-pole-helpers",
        action="store_true",
        help="fbx: no helper above objects without shear whose Euler angles pass near the pole (Blender's FBX "
        "exporter writes them in float32; default: a still, turned helper where that would cost over half the "
        "1e-5 check)",
    )
    export.add_argument(
        "--only-deform-bones",
        action="store_true",
        help="usd: joints for deform bones only (Blender's option; each joint whose parent is left out is "
        "written relative to its nearest exported ancestor, where USD puts it)",
    )
    export.add_argument(
        "--xform-op-mode",
        choices=("TRS", "TOS", "MAT"),
        default=None,
        help="usd: how Blender's exporter writes object transforms (default TRS); prims whose local holds "
        "shear get a matrix op whatever the mode",
    )
    export.add_argument(
        "--frames",
        metavar="START:END[:STEP]",
        help="export every frame of this range (END inclusive; 'scene': the scene's range): gltf animated and "
        "exact at every frame, fbx baked at every frame, usd time-sampled at every frame (joints within 1e-3, skinned points 1e-3 of the mesh's diagonal: half-precision joint scales), accumulated per-frame local TRS; exit 1 if the file read back is off by more "
        "than 1e-5 relative at some frame (default: a static export of the current frame)",
    )
    _add_max_memory(export)
    export.add_argument(
        "--animation",
        choices=ANIMATION_MODES,
        help="gltf with --frames: the glTF exporter's animation mode (default scene: the timeline as one "
        "animation; actions: one per action; active-actions: one of every object's active action; nla-tracks: "
        "one per NLA track), each animation's actions or tracks limited to --frames, corrected and read back "
        "alone as an engine plays it (exit 1 if any is off by more than 1e-5 relative)",
    )

    fix = sub.add_parser("fix", help="make the hierarchy exportable and save a fixed copy")
    _add_common(fix)
    fix.add_argument(
        "--method",
        required=True,
        choices=("helpers", "bake"),
        help="helpers: a helper empty above every object whose local holds shear; bake: the shear moved into "
        "the meshes (every vertex stays put)",
    )
    fix.add_argument("--out", required=True, metavar="FIXED.blend", help="the fixed copy (never the input)")
    add_audit_parser(sub, _add_verbose)
    return parser


#: Options whose value may start with "-" (a negative frame): argparse takes "-30:-20"
#: for an option of its own ("expected one argument"); only "--frames=-30:-20" worked.
_NEGATIVE_VALUES = ("--frames", "--frame")


def joined_values(argv: list[str]) -> list[str]:
    """``argv`` with ``--frames -30:-20`` written as ``--frames=-30:-20`` (and the same
    for ``--frame``): a value that starts with "-" and a digit is the option's value."""
    out: list[str] = []
    k = 0
    while k < len(argv):
        arg = argv[k]
        if arg in _NEGATIVE_VALUES and k + 1 < len(argv) and re.match(r"-\d", argv[k + 1]):
            out.append(f"{arg}={argv[k + 1]}")
            k += 2
            continue
        out.append(arg)
        k += 1
    return out
