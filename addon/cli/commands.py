"""``report``, ``export`` and ``fix``: open the file, go to the frame, inspect with the
one threshold policy, and write outputs whole or not at all. The same scene-layer code
as the panel's operators runs underneath.
"""

from __future__ import annotations

import os

import bpy
import numpy as np

from ..model.engines.paths import LABEL, paths_of
from ..model.errors import UsageError
from ..model.exports.accumulated import accumulated_csv, accumulated_document
from ..model.exports.fix_plans import bake_plan
from ..model.inspection import Inspection
from ..model.outputs import check_folder, check_outputs, json_text, make_folder, write_all
from ..model.pictures import deviation_chart_png, worst_nodes_png
from ..model.report import build_report, report_csv, report_table
from ..model.thresholds import Thresholds
from ..scene.blend_files import check_libraries, files_read, open_blend, save_copy
from ..scene.dynamics import scene_dynamics
from ..scene.edits.bake import bake_residual
from ..scene.edits.helpers import insert_helpers
from ..scene.exports.usd_export import EXTENSIONS as USD_EXTENSIONS
from ..scene.scan import scan_scene
from . import console
from .console import EXIT_OK, EXIT_THRESHOLD, say
from .export_frames_cmd import export_frames
from .frames_cmd import check_range, check_range_memory, range_results, write_chart
from .process import signals_deferred

#: A scene with more objects than this reports progress on stderr (when it is a terminal).
PROGRESS_NODES = 2000

#: ``--json -`` / ``--csv -``: the document on stdout (and the table left out).
STDOUT = "-"


def thresholds_of(args) -> Thresholds:
    """The thresholds given on the command line, or :class:`UsageError` naming the bad one."""
    try:
        engine = getattr(args, "engine", None)
        engines = paths_of([engine] if isinstance(engine, str) else engine)
        return Thresholds(shear_deg=args.shear_threshold, corner=args.corner_threshold, engines=engines)
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
    """Open ``args.blend``, pick ``args.scene`` and go to ``args.frame``.

    Blender runs Python handlers while it loads a file and changes frame, and would
    swallow a Ctrl-C arriving in one: such signals wait until these calls are done; what
    Blender prints meanwhile stays off the terminal.
    """
    with signals_deferred(), console.quiet():
        open_blend(args.blend)
    allowed = check_libraries(getattr(args, "allow_missing_libraries", False))
    if allowed:
        say(f"inspected without {len(allowed)} missing library file(s): {console.listed(allowed, quote=True)}")
    # The outputs checked again now that every file the scene reads is known.
    args.inputs = files_read(args.blend)
    check_outputs(getattr(args, "outputs", {}), args.inputs)
    with signals_deferred(), console.quiet():
        scene = _scene(args.scene)
        if args.frame is not None:
            scene.frame_set(args.frame)
    return scene


def inspect_scene(scene, args, instances: bool = False) -> Inspection:
    progress = console.progress("scan") if len(scene.objects) > PROGRESS_NODES else None
    return scan_scene(scene, thresholds_of(args), progress=progress, instances=instances)


def _check_outputs(args, stdout: tuple[str, ...] = (), **outputs: str | None) -> None:
    """Every output writable, none the input .blend (by identity), no two the same file;
    ``outputs`` maps each option's name (``json`` for ``--json``) to its path; ``-``
    means standard output only for the options named in ``stdout`` (elsewhere it is a
    file named ``-``, checked like any other). The outputs are kept in ``args.outputs``
    for :func:`open_scene`, which checks them against the files the scene reads."""
    named = {f"--{name}": path for name, path in outputs.items() if path and not (name in stdout and path == STDOUT)}
    args.outputs = {**getattr(args, "outputs", {}), **named}
    check_outputs(named, {"SCENE.blend": args.blend})


def _require_objects(scene, why: str) -> None:
    """:class:`UsageError` when ``scene`` has no objects (``why``: what cannot be done)."""
    if not len(scene.objects):
        raise UsageError(f"scene {scene.name!r} of {bpy.data.filepath!r} has no objects: {why}")


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
    """:func:`make_report`, its inspection, and with ``--frames`` the range's results
    (else None), and the report's node indices (None: all)."""
    thresholds_of(args)  # refuse bad thresholds and ranges before opening anything
    frames = getattr(args, "frames", None)
    check_range(frames)
    scene = open_scene(args)
    if frames is not None:
        _require_objects(scene, "no frame range to inspect")
    # Instances are read at one frame (the depsgraph's instances have no bulk access, and
    # their set may change from frame to frame): a range or rates leave them out, and say so.
    over_time = frames is not None or with_dynamics
    inspection = inspect_scene(scene, args, instances=not over_time)
    if over_time and _has_instances(scene):
        say("instances are inspected at one frame only: leave out --frames and --dynamics to include them")
    indices = _subset(inspection, args.object)
    if frames is not None:
        check_range_memory(scene, args, "report --dynamics" if with_dynamics else "report", len(inspection.nodes))
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
    return report, over_frames, indices, inspection


