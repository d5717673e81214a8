"""The panel's exports do what File > Export does for a rig: the scene's range when it
animates (or the current frame), visible objects by default (hidden objects and excluded
collections left out: Rigify's metarig and widgets), deform bones only, FBX axis and
scale presets, usable from Pose mode; one message saying what the file holds, last."""

from __future__ import annotations

import re

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.exports.choices import (  # noqa: E402
    ExportChoice,
    export_line,
    fbx_axes,
    frames_text,
)
from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx  # noqa: E402
from hierarchy_inspector.addon.model.exports.gltf_animation import key_times  # noqa: E402
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402
from hierarchy_inspector.addon.scene.exports.scope import exported_objects, scene_animates  # noqa: E402
from hierarchy_inspector.addon.scene.exports.usd_export import usd_exporter_missing  # noqa: E402

REPORT = re.compile(r"^(Info|Warning|Error): (.*)$", re.M)


def _reports(capfd) -> list[str]:
    out = capfd.readouterr()
    return [m.group(2) for m in REPORT.finditer(out.out + out.err)]


def _hidden_extras(scene):
    """What Rigify leaves beside a rig: a hidden armature ('metarig') and a collection
    excluded from the view layer holding meshes ('WGTS')."""
    arm = bpy.data.objects.new("metarig", bpy.data.armatures.new("metarig"))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("spine")
    bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.hide_set(True)
    widgets = bpy.data.collections.new("WGTS")
    scene.collection.children.link(widgets)
    for k in range(3):
        widgets.objects.link(bpy.data.objects.new(f"WGT-{k}", bpy.data.meshes.new(f"WGT-{k}")))
    bpy.context.view_layer.layer_collection.children["WGTS"].exclude = True


@pytest.fixture
def rig_scene(addon):
    scene = bpy.context.scene
    export_scenes.sheared_objects(scene)
    rig = export_scenes.inherit_scale_rig(scene)
    _hidden_extras(scene)
    bpy.context.view_layer.objects.active = rig
    scene.frame_set(10)
    return scene


def _gltf_names(path) -> set[str]:
    return {n.get("name", "") for n in Gltf.load(str(path)).doc["nodes"]}


def test_gltf_export_writes_the_scenes_range_and_says_so(rig_scene, tmp_path, capfd):
    """Before: the panel's glTF was the current frame only (no animation), its message
    silent about it. Now the range (an animation sampled at every frame), then the
    current frame when asked; the last report says which."""
    out = tmp_path / "range.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(out)) == {"FINISHED"}
    headline = _reports(capfd)[-1]
    gltf = Gltf.load(str(out))
    assert len(gltf.doc.get("animations", [])) == 1
    fps = rig_scene.render.fps / rig_scene.render.fps_base
    np.testing.assert_allclose(key_times(gltf) * fps, np.arange(1, 26), atol=1e-3)
    assert headline.startswith("Wrote 'range.glb': frames 1..25 (25)") and "read back exact" in headline
    assert "helper node" in headline
    still = tmp_path / "still.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(still), frames="CURRENT") == {"FINISHED"}
    assert not Gltf.load(str(still)).doc.get("animations")
    assert _reports(capfd)[-1].startswith("Wrote 'still.glb': frame 10 only")


def test_a_still_scene_exports_its_current_frame(addon, tmp_path, capfd):
    from hierarchy_inspector.addon.scene import demo_scenes

    scene = demo_scenes.build_demo_scene(bpy.context.scene)
    assert not scene_animates(scene)
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(tmp_path / "demo.glb")) == {"FINISHED"}
    assert f"frame {scene.frame_current} only" in _reports(capfd)[-1]
    export_scenes.sheared_objects(scene)
    assert scene_animates(scene)


