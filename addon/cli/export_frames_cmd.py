"""``export``: glTF exact at the current frame or at every frame of a range (Blender's
exporter, helper nodes, read back at every frame), FBX through an export-ready copy
(read back with ufbx), USD corrected by a usd-core process (read back with usd-core),
or per-frame local TRS for accumulating engines.
Exit 1 when the file read back is further from Blender than the self-check's tolerance
at some frame."""

from __future__ import annotations

import numpy as np

from ..model.engines.paths import ACCUMULATED, ENGINE_PATH, UNREAL_INTERCHANGE
from ..model.exports.accumulated_frames import accumulated_frames_csv, accumulated_frames_document
from ..model.exports.animated_gltf import CHECK_TOLERANCE, within_tolerance, worst_label
from ..model.exports.fbx.exact import POLE_BUDGET
from ..model.exports.verdicts.skinned import VERTEX_TOLERANCE, SkinCheck
from ..model.outputs import json_text, write_all
from ..model.thresholds import Thresholds
from ..scene.exports.fbx_accumulated import write_fbx_accumulated
from ..scene.exports.fbx_export import write_fbx
from ..scene.exports.gltf_animated import write_gltf_frames
from ..scene.exports.gltf_hook import INSTANCED
from ..scene.exports.usd_export import write_usd
from ..scene.frames import read_frames
from . import console
from .arguments import ANIMATION_MODES
from .console import EXIT_OK, EXIT_THRESHOLD, say
from .frames_cmd import scene_range
from .process import signals_deferred
from .usd_lines import usd_lines


def check_result(relative: float, what: str) -> int:
    """EXIT_THRESHOLD (with one line on stderr) when ``relative`` exceeds the tolerance
    or is not a number (:func:`..model.exports.animated_gltf.within_tolerance`)."""
    if not within_tolerance(relative):
        why = "" if np.isfinite(relative) else " (non-finite values in the scene or the file)"
        say(f"{what}: read back {relative:.2e} relative from Blender{why}, over the tolerance {CHECK_TOLERANCE:g}")
        return EXIT_THRESHOLD
    return EXIT_OK


def print_not_checked(entries) -> None:
    """One line per ``(name, why)`` the read-back left out: a node, or the objects a
    collection instance instances (its own node is checked)."""
    for name, why in entries:
        if why == INSTANCED:
            print(f"not checked: the objects '{name}' instances ({why})")
        else:
            print(f"not checked as a node: '{name}' ({why})")


#: At most this many skinned meshes over the tolerance are named one per line.
LISTED_MESHES = 10


def skin_verdict(skins: SkinCheck | None, why: str, frames: int, what: str) -> int:
    """Print what the skinned meshes' vertices read back show; EXIT_THRESHOLD (one line
    on stderr) when a mesh is off by more than :data:`VERTEX_TOLERANCE` of its size
    (non-finite values included), naming it and its worst vertex."""
    if skins is None:
        if why:
            print(f"skinned vertices not checked: {why}")
        return EXIT_OK
    for name, reason in skins.not_checked:
        print(f"not checked by its vertices: '{name}' ({reason})")
    worst = skins.worst()
    if worst is None:
        return EXIT_OK
    print(
        f"skinned vertices read back as an engine skins them ({len(skins.meshes)} mesh(es), {frames} frame(s)): "
        f"worst '{worst.name}' vertex {worst.vertex} at frame {worst.frame}, {worst.distance:.2e} units "
        f"({worst.relative:.1e} of its size {worst.size:.3g})"
    )
    over = sorted(
        (e for e in skins.meshes.values() if not e.exact), key=lambda e: -np.nan_to_num(e.relative, nan=np.inf)
    )
    for e in over[:LISTED_MESHES]:
        print(
            f"over the tolerance ({VERTEX_TOLERANCE:g} of its size): '{e.name}' vertex {e.vertex} at frame {e.frame}, "
            f"{e.distance:.2e} units ({e.relative:.1e})" + (f": {e.cause}" if e.cause else "")
        )
    if len(over) > LISTED_MESHES:
        print(f"... and {len(over) - LISTED_MESHES} more skinned mesh(es) over the tolerance")
    if over:
        say(
            f"{what}: {len(over)} skinned mesh(es) off by more than {VERTEX_TOLERANCE:g} of their size "
            f"(worst '{over[0].name}' vertex {over[0].vertex}, {over[0].relative:.1e})"
        )
        return EXIT_THRESHOLD
    return EXIT_OK


