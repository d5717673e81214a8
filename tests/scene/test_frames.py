"""Reading a frame range from real Blender: closed forms, the single-frame path at every
frame, a changing node set refused by name, the frame restored, and a Rigify rig that
shears only while it stretches."""

from __future__ import annotations

import contextlib
import dataclasses
import math

import bpy
import numpy as np
import pytest
from hierarchy_inspector.addon.model.errors import SceneDataError
from hierarchy_inspector.addon.model.timeline import analyse_frames
from hierarchy_inspector.addon.model.timeline.series import changes
from hierarchy_inspector.addon.scene.frames import FrameReader, read_frames
from hierarchy_inspector.addon.scene.reading import chain_objects
from hierarchy_inspector.addon.scene.scan import scan_scene
from hierarchy_inspector.addon.scene.timeline import animated as animated_scenes


@contextlib.contextmanager
def running(handlers, script):
    """``script`` in Blender's handler list ``handlers`` for the block."""
    handlers.append(script)
    try:
        yield
    finally:
        handlers.remove(script)


def closed_form_shear_deg(sx: float, theta: float) -> float:
    c, s = math.cos(theta), math.sin(theta)
    cosine = s * c * (1 - sx * sx) / math.sqrt((sx * sx * c * c + s * s) * (sx * sx * s * s + c * c))
    return abs(math.degrees(math.asin(cosine)))


def test_stretch_pair_read_from_blender_matches_the_closed_form_and_restores_the_frame(empty_scene):
    scene = empty_scene
    animated_scenes.stretch_pair(scene)
    scene.frame_set(7, subframe=0.25)
    series = read_frames(scene, range(1, 22, 2))
    assert (scene.frame_current, scene.frame_subframe) == (7, pytest.approx(0.25))
    assert series.keys == [("Parent", ""), ("Child", "")] and series.world.shape == (11, 2, 4, 4)
    over = analyse_frames(series)
    for k, f in enumerate(series.frames):
        u = (f - 1) / 20
        assert over.shear[k, 1] == pytest.approx(closed_form_shear_deg(1 + 2 * u, math.radians(90 * u)), abs=1e-4)
    assert series.fps == pytest.approx(scene.render.fps / scene.render.fps_base)


def test_every_frame_equals_the_single_frame_scan(empty_scene):
    scene = empty_scene
    animated_scenes.animated_forest(scene, n=150, frames=60)
    frames = list(range(1, 61, 7))
    series = read_frames(scene, frames)
    over = analyse_frames(series)
    assert over.flagged.any()
    for k, f in enumerate(frames):
        scene.frame_set(f)
        one = scan_scene(scene)
        assert one.nodes.keys == series.keys
        np.testing.assert_array_equal(one.nodes.world, series.world[k])
        np.testing.assert_array_equal(one.nodes.box_min, series.box_min[k])
        np.testing.assert_allclose(over.shear[k], one.shear_max, atol=1e-9)
        np.testing.assert_allclose(over.local_shear[k], one.local_shear_max, atol=1e-9)
        np.testing.assert_allclose(over.corner[k], one.worst_corner, atol=1e-9)
        np.testing.assert_array_equal(over.flagged_frames[k], one.flagged)


def test_a_chain_with_bones_reads_like_the_scene(empty_scene):
    scene = empty_scene
    bpy.ops.object.armature_add()
    arm = bpy.context.active_object
    arm.scale = (2.0, 1.0, 1.0)
    arm.keyframe_insert("scale", frame=1)
    arm.scale = (1.0, 1.0, 1.0)
    arm.keyframe_insert("scale", frame=5)
    bone = arm.pose.bones[0]
    bone.rotation_mode = "XYZ"
    bone.rotation_euler = (0.0, 0.0, 0.7)
    child = bpy.data.objects.new("Hanger", None)
    scene.collection.objects.link(child)
    child.parent, child.parent_type, child.parent_bone = arm, "BONE", bone.name
    whole = read_frames(scene, range(1, 6))
    chain = read_frames(scene, range(1, 6), objects=chain_objects(child))
    index = {k: i for i, k in enumerate(whole.keys)}
    for i, key in enumerate(chain.keys):
        np.testing.assert_allclose(chain.world[:, i], whole.world[:, index[key]], atol=1e-6)
        assert chain.parents[i] == -1 or chain.keys[chain.parents[i]] == whole.keys[whole.parents[index[key]]]
    over = analyse_frames(whole)
    b = index[(arm.name, bone.name)]
    assert over.shear[0, b] > 10 and over.shear[-1, b] < 1e-3  # sheared while the armature is stretched