def test_exports_leave_hidden_objects_and_excluded_collections_out(rig_scene, tmp_path):
    """The default writes what the viewport shows; 'All objects' what Blender's exporters
    write by default (the hidden armature too)."""
    pytest.importorskip("ufbx")
    scene = rig_scene
    names = {o.name for o in exported_objects(scene, ExportChoice())}
    assert "metarig" not in names and not any(n.startswith("WGT-") for n in names) and "Rig" in names
    gltf = tmp_path / "visible.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(gltf)) == {"FINISHED"}
    assert "Rig" in _gltf_names(gltf) and "metarig" not in _gltf_names(gltf)
    everything = tmp_path / "all.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(everything), objects="ALL") == {"FINISHED"}
    assert "metarig" in _gltf_names(everything)
    for op, name in (
        (bpy.ops.hierarchy_inspector.export_fbx, "exact.fbx"),
        (bpy.ops.hierarchy_inspector.export_fbx_accumulated, "accumulated.fbx"),
    ):
        assert op(filepath=str(tmp_path / name), frames="CURRENT") == {"FINISHED"}
        read = read_fbx(str(tmp_path / name), [0.0])
        assert "Rig" in read.names and "metarig" not in read.names, (name, read.names)
        assert not [n for n in read.names if n.startswith("WGT-")]
    if not usd_exporter_missing():
        usd = tmp_path / "scene.usda"
        assert bpy.ops.hierarchy_inspector.export_usd(filepath=str(usd), frames="CURRENT") == {"FINISHED"}
        assert "metarig" not in usd.read_text() and "Rig" in usd.read_text()


def test_selected_objects_and_deform_bones_only(rig_scene, tmp_path, capfd):
    """'Selected objects' writes the selection (an FBX helper empty with it); 'Only
    Deform Bones' leaves a non-deform bone with no deform bone below out, and the file
    still reads back exact."""
    pytest.importorskip("ufbx")
    scene = rig_scene
    rig = scene.objects["Rig"]
    rig.data.bones["Child NONE"].use_deform = False
    for obj in scene.objects:
        obj.select_set(obj.name in {"Stretch", "Skewed", "Tip"})
    out = tmp_path / "selected.fbx"
    assert bpy.ops.hierarchy_inspector.export_fbx(filepath=str(out), objects="SELECTED") == {"FINISHED"}
    assert "read back exact" in _reports(capfd)[-1]
    read = read_fbx(str(out), [0.0])
    assert {"Stretch", "Skewed", "Tip"} <= set(read.names) and "Rig" not in read.names
    assert any("(shear helper)" in n for n in read.names)  # the helper went in with the selection
    deform = tmp_path / "deform.glb"
    ok = bpy.ops.hierarchy_inspector.export_gltf(filepath=str(deform), deform_only=True)
    assert ok == {"FINISHED"} and "read back exact" in _reports(capfd)[-1]
    assert "Child FULL" in _gltf_names(deform) and "Child NONE" not in _gltf_names(deform)
    fbx = tmp_path / "deform.fbx"
    assert bpy.ops.hierarchy_inspector.export_fbx(filepath=str(fbx), deform_only=True) == {"FINISHED"}
    assert "read back exact" in _reports(capfd)[-1]
    names = read_fbx(str(fbx), [0.0]).names
    assert "Child FULL" in names and "Child NONE" not in names


@pytest.mark.parametrize("preset", ["UNITY", "UNREAL"])
def test_fbx_presets_set_axes_and_scale_and_read_back_exact(rig_scene, tmp_path, capfd, monkeypatch, preset):
    """The preset reaches Blender's exporter (its axes and Apply Scalings) and the file,
    converted back by ufbx, is exact; a camera and a light too (the exporter turns their
    own frames: before, the default scene's camera and light read back 1.4 units off)."""
    pytest.importorskip("ufbx")
    from hierarchy_inspector.addon.scene.exports import fbx_accumulated, fbx_export

    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    lamp = bpy.data.objects.new("Light", bpy.data.lights.new("Light", "POINT"))
    for obj, where in ((cam, (7.0, -6.0, 5.0)), (lamp, (4.0, 1.0, 6.0))):
        rig_scene.collection.objects.link(obj)
        obj.location, obj.rotation_euler = where, (1.1, 0.0, 0.8)
    seen = []
    real = fbx_export.export_fbx

    def recorded(path, frames, options=None):
        seen.append(options)
        real(path, frames, options)

    monkeypatch.setattr(fbx_export, "export_fbx", recorded)
    monkeypatch.setattr(fbx_accumulated, "export_fbx", recorded)
    axes = fbx_axes(preset)
    for op in ("export_fbx", "export_fbx_accumulated"):
        out = tmp_path / f"{op}-{preset}.fbx"
        assert getattr(bpy.ops.hierarchy_inspector, op)(filepath=str(out), preset=preset) == {"FINISHED"}
        assert "read back exact" in _reports(capfd)[-1], op
        assert {k: seen[-1][k] for k in ("axis_forward", "axis_up", "apply_scale_options")} == axes.fbx()
    with pytest.raises(RuntimeError, match="must be different axes"):
        bpy.ops.hierarchy_inspector.export_fbx(filepath=str(tmp_path / "bad.fbx"), axis_forward="Z", axis_up="-Z")


