"""FBX through the export-ready copy, in real Blender, read back with ufbx (an
independent FBX reader) and compared with Blender's own matrices frame by frame."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytest.importorskip("ufbx")

from hierarchy_inspector.addon.model.exports.fbx_check import fbx_worlds  # noqa: E402
from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene.exports import fbx_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402


def _state(scene):
    objs = {
        o.name: (
            o.parent.name if o.parent else None,
            o.parent_type,
            o.rotation_mode,
            o.animation_data.action.name if o.animation_data and o.animation_data.action else None,
            tuple(round(v, 6) for row in o.matrix_parent_inverse for v in row),
            tuple(round(v, 6) for v in (*o.location, *o.rotation_euler, *o.rotation_quaternion, *o.scale)),
            tuple(round(v, 6) for row in o.matrix_world for v in row),
        )
        for o in bpy.data.objects
    }
    return objs, sorted(bpy.data.actions.keys()), scene.frame_current, scene.frame_start, scene.frame_end


@pytest.fixture
def objects_scene(empty_scene):
    export_scenes.sheared_objects(empty_scene)
    empty_scene.frame_set(10)
    return empty_scene


@pytest.mark.parametrize("frames", [None, FrameRange(1, 25, 1), FrameRange(3, 24, 4)])
def test_sheared_objects_are_exact_at_every_frame_and_the_scene_is_unchanged(objects_scene, tmp_path, frames):
    scene = objects_scene
    before = _state(scene)
    out = tmp_path / "out.fbx"
    result = fbx_export.write_fbx(scene, str(out), frames)
    assert _state(scene) == before
    assert result.helpers == ["Skewed"] and result.not_corrected == []
    assert result.error is not None and result.error.relative < 1e-5 and result.error.checked == 3
    # Independently of write_fbx's own check: ufbx's worlds against Blender's, frame by frame.
    fps = scene.render.fps / scene.render.fps_base
    exported = frames.frames() if frames else [10]
    names, worlds = fbx_worlds(str(out), np.asarray(exported) / fps)
    assert not any("helper" in n for n in names if n in scene.objects)
    for t, frame in enumerate(exported):
        scene.frame_set(frame)
        for name in ("Stretch", "Skewed", "Tip"):
            blender = np.array(scene.objects[name].matrix_world)
            assert np.abs(worlds[t, names.index(name)] - blender).max() < 1e-5 * 3, (frame, name)


def test_plain_fbx_export_drops_the_shear(objects_scene, tmp_path):
    scene = objects_scene
    out = tmp_path / "plain.fbx"
    fbx_export.export_fbx(str(out), FrameRange(1, 25, 1))
    fps = scene.render.fps / scene.render.fps_base
    names, worlds = fbx_worlds(str(out), np.array([13.0]) / fps)
    scene.frame_set(13)
    assert np.abs(worlds[0, names.index("Tip")] - np.array(scene.objects["Tip"].matrix_world)).max() > 1e-2


def _rig_state(rig):
    """Everything of the armature the export-ready copy touches: bones (parents,
    connection, inheritance, rest), pose channels, constraints, drivers, action."""
    anim = rig.animation_data
    bones = {
        b.name: (
            b.parent.name if b.parent else None,
            b.use_connect,
            b.inherit_scale,
            b.use_inherit_rotation,
            b.use_local_location,
            b.use_deform,
            getattr(b, "select", None),
            tuple(round(v, 6) for row in b.matrix_local for v in row),
        )
        for b in rig.data.bones
    }
    pose = {
        p.name: (
            p.rotation_mode,
            tuple(round(v, 6) for v in (*p.location, *p.rotation_quaternion, *p.rotation_euler, *p.scale)),
            tuple(c.mute for c in p.constraints),
            getattr(p, "select", None),
            tuple(round(v, 6) for row in p.matrix for v in row),
        )
        for p in rig.pose.bones
    }
    action = anim.action.name if anim and anim.action else None
    drivers = tuple((d.data_path, d.mute) for d in anim.drivers) if anim else ()
    selected = sorted(o.name for o in bpy.context.view_layer.objects if o.select_get())
    return bones, pose, action, drivers, rig.mode, bpy.context.view_layer.objects.active.name, selected


def _skinned_error(scene, read, mesh_name, frames) -> float:
    """Largest distance between the file's skinned vertices and Blender's evaluated
    mesh, over the frames (compared as sets: the exporter may reorder vertices)."""
    worst = 0.0
    for t, frame in enumerate(frames):
        scene.frame_set(frame)
        evaluated = scene.objects[mesh_name].evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = evaluated.to_mesh()
        verts = np.array([(evaluated.matrix_world @ v.co)[:] for v in mesh.vertices])
        evaluated.to_mesh_clear()
        dist = np.linalg.norm(read.skinned[mesh_name][t][:, None] - verts[None], axis=-1)
        worst = max(worst, float(dist.min(axis=1).max()), float(dist.min(axis=0).max()))
    return worst


@pytest.fixture
def rig_scene(empty_scene):
    rig = export_scenes.inherit_scale_rig(empty_scene)
    bpy.context.view_layer.objects.active = rig
    empty_scene.objects["Skin"].select_set(True)  # the user's selection: the export must keep it
    bpy.ops.object.mode_set(mode="POSE")  # the user is posing: the export must leave them there
    root = rig.pose.bones["Root"] if hasattr(rig.pose.bones["Root"], "select") else rig.data.bones["Root"]
    root.select = True
    empty_scene.frame_set(7)
    return empty_scene


@pytest.mark.parametrize("frames", [FrameRange(1, 25, 2), None])
def test_sheared_bones_in_every_inherit_scale_mode_are_exact_and_the_rig_is_unchanged(rig_scene, tmp_path, frames):
    from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx

    scene = rig_scene
    rig = scene.objects["Rig"]
    before, objects_before = _rig_state(rig), _state(scene)
    out = tmp_path / "rig.fbx"
    result = fbx_export.write_fbx(scene, str(out), frames)
    exported = frames.frames() if frames else [7]  # static: the current frame
    assert _rig_state(rig) == before and _state(scene) == objects_before
    assert not any("helper" in b.name for b in rig.data.bones)
    modes = ("FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")
    assert sorted(result.helpers) == sorted(f"Rig > Child {m}" for m in modes) and result.not_corrected == []
    assert result.error.relative < 1e-5 and result.error.checked == 8  # Rig, Root, six children
    # Independently of write_fbx's own check: every bone under its armature, every frame.
    fps = scene.render.fps / scene.render.fps_base
    read = read_fbx(str(out), np.asarray(exported) / fps, skinned=True)
    index = read.index()
    for t, frame in enumerate(exported):
        scene.frame_set(frame)
        for bone in rig.pose.bones:
            blender = np.array(rig.matrix_world @ bone.matrix)
            assert np.abs(read.worlds[t, index[("Rig", bone.name)]] - blender).max() < 1e-5, (frame, bone.name)
    # Skinned vertices (each child's box weighted to it) follow Blender's evaluated mesh.
    assert _skinned_error(scene, read, "Skin", exported) < 1e-5


def test_plain_fbx_export_drops_the_bones_shear(rig_scene, tmp_path):
    from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx

    scene = rig_scene
    out = tmp_path / "plain.fbx"
    fbx_export.export_fbx(str(out), FrameRange(1, 25, 2))
    fps = scene.render.fps / scene.render.fps_base
    read = read_fbx(str(out), np.asarray(FrameRange(1, 25, 2).frames()) / fps, skinned=True)
    assert _skinned_error(scene, read, "Skin", FrameRange(1, 25, 2).frames()) > 1e-2


def test_bone_helpers_leave_a_clean_undo_history(rig_scene, tmp_path):
    scene = rig_scene
    rig = scene.objects["Rig"]
    before = _rig_state(rig)
    bpy.ops.ed.undo_push(message="before export")
    fbx_export.write_fbx(scene, str(tmp_path / "rig.fbx"), FrameRange(1, 25, 4))
    bpy.ops.ed.undo_push(message="after export")
    bpy.ops.ed.undo()
    rig = bpy.context.scene.objects["Rig"]
    assert _rig_state(rig) == before
    assert not any("helper" in b.name for b in rig.data.bones)
    assert sorted(bpy.data.actions.keys()) == ["RigAction"]


def test_a_failed_export_undoes_the_bone_helpers(rig_scene, tmp_path, monkeypatch):
    scene = rig_scene
    rig = scene.objects["Rig"]
    before = _rig_state(rig)

    def broken(path, frame_range, options=None):
        assert any("helper" in b.name for b in rig.data.bones)  # the helpers are there during the export
        raise RuntimeError("exporter failed")

    monkeypatch.setattr(fbx_export, "export_fbx", broken)
    with pytest.raises(RuntimeError):
        fbx_export.write_fbx(scene, str(tmp_path / "rig.fbx"), FrameRange(1, 25, 4))
    assert _rig_state(rig) == before and sorted(bpy.data.actions.keys()) == ["RigAction"]
    assert not (tmp_path / "rig.fbx").exists()


def test_the_bone_check_sees_a_file_that_drops_the_split(rig_scene, tmp_path):
    """The read-back compares bones under their armature: the plain file's sheared
    bones are caught by write_fbx's own comparison."""
    from hierarchy_inspector.addon.model.exports.fbx_check import compare, read_fbx
    from hierarchy_inspector.addon.scene.frames import read_frames

    scene = rig_scene
    out = tmp_path / "plain.fbx"
    frames = FrameRange(1, 25, 4).frames()
    fbx_export.export_fbx(str(out), FrameRange(1, 25, 4))
    series = read_frames(scene, frames)
    error = compare(read_fbx(str(out), np.asarray(frames) / series.fps), series.keys, series.world)
    assert error.per_node["Rig > Child ALIGNED"] > 1e-2 and error.per_node["Rig > Child FULL"] < 1e-5


