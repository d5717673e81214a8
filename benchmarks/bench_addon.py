"""Add-on speed in real Blender (bpy from PyPI): the scene scan and the panel's chain.

    python benchmarks/bench_addon.py [--objects 20000] [--chain 50] [--repeat 5]

Prints Markdown tables (milliseconds, best of --repeat):

- a scene of N mesh objects (a forest about 10 deep, random non-uniform scales and
  rotations, so many are sheared): one full depsgraph evaluation (every object tagged
  and re-evaluated) against the scan (reading the scene into arrays + the analysis),
  and filling the panel's list with the flagged nodes;
- a chain of C objects, the active one at the bottom: what the panel computes on
  every change (reading the chain + the analysis);
- a generated Rigify human rig (about 700 bones, every Inherit Scale mode) after two
  squash-and-stretch edits (the torso and the left upper arm scaled non-uniformly):
  Blender's own cost (one evaluation of the rig: its pose and everything it drives)
  against the whole-rig scan, filling the scan list, and the panel's work per change
  for the active bone's chain (before: the whole armature read for every chain); then
  that work split: reading the chain, verifying it (Blender's matrices recomputed from
  each node's own transform), analysing it (the inspection and the accumulated
  export's residual), and the whole without an edit between calls.
"""

from __future__ import annotations

import argparse
import math
import time

import bpy
import numpy as np
from bench_common import best_ms
from hierarchy_inspector.addon.model.inspection import inspect
from hierarchy_inspector.addon.model.views import accumulated_export_residual
from hierarchy_inspector.addon.scene import live
from hierarchy_inspector.addon.scene.reading import read_nodes
from hierarchy_inspector.addon.scene.scan import read_chain, scan_scene
from hierarchy_inspector.addon.ui.operators_inspect import fill_scan_list


def build_scene(n: int, rng) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("box")
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], [])
    objs = []
    for i in range(n):
        obj = bpy.data.objects.new(f"O{i}", mesh)
        scene.collection.objects.link(obj)
        if i >= 100:
            obj.parent = objs[int(rng.integers(max(0, i - 2000), i))] if rng.random() < 0.9 else None
        obj.location = rng.normal(size=3)
        obj.rotation_euler = rng.uniform(-math.pi, math.pi, size=3)
        obj.scale = rng.uniform(0.5, 1.5, size=3)
        objs.append(obj)
    bpy.context.view_layer.update()


def build_chain(n: int, rng) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    parent = None
    for i in range(n):
        obj = bpy.data.objects.new(f"C{i}", None)
        scene.collection.objects.link(obj)
        obj.parent = parent
        obj.location = (0.0, 0.0, 1.0)
        obj.rotation_euler = rng.uniform(-0.3, 0.3, size=3)
        obj.scale = rng.uniform(0.9, 1.1, size=3)
        parent = obj
    bpy.context.view_layer.objects.active = parent
    bpy.context.view_layer.update()


def full_evaluation() -> None:
    for obj in bpy.context.scene.objects:
        obj.update_tag(refresh={"OBJECT"})
    bpy.context.view_layer.update()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--chain", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-rig", action="store_true", help="skip the Rigify rig (needs Blender's Rigify add-on)")
    args = parser.parse_args()
    rng = np.random.default_rng(3)

    build_scene(args.objects, rng)
    scene = bpy.context.scene
    evaluation = best_ms(full_evaluation, args.repeat)
    reading = best_ms(lambda: read_nodes(scene.objects), args.repeat)
    nodes = read_nodes(scene.objects)
    analysis = best_ms(lambda: inspect(nodes), args.repeat)
    result = inspect(nodes)
    import hierarchy_inspector

    hierarchy_inspector.register()
    try:
        fill = best_ms(lambda: fill_scan_list(scene.hierarchy_inspector, result, 0.0), 1)
    finally:
        hierarchy_inspector.unregister()
    flagged = int(result.flagged.sum())
    print(f"Scene scan, {args.objects:,} mesh objects ({flagged:,} flagged); ms, best of {args.repeat}\n")
    print(
        "| full depsgraph evaluation | scan: read | scan: analyse | scan total | scan / evaluation | fill list (flagged) |"
    )
    print("|---|---|---|---|---|---|")
    total = reading + analysis
    print(
        f"| {evaluation:.0f} | {reading:.0f} | {analysis:.0f} | {total:.0f} | {total / evaluation:.2f} | {fill:.0f} |"
    )

    build_chain(args.chain, rng)
    context = bpy.context
    active = context.view_layer.objects.active
    with context.temp_override(active_object=active):
        repeat = max(args.repeat, 20)
        read_only = best_after_change(lambda: read_chain(bpy.context), active, "rotation_euler", repeat)
        chain = best_after_change(lambda: panel_change(bpy.context), active, "rotation_euler", repeat)
    print(f"\nPanel chain, {args.chain} objects deep, the active one edited before each; ms, best of {repeat}\n")
    print("| read chain | read + analyse (what the panel does per change) |")
    print("|---|---|")
    print(f"| {read_only:.2f} | {chain:.2f} |")

    if not args.no_rig:
        rig_tables(max(args.repeat, 20))


