"""The FBX export-ready copy as one transaction, in real Blender: a plan applied for the
length of a ``with`` block (helpers, keys replacing the action over NLA tracks,
constraints and drivers muted, delta transforms zeroed) and everything put back after
it, also when an edit of the plan itself fails half-way."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector import core  # noqa: E402
from hierarchy_inspector.addon.model.exports.fbx.copy_plan import CopyPlan, ObjectEdit  # noqa: E402
from hierarchy_inspector.addon.scene.edits.fbx_copy import export_ready  # noqa: E402


def _state():
    out = {}
    for o in bpy.data.objects:
        anim = o.animation_data
        out[o.name] = (
            o.parent.name if o.parent else None,
            o.rotation_mode,
            tuple(round(v, 6) for row in o.matrix_parent_inverse for v in row),
            tuple(round(v, 6) for v in (*o.location, *o.rotation_quaternion, *o.scale, *o.delta_location)),
            tuple(c.mute for c in o.constraints),
            (anim.action.name if anim.action else None, anim.action_blend_type, anim.action_influence)
            if anim
            else None,
            tuple(d.mute for d in anim.drivers) if anim else (),
        )
    return out, sorted(bpy.data.actions.keys()), sorted(bpy.data.objects.keys())


@pytest.fixture
def props(empty_scene):
    """'Base' and 'Prop' under it: Prop has a Copy Location constraint whose influence a
    driver sets, a delta location, an action blended Add over an NLA track."""
    scene = empty_scene
    base = bpy.data.objects.new("Base", None)
    prop = bpy.data.objects.new("Prop", None)
    for obj in (base, prop):
        scene.collection.objects.link(obj)
    prop.parent = base
    prop.delta_location = (0.0, 0.5, 0.0)
    con = prop.constraints.new("COPY_LOCATION")
    con.target = base
    driver = con.driver_add("influence").driver
    driver.expression = "0.5"
    prop.location = (1.0, 0.0, 0.0)
    prop.keyframe_insert("location", frame=1)
    track_action = prop.animation_data.action
    track = prop.animation_data.nla_tracks.new()
    track.strips.new("base", 1, track_action)
    prop.animation_data.action = None
    prop.location = (2.0, 0.0, 0.0)
    prop.keyframe_insert("location", frame=1)
    prop.animation_data.action_blend_type = "ADD"
    prop.animation_data.action_influence = 0.5
    scene.frame_set(1)
    return scene


def _keys(frames: int, x: float) -> core.TRS:
    t = np.zeros((frames, 3))
    t[:, 0] = x
    return core.TRS(t, np.tile([1.0, 0.0, 0.0, 0.0], (frames, 1)), np.ones((frames, 3)))


def test_a_plan_holds_for_the_block_and_is_put_back(props):
    before = _state()
    prop = bpy.data.objects["Prop"]
    edit = ObjectEdit(
        "Prop",
        helper="Prop (shear helper)",
        helper_keys=_keys(3, 1.0),
        parent_inverse=np.eye(4),
        keys=_keys(3, 2.0),
        mute=True,
    )
    with export_ready(CopyPlan([1, 2, 3], [edit], []), props):
        helper = bpy.data.objects["Prop (shear helper)"]
        assert prop.parent == helper and helper.parent.name == "Base"
        assert all(c.mute for c in prop.constraints) and all(d.mute for d in prop.animation_data.drivers)
        assert tuple(prop.delta_location) == (0.0, 0.0, 0.0) and prop.rotation_mode == "QUATERNION"
        anim = prop.animation_data
        assert (anim.action_blend_type, anim.action_influence) == ("REPLACE", 1.0)
        props.frame_set(2)
        assert np.allclose(np.array(prop.matrix_world)[:3, 3], [3.0, 0.0, 0.0], atol=1e-6)  # 1 (helper) + 2 (keys)
    props.frame_set(1)
    assert _state() == before


def test_an_edit_that_fails_half_way_leaves_the_scene_as_it_was(props):
    before = _state()
    plan = CopyPlan(
        [1, 2],
        [ObjectEdit("Prop", helper="Prop (shear helper)", keys=_keys(2, 0.0), mute=True), ObjectEdit("Nothing")],
        [],
    )
    with pytest.raises(KeyError), export_ready(plan, props):
        pytest.fail("the block is not entered when the plan cannot be applied")
    assert _state() == before