def _spawn(scene) -> None:
    scene.collection.objects.link(bpy.data.objects.new("Spawned", None))


def _swap(scene) -> None:
    scene.collection.objects.unlink(bpy.data.objects["Child"])
    scene.collection.objects.link(bpy.data.objects.new("Spawned", None))


@pytest.mark.parametrize(
    "edit, rule_missed, message",
    [
        (_spawn, False, r"2 objects at frame 1, 3 at frame 4"),  # the matrix read fails at once
        (_swap, False, r"'Child' of frame 1 is not there at frame 4"),  # the ids, checked every frame
        # An unattended read checks the ids at every frame only while a handler script could
        # change the objects; a script that slipped past is named at the last frame.
        (_swap, True, r"'Child' of frame 1 is not there at frame 7"),
    ],
)
def test_a_node_set_that_changes_is_refused_by_name_and_the_frame_restored(
    empty_scene, monkeypatch, edit, rule_missed, message
):
    from hierarchy_inspector.addon.scene import frames as frames_module

    scene = empty_scene
    animated_scenes.stretch_pair(scene)
    scene.frame_set(2)

    def script(scene, *_args):
        if scene.frame_current == 4 and "Spawned" not in bpy.data.objects:
            edit(scene)

    if rule_missed:
        monkeypatch.setattr(frames_module, "scripts_may_edit", lambda: False)
    with running(bpy.app.handlers.frame_change_pre, script):
        with pytest.raises(SceneDataError, match=message):
            read_frames(scene, range(1, 8))
    assert scene.frame_current == 2


@pytest.mark.parametrize(
    "back_at, message",
    [
        (None, r"'Child' changes parent during the range: 'Parent' at frame 1, 'Other' at frame 4"),
        # Reparented and put back before the last frame: still named (checked every frame
        # while a handler runs).
        (6, r"'Child' changes parent during the range: 'Parent' at frame 1, 'Other' at frame 4"),
        ("none", r"'Child' changes parent during the range: 'Parent' at frame 1, no parent at frame 4"),
    ],
)
def test_a_handler_that_reparents_mid_range_is_named(empty_scene, back_at, message):
    """Issue 24 item 21: a range is analysed with its first frame's hierarchy; a frame
    handler that reparents an object half-way made every later frame's locals wrong,
    silently."""
    scene = empty_scene
    parent, child = animated_scenes.stretch_pair(scene)
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    scene.frame_set(2)

    def script(scene, *_args):
        if scene.frame_current == 4:
            child.parent = None if back_at == "none" else other
        elif back_at not in (None, "none") and scene.frame_current == back_at:
            child.parent = parent

    with running(bpy.app.handlers.frame_change_pre, script):
        with pytest.raises(SceneDataError, match=message):
            read_frames(scene, range(1, 8))
    assert scene.frame_current == 2


def test_stopping_a_reader_half_way_restores_the_frame(empty_scene):
    scene = empty_scene
    animated_scenes.stretch_pair(scene)
    scene.frame_set(9)
    reader = FrameReader(scene, range(1, 22))
    with pytest.raises(ValueError, match="no frame read yet"):
        reader.series()
    for _ in range(5):
        assert not reader.step()
    assert scene.frame_current == 5
    reader.restore()
    assert scene.frame_current == 9
    assert len(reader.series()) == 5