def test_generated_rigify_rig_with_squash_and_stretch_is_exact(empty_scene, tmp_path):
    """A generated Rigify human rig, torso squashing and stretching, a box on every
    deform bone: its sheared deform bones get helpers; every object and joint of the
    file is exact at every frame, and so are the skinned vertices (except those on
    B-Bones with segments, which FBX cannot carry: they are off in Blender's plain
    export just as much); the rig is as it was."""
    from hierarchy_inspector.addon.model.exports.fbx_check import compare, read_fbx
    from hierarchy_inspector.addon.scene.frames import read_frames
    from hierarchy_inspector.addon.scene.timeline import animated

    scene = empty_scene
    rig = animated.stretchy_rigify(scene, frames=20)  # unscaled at 10 and 20, stretched at 15
    export_scenes.skin_boxes(scene, rig)
    before = _rig_state(rig)
    frames = FrameRange(9, 20, 1)
    out = tmp_path / "rigify.fbx"
    result = fbx_export.write_fbx(scene, str(out), frames)
    assert _rig_state(rig) == before and sorted(bpy.data.actions.keys()) == ["rigAction"]
    assert any(h.startswith("rig > DEF-spine") for h in result.helpers) and result.not_corrected == []
    assert result.error.relative < 1e-5
    skin = result.skins.meshes["Body"]  # the joints are exact, the B-Bones' vertices are not: said so
    assert not skin.exact and "B-Bone 'DEF-" in skin.cause and "segments) weighs it" in skin.cause
    series = read_frames(scene, frames.frames())
    read = read_fbx(str(out), series.frames / series.fps, skinned=True)
    error = compare(read, series.keys, series.world)
    assert error.relative < 1e-5 and error.checked > 800
    body = scene.objects["Body"]
    groups = [g.name for g in body.vertex_groups]
    on_bbones = np.array([rig.data.bones[groups[v.groups[0].group]].bbone_segments > 1 for v in body.data.vertices])
    assert on_bbones.any() and not on_bbones.all()
    for t, frame in enumerate(frames.frames()):
        scene.frame_set(frame)
        evaluated = body.evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = evaluated.to_mesh()
        verts = np.array([(evaluated.matrix_world @ v.co)[:] for v in mesh.vertices])
        evaluated.to_mesh_clear()
        dist = np.linalg.norm(read.skinned["Body"][t][:, None] - verts[None], axis=-1).min(axis=0)
        assert dist[~on_bbones].max() < 1e-5 * max(1.0, np.abs(verts).max()), frame