def _has_instances(scene) -> bool:
    """Does any object of ``scene`` instance a collection, or carry geometry nodes?"""
    return any(
        o.instance_type != "NONE" or len(o.particle_systems) or any(m.type == "NODES" for m in o.modifiers)
        for o in scene.objects
    )


def worst_shear(inspection, indices=None, over_frames=None) -> float:
    """The report's worst shear (degrees): :attr:`Inspection.worst_shear` of its nodes
    (``indices``, None: all), over the whole range with ``--frames``; what the audit
    records for a file (the same rule, so the two agree)."""
    idx = np.arange(len(inspection.nodes)) if indices is None else np.asarray(indices, dtype=np.int64)
    if not len(idx):
        return 0.0
    worst = float(inspection.worst_shear[idx].max())
    if over_frames is not None:
        worst = max(worst, float(over_frames.worst_shear(idx).max()))
    return worst


def cmd_report(args) -> int:
    chart = getattr(args, "chart", None)
    pictures = getattr(args, "pictures", None)
    if chart and getattr(args, "frames", None) is None:
        raise UsageError("--chart draws a frame range: give --frames too")
    if args.json == STDOUT and args.csv == STDOUT:
        raise UsageError("--json - and --csv -: only one of them can go to stdout")
    if pictures:
        check_folder(pictures)  # made only once the file has been read
    _check_outputs(args, ("json", "csv"), json=args.json, csv=args.csv, chart=chart)
    report, over_frames, indices, inspection = make_report_and_range(args, with_dynamics=args.dynamics)
    worst = worst_shear(inspection, indices, over_frames)
    files: dict = {}
    if chart:
        files[chart] = lambda tmp: write_chart(tmp, over_frames, indices)
    if pictures:
        worst_png, deviation_png = (
            os.path.join(make_folder(pictures), n) for n in ("worst_nodes.png", "deviation_chart.png")
        )
        named = {"--json": args.json, "--csv": args.csv, "--chart": chart}
        named |= {f"--pictures ({os.path.basename(p)})": p for p in (worst_png, deviation_png)}
        check_outputs({k: v for k, v in named.items() if v and v != STDOUT}, args.inputs)
        files[worst_png] = lambda tmp: worst_nodes_png(inspection, tmp)
        files[deviation_png] = lambda tmp: deviation_chart_png(inspection, tmp)
    texts = {args.json: json_text(report) if args.json else None}
    texts[args.csv] = report_csv(report) if args.csv else None
    for path, text in texts.items():
        if path and path != STDOUT:
            files[path] = text
    write_all(files)
    if STDOUT in texts:
        console.user_stdout().write(texts[STDOUT])
    else:
        print(report_table(report))
    flagged = sum(1 for e in report["nodes"] if e["flagged"])
    args.summary = f"{len(report['nodes'])} nodes, {flagged} flagged, worst shear {worst:.2f} deg"
    if args.fail_on_shear is not None:
        if worst > args.fail_on_shear:
            say(f"shear {worst:.3f} deg exceeds --fail-on-shear {args.fail_on_shear:g}")
            return EXIT_THRESHOLD
    if getattr(args, "engine", None):  # a gate asked for: the chosen engines' flags decide
        flagged_range = report.get("frames", {}).get("flagged", 0)
        if flagged or flagged_range:
            engines = ", ".join(LABEL[p] for p in report["thresholds"]["engines"])
            say(f"{max(flagged, flagged_range)} node(s) flagged for {engines} (--engine)")
            return EXIT_THRESHOLD
    return EXIT_OK


# -- export ---------------------------------------------------------------------------------


