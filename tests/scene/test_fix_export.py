"""Fix & export operators in real Blender: they change exactly what they say, are
undoable, and change nothing when they cannot finish."""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.errors import FixError  # noqa: E402
from hierarchy_inspector.addon.model.exports.fix_plans import helper_plan  # noqa: E402
from hierarchy_inspector.addon.model.exports.gltf_check import gltf_error  # noqa: E402
from hierarchy_inspector.addon.scene import demo_scenes, gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.edits import bake, helpers  # noqa: E402
from hierarchy_inspector.addon.scene.scan import scan_scene  # noqa: E402


def _state(scene) -> dict:
    """Everything these operations may touch: parenting, worlds, mesh vertices."""
    out = {}
    for obj in scene.objects:
        verts = None
        if obj.type == "MESH":
            verts = np.array([tuple(v.co) for v in obj.data.vertices])
        out[obj.name] = (
            obj.parent.name if obj.parent else None,
            np.array(obj.matrix_parent_inverse),
            np.array(obj.matrix_world),
            verts,
        )
    return out


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for name in a:
        pa, ia, wa, va = a[name]
        pb, ib, wb, vb = b[name]
        if pa != pb or not np.allclose(ia, ib) or not np.allclose(wa, wb, atol=1e-6):
            return False
        if (va is None) != (vb is None) or (va is not None and not np.allclose(va, vb)):
            return False
    return True


def _world_vertices(obj) -> np.ndarray:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    co = np.array([tuple(v.co) for v in evaluated.data.vertices])
    w = np.array(evaluated.matrix_world)
    return co @ w[:3, :3].T + w[:3, 3]


def test_insert_helpers_operator_is_exact_and_undoable(addon):
    demo_scenes.build_demo_scene(bpy.context.scene)
    before = _state(bpy.context.scene)
    bpy.ops.ed.undo_push(message="before helpers")
    assert bpy.ops.hierarchy_inspector.insert_helpers("EXEC_DEFAULT", True) == {"FINISHED"}
    helper = bpy.data.objects["Kept child (shear helper)"]
    assert bpy.data.objects["Kept child"].parent == helper
    assert np.allclose(np.array(bpy.data.objects["Kept child"].matrix_world), before["Kept child"][2], atol=1e-5)
    result = scan_scene(bpy.context.scene)
    assert not result.local_shear_real[[i for i in range(len(result.nodes)) if result.nodes.kind(i) == "object"]].any()
    bpy.ops.ed.undo()
    assert "Kept child (shear helper)" not in bpy.data.objects
    assert _same(_state(bpy.context.scene), before)


def test_insert_helpers_skips_meshes_deformed_by_an_armature_parent(empty_scene):
    scene = empty_scene
    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("B")
    bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.rotation_euler = (0, 0, 0.6)
    arm.scale = (2.0, 1.0, 1.0)
    mesh = bpy.data.meshes.new("skin")
    mesh.from_pydata([(0.2, 0, 0.2), (0, 0.3, 0.8), (-0.2, 0, 0.5)], [], [(0, 1, 2)])
    skin = bpy.data.objects.new("Skin", mesh)
    scene.collection.objects.link(skin)
    skin.parent = arm
    skin.parent_type = "ARMATURE"
    group = skin.vertex_groups.new(name="B")
    group.add([0, 1, 2], 1.0, "REPLACE")
    bpy.context.view_layer.update()
    # Set Parent's inverse of a rotated, non-uniformly scaled armature: a sheared local.
    skin.matrix_parent_inverse = arm.matrix_world.inverted()
    arm.pose.bones["B"].rotation_mode = "XYZ"
    arm.pose.bones["B"].rotation_euler = (0.4, 0, 0)
    bpy.context.view_layer.update()
    verts = _world_vertices(skin)
    inspection = scan_scene(scene)
    assert inspection.local_shear_real[inspection.nodes.index()[("Skin", "")]]
    result = helpers.insert_helpers(inspection)
    assert result.inserted == [] and result.skipped == [("Skin", "deformed by its armature parent")]
    assert skin.parent == arm and skin.parent_type == "ARMATURE"
    assert np.allclose(_world_vertices(skin), verts)


def test_no_helpers_for_float32_noise_under_extreme_parent_scales(empty_scene):
    rng = np.random.default_rng(5)
    scene = empty_scene
    for k in range(40):
        parent = bpy.data.objects.new(f"P{k}", None)
        child = bpy.data.objects.new(f"C{k}", None)
        for obj in (parent, child):
            scene.collection.objects.link(obj)
        parent.scale = (rng.uniform(5, 50), rng.uniform(0.02, 0.2), 1.0)
        parent.rotation_euler = rng.uniform(-math.pi, math.pi, size=3)
        child.parent = parent
        child.location = rng.normal(size=3)
        child.rotation_euler = rng.uniform(-math.pi, math.pi, size=3)  # its local is still a clean TRS
    bpy.context.view_layer.update()
    inspection = scan_scene(scene)
    assert inspection.local_shear_max.max() > 1e-4  # the noise the floor must absorb
    assert helper_plan(inspection) == []