def test_exports_run_from_pose_mode_and_leave_it_there(rig_scene, tmp_path):
    pytest.importorskip("ufbx")
    rig = rig_scene.objects["Rig"]
    rig.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    rig.data.bones.active = rig.data.bones["Child FULL"]
    for op, name in (
        (bpy.ops.hierarchy_inspector.export_gltf, "pose.glb"),
        (bpy.ops.hierarchy_inspector.export_fbx, "pose.fbx"),
        (bpy.ops.hierarchy_inspector.export_fbx_accumulated, "pose_acc.fbx"),
    ):
        assert op.poll()
        assert op(filepath=str(tmp_path / name), frames="CURRENT") == {"FINISHED"}
        assert bpy.context.mode == "POSE" and rig.data.bones.active.name == "Child FULL"
    bpy.ops.object.mode_set(mode="EDIT")
    assert not bpy.ops.hierarchy_inspector.export_gltf.poll()


def test_export_line_says_what_the_file_holds():
    assert frames_text([1, 2, 3]) == "frames 1..3 (3)" and frames_text([4]) == "frame 4 only"
    assert frames_text([1, 3, 5]) == "frames 1..5 step 2 (3)"
    exact, line = export_line("a.glb", [1, 2], ["3 nodes"], 2e-7, 1e-5)
    assert exact and line == "Wrote 'a.glb': frames 1..2 (2), 3 nodes; read back exact (2.0e-07)"
    exact, line = export_line("a.fbx", [7], [], 3e-4, 1e-5, ["1 not corrected"])
    assert not exact and "NOT exact (3.0e-04, over 1e-05); 1 not corrected" in line
    assert export_line("a.fbx", [7], [], None, 1e-5)[1].endswith("not read back (its reader is not installed)")


def test_rigify_gltf_holds_the_rig_animated_without_metarig_or_widgets(rigger_blend, addon, tmp_path, capfd):
    """Before: 0 animations, 1,105 nodes, two skins (the rig's 706 joints and the
    metarig's 159). Now one animation over the 40 frames, one skin, no widget node."""
    bpy.ops.wm.open_mainfile(filepath=rigger_blend)
    scene = bpy.context.scene
    assert len([o for o in scene.objects if o.name.startswith("WGT-")]) > 200
    rig = scene.objects["rig"]
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    out = tmp_path / "rig.glb"
    assert bpy.ops.hierarchy_inspector.export_gltf(filepath=str(out)) == {"FINISHED"}
    headline = _reports(capfd)[-1]
    assert headline.startswith("Wrote 'rig.glb': frames 1..40 (40)") and "read back exact" in headline, headline
    gltf = Gltf.load(str(out)).doc
    assert [len(s["joints"]) for s in gltf["skins"]] == [706]
    assert not [n for n in gltf["nodes"] if n.get("name", "").startswith(("WGT-", "metarig"))]
    assert len(gltf["animations"]) == 1 and bpy.context.mode == "POSE"
    # Rigify's drivers alone do not make the scene animate: without its keys the
    # exports write the current frame.
    assert scene_animates(scene) and len(rig.animation_data.drivers) > 0
    rig.animation_data.action = None
    assert not scene_animates(scene)


def test_insert_helpers_ends_with_its_headline_per_engine_path(rig_scene, capfd):
    """Before: the bones' warning came last and replaced the success line in the status
    bar. Now the details come first and the last report is the headline, short enough
    for the status bar, one entry per engine path."""
    rig_scene.frame_set(13)
    assert bpy.ops.hierarchy_inspector.insert_helpers("EXEC_DEFAULT", True) == {"FINISHED"}
    reports = _reports(capfd)
    headline = reports[-1]
    assert headline.startswith("Inserted helpers above 1 object; nodes off: "), headline
    assert "glTF, Unity" in headline and "Unreal FBX" in headline and len(headline) < 260
    assert any("bone(s) keep their local shear" in line for line in reports[:-1])