def panel_change(context) -> None:
    """What the panel computes after a change: the cache dropped, the chain recomputed."""
    live.invalidate()
    live.chain_view(context)


def best_after_change(fn, owner, prop: str, repeat: int) -> float:
    """Best time of ``fn`` in ms, each call after a real edit (``owner.prop`` turned a
    little and the scene re-evaluated, not timed): nothing the panel reads is the same
    as at the call before."""
    best = float("inf")
    for k in range(repeat):
        value = list(getattr(owner, prop))
        value[-1] += 0.01 * (1 if k % 2 else -1)
        setattr(owner, prop, value)
        bpy.context.view_layer.update()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def build_rigify_rig():
    """A generated Rigify human rig with two squash-and-stretch edits; the armature."""
    import addon_utils

    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.view_layer.objects.active
    rig.pose.bones["torso"].scale = (1.3, 1.0, 0.7)
    rig.pose.bones["upper_arm_fk.L"].scale = (1.0, 1.4, 0.8)
    bpy.context.view_layer.update()
    return rig


def rig_tables(repeat: int) -> None:
    import hierarchy_inspector

    rig = build_rigify_rig()
    scene = bpy.context.scene
    hierarchy_inspector.register()
    try:
        bpy.ops.object.mode_set(mode="POSE")
        bone = "DEF-forearm.L.001"
        rig.data.bones.active = rig.data.bones[bone]

        def evaluate():
            rig.update_tag(refresh={"OBJECT", "DATA"})
            bpy.context.view_layer.update()

        blender = best_ms(evaluate, repeat)
        scan = best_ms(lambda: scan_scene(scene), repeat)
        result = scan_scene(scene)
        fill = best_ms(lambda: fill_scan_list(scene.hierarchy_inspector, result, 0.0), 3)
        # The torso (the chain's top control) is edited before each call: every bone of
        # the chain moves.
        torso = rig.pose.bones["torso"]
        torso.rotation_mode = "XYZ"
        with bpy.context.temp_override(active_pose_bone=rig.pose.bones[bone]):
            context = bpy.context
            panel_ms = best_after_change(lambda: panel_change(context), torso, "rotation_euler", repeat)
            read_ms = best_after_change(lambda: read_chain(context), torso, "rotation_euler", repeat)
            raw_ms = best_after_change(lambda: read_chain(context, False), torso, "rotation_euler", repeat)
            nodes = read_chain(context)[0]
            analyse_ms = best_after_change(
                lambda: accumulated_export_residual(inspect(nodes)), torso, "rotation_euler", repeat
            )
            unchanged_ms = best_ms(lambda: panel_change(context), repeat)
            whole_ms = best_after_change(lambda: inspect(read_nodes([rig])), torso, "rotation_euler", repeat)
            depth = len(live.chain_view(context).chain)
    finally:
        hierarchy_inspector.unregister()
    n = len(result.nodes)
    print(
        f"\nRigify human rig, {len(rig.pose.bones)} bones ({n:,} nodes, {int(result.flagged.sum())} flagged) "
        f"after two squash-and-stretch edits; ms, best of {repeat}\n"
    )
    print(
        "| Blender: evaluate the rig | scan (read + analyse) | scan / Blender | fill scan list | "
        f"panel per change ({depth}-node chain; of it reading) | panel / Blender | the whole armature read and analysed |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {blender:.1f} | {scan:.1f} | {scan / blender:.2f} | {fill:.1f} | {panel_ms:.2f} ({read_ms:.2f}) | "
        f"{panel_ms / blender:.2f} | {whole_ms:.1f} |"
    )
    print(f"\nThe panel's work per change on that chain, split; ms, best of {repeat}\n")
    print("| per change (torso turned before each) | no edit between calls | read | verify | analyse |")
    print("|---|---|---|---|---|")
    print(f"| {panel_ms:.2f} | {unchanged_ms:.2f} | {raw_ms:.2f} | {read_ms - raw_ms:.2f} | {analyse_ms:.2f} |")


if __name__ == "__main__":
    main()