def test_rigify_rig_shears_only_at_the_stretched_frames(empty_scene):
    scene = empty_scene
    rig = animated_scenes.stretchy_rigify(scene, frames=30)
    assert len(rig.pose.bones) > 500
    series = read_frames(scene, range(1, 31))
    over = analyse_frames(series)
    low, peak, high = animated_scenes.STRETCH
    sheared = {int(f) for f, s in zip(series.frames, over.shear.max(axis=1), strict=True) if s > 0.1}
    assert sheared == set(range(low + 1, high))  # keys at low and high are unscaled
    assert int(series.frames[np.argmax(over.shear.max(axis=1))]) == peak
    bones = [i for i, (_obj, bone) in enumerate(series.keys) if bone]
    flagged_bones = [i for i in bones if over.flagged[i]]
    assert len(flagged_bones) > 100
    assert all(low < over.worst_frame[i] < high for i in flagged_bones)


def _box_mesh(scene, name: str):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], [])
    obj = bpy.data.objects.new(name, mesh)
    scene.collection.objects.link(obj)
    return obj


def _boxes_equal_the_scan_at_every_frame(scene, series) -> list:
    seen = []
    for k, f in enumerate(series.frames):
        scene.frame_set(int(f))
        one = scan_scene(scene)
        np.testing.assert_array_equal(one.nodes.box_min, series.box_min[k])
        np.testing.assert_array_equal(one.nodes.box_max, series.box_max[k])
        seen.append(one.nodes.box_max.copy())
    return seen