def export_frames(scene, args, thresholds: Thresholds) -> int:
    """``export --target gltf`` (static without ``--frames``) and ``--target accumulated
    --frames``."""
    frame_range = scene_range(scene, args.frames) if args.frames is not None else None
    if args.target == "gltf":
        mode = ANIMATION_MODES[getattr(args, "animation", None) or "scene"]
        with signals_deferred(), console.quiet():  # a Ctrl-C inside the exporter would read as its failure
            result = write_gltf_frames(
                scene,
                args.out,
                frame_range,
                y_up=not args.z_up,
                thresholds=thresholds,
                animation_mode=mode,
                all_influences=getattr(args, "all_influences", False),
            )
        err = result.error
        worst = worst_label(err.per_node)
        helpers = f" ({console.listed(result.helpers)})" if result.helpers else ""
        if frame_range is None:
            print(f"wrote {args.out!r}: frame {scene.frame_current}; {len(result.helpers)} helper node(s){helpers}")
        else:
            takes = f", {len(result.animations)} animation(s) ({args.animation})" if result.animations else ""
            print(
                f"wrote {args.out!r}: frames {frame_range.start}..{frame_range.end} step {frame_range.step} "
                f"({len(result.frames)} keys{takes}); {len(result.helpers)} animated helper node(s){helpers}"
            )
        print(
            f"read back as an engine composes it ({err.checked} nodes, {len(result.frames)} frame(s)): "
            f"relative error {err.relative:.2e} (max {err.absolute:.2e} units, worst '{worst}')"
        )
        for name, each in result.animations.items():
            verdict = "" if within_tolerance(each.relative) else f" (over the tolerance {CHECK_TOLERANCE:g})"
            print(
                f"animation '{name}' played alone ({each.checked} nodes): relative error {each.relative:.2e} "
                f"(max {each.absolute:.2e} units){verdict}"
            )
        if result.half_frame is not None:
            print(
                f"between frames (half frames: the engine's interpolation against Blender's subframes): "
                f"relative {result.half_frame.relative:.2e}"
            )
        print_not_checked(result.not_checked)
        skins = skin_verdict(result.skins, result.skins_why, len(result.frames), args.out)
        args.summary = f"{len(result.frames)} frame(s), {len(result.helpers)} helper(s), read back {err.relative:.1e}"
        return max(check_result(err.relative, args.out), skins)
    if args.target == "fbx":
        return _fbx(scene, args, frame_range, thresholds)
    if args.target == "usd":
        return _usd(scene, args, frame_range, thresholds)
    assert frame_range is not None
    series = read_frames(scene, frame_range.frames())
    document = accumulated_frames_document(series)
    files = {args.out: json_text(document)}
    if args.csv:
        files[args.csv] = accumulated_frames_csv(document)
    write_all(files)
    print(
        f"wrote {args.out!r}: {len(document['nodes'])} nodes x {len(document['frames'])} frames; largest residual "
        f"corner distance {document['max_residual_corner']:.3g} (sheared Blender worlds)"
    )
    args.summary = f"{len(document['nodes'])} nodes x {len(document['frames'])} frames"
    return EXIT_OK