def test_the_shear_prefilter_chooses_what_needs_split_chooses():
    """needs_split runs its rule only where the columns lean: the same choice as the
    rule on every node, across TRS matrices (no shear, any scale), shear just
    under and over the floor, strong shear, and zero-scale axes, under random parents."""
    from hierarchy_inspector import core
    from hierarchy_inspector.addon.model.exports.animated_gltf import needs_split, split_rule
    from hierarchy_inspector.addon.model.thresholds import DEFAULT, LOCAL_SHEAR_FLOOR_DEG

    rng = np.random.default_rng(7)
    t, n = 4, 240
    q = rng.normal(size=(t, n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    local = core.TRS(rng.normal(size=(t, n, 3)), q, np.exp(rng.normal(scale=2.0, size=(t, n, 3)))).to_matrix()
    kind = np.arange(n) % 6
    angles = np.array([0.0, 0.3, 0.9, 1.2, 5.0, 0.0])[kind] * LOCAL_SHEAR_FLOOR_DEG  # degrees off 90
    angles[kind == 4] = 2.0  # strong
    shear = np.broadcast_to(np.eye(4), (t, n, 4, 4)).copy()
    shear[:, :, 0, 1] = np.tan(np.radians(angles))[None, :] * (np.arange(t) == t - 1)[:, None]  # at one frame only
    local = local @ shear
    local[:, kind == 5, :3, 2] = 0.0  # a collapsed axis
    parent = core.TRS(rng.normal(size=(t, n, 3)), q[::-1], np.exp(rng.normal(size=(t, n, 3)))).to_matrix()
    expected = split_rule(local, parent, DEFAULT)
    chosen = needs_split(local, parent, DEFAULT)
    np.testing.assert_array_equal(chosen, expected)
    assert expected[kind == 4].all() and not expected[kind == 0].any()  # the cases are not all alike


def test_ik_bend_near_the_euler_pole_reads_back_exactly(empty_scene, tmp_path):
    """The IK rig without 'Hand''s constraint: 'Lower' bends to 89.9 degrees about the
    middle Euler axis at frame 13, where Blender's exporter (single-precision Euler XYZ)
    loses 2.5e-5 units when the helper keeps the bone's own frame; turned by an axis
    rotation the file is within float32 of Blender at every frame."""
    from hierarchy_inspector.addon.model.exports.animated_gltf import CHECK_TOLERANCE

    export_scenes.ik_rig(empty_scene)
    rig = empty_scene.objects["IKRig"]
    hand = rig.pose.bones["Hand"]
    hand.constraints.remove(hand.constraints[0])
    empty_scene.frame_set(7)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "ik.fbx"), FrameRange(1, 25, 1), again=False)
    assert result.helpers == ["IKRig > Upper", "IKRig > Lower"] and result.not_corrected == []
    assert result.error is not None and result.error.checked == 6
    assert result.error.relative < CHECK_TOLERANCE / 10
    assert sorted(b.name for b in rig.data.bones) == ["Base", "Hand", "Lower", "Upper"]