def test_boxes_that_can_change_are_read_every_frame_and_the_others_once(empty_scene):
    scene = empty_scene
    plain = _box_mesh(scene, "Plain")
    plain.keyframe_insert("location", frame=1)
    plain.location.x = 3.0
    plain.keyframe_insert("location", frame=5)
    keyed = _box_mesh(scene, "Keyed")
    keyed.shape_key_add(name="Basis")
    big = keyed.shape_key_add(name="Big")
    for point in big.data:
        point.co *= 3.0
    big.value = 0.0
    big.keyframe_insert("value", frame=1)
    big.value = 1.0
    big.keyframe_insert("value", frame=5)
    from hierarchy_inspector.addon.scene.timeline.still import box_may_change

    assert not box_may_change(plain) and box_may_change(keyed)
    series = read_frames(scene, range(1, 6))
    seen = np.array(_boxes_equal_the_scan_at_every_frame(scene, series))
    keys = [key for key, _ in series.keys]
    assert seen[0, keys.index("Keyed"), 0] < seen[-1, keys.index("Keyed"), 0]  # the shape key grows it
    assert np.all(seen[:, keys.index("Plain")] == seen[0, keys.index("Plain")])
    # The series names the boxes that can vary (every box that does is among them), and the
    # frames and nodes to analyse are those of comparing every box.
    assert list(series.boxes_vary) == [keys.index("Keyed")]
    varies = (seen != seen[0]).any(axis=(0, 2))
    assert set(np.flatnonzero(varies)) <= set(series.boxes_vary)
    unhinted = dataclasses.replace(series, boxes_vary=None)
    for got, want in zip(changes(series), changes(unhinted), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_box_a_script_changes_is_caught_at_the_last_frame_and_the_range_read_again(empty_scene):
    scene = empty_scene
    obj = _box_mesh(scene, "Edited")
    obj.keyframe_insert("location", frame=1)

    def grow(scene, *_args):
        mesh = bpy.data.meshes["Edited"]
        mesh.vertices[7].co = (1.0 + 0.5 * scene.frame_current, 1.0, 1.0)
        mesh.update()

    with running(bpy.app.handlers.frame_change_pre, grow):
        reader = FrameReader(scene, range(1, 6), read_once=True)
        while not reader.step():
            pass
        assert not reader.boxes_checked  # nothing Blender animates changes it: only the check sees it
        series = read_frames(scene, range(1, 6))
        assert series.boxes_vary is None  # read again, every box at every frame
        seen = np.array(_boxes_equal_the_scan_at_every_frame(scene, series))
    assert seen[0, 0, 0] < seen[-1, 0, 0]


def test_a_reader_stopped_anywhere_holds_each_frame_it_read_as_blender_evaluates_it(empty_scene):
    # Frames are read into raw buffers and stored a chunk at a time: a reader's series
    # at any point (inside a chunk, at its end, after the last frame) holds every frame
    # read so far, equal to the single-frame reader's matrices at that frame.
    scene = empty_scene
    animated_scenes.animated_forest(scene, n=40, frames=80)
    frames = list(range(1, 81))
    reader = FrameReader(scene, frames)
    while not reader.step():
        if reader.done in (1, 31, 32, 33, 64, 70):
            partial = reader.series()
            assert len(partial) == reader.done
            k = reader.done - 1
            saved = scene.frame_current
            scene.frame_set(frames[k])
            np.testing.assert_array_equal(scan_scene(scene).nodes.world, partial.world[k])
            scene.frame_set(saved)
    whole = reader.series()
    assert len(whole) == len(frames)
    for f in (32, 33, 65, 80):
        scene.frame_set(f)
        np.testing.assert_array_equal(scan_scene(scene).nodes.world, whole.world[whole.position(f)])


def test_a_rig_whose_every_bone_moves_equals_the_single_frame_scan(empty_scene):
    # Rigify's face bones come out of their constraints with w = 0.99999994 in the bottom
    # row of their pose matrices: both readers keep Blender's matrices affine.
    scene = empty_scene
    rig = animated_scenes.stretchy_rigify(scene, frames=40, walk=True, wiggle=True)
    assert len(animated_scenes.control_bones(rig)) > 100
    series = read_frames(scene, range(1, 41))  # over a chunk of raw reads (32 frames)
    over = analyse_frames(series)
    bones = [i for i, (_obj, bone) in enumerate(series.keys) if bone and _obj == rig.name]
    moving = (series.world[1:, bones] != series.world[:-1, bones]).any(axis=(2, 3))
    assert moving.all()  # every bone of the rig moves at every frame
    for f in (2, 13, 33, 40):
        k = series.position(f)
        scene.frame_set(f)
        one = scan_scene(scene)
        np.testing.assert_array_equal(one.nodes.world, series.world[k])
        np.testing.assert_allclose(over.shear[k], one.shear_max, atol=1e-9)
        np.testing.assert_allclose(over.local_shear[k], one.local_shear_max, atol=1e-9)
        np.testing.assert_allclose(over.corner[k], one.worst_corner, atol=1e-9)
        np.testing.assert_array_equal(over.flagged_frames[k], one.flagged)


def test_a_parent_whose_scale_animates_through_zero_away_from_the_origin_is_reported_not_raised(empty_scene):
    # Blender's float32 child world is not exactly in reach of the collapsed parent: the
    # 4x4 pseudo-inverse's local has a bottom row off (0, 0, 0, 1) and decompose refused it.
    scene = empty_scene
    parent = bpy.data.objects.new("Parent", None)
    child = _box_mesh(scene, "Child")
    scene.collection.objects.link(parent)
    child.parent = parent
    child.location, child.rotation_euler = (1.0, 2.0, 3.0), (0.3, 0.2, 0.5)
    parent.location, parent.rotation_euler = (5.0, 3.0, 2.0), (0.6, 0.4, 0.7)
    for frame, sx in ((1, 1.0), (21, -1.0)):
        parent.scale = (sx, 1.0, 1.0)
        parent.keyframe_insert("scale", frame=frame)
    animated_scenes._linear(parent)
    series = read_frames(scene, range(1, 22))
    names = [key for key, _ in series.keys]
    child_index = names.index("Child")
    assert series.world[series.position(11), names.index("Parent"), :3, 0].tolist() == [0.0, 0.0, 0.0]  # X collapsed
    over = analyse_frames(series)
    assert over.singular_frames(child_index) == [11]
    assert over.entry(child_index)["singular_parent_frames"] == [11]
    assert np.isfinite(over.corner).all()
    for f in (5, 11, 12):  # the single-frame scan too, at the collapsed frame as well
        scene.frame_set(f)
        one = scan_scene(scene)
        assert bool(one.singular_parent[child_index]) == (f == 11)
        np.testing.assert_allclose(over.corner[series.position(f)], one.worst_corner, atol=1e-9)
        np.testing.assert_allclose(over.local_shear[series.position(f)], one.local_shear_max, atol=1e-9)


def _read_every_box(scene, frames):
    reader = FrameReader(scene, frames, read_once=False)
    while not reader.step():
        pass
    return reader.series()


def test_an_unconstrained_root_armatures_box_is_read_once_and_changes_nothing_beyond_round_off(empty_scene):
    from hierarchy_inspector.addon.scene.exports.scenes import inherit_scale_rig
    from hierarchy_inspector.addon.scene.timeline.still import box_is_round_off

    scene = empty_scene
    rig = inherit_scale_rig(scene)
    rig.location, rig.rotation_euler, rig.scale = (3.0, -2.0, 1.0), (0.3, 0.5, 0.2), (1.5, 0.7, 1.2)
    assert box_is_round_off(rig)
    frames = list(range(1, 26, 3))
    series, every = read_frames(scene, frames), _read_every_box(scene, frames)
    i = [key for key in series.keys].index(("Rig", ""))
    assert not np.array_equal(every.box_max[:, i], np.broadcast_to(every.box_max[0, i], every.box_max[:, i].shape))
    assert np.array_equal(series.box_max[:, i], np.broadcast_to(series.box_max[0, i], series.box_max[:, i].shape))
    np.testing.assert_array_equal(series.world, every.world)
    a, b = analyse_frames(series), analyse_frames(every)
    others = np.arange(len(series.keys)) != i
    for name in ("shear", "local_shear", "corner_matrix", "corner_accumulated"):
        np.testing.assert_array_equal(getattr(a, name)[:, others], getattr(b, name)[:, others])
    np.testing.assert_array_equal(a.flagged_frames, b.flagged_frames)
    assert a.flagged.sum() > 3
    # The armature's own corner distances: Blender's float32 matrix is a TRS to float32
    # round-off only, so both are about 1e-7 of the box's size, whichever box.
    size = np.abs(every.box_max[:, i]).max() * np.abs(every.world[:, i, :3, :3]).max()
    assert b.corner[:, i].max() < 1e-6 * size and a.corner[:, i].max() < 1e-6 * size
    scene.frame_set(frames[4])  # an armature off the origin: its bones' worlds are the scan's, bit for bit
    np.testing.assert_array_equal(scan_scene(scene).nodes.world, series.world[4])
    # Parented (or constrained), its box is read at every frame again.
    holder = bpy.data.objects.new("Holder", None)
    scene.collection.objects.link(holder)
    holder.scale = (2.0, 1.0, 1.0)
    rig.parent = holder
    assert not box_is_round_off(rig)
    series = read_frames(scene, frames)
    i = [key for key in series.keys].index(("Rig", ""))
    np.testing.assert_array_equal(series.box_max[:, i], _read_every_box(scene, frames).box_max[:, i])


def _still_armature(scene, name: str):
    """An armature nothing animates: ``Root`` and a turned child ``Tip``, the object
    scaled non-uniformly (its bones shear)."""
    from hierarchy_inspector.addon.scene.exports.scenes import new_armature
    from mathutils import Matrix

    rig = new_armature(scene, name)
    root = rig.data.edit_bones.new("Root")
    root.head, root.tail = (0, 0, 0), (0, 0, 1)
    tip = rig.data.edit_bones.new("Tip")
    tip.parent = root
    tip.head, tip.tail = (0, 0, 1), (0, 0, 2)
    tip.matrix = Matrix.Translation((0, 0, 1)) @ Matrix.Rotation(math.radians(40.0), 4, "X")
    bpy.ops.object.mode_set(mode="OBJECT")
    rig.scale = (1.0, 2.5, 0.6)
    return rig


def _worlds_equal_the_scan_at_every_frame(scene, series) -> None:
    for k, f in enumerate(series.frames):
        scene.frame_set(int(f))
        one = scan_scene(scene)
        assert one.nodes.keys == series.keys
        np.testing.assert_array_equal(one.nodes.world, series.world[k])


def test_only_poses_nothing_animates_are_static(empty_scene):
    from hierarchy_inspector.addon.scene.timeline.still import pose_is_static

    scene = empty_scene
    still = _still_armature(scene, "Still")
    keyed = _still_armature(scene, "Keyed")
    keyed.pose.bones["Tip"].keyframe_insert("rotation_quaternion", frame=1)
    driven = _still_armature(scene, "Driven")
    driven.data.bones["Tip"].driver_add("bbone_x")
    constrained = _still_armature(scene, "Constrained")
    constrained.pose.bones["Tip"].constraints.new("COPY_ROTATION")
    assert [pose_is_static(o) for o in (still, keyed, driven, constrained)] == [True, False, False, False]

    def nothing(*_args):
        pass

    with running(bpy.app.handlers.frame_change_post, nothing):
        assert not pose_is_static(still)  # a script could pose it


def test_a_static_pose_is_read_once_beside_a_moving_rig_and_every_frame_equals_the_scan(empty_scene):
    from hierarchy_inspector.addon.scene.exports.scenes import ik_rig

    scene = empty_scene
    _still_armature(scene, "Still")
    bpy.ops.object.mode_set(mode="OBJECT")
    ik_rig(scene, 1, 12)
    bpy.ops.object.mode_set(mode="OBJECT")
    reader = FrameReader(scene, range(1, 12, 2), read_once=True)
    while not reader.step():
        pass
    static = {
        obj.name: first is not None for (_k, obj), first in zip(reader.armatures, reader._first_pose, strict=True)
    }
    assert static == {"Still": True, "IKRig": False} and reader.still_checked
    series = read_frames(scene, range(1, 12, 2))
    _worlds_equal_the_scan_at_every_frame(scene, series)
    assert analyse_frames(series).flagged.any()


def test_a_pose_a_script_changes_is_caught_at_the_last_frame_and_the_range_read_again(empty_scene, monkeypatch):
    from hierarchy_inspector.addon.scene import frames as frames_module

    scene = empty_scene
    still = _still_armature(scene, "Still")
    still.pose.bones["Tip"].rotation_mode = "XYZ"

    def turn(scene, *_args):
        bpy.data.objects["Still"].pose.bones["Tip"].rotation_euler.z = 0.1 * scene.frame_current

    # As if the rule missed it: only the check at the last frame can see the script.
    monkeypatch.setattr(frames_module, "pose_is_static", lambda arm: True)
    with running(bpy.app.handlers.frame_change_pre, turn):
        reader = FrameReader(scene, range(1, 6), read_once=True)
        while not reader.step():
            pass
        assert not reader.still_checked
        series = read_frames(scene, range(1, 6))
        _worlds_equal_the_scan_at_every_frame(scene, series)
    assert not np.array_equal(series.world[0], series.world[-1])


def test_a_mesh_with_only_self_contained_modifiers_nothing_animates_keeps_its_box(empty_scene):
    from hierarchy_inspector.addon.scene.timeline.still import box_may_change

    scene = empty_scene
    widget = _box_mesh(scene, "Widget")
    widget.modifiers.new("Subdivision", "SUBSURF")
    assert not box_may_change(widget)  # Rigify's widgets
    animated = _box_mesh(scene, "Animated")
    animated.modifiers.new("Subdivision", "SUBSURF")
    animated.keyframe_insert("location", frame=1)  # its object's curves could drive the modifier
    deformed = _box_mesh(scene, "Deformed")
    deformed.modifiers.new("Deform", "SIMPLE_DEFORM")  # not in the list: it may depend on other objects
    assert box_may_change(animated) and box_may_change(deformed)

    def nothing(*_args):
        pass

    with running(bpy.app.handlers.depsgraph_update_post, nothing):
        assert box_may_change(widget)  # a script could edit it
    # Read once, the boxes still equal Blender's at every frame (the widget's is its subdivided one).
    series = read_frames(scene, range(1, 5))
    _boxes_equal_the_scan_at_every_frame(scene, series)


def _empty(scene, name: str, parent=None):
    obj = bpy.data.objects.new(name, None)
    scene.collection.objects.link(obj)
    obj.parent = parent
    return obj


def test_objects_nothing_moves_are_those_without_animation_constraints_or_a_moving_parent(empty_scene):
    from hierarchy_inspector.addon.scene.timeline.still import objects_that_stay

    scene = empty_scene
    still = _empty(scene, "Still")
    under_still = _empty(scene, "UnderStill", still)
    keyed = _empty(scene, "Keyed")
    keyed.keyframe_insert("location", frame=1)
    under_keyed = _empty(scene, "UnderKeyed", keyed)
    constrained = _empty(scene, "Constrained")
    constrained.constraints.new("COPY_LOCATION").target = keyed
    curve = bpy.data.objects.new("Path", bpy.data.curves.new("Path", "CURVE"))
    scene.collection.objects.link(curve)
    on_curve = _empty(scene, "OnCurve", curve)  # a curve with path animation moves its children
    rig = _still_armature(scene, "Rig")
    on_bone = _empty(scene, "OnBone", rig)
    on_bone.parent_type, on_bone.parent_bone = "BONE", "Tip"
    objects = [under_still, still, keyed, under_keyed, constrained, curve, on_curve, rig, on_bone]
    stays = dict(zip([o.name for o in objects], objects_that_stay(objects).tolist(), strict=True))
    assert stays == {
        "UnderStill": True,  # its parent comes after it in the list: the rule folds down the tree
        "Still": True,
        "Keyed": False,
        "UnderKeyed": False,
        "Constrained": False,
        "Path": True,
        "OnCurve": False,
        "Rig": True,  # the object itself: its pose is another rule
        "OnBone": False,
    }
    assert not objects_that_stay([under_still]).any()  # its parent is not in the list

    def nothing(*_args):
        pass

    with running(bpy.app.handlers.frame_change_post, nothing):
        assert not objects_that_stay(objects).any()  # a script could move any of them


def test_still_objects_are_read_once_the_few_others_one_by_one_and_a_script_is_caught(empty_scene, monkeypatch):
    from hierarchy_inspector.addon.scene import frames as frames_module

    scene = empty_scene
    animated_scenes.stretch_pair(scene)  # Parent and Child move
    props = [_empty(scene, f"Prop{k}") for k in range(30)]
    for k, prop in enumerate(props):
        prop.location, prop.scale = (k, 0.0, 1.0), (1.0, 1.0 + 0.1 * k, 0.5)
    reader = FrameReader(scene, range(1, 8), read_once=True, unattended=True)
    while not reader.step():
        pass
    assert reader._stays is not None and int((~reader._stays).sum()) == 2 and reader.still_checked
    _worlds_equal_the_scan_at_every_frame(scene, reader.series())

    def push(scene, *_args):
        bpy.data.objects["Prop3"].location.y = 0.25 * scene.frame_current

    # As if the rule missed the script (it sees the handler): the props count as still.
    still = lambda objects: np.array([o.name.startswith("Prop") for o in objects])  # noqa: E731
    monkeypatch.setattr(frames_module, "objects_that_stay", still)
    with running(bpy.app.handlers.frame_change_pre, push):
        reader = FrameReader(scene, range(1, 8), read_once=True, unattended=True)
        while not reader.step():
            pass
        assert not reader.still_checked  # only the check at the last frame sees it
        series = read_frames(scene, range(1, 8))
        _worlds_equal_the_scan_at_every_frame(scene, series)
    column = [key for key, _ in series.keys].index("Prop3")
    assert series.world[0, column, 1, 3] != series.world[-1, column, 1, 3]
