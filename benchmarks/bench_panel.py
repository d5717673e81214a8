"""A rigger's day in the panel, timed as an artist waits (bpy from PyPI): the panel's
operators on a generated Rigify rig (torso squash, forearm stretch, every control
bone's rotation keyed over 40 frames, a skinned mesh; its metarig hidden and its 220
widgets excluded), against Blender's own exports of the same frames and objects.

    python benchmarks/bench_panel.py [--repeat 3] [--frames 40]

Rows (best of --repeat, the two of a pair run in turn each round):

- the range scan of the scene (``hierarchy_inspector.scan_range``, the panel's list,
  cause groups and markers filled);
- each panel export (``export_gltf``, ``export_fbx``, ``export_fbx_accumulated``,
  ``export_usd`` when this Blender has USD and usd-core is installed; the scene's range,
  visible objects, started in Pose mode) against Blender's exporter with the same frames
  and visible objects (``export_scene.gltf`` / ``.fbx`` / ``wm.usd_export``): seconds,
  and ours / Blender's;
- what each panel file holds (nodes compared, helpers) and its read-back, from the
  operator's last report.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import bpy
from bench_common import markdown_table
from hierarchy_inspector.addon.model.exports.usd.check import usd_available
from hierarchy_inspector.addon.scene.exports import scenes
from hierarchy_inspector.addon.scene.exports.usd_export import usd_exporter_missing


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--frames", type=int, default=40)
    args = parser.parse_args()
    import hierarchy_inspector

    bpy.ops.wm.read_factory_settings(use_empty=True)
    hierarchy_inspector.register()
    scene = bpy.context.scene
    rig = scenes.rigger_rig(scene, args.frames)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    out = tempfile.mkdtemp(prefix="bench_panel_")
    ops = bpy.ops.hierarchy_inspector
    scan = min(_timed(lambda: ops.scan_range(scope="SCENE")) for _ in range(args.repeat))
    rows = [("range scan, scene", f"{scan:.2f}", "", "")]
    pairs = [
        (
            "glTF exact vs Blender glTF",
            lambda: ops.export_gltf(filepath=os.path.join(out, "panel.glb")),
            lambda: bpy.ops.export_scene.gltf(
                filepath=os.path.join(out, "blender.glb"),
                export_animations=True,
                export_force_sampling=True,
                export_current_frame=True,
                use_visible=True,
            ),
        ),
        (
            "FBX exact vs Blender FBX",
            lambda: ops.export_fbx(filepath=os.path.join(out, "panel.fbx")),
            lambda: bpy.ops.export_scene.fbx(
                filepath=os.path.join(out, "blender.fbx"), bake_anim=True, add_leaf_bones=False, use_visible=True
            ),
        ),
        (
            "FBX accumulated vs Blender FBX",
            lambda: ops.export_fbx_accumulated(filepath=os.path.join(out, "panel_acc.fbx")),
            lambda: bpy.ops.export_scene.fbx(
                filepath=os.path.join(out, "blender.fbx"), bake_anim=True, add_leaf_bones=False, use_visible=True
            ),
        ),
    ]
    if not usd_exporter_missing() and usd_available():
        pairs.append(
            (
                "USD exact vs Blender USD",
                lambda: ops.export_usd(filepath=os.path.join(out, "panel.usdc")),
                lambda: bpy.ops.wm.usd_export(
                    filepath=os.path.join(out, "blender.usdc"), export_animation=True, selected_objects_only=False
                ),
            )
        )
    for name, ours, theirs in pairs:
        best_ours = best_theirs = float("inf")
        for _ in range(args.repeat):
            bpy.ops.object.mode_set(mode="POSE")
            best_ours = min(best_ours, _timed(ours))
            bpy.ops.object.mode_set(mode="OBJECT")
            best_theirs = min(best_theirs, _timed(theirs))
        rows.append((name, f"{best_ours:.2f}", f"{best_theirs:.2f}", f"{best_ours / best_theirs:.2f}"))
    print(
        f"Rigify rig, {args.frames} frames, {len(scene.objects)} objects ({len(rig.pose.bones)} bones), bpy "
        f"{bpy.app.version_string}:"
    )
    print(markdown_table(("what", "panel s", "Blender s", "ratio"), rows))


if __name__ == "__main__":
    main()