def test_the_two_process_read_gives_the_same_worlds(rig_scene, tmp_path):
    """The reader's forked evaluation (forced here on a small file) gives exactly what
    one process gives, node by node and time by time."""
    import sys

    from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx

    scene = rig_scene
    out = tmp_path / "rig.fbx"
    frames = FrameRange(1, 25, 1)
    fbx_export.write_fbx(scene, str(out), frames)
    times = np.asarray(frames.frames()) / (scene.render.fps / scene.render.fps_base)
    one = read_fbx(str(out), times, fork_above=10**9)
    two = read_fbx(str(out), times, fork_above=0)
    assert one.names == two.names and len(one.names) >= 8
    assert np.array_equal(one.worlds, two.worlds)
    if sys.platform.startswith("linux"):  # the fork ran: a third read without it differs in nothing either
        assert np.array_equal(read_fbx(str(out), times[::-1], fork_above=0).worlds, one.worlds[::-1])


@pytest.mark.parametrize("blending", [("REPLACE", 1.0), ("ADD", 0.5)])
def test_an_nla_track_animating_a_sheared_bone_is_exact(rig_scene, tmp_path, blending):
    """The rig's animation in an NLA track, no active action: the copy keys every
    channel of the corrected bones (a held pose channel would be overridden by the
    track), and the file is exact at every frame; the active-action blending the rig
    keeps (Add at half influence) is set to Replace at full influence for the export
    and put back."""
    scene = rig_scene
    rig = scene.objects["Rig"]
    anim = rig.animation_data
    action = anim.action
    for bone in rig.pose.bones:  # a constant offset the track writes into every bone's location
        if bone.name.startswith("Child"):
            bone.location = (0.05, 0.0, -0.02)
            for frame in (1, 25):
                bone.keyframe_insert("location", frame=frame)
    track = anim.nla_tracks.new()
    track.strips.new("Take", 1, action)
    anim.action = None
    anim.action_blend_type, anim.action_influence = blending
    scene.frame_set(scene.frame_current)  # the pose as the track makes it
    before = _rig_state(rig)
    result = fbx_export.write_fbx(scene, str(tmp_path / "nla.fbx"), FrameRange(1, 25, 2))
    assert _rig_state(rig) == before and len(anim.nla_tracks) == 1 and anim.action is None
    assert (anim.action_blend_type, anim.action_influence) == blending
    assert len(result.helpers) == 5 and result.error.relative < 1e-5


