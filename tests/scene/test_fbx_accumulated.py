"""Export FBX (accumulated): every node's local is the TRS whose accumulation lands it
where Blender shows it. Read back with ufbx and accumulated as Unreal (from locals) and
Ogre do: exact (1e-5) wherever Blender's world holds no skew; the skew is what remains;
the scene is as it was afterwards."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene import demo_scenes  # noqa: E402
from hierarchy_inspector.addon.scene.exports.fbx_accumulated import write_fbx_accumulated  # noqa: E402
from hierarchy_inspector.addon.scene.scan import scan_scene  # noqa: E402


def _worlds() -> dict:
    bpy.context.view_layer.update()
    out = {o.name: np.array(o.matrix_world) for o in bpy.data.objects}
    for o in bpy.data.objects:
        if o.type == "ARMATURE":
            out.update({(o.name, pb.name): np.array(pb.matrix) for pb in o.pose.bones})
    return out


def test_the_demo_is_exact_for_accumulating_engines_and_the_scene_unchanged(addon, tmp_path):
    scene = demo_scenes.build_demo_scene(bpy.context.scene)
    before = _worlds()
    ins = scan_scene(scene)
    result = write_fbx_accumulated(scene, str(tmp_path / "acc.fbx"), None, again=False)
    assert result.error is not None and result.error.relative < 1e-6 and result.error.checked >= 25
    # What remains is the skew of Blender's own worlds: the sheared nodes, and only them.
    skewed = {label for label, corner in result.skew.items() if corner > ins.thresholds.corner}
    sheared = {ins.nodes.label(i) for i in np.flatnonzero(ins.sheared)}
    assert skewed and skewed <= sheared
    after = _worlds()
    assert before.keys() == after.keys()
    assert all(np.allclose(before[k], after[k], atol=1e-6) for k in before)


def test_driven_constraints_stay_muted_during_the_export(addon, tmp_path):
    """A bone's IK whose mute is driven (as Rigify's IK/FK switch drives its constraints):
    muted for the export, the driver too, so the keys (Blender's result) are the bone's
    transform. Without the driver muted the file was off by the IK's pull."""
    scene = bpy.context.scene
    arm = bpy.data.objects.new("Leg", bpy.data.armatures.new("Leg"))
    scene.collection.objects.link(arm)
    target = bpy.data.objects.new("Target", None)
    scene.collection.objects.link(target)
    target.location = (1.0, 0.5, 0.5)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    thigh = arm.data.edit_bones.new("thigh")
    thigh.head, thigh.tail = (0.0, 0.0, 2.0), (0.0, 0.1, 1.0)
    shin = arm.data.edit_bones.new("shin")
    shin.head, shin.tail = (0.0, 0.1, 1.0), (0.0, 0.0, 0.0)
    shin.parent, shin.use_connect = thigh, True
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.pose.bones["thigh"].scale = (1.0, 1.0, 1.5)  # a squash above the IK chain
    ik = arm.pose.bones["shin"].constraints.new("IK")
    ik.target, ik.chain_count = target, 2
    driver = ik.driver_add("mute").driver
    driver.type = "SCRIPTED"
    driver.expression = "0"  # the switch says: IK on
    arm.pose.bones["shin"].constraints.new("COPY_ROTATION").mute = True  # a second, user-muted one
    scene.frame_set(1)
    result = write_fbx_accumulated(scene, str(tmp_path / "leg.fbx"), FrameRange(1, 3, 1), again=False)
    assert result.error is not None and result.error.relative < 1e-5, result.error.per_node
    assert ik.mute is False and arm.pose.bones["shin"].constraints[1].mute is True  # put back
