"""``report``, ``export`` and ``fix``: open the file, go to the frame, inspect with the
one threshold policy, and write outputs whole or not at all. The same scene-layer code
as the panel's operators runs underneath.
"""

from __future__ import annotations

import json
import os

import bpy

from ..model.errors import UsageError
from ..model.exports.accumulated import accumulated_csv, accumulated_document
from ..model.exports.fix_plans import bake_plan
from ..model.inspection import Inspection
from ..model.outputs import check_writable, write_text
from ..model.report import build_report, report_csv, report_table
from ..model.thresholds import Thresholds
from ..scene.bake import bake_residual
from ..scene.blend_files import open_blend, save_copy
from ..scene.dynamics import scene_dynamics
from ..scene.helpers import insert_helpers
from ..scene.scan import scan_scene
from .export_frames_cmd import export_frames
from .frames_cmd import check_range, range_results, write_chart
from .main import EXIT_OK, EXIT_THRESHOLD, say

#: A scene with more objects than this reports progress on stderr.
PROGRESS_NODES = 2000


def thresholds_of(args) -> Thresholds:
    """The thresholds given on the command line, or :class:`UsageError` naming the bad one."""
    try:
        return Thresholds(shear_deg=args.shear_threshold, corner=args.corner_threshold)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _scene(name: str | None):
    if name is None:
        return bpy.context.scene
    scene = bpy.data.scenes.get(name)
    if scene is None:
        raise UsageError(f"unknown scene {name!r} (the file has: {', '.join(s.name for s in bpy.data.scenes)})")
    bpy.context.window.scene = scene
    return scene


def open_scene(args):
    """Open ``args.blend``, pick ``args.scene`` and go to ``args.frame``."""
    open_blend(args.blend)
    scene = _scene(args.scene)
    if args.frame is not None:
        scene.frame_set(args.frame)
    return scene


def inspect_scene(scene, args) -> Inspection:
    progress = None
    if len(scene.objects) > PROGRESS_NODES:
        progress = lambda fraction, message: say(f"{int(100 * fraction):3d}% {message}")  # noqa: E731
    return scan_scene(scene, thresholds_of(args), progress=progress)


def _check_outputs(*paths: str | None) -> None:
    for path in paths:
        if path:
            check_writable(path)


def _subset(inspection: Inspection, object_name: str | None) -> list[int] | None:
    """Node indices of ``object_name``'s chain and everything below it (None: all)."""
    if object_name is None:
        return None
    index = inspection.nodes.index()
    if (object_name, "") not in index:
        raise UsageError(f"unknown object {object_name!r} in scene ({len(inspection.nodes)} nodes inspected)")
    return inspection.subtree(index[(object_name, "")])


# -- report ---------------------------------------------------------------------------------


def make_report(args, with_dynamics: bool = False) -> dict:
    """Open the file, go to the frame, inspect, and build the report dict."""
    return make_report_and_range(args, with_dynamics)[0]


def make_report_and_range(args, with_dynamics: bool = False):
    """:func:`make_report`, and with ``--frames`` the range's results (else None)."""
    thresholds_of(args)  # refuse bad thresholds and ranges before opening anything
    frames = getattr(args, "frames", None)
    check_range(frames)
    scene = open_scene(args)
    inspection = inspect_scene(scene, args)
    indices = _subset(inspection, args.object)
    dynamics = scene_dynamics(scene, inspection) if with_dynamics else None
    over_frames = None
    if frames is not None:
        over_frames = range_results(scene, inspection, frames, thresholds_of(args), with_dynamics)
    report = build_report(
        inspection,
        blender_version=bpy.app.version_string,
        file=os.path.abspath(args.blend),
        frame=scene.frame_current,
        fps=scene.render.fps / scene.render.fps_base,
        indices=indices,
        dynamics=dynamics,
        over_frames=over_frames,
    )
    return report, over_frames, indices


def _worst_shear(report: dict) -> float:
    """The largest world or exported-local shear of the report's nodes (degrees); over
    the whole range with ``--frames``."""
    return max(
        (
            max(
                max(abs(v) for v in e["shear_deg"]),
                max(abs(v) for v in e["local"]["shear_deg"]),
                *((e["over_frames"]["shear_deg"], e["over_frames"]["local_shear_deg"]) if "over_frames" in e else ()),
            )
            for e in report["nodes"]
        ),
        default=0.0,
    )


def cmd_report(args) -> int:
    chart = getattr(args, "chart", None)
    if chart and getattr(args, "frames", None) is None:
        raise UsageError("--chart draws a frame range: give --frames too")
    _check_outputs(args.json, args.csv, chart)
    report, over_frames, indices = make_report_and_range(args, with_dynamics=args.dynamics)
    if chart:
        write_chart(chart, over_frames, indices)
    if args.json:
        write_text(args.json, json.dumps(report, indent=1) + "\n")
    if args.csv:
        write_text(args.csv, report_csv(report))
    print(report_table(report))
    if args.fail_on_shear is not None:
        worst = _worst_shear(report)
        if worst > args.fail_on_shear:
            say(f"shear {worst:.3f} deg exceeds --fail-on-shear {args.fail_on_shear:g}")
            return EXIT_THRESHOLD
    return EXIT_OK


# -- export ---------------------------------------------------------------------------------


def cmd_export(args) -> int:
    _check_outputs(args.out, args.csv)
    thresholds = thresholds_of(args)
    if args.target == "gltf" and not args.out.lower().endswith(".glb"):
        raise UsageError(f"{args.out!r}: glTF output must be a .glb (one file, written whole)")
    if args.target == "fbx" and not args.out.lower().endswith(".fbx"):
        raise UsageError(f"{args.out!r}: FBX output must be a .fbx")
    check_range(args.frames)
    scene = open_scene(args)
    if args.frames is not None or args.target in ("gltf", "fbx"):
        return export_frames(scene, args, thresholds)
    document = accumulated_document(inspect_scene(scene, args))
    write_text(args.out, json.dumps(document, indent=1) + "\n")
    if args.csv:
        write_text(args.csv, accumulated_csv(document))
    print(
        f"wrote {args.out}: {len(document['nodes'])} nodes; largest residual corner distance "
        f"{document['max_residual_corner']:.3g} (sheared Blender worlds; fix --method bake removes it)"
    )
    return EXIT_OK


# -- fix ------------------------------------------------------------------------------------


def cmd_fix(args) -> int:
    _check_outputs(args.out)
    if not args.out.lower().endswith(".blend"):
        raise UsageError(f"{args.out!r}: the fixed file must be a .blend")
    if os.path.abspath(args.out) == os.path.abspath(args.blend):
        raise UsageError(f"{args.out!r}: the fixed copy must not replace the input file")
    thresholds = thresholds_of(args)
    scene = open_scene(args)
    inspection = inspect_scene(scene, args)
    if args.method == "helpers":
        result = insert_helpers(inspection)
        changed = [h for h, _obj in result.inserted]
        what = f"helper empties inserted (local shear > {thresholds.shear_deg:g} deg)"
        for name, why in result.skipped:
            print(f"not changed: '{name}' ({why}); its exported local keeps the shear")
    else:
        changed = bake_residual(inspection)
        what = f"objects baked (world shear > {thresholds.shear_deg:g} deg)"
    save_copy(args.out)
    print(f"wrote {args.out}: {len(changed)} {what}" + (f" ({', '.join(changed)})" if changed else ""))
    if args.method == "bake":
        _objects, bones = bake_plan(inspection)
        if bones:
            print(f"not baked (bones; set Inherit Scale to Aligned): {', '.join(bones)}")
    return EXIT_OK