def test_bake_refuses_a_zero_scale_child_and_changes_nothing(addon):
    scene = bpy.context.scene
    demo_scenes.build_demo_scene(scene)
    flat = bpy.data.objects.new("Flat", None)
    scene.collection.objects.link(flat)
    flat.parent = bpy.data.objects["Child"]
    flat.scale = (0.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    before = _state(scene)
    with pytest.raises(FixError, match="'Flat' has zero scale"):
        bake.bake_residual(scan_scene(scene))
    assert _same(_state(scene), before)
    # The operator reports the error (bpy raises it as RuntimeError) and changes nothing.
    with pytest.raises(RuntimeError, match="Nothing changed: object 'Flat' has zero scale"):
        bpy.ops.hierarchy_inspector.bake_residual()
    assert _same(_state(scene), before)


def test_bake_operator_keeps_vertices_and_is_undoable(addon):
    scene = bpy.context.scene
    demo_scenes.build_demo_scene(scene)
    child = bpy.data.objects["Child"]
    verts = _world_vertices(child)
    before = _state(scene)
    bpy.ops.ed.undo_push(message="before bake")
    assert bpy.ops.hierarchy_inspector.bake_residual("EXEC_DEFAULT", True) == {"FINISHED"}
    assert np.abs(_world_vertices(bpy.data.objects["Child"]) - verts).max() < 1e-5
    assert scan_scene(scene).shear_max[0 : len(scene.objects)].max() < 1e-3
    bpy.ops.ed.undo()
    assert _same(_state(bpy.context.scene), before)


def test_gltf_export_to_a_bad_path_changes_nothing(addon, tmp_path):
    scene = bpy.context.scene
    demo_scenes.build_demo_scene(scene)
    before = _state(scene)
    bad = tmp_path / "no" / "such" / "folder" / "x.glb"
    with pytest.raises(RuntimeError, match="folder .* does not exist"):
        bpy.ops.hierarchy_inspector.export_gltf(filepath=str(bad))
    assert _same(_state(scene), before)
    assert not any(name.endswith("(shear helper)") for name in bpy.data.objects.keys())


def test_gltf_export_operator_writes_an_exact_file(addon, tmp_path):
    scene = bpy.context.scene
    demo_scenes.build_demo_scene(scene)
    out = tmp_path / "scene.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(out)) == {"FINISHED"}
    relative, _per_node = gltf_error(str(out), scan_scene(scene), gltf_export.gltf_conversion(True))
    assert out.stat().st_size > 0 and relative < 1e-5


def test_accumulated_export_operator(addon, tmp_path):
    demo_scenes.build_demo_scene(bpy.context.scene)
    out = tmp_path / "acc.json"
    assert bpy.ops.hierarchy_inspector.export_accumulated(filepath=str(out)) == {"FINISHED"}
    assert out.exists() and (tmp_path / "acc.csv").exists()
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.hierarchy_inspector.export_accumulated(filepath=str(tmp_path / "x" / "y.json"))


def test_fbx_export_operator_is_exact_at_every_frame_and_changes_nothing(addon, tmp_path):
    """The panel's and File > Export's FBX: the export-ready copy baked over the scene's
    range, read back exact; the scene as before; a bad path
    refused with nothing changed; the menu entry registered."""
    pytest.importorskip("ufbx")
    from hierarchy_inspector.addon.model.exports.fbx_check import fbx_worlds
    from hierarchy_inspector.addon.scene.exports import scenes as export_scenes

    scene = bpy.context.scene
    export_scenes.sheared_objects(scene)
    export_scenes.euler_pole_objects(scene)
    scene.frame_set(10)
    before = _state(scene)
    out = tmp_path / "scene.fbx"
    assert bpy.ops.hierarchy_inspector.export_fbx(filepath=str(out)) == {"FINISHED"}
    assert _same(_state(scene), before)
    assert not any("helper" in name for name in bpy.data.objects.keys())
    fps = scene.render.fps / scene.render.fps_base
    frames = list(range(scene.frame_start, scene.frame_end + 1))
    names, worlds = fbx_worlds(str(out), np.asarray(frames) / fps)
    worst = 0.0
    for t, frame in enumerate(frames):
        scene.frame_set(frame)
        for name in ("Tip", "Far", "Rim"):
            blender = np.array(scene.objects[name].matrix_world)
            worst = max(worst, np.abs(worlds[t, names.index(name)] - blender).max() / max(1.0, np.abs(blender).max()))
    assert worst < 1e-5
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.hierarchy_inspector.export_fbx(filepath=str(tmp_path / "x" / "y.fbx"))
    draws = [getattr(f, "__name__", "") for f in bpy.types.TOPBAR_MT_file_export._dyn_ui_initialize()]
    assert "draw_export_menu" in draws


def test_insert_helpers_operator_names_the_bones_it_leaves(addon, capfd):
    """A rig whose bones hold local shear and no object that needs a helper: nothing is
    inserted, and the warning says so for the bones (the exact exports give them helper
    joints) instead of 'nothing to do'."""
    from hierarchy_inspector.addon.scene.exports import scenes as export_scenes

    export_scenes.inherit_scale_rig(bpy.context.scene)
    bpy.context.scene.frame_set(10)
    assert bpy.ops.hierarchy_inspector.insert_helpers("EXEC_DEFAULT", True) == {"CANCELLED"}
    out = capfd.readouterr()
    text = out.out + out.err
    assert "bone(s) keep their local shear" in text and "Export FBX (exact)" in text
    assert "nothing to do" not in text
    assert not [o for o in bpy.data.objects if o.name.endswith("(shear helper)")]
