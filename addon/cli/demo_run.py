"""``make demo``'s Blender part: the demo scene through every job, files in one folder."""

from __future__ import annotations

import os

import bpy

from ..model.exports.accumulated import accumulated_csv, accumulated_document
from ..model.outputs import json_text, write_text
from ..model.pictures import deviation_chart_png, worst_nodes_png
from ..model.report import build_report, report_csv, report_table
from ..model.text import format_table
from ..model.thresholds import DEFAULT as THRESHOLDS
from ..scene.blend_files import save_copy
from ..scene.demo_scenes import build_demo_scene
from ..scene.edits.bake import bake_residual
from ..scene.exports.gltf_animated import write_gltf_frames
from ..scene.gltf_export import write_gltf
from ..scene.scan import scan_scene
from .console import quiet


def _reload(path: str):
    bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
    return bpy.context.scene


def run_demo(out_dir: str) -> int:
    """Build the demo .blend, report, pictures, both exports and the bake fix."""
    os.makedirs(out_dir, exist_ok=True)
    path = lambda name: os.path.join(out_dir, name)  # noqa: E731
    blend = os.path.abspath(path("demo.blend"))
    with quiet():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = build_demo_scene(bpy.context.scene)
        save_copy(blend)
        scene = _reload(blend)

    inspection = scan_scene(scene, THRESHOLDS)
    fps = scene.render.fps / scene.render.fps_base
    report = build_report(
        inspection, blender_version=bpy.app.version_string, file=blend, frame=scene.frame_current, fps=fps
    )
    write_text(path("report.json"), json_text(report))
    write_text(path("report.csv"), report_csv(report))
    print("\nDemo scene (Blender " + bpy.app.version_string + ")")
    print(report_table(report))

    written = ["demo.blend", "report.json", "report.csv"]
    worst_nodes_png(inspection, path("worst_nodes.png"))
    deviation_chart_png(inspection, path("deviation_chart.png"))
    written += ["worst_nodes.png", "deviation_chart.png"]

    rows = []
    with quiet():
        plain = write_gltf(scene, path("demo_plain.glb"), helpers=False, thresholds=THRESHOLDS)
    rows.append(
        (
            "glTF, Blender's exporter as is",
            "demo_plain.glb",
            f"{plain.relative_error:.1e}",
            f"{plain.absolute_error:.3f}",
            "0",
        )
    )
    with quiet():
        scene = _reload(blend)
        fixed = write_gltf_frames(scene, path("demo_fixed.glb"), None, thresholds=THRESHOLDS)
    rows.append(
        (
            "glTF, helpers inserted",
            "demo_fixed.glb",
            f"{fixed.error.relative:.1e}",
            f"{fixed.error.absolute:.1e}",
            str(len(fixed.helpers)),
        )
    )

    with quiet():
        scene = _reload(blend)
    accumulated = accumulated_document(scan_scene(scene, THRESHOLDS))
    write_text(path("accumulated.json"), json_text(accumulated))
    write_text(path("accumulated.csv"), accumulated_csv(accumulated))
    with quiet():
        baked = bake_residual(scan_scene(scene, THRESHOLDS))
        save_copy(path("demo_baked.blend"))
    after = accumulated_document(scan_scene(scene, THRESHOLDS))
    write_text(path("accumulated_baked.json"), json_text(after))
    objects_after = max((e["residual"]["max_corner"] for e in after["nodes"] if e["kind"] == "object"), default=0.0)
    rows.append(
        ("accumulated TRS (Unreal, Ogre)", "accumulated.json", "", f"{accumulated['max_residual_corner']:.3f}", "")
    )
    rows.append(
        (
            f"accumulated after baking {len(baked)} objects",
            "accumulated_baked.json",
            "",
            f"{objects_after:.1e} (objects)",
            "",
        )
    )
    written += [
        "demo_plain.glb",
        "demo_fixed.glb",
        "accumulated.json",
        "accumulated.csv",
        "demo_baked.blend",
        "accumulated_baked.json",
    ]
    print("\nExports, read back the way an engine reads them:")
    print(format_table(("target", "file", "relative error", "max error (units)", "helpers"), rows))
    print(f"\nFiles in {os.path.abspath(out_dir)}: {', '.join(written)}")
    return 0