def test_an_action_blended_over_nla_tracks_is_listed_for_bones_and_exact_for_objects(rig_scene, tmp_path):
    """An active action blended Add at half influence over an NLA track: an object's
    helper keys replace it for the export (exact); a rig's helper keys would sit in that
    blended action, so its sheared bones are listed, not silently wrong (they were 2
    units off)."""
    scene = rig_scene
    rig = scene.objects["Rig"]
    bpy.ops.object.mode_set(mode="OBJECT")
    parent = bpy.data.objects.new("Parent", None)
    scene.collection.objects.link(parent)
    parent.rotation_euler, parent.scale = (0.0, 0.0, 0.6), (3.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    child = bpy.data.objects.new("Child", None)
    scene.collection.objects.link(child)
    child.parent, child.matrix_parent_inverse = parent, parent.matrix_world.inverted()
    for owner, key in ((child, lambda f: child.keyframe_insert("location", frame=f)), (rig, None)):
        anim = owner.animation_data_create()
        below = bpy.data.actions.new(f"{owner.name} below")
        active = anim.action
        anim.action = below
        target = owner if key else rig.pose.bones["Root"]
        target.location = (0.0, 0.2, 0.5)
        target.keyframe_insert("location", frame=1)
        anim.nla_tracks.new().strips.new("below", 1, below)
        anim.action = active
        if key:
            for frame, x in ((1, 1.0), (25, -1.0)):
                child.location = (x, 0.5, 0.0)
                key(frame)
        if hasattr(anim, "action_slot") and anim.action.slots:
            anim.action_slot = anim.action.slots[0]
        anim.action_blend_type, anim.action_influence = "ADD", 0.5
    scene.frame_set(7)
    before, rig_before = _state(scene), _rig_state(rig)
    result = fbx_export.write_fbx(scene, str(tmp_path / "blend.fbx"), FrameRange(1, 25, 3), again=False)
    assert _state(scene) == before and _rig_state(rig) == rig_before
    assert all(
        (o.animation_data.action_blend_type, o.animation_data.action_influence) == ("ADD", 0.5) for o in (rig, child)
    )
    assert result.helpers == ["Child"] and result.error.per_node["Child"] < 1e-5 * 3
    listed = dict(result.not_corrected)
    assert len(listed) == 5 and all("blended (Add, influence 0.5) over NLA tracks" in why for why in listed.values())


def test_objects_near_the_euler_pole_get_a_turned_helper_and_the_file_is_exact(empty_scene, tmp_path):
    """Blender's FBX exporter writes Euler angles computed in float32: near the pole
    its own export is off (by far more than 1e-5 relative here). Ours gives the two
    objects that pass the pole a still helper turned by an axis rotation, keeps their
    animation, and is exact; the scene is unchanged afterwards."""
    scene = empty_scene
    export_scenes.euler_pole_objects(scene)
    scene.frame_set(4)
    before = _state(scene)
    frames = FrameRange(1, 25, 1)
    fps = scene.render.fps / scene.render.fps_base
    times = np.asarray(frames.frames()) / fps
    blender = []
    for frame in frames.frames():
        scene.frame_set(frame)
        blender.append([np.array(o.matrix_world) for o in (scene.objects["Far"], scene.objects["Rim"])])
    scene.frame_set(4)
    blender = np.array(blender)
    plain = tmp_path / "plain.fbx"
    fbx_export.export_fbx(str(plain), frames)
    names, worlds = fbx_worlds(str(plain), times)
    plain_error = np.abs(worlds[:, [names.index("Far"), names.index("Rim")]] - blender).max() / np.abs(blender).max()
    assert plain_error > 1e-5

    result = fbx_export.write_fbx(scene, str(tmp_path / "ours.fbx"), frames, again=False)
    assert _state(scene) == before
    assert result.pole_helpers == ["Pitch", "Turntable"] and result.helpers == [] and result.not_corrected == []
    assert result.error is not None and result.error.relative < 1e-6 and result.error.checked == 7
    names, worlds = fbx_worlds(str(tmp_path / "ours.fbx"), times)
    ours_error = np.abs(worlds[:, [names.index("Far"), names.index("Rim")]] - blender).max() / np.abs(blender).max()
    assert ours_error < 1e-6 < plain_error / 10


def test_pole_helpers_leave_alone_what_blender_writes_well(empty_scene, tmp_path):
    """Without the helpers the file is Blender's (the pole objects off, the read-back
    says so); objects whose parent the file lacks (a lattice) or turned exactly 90
    degrees (``Square``: Blender's gimbal branch writes it within float32) get none."""
    scene = empty_scene
    objects = export_scenes.euler_pole_objects(scene)
    lattice = bpy.data.objects.new("Cage", bpy.data.lattices.new("Cage"))
    scene.collection.objects.link(lattice)
    lattice.rotation_euler = (0.0, 0.0, 1.2)
    objects["Pitch"].parent = lattice  # written in world space: the file has no lattice
    scene.frame_set(4)
    frames = FrameRange(1, 25, 1)
    result = fbx_export.write_fbx(scene, str(tmp_path / "a.fbx"), frames, again=False)
    assert result.pole_helpers == ["Turntable"] and result.error.per_node["Corner"] < 1e-5  # 10 units out
    result = fbx_export.write_fbx(scene, str(tmp_path / "b.fbx"), frames, again=False, pole_helpers=False)
    assert result.pole_helpers == [] and result.error.relative > 1e-5


def test_instanced_objects_get_no_pole_helper(empty_scene, tmp_path):
    """``Turntable`` in a collection that an empty instances: a helper beside it would
    be instanced too, so it gets none (``Pitch``, not instanced, still does)."""
    scene = empty_scene
    objects = export_scenes.euler_pole_objects(scene)
    kit = bpy.data.collections.new("Kit")
    scene.collection.children.link(kit)
    for name in ("Turntable", "Rim"):
        kit.objects.link(objects[name])
        scene.collection.objects.unlink(objects[name])
    instancer = bpy.data.objects.new("Kit instance", None)
    instancer.instance_type, instancer.instance_collection = "COLLECTION", kit
    instancer.location = (50.0, 0.0, 0.0)
    scene.collection.objects.link(instancer)
    scene.frame_set(4)
    before = _state(scene)
    result = fbx_export.write_fbx(scene, str(tmp_path / "kit.fbx"), FrameRange(1, 25, 1), again=False)
    assert result.pole_helpers == ["Pitch"] and _state(scene) == before


def _constrained_objects(scene):
    """A parent turning and scaling non-uniformly over frames 1..12, and under it:
    'Delta', parented keeping its transform (a sheared parent inverse) with delta
    transforms; 'Tracked', whose Track To constraint makes its local matrix sheared and
    whose driver spins a delta; 'Reader', whose Copy Location reads 'Tracked' in local space."""

    def cube(name, parent=None):
        obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
        scene.collection.objects.link(obj)
        obj.parent = parent
        return obj

    parent = cube("Parent")
    parent.rotation_euler = (0.0, 0.0, 0.6)
    parent.scale = (3.0, 1.0, 1.0)
    parent.keyframe_insert("scale", frame=1)
    parent.scale = (1.0, 2.0, 0.5)
    parent.keyframe_insert("scale", frame=12)
    scene.frame_set(1)
    delta = cube("Delta", parent)
    delta.matrix_parent_inverse = parent.matrix_world.inverted()
    delta.location, delta.rotation_euler = (1.0, 1.0, 0.0), (0.5, 0.2, 0.9)
    delta.delta_location, delta.delta_rotation_euler, delta.delta_scale = (
        (0.3, -0.2, 0.5),
        (0.2, 0.4, -0.3),
        (1.5, 0.8, 1.2),
    )
    target = cube("Target", parent)
    target.location = (1.0, 1.0, 0.0)
    tracked = cube("Tracked", parent)
    tracked.location = (-1.0, 0.0, 1.0)
    tracked.constraints.new("TRACK_TO").target = target
    driver = tracked.driver_add("delta_rotation_euler", 0).driver
    driver.expression = "frame / 10"
    reader = cube("Reader", parent)
    copy = reader.constraints.new("COPY_LOCATION")
    copy.target, copy.target_space, copy.owner_space = tracked, "LOCAL", "LOCAL"
    scene.frame_start, scene.frame_end = 1, 12
    scene.frame_set(5)


def _edit_state(scene):
    """What the export-ready copy mutes or zeroes on objects, besides :func:`_state`."""
    return {
        o.name: (
            tuple(round(v, 6) for v in (*o.delta_location, *o.delta_rotation_euler, *o.delta_scale)),
            tuple(c.mute for c in o.constraints),
            tuple(d.mute for d in o.animation_data.drivers) if o.animation_data else (),
        )
        for o in scene.objects
    }


def test_objects_with_constraints_drivers_and_deltas_are_exact(empty_scene, tmp_path):
    """Constraints and transform drivers of an object that gets a helper are muted for the
    export and its delta transforms zeroed (its keys hold Blender's result); all of it is
    put back. 'Reader' reads 'Tracked' in local space: a helper above 'Tracked' put
    'Reader' 2.5 units off where Blender's plain export has it exact, so the file is
    compared with the plain export and 'Tracked' is written as Blender writes it (never
    worse than the plain export at any node: 'Delta' exact, the others as plain)."""
    scene = empty_scene
    _constrained_objects(scene)
    before, muted_before = _state(scene), _edit_state(scene)
    result = fbx_export.write_fbx(scene, str(tmp_path / "c.fbx"), FrameRange(1, 12, 1), again=False)
    assert _state(scene) == before and _edit_state(scene) == muted_before
    assert result.helpers == ["Delta"]
    assert [label for label, _why in result.not_corrected] == ["Tracked"]
    assert "its helper put 'Reader' 2.5e+00 units off where Blender's plain export is" in result.not_corrected[0][1]
    per_node, plain = result.error.per_node, result.plain.per_node
    assert max(per_node[n] for n in ("Parent", "Delta", "Target", "Reader")) < 1e-5 * 3, per_node
    assert plain["Delta"] > 0.5 and per_node["Tracked"] == pytest.approx(plain["Tracked"], rel=1e-3)
    assert result.worse_than_plain == {}


def test_a_library_override_rig_is_listed_not_edited(empty_scene, tmp_path):
    """A character linked from a library and overridden (the studio case): Blender allows
    no edit mode on an override, so its sheared bones are listed with that reason, the
    file read back shows what they cost, and the scene is left as it was."""
    rig = export_scenes.inherit_scale_rig(empty_scene)
    rig.animation_data_clear()
    char = bpy.data.collections.new("Char")
    empty_scene.collection.children.link(char)
    for obj in list(empty_scene.collection.objects):
        empty_scene.collection.objects.unlink(obj)
        char.objects.link(obj)
    library = tmp_path / "char.blend"
    bpy.data.libraries.write(str(library), {char})
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    with bpy.data.libraries.load(str(library), link=True) as (_src, dst):
        dst.collections = ["Char"]
    instance = bpy.data.objects.new("Char", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", dst.collections[0]
    scene.collection.objects.link(instance)
    dst.collections[0].override_hierarchy_create(scene, bpy.context.view_layer, do_fully_editable=True)
    bpy.data.objects.remove(instance)
    rig = scene.objects["Rig"]
    assert rig.override_library is not None
    bpy.context.view_layer.objects.active = rig
    root = rig.pose.bones["Root"]
    for frame, scale in ((1, (1.0, 1.0, 1.0)), (9, (2.5, 1.0, 0.6))):
        root.scale = scale
        root.keyframe_insert("scale", frame=frame)
    scene.frame_set(6)
    before = _rig_state(rig)
    result = fbx_export.write_fbx(scene, str(tmp_path / "o.fbx"), FrameRange(1, 9, 1), again=False)
    assert _rig_state(rig) == before and result.helpers == []
    listed = dict(result.not_corrected)
    assert len(listed) == 5 and all("library override" in why for why in listed.values())
    assert result.error.relative > 1e-3  # what the listed bones cost, shown by the read-back
