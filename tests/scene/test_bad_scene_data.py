"""Class 3 of issue 12: NaN or infinity in a scene is the scene's problem, named by
object or bone and property; the scan in Blender goes on with the rest of the scene."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.errors import SceneDataError  # noqa: E402
from hierarchy_inspector.addon.scene import live  # noqa: E402
from hierarchy_inspector.addon.scene.scan import scan_scene, scan_scene_valid  # noqa: E402

PROPERTIES = ("location", "rotation_euler", "scale", "delta_location", "delta_scale")


def _hierarchy():
    """Root > Middle > Leaf, and an unrelated Other; an armature with two bones."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    made = {}
    for name, parent in (("Root", None), ("Middle", "Root"), ("Leaf", "Middle"), ("Other", None)):
        obj = bpy.data.objects.new(name, None)
        scene.collection.objects.link(obj)
        obj.parent = made.get(parent)
        obj.location = (1.0, 0.5, 0.0)
        made[name] = obj
    arm_data = bpy.data.armatures.new("RigData")
    rig = bpy.data.objects.new("Rig", arm_data)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    upper = arm_data.edit_bones.new("upper")
    upper.tail = (0, 0, 1)
    lower = arm_data.edit_bones.new("lower")
    lower.head, lower.tail, lower.parent = (0, 0, 1), (0, 0, 2), upper
    bpy.ops.object.mode_set(mode="OBJECT")
    return scene, made, rig


BELOW = {"Root": 2, "Middle": 1, "Leaf": 0, "Other": 0}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(["Root", "Middle", "Leaf", "Other"]),
    prop=st.sampled_from(PROPERTIES),
    axis=st.integers(0, 2),
)
def test_a_non_finite_object_property_is_named_and_the_rest_inspected(name, prop, axis):
    """Blender clamps infinity to the largest float32 when a property is set, so NaN is
    how a non-finite value reaches a property (infinity comes from products: below)."""
    scene, made, _rig = _hierarchy()
    values = list(getattr(made[name], prop))
    values[axis] = math.nan
    setattr(made[name], prop, values)
    bpy.context.view_layer.update()
    with pytest.raises(SceneDataError) as caught:
        scan_scene(scene)
    message = str(caught.value)
    assert message.startswith(f"object '{name}': {prop} holds NaN or infinity"), message
    if BELOW[name]:
        assert f"(and {BELOW[name]} node{'s' if BELOW[name] > 1 else ''} below it)" in message
    inspection, skipped = scan_scene_valid(scene)
    assert skipped == [message]
    total = len(scene.objects) + 2  # two bones
    assert len(inspection.nodes) == total - 1 - BELOW[name]
    assert (name, "") not in inspection.nodes.index()


def test_a_non_finite_pose_bone_is_named_by_armature_and_bone():
    scene, _made, rig = _hierarchy()
    rig.pose.bones["upper"].scale = (1.0, math.nan, 1.0)
    bpy.context.view_layer.update()
    with pytest.raises(
        SceneDataError, match=r"bone 'Rig > upper': scale holds NaN or infinity \(and 1 node below it\)"
    ):
        scan_scene(scene)
    inspection, _skipped = scan_scene_valid(scene)
    assert ("Rig", "lower") not in inspection.nodes.index() and ("Rig", "") in inspection.nodes.index()


def test_an_overflowing_product_is_named_even_when_each_value_is_finite():
    scene, made, _rig = _hierarchy()
    made["Root"].scale = (1e38, 1.0, 1.0)
    made["Middle"].scale = (1e38, 1.0, 1.0)
    bpy.context.view_layer.update()
    with pytest.raises(SceneDataError, match="object 'Middle': its world matrix holds NaN or infinity although"):
        scan_scene(scene)


def test_infinity_set_on_a_property_is_clamped_by_blender_and_inspected():
    scene, made, _rig = _hierarchy()
    made["Other"].scale = (math.inf, 1.0, 1.0)  # Blender stores the largest float32
    bpy.context.view_layer.update()
    assert made["Other"].scale[0] == pytest.approx(3.4028234663852886e38)
    inspection = scan_scene(scene)
    assert np.isfinite(inspection.shear_max).all()


def test_the_panel_says_what_is_wrong_instead_of_failing():
    """What the panel draws comes from the live cache: a bad chain gives the named error
    (the panel prints it), a fine chain beside it still inspects."""
    _scene, made, _rig = _hierarchy()
    made["Leaf"].location = (math.nan, 0.0, 0.0)
    bpy.context.view_layer.objects.active = made["Leaf"]
    bpy.context.view_layer.update()
    live.invalidate()
    with pytest.raises(SceneDataError, match="object 'Leaf': location holds NaN"):
        live.chain_view(bpy.context)
    bpy.context.view_layer.objects.active = made["Other"]  # a fine object next to it
    view = live.chain_view(bpy.context)
    assert view is not None and np.isfinite(view.inspection.nodes.world).all()
