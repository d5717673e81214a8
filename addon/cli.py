"""The command line: ``python -m hierarchy_inspector <command> ...`` (bpy from PyPI) or
``blender -b -c hierarchy_inspector <command> ...`` (an installed extension).

Commands: ``demo``, ``report``, ``export``, ``fix`` (``--help`` on each). The same code
as the panel and the operators runs underneath.

Exit codes: 0 ran and nothing exceeded a threshold; 1 a threshold was exceeded
(``--fail-on-shear``); 2 bad input (missing file, not a .blend, unknown object or
scene, unwritable output, a scene that cannot be exported or fixed as asked): one line
on stderr, no traceback, and no output file is left half written; 3 an internal error
(a bug: one line, the traceback with ``HIERARCHY_INSPECTOR_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


class UsageError(Exception):
    """Bad input from the user: reported as one line on stderr, exit code 2."""


#: A scene with more nodes than this reports progress on stderr.
PROGRESS_NODES = 2000


def _bpy():
    try:
        import bpy
    except ImportError:
        raise UsageError(
            "Blender's Python module is not available: pip install bpy==5.0.1 (Python 3.11), "
            "or run blender -b -c hierarchy_inspector ..."
        ) from None
    return bpy


def _progress(message: str) -> None:
    print(f"hierarchy_inspector: {message}", file=sys.stderr, flush=True)


def open_blend(path: str) -> None:
    """Load ``path`` as Blender's current file, or :class:`UsageError` saying why not."""
    bpy = _bpy()
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a folder, not a .blend file")
    with open(path, "rb") as f:
        head = f.read(12)
    # Plain .blend files start with "BLENDER"; compressed ones with zstd or gzip magic.
    if not (head.startswith(b"BLENDER") or head.startswith(b"\x28\xb5\x2f\xfd") or head.startswith(b"\x1f\x8b")):
        raise UsageError(f"{path}: not a .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"{path}: Blender could not read it ({str(exc).strip().splitlines()[-1]})") from None


def _scene(name: str | None):
    bpy = _bpy()
    if name is None:
        return bpy.context.scene
    scene = bpy.data.scenes.get(name)
    if scene is None:
        raise UsageError(f"unknown scene '{name}' (the file has: {', '.join(s.name for s in bpy.data.scenes)})")
    bpy.context.window.scene = scene
    return scene


def _inspect_scene(scene, args):
    from .scan import scan_scene

    count = len(scene.objects)
    progress = None
    if count > PROGRESS_NODES:
        progress = lambda fraction, message: _progress(f"{int(100 * fraction):3d}% {message}")  # noqa: E731
    return scan_scene(scene, args.shear_threshold, args.corner_threshold, progress=progress)


def _subset(inspection, object_name: str | None):
    """Node indices of ``object_name``'s chain and everything below it (None: all)."""
    if object_name is None:
        return None
    nodes = inspection.nodes
    index = nodes.index()
    if (object_name, "") not in index:
        raise UsageError(f"unknown object '{object_name}' in scene ({len(nodes)} nodes inspected)")
    top = index[(object_name, "")]
    keep = set(nodes.chain(top))
    depth_order = list(map(int, inspection.hierarchy.depth.argsort(kind="stable")))
    below = {top}
    for i in depth_order:
        if int(nodes.parents[i]) in below:
            below.add(i)
    return sorted(keep | below)


def _write(path: str, text: str) -> None:
    from .files import write_text

    write_text(path, text)


def _check_outputs(*paths: str | None) -> None:
    from .files import OutputError, check_writable

    for path in paths:
        if path:
            try:
                check_writable(path)
            except OutputError as exc:
                raise UsageError(str(exc)) from None


# -- report ---------------------------------------------------------------------------------


def make_report(args, with_dynamics: bool = False) -> dict:
    """Open the file, go to the frame, inspect, and build the report dict."""
    bpy = _bpy()
    open_blend(args.blend)
    scene = _scene(args.scene)
    if args.frame is not None:
        scene.frame_set(args.frame)
    inspection = _inspect_scene(scene, args)
    indices = _subset(inspection, args.object)
    dynamics = None
    if with_dynamics:
        from .dynamics_report import scene_dynamics

        dynamics = scene_dynamics(scene, inspection)
    from .report import build_report

    fps = scene.render.fps / scene.render.fps_base
    return build_report(
        inspection,
        blender_version=bpy.app.version_string,
        file=os.path.abspath(args.blend),
        frame=scene.frame_current,
        fps=fps,
        indices=indices,
        dynamics=dynamics,
    )


def _cmd_report(args) -> int:
    from .report import report_csv, report_table

    _check_outputs(args.json, args.csv)
    report = make_report(args, with_dynamics=args.dynamics)
    if args.json:
        _write(args.json, json.dumps(report, indent=1) + "\n")
    if args.csv:
        _write(args.csv, report_csv(report))
    print(report_table(report))
    if args.fail_on_shear is not None:
        worst = max(
            [
                max(max(abs(v) for v in e["shear_deg"]), max(abs(v) for v in e["local"]["shear_deg"]))
                for e in report["nodes"]
            ]
            or [0.0]
        )
        if worst > args.fail_on_shear:
            print(
                f"hierarchy_inspector: shear {worst:.3f} deg exceeds --fail-on-shear {args.fail_on_shear:g}",
                file=sys.stderr,
            )
            return 1
    return 0


# -- export ---------------------------------------------------------------------------------


def _cmd_export(args) -> int:
    from . import export

    _check_outputs(args.out, args.csv)
    if args.target == "gltf" and not args.out.lower().endswith(".glb"):
        raise UsageError(f"{args.out}: glTF output must be a .glb (one file, written whole)")
    open_blend(args.blend)
    scene = _scene(args.scene)
    if args.frame is not None:
        scene.frame_set(args.frame)
    if args.target == "gltf":
        try:
            result = export.write_gltf(
                scene, args.out, y_up=not args.z_up, thresholds=(args.shear_threshold, args.corner_threshold)
            )
        except export.ExportError as exc:
            raise UsageError(str(exc)) from None
        print(
            f"wrote {args.out}: {result.helpers} helper node(s); read back as a viewer composes it, "
            f"relative error {result.relative_error:.2e} (max {result.absolute_error:.2e} units)"
        )
        return 0
    inspection = _inspect_scene(scene, args)
    try:
        document = export.accumulated_document(inspection)
    except export.ExportError as exc:
        raise UsageError(str(exc)) from None
    _write(args.out, json.dumps(document, indent=1) + "\n")
    if args.csv:
        _write(args.csv, export.accumulated_csv(document))
    print(
        f"wrote {args.out}: {len(document['nodes'])} nodes; largest residual corner distance "
        f"{document['max_residual_corner']:.3g} (sheared Blender worlds; fix --method bake removes it)"
    )
    return 0


# -- fix ------------------------------------------------------------------------------------


def _cmd_fix(args) -> int:
    bpy = _bpy()
    from . import export, fix_bake

    _check_outputs(args.out)
    if not args.out.lower().endswith(".blend"):
        raise UsageError(f"{args.out}: the fixed file must be a .blend")
    if os.path.abspath(args.out) == os.path.abspath(args.blend):
        raise UsageError(f"{args.out}: the fixed copy must not replace the input file")
    open_blend(args.blend)
    scene = _scene(args.scene)
    if args.frame is not None:
        scene.frame_set(args.frame)
    inspection = _inspect_scene(scene, args)
    try:
        if args.method == "helpers":
            result = export.insert_helpers(inspection)
            changed = [h for h, _obj in result.inserted]
            what = "helper empties inserted"
            for name, why in result.skipped:
                print(f"not changed: '{name}' ({why}); its exported local keeps the shear")
        else:
            changed = fix_bake.bake_residual(inspection)
            what = "objects baked"
    except (export.ExportError, fix_bake.BakeError) as exc:
        raise UsageError(str(exc)) from None
    from .files import write_with

    write_with(args.out, lambda tmp: bpy.ops.wm.save_as_mainfile(filepath=tmp, copy=True, compress=False))
    print(f"wrote {args.out}: {len(changed)} {what}" + (f" ({', '.join(changed)})" if changed else ""))
    if args.method == "bake":
        _objects, bones = fix_bake.bake_plan(inspection)
        if bones:
            print(f"not baked (bones; set Inherit Scale to Aligned): {', '.join(bones)}")
    return 0


# -- demo -----------------------------------------------------------------------------------


def _cmd_demo(args) -> int:
    from .core_demo import demo_text

    print(demo_text())
    try:
        _bpy()
    except UsageError as exc:
        print(f"\n(Blender part skipped: {exc})")
        return 0
    from .demo_run import run_demo

    return run_demo(args.out or os.path.join("build", "demo"))


# -- parser ---------------------------------------------------------------------------------


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("blend", metavar="SCENE.blend", help="the .blend file to read (never modified)")
    p.add_argument("--scene", help="scene name (default: the file's active scene)")
    p.add_argument("--frame", type=int, help="frame to evaluate (default: the file's current frame)")
    p.add_argument("--shear-threshold", type=float, default=0.1, metavar="DEG", help="flag shear above this (degrees)")
    p.add_argument(
        "--corner-threshold", type=float, default=1e-3, metavar="UNITS", help="flag corner deviations above this"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hierarchy_inspector",
        description="Compare Blender's matrix-composed world transforms with what game engines show.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="build the demo scene and run every job on it")
    demo.add_argument("--out", metavar="DIR", help="folder for the demo's files (default: build/demo)")
    demo.set_defaults(run=_cmd_demo)

    report = sub.add_parser("report", help="inspect a .blend and write the report")
    _add_common(report)
    report.add_argument("--json", metavar="OUT", help="write the report as JSON (schema hierarchy_inspector.report/1)")
    report.add_argument("--csv", metavar="OUT", help="write one CSV row per node")
    report.add_argument(
        "--fail-on-shear", type=float, metavar="DEG", help="exit 1 if any world or exported-local shear exceeds DEG"
    )
    report.add_argument("--dynamics", action="store_true", help="add velocities, accelerations and inertial terms")
    report.add_argument("--object", help="only this object's chain and everything below it")
    report.set_defaults(run=_cmd_report)

    export = sub.add_parser("export", help="export transforms that survive")
    _add_common(export)
    export.add_argument("--target", required=True, choices=("gltf", "accumulated"))
    export.add_argument("--out", required=True, help="OUT.glb for gltf; OUT.json for accumulated")
    export.add_argument("--csv", metavar="OUT", help="accumulated: also write the local TRS as CSV")
    export.add_argument("--z-up", action="store_true", help="gltf: keep Blender's Z-up axes (default: glTF's Y-up)")
    export.set_defaults(run=_cmd_export)

    fix = sub.add_parser("fix", help="make the hierarchy exportable and save a fixed copy")
    _add_common(fix)
    fix.add_argument("--method", required=True, choices=("helpers", "bake"))
    fix.add_argument("--out", required=True, metavar="FIXED.blend")
    fix.set_defaults(run=_cmd_fix)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message
        return int(exc.code or 0) and 2
    started = time.perf_counter()
    try:
        code = args.run(args)
    except UsageError as exc:
        print(f"hierarchy_inspector: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not the user's input: never mistaken for exit code 1
        if os.environ.get("HIERARCHY_INSPECTOR_DEBUG"):
            import traceback

            traceback.print_exc()
        print(f"hierarchy_inspector: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    if getattr(args, "command", "") != "demo" and time.perf_counter() - started > 5:
        _progress(f"done in {time.perf_counter() - started:.1f} s")
    return code