def _fbx(scene, args, frame_range, thresholds: Thresholds) -> int:
    if ENGINE_PATH.get(getattr(args, "engine", None) or "") in (UNREAL_INTERCHANGE, ACCUMULATED):
        return _fbx_accumulated(scene, args, frame_range)
    with signals_deferred(), console.quiet():  # a Ctrl-C inside the exporter would read as its failure
        result = write_fbx(  # one export per process
            scene, args.out, frame_range, thresholds, again=False, pole_helpers=not args.no_pole_helpers
        )
    helpers = f" ({console.listed(result.helpers)})" if result.helpers else ""
    what = f"frame {result.frames[0]}" if frame_range is None else f"frames {frame_range.start}..{frame_range.end}"
    print(f"wrote {args.out!r}: {what}; {len(result.helpers)} object(s) and bone(s) given a temporary helper{helpers}")
    if result.pole_helpers:
        print(
            f"{len(result.pole_helpers)} object(s) given a still helper that keeps their Euler angles off the pole "
            f"(written in float32 there, they were estimated to cost over {POLE_BUDGET:.0e} relative): "
            + console.listed(result.pole_helpers)
        )
    for label, why in result.not_corrected:
        print(f"not corrected: '{label}' ({why})")
    print_not_checked(result.not_checked)
    err = result.error
    args.summary = f"{len(result.frames)} frame(s), {len(result.helpers)} helper(s)"
    if err is None:
        print("not read back: the ufbx package (an independent FBX reader) is not installed")
        args.summary += ", not read back"
        return EXIT_OK
    worst = worst_label(err.per_node)
    print(
        f"read back with ufbx ({err.checked} nodes, {len(result.frames)} frame(s)): relative error "
        f"{err.relative:.2e} (max {err.absolute:.2e} units, worst '{worst}')"
    )
    if result.plain is not None:
        print(
            f"Blender's plain export of the scene read back the same way (this file missed the tolerance): "
            f"relative error {result.plain.relative:.2e} (max {result.plain.absolute:.2e} units)"
        )
    for label, (ours, theirs) in list(result.worse_than_plain.items())[:LISTED_MESHES]:
        print(f"worse than Blender's plain export: '{label}' {ours:.2e} units off, plain {theirs:.2e}")
    skins = skin_verdict(result.skins, "", len(result.frames), args.out)
    args.summary += f", read back {err.relative:.1e}"
    return max(check_result(err.relative, args.out), skins)


def _fbx_accumulated(scene, args, frame_range) -> int:
    """``export --target fbx --engine unreal-interchange|unreal-locals|ogre``: the
    accumulated FBX, read back and accumulated as those engines do."""
    with signals_deferred(), console.quiet():
        result = write_fbx_accumulated(scene, args.out, frame_range, again=False)
    what = f"frame {result.frames[0]}" if frame_range is None else f"frames {frame_range.start}..{frame_range.end}"
    print(f"wrote {args.out!r}: {what}; {result.corrected} object(s) and bone(s) written with their accumulated local")
    for label, why in result.not_corrected:
        print(f"not corrected: '{label}' ({why})")
    print_not_checked(result.not_checked)
    err = result.error
    args.summary = f"{len(result.frames)} frame(s), {result.corrected} accumulated"
    if err is None:
        print("not read back: the ufbx package (an independent FBX reader) is not installed")
        args.summary += ", not read back"
        return EXIT_OK
    worst = worst_label(err.per_node)
    print(
        f"read back with ufbx and accumulated as Unreal (from locals) and Ogre do ({err.checked} nodes, "
        f"{len(result.frames)} frame(s)): relative error {err.relative:.2e} (max {err.absolute:.2e} units, worst '{worst}')"
    )
    skewed = {k: v for k, v in result.skew.items() if v > CHECK_TOLERANCE}
    if skewed:
        top = max(skewed, key=lambda k: skewed[k])
        print(
            f"{len(skewed)} node(s) keep Blender's own skew, which no TRS holds (largest: '{top}' "
            f"{skewed[top]:.3g} units; fix --method bake, or Inherit Scale Aligned for bones, removes it)"
        )
    args.summary += f", read back {err.relative:.1e}"
    return check_result(err.relative, args.out)


def _usd(scene, args, frame_range, thresholds: Thresholds) -> int:
    with signals_deferred(), console.quiet():  # a Ctrl-C inside the exporter would read as its failure
        result = write_usd(
            scene,
            args.out,
            frame_range,
            thresholds,
            xform_op_mode=args.xform_op_mode or "TRS",
            only_deform_bones=args.only_deform_bones,
            again=False,  # one export per process
        )
    lines, over = usd_lines(result, args.out, frame_range)
    for line in lines:
        print(line)
    args.summary = (
        f"{len(result.frames)} frame(s), {len(result.matrix_ops)} matrix op(s), {len(result.helpers)} helper joint(s)"
    )
    if over:
        say(f"{args.out}: read back over the tolerance: {'; '.join(over)}")
        return EXIT_THRESHOLD
    return EXIT_OK