def cmd_export(args) -> int:
    if args.csv and args.target != "accumulated":
        raise UsageError(f"--csv is for --target accumulated (the {args.target} file itself holds the transforms)")
    if args.z_up and args.target != "gltf":
        raise UsageError(f"--z-up is for --target gltf (the {args.target} export has no such choice)")
    if args.all_influences and args.target != "gltf":
        why = "the fbx file's clusters hold every influence" if args.target == "fbx" else "no such choice there"
        raise UsageError(f"--all-influences is for --target gltf ({why})")
    if getattr(args, "engine", None) and args.target != "fbx":
        raise UsageError(f"--engine is for --target fbx (the {args.target} export serves one kind of engine)")
    if args.no_pole_helpers and args.target != "fbx":
        raise UsageError(f"--no-pole-helpers is for --target fbx (the {args.target} file holds no Euler angles)")
    usd_only = ("--only-deform-bones", args.only_deform_bones), ("--xform-op-mode", args.xform_op_mode is not None)
    for flag, given in usd_only:
        if given and args.target != "usd":
            raise UsageError(f"{flag} is for --target usd (the {args.target} export has no such choice)")
    if args.animation is not None and (args.target != "gltf" or args.frames is None):
        why = f"the {args.target} export has no such choice" if args.target != "gltf" else "a static export has none"
        raise UsageError(f"--animation is for --target gltf with --frames ({why})")
    _check_outputs(args, out=args.out, csv=args.csv)
    thresholds = thresholds_of(args)
    if args.target == "gltf" and not args.out.lower().endswith(".glb"):
        raise UsageError(f"{args.out!r}: glTF output must be a .glb (one file, written whole)")
    if args.target == "fbx" and not args.out.lower().endswith(".fbx"):
        raise UsageError(f"{args.out!r}: FBX output must be a .fbx")
    if args.target == "usd" and not args.out.lower().endswith(USD_EXTENSIONS):
        raise UsageError(f"{args.out!r}: USD output must be one of {', '.join(USD_EXTENSIONS)}")
    check_range(args.frames)
    scene = open_scene(args)
    _require_objects(scene, "nothing to export")
    if args.frames is not None:  # before Blender's exporter runs (it would run for minutes, then fail)
        check_range_memory(scene, args, args.target)
    if args.frames is not None or args.target in ("gltf", "fbx", "usd"):
        exported = args.target in ("gltf", "fbx", "usd")  # the exporters write instances as nodes of their own
        instances = (
            instance_notes(scan_scene(scene, thresholds, instances=True), scene.frame_current) if exported else []
        )
        code = export_frames(scene, args, thresholds)
        for line in instances:
            print(line)
        return code
    document = accumulated_document(inspect_scene(scene, args))
    files = {args.out: json_text(document)}
    if args.csv:
        files[args.csv] = accumulated_csv(document)
    write_all(files)
    print(
        f"wrote {args.out!r}: {len(document['nodes'])} nodes; largest residual corner distance "
        f"{document['max_residual_corner']:.3g} (sheared Blender worlds; fix --method bake removes it)"
    )
    args.summary = f"{len(document['nodes'])} nodes"
    return EXIT_OK


def instance_notes(inspection: Inspection, frame: int) -> list[str]:
    """What the glTF and FBX exports do with instances: Blender's exporters write them as
    they are (a node per instance under its instancer, its TRS decomposed from Blender's
    matrix); no helper can go above an instance, so the ones whose local matrix holds
    shear at the inspected frame are named."""
    nodes = inspection.nodes
    count = len(nodes.instance_of)
    if not count:
        return []
    lossy = [nodes.label(i) for i in sorted(nodes.instance_of) if inspection.lossy_local[i]]
    lines = [
        f"instances: {count} exported by Blender's exporter as they are (not corrected); "
        f"{len(lossy)} lose shear at frame {frame} (local shear > {inspection.thresholds.shear_deg:g} deg)"
    ]
    if lossy:
        lines.append(f"not corrected: {console.listed(lossy, quote=True)}")
    return lines


# -- fix ------------------------------------------------------------------------------------


def cmd_fix(args) -> int:
    _check_outputs(args, out=args.out)
    if not args.out.lower().endswith(".blend"):
        raise UsageError(f"{args.out!r}: the fixed file must be a .blend")
    thresholds = thresholds_of(args)
    scene = open_scene(args)
    inspection = inspect_scene(scene, args)
    if args.method == "helpers":
        result = insert_helpers(inspection)
        changed = [h for h, _obj in result.inserted]
        what = f"helper empties inserted (local shear > {thresholds.shear_deg:g} deg)"
        for name, why in result.skipped:
            print(f"not changed: '{name}' ({why}); its exported local keeps the shear")
        if result.bones:
            print(
                f"not changed: {len(result.bones)} bone(s) whose local matrix holds shear (a helper empty cannot go "
                f"inside a rig; export --target gltf or fbx gives them helper joints): {console.listed(result.bones)}"
            )
    else:
        changed = bake_residual(inspection)
        what = f"objects baked (world shear > {thresholds.shear_deg:g} deg)"
    with signals_deferred(), console.quiet():  # a Ctrl-C inside Blender's save would read as a failed save
        save_copy(args.out)
    args.summary = f"{len(changed)} changed"
    print(f"wrote {args.out!r}: {len(changed)} {what}" + (f" ({console.listed(changed)})" if changed else ""))
    if args.method == "bake":
        _objects, bones = bake_plan(inspection)
        if bones:
            print(f"not baked (bones; set Inherit Scale to Aligned): {console.listed(bones)}")
    return EXIT_OK
