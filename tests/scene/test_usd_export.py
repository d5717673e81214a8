"""Exact USD export in real Blender: Blender's USD exporter, corrected and read back by
usd-core in its own process, against Blender frame by frame (objects, the Inherit Scale
rig, a generated Rigify rig with squash and stretch and a skinned mesh). Blender's own
file (``fix=False``) is measured by the same reader: the tests show what it loses."""

from __future__ import annotations

import re

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.exports.usd.check import read_usd, scene_request, usd_available  # noqa: E402
from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402
from hierarchy_inspector.addon.scene.exports import usd_export  # noqa: E402
from hierarchy_inspector.addon.scene.frames import read_frames  # noqa: E402
from hierarchy_inspector.addon.scene.timeline import animated as animated_scenes  # noqa: E402

pytestmark = [
    pytest.mark.skipif(bool(usd_export.usd_exporter_missing()), reason=usd_export.usd_exporter_missing() or "-"),
    pytest.mark.skipif(not usd_available(), reason="usd-core is not installed"),
]


def _state(scene):
    objs = {o.name: tuple(round(v, 6) for row in o.matrix_world for v in row) for o in bpy.data.objects}
    return objs, sorted(bpy.data.actions.keys()), scene.frame_current, scene.frame_start, scene.frame_end


@pytest.fixture
def rig_scene(empty_scene):
    export_scenes.sheared_objects(empty_scene)
    export_scenes.inherit_scale_rig(empty_scene)
    empty_scene.frame_set(10)
    return empty_scene


@pytest.mark.parametrize("frames", [None, FrameRange(1, 25, 1), FrameRange(3, 24, 4)])
def test_objects_and_inherit_scale_rig_are_exact_and_the_scene_is_unchanged(rig_scene, tmp_path, frames):
    scene = rig_scene
    before = _state(scene)
    out = tmp_path / "out.usda"
    result = usd_export.write_usd(scene, str(out), frames)
    assert _state(scene) == before
    e = result.errors
    assert result.matrix_ops == ["Skewed"]
    assert e.objects.relative < 1e-5 and e.objects.checked == 4  # Stretch, Skewed, Tip, Rig
    assert e.joints.checked == 7 and e.joints.relative < 1e-3
    assert e.points["Skin"].relative < 1e-3 and e.over() == []
    expected_frames = frames.frames() if frames else [10]
    assert result.frames == expected_frames
    text = out.read_text()
    if frames is None:  # a still skeleton: Blender's restTransforms hold the pose as matrices
        assert result.helpers == [] and e.joints.relative < 1e-6
    else:
        assert result.helpers == [
            f"Rig > Child {m}" for m in ("FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")
        ]
        # joints keep Blender's names; a helper's name is its own, put in the path above its joint
        assert '"Root/Child_FULL"' in text and '"Root/Child_ALIGNED_shear_helper/Child_ALIGNED"' in text
        samples = re.search(r"rotations\.timeSamples = \{(.*?)\}", text, re.S).group(1)
        assert [int(float(f)) for f in re.findall(r"^\s*([0-9.]+):", samples, re.M)] == expected_frames
    assert 'def Xform "Skewed"' in text and "xformOp:transform" in text


def test_blender_alone_loses_the_shear_the_correction_keeps(rig_scene, tmp_path):
    frames = FrameRange(1, 25, 1)
    plain = usd_export.write_usd(rig_scene, str(tmp_path / "plain.usdc"), frames, fix=False).errors
    ours = usd_export.write_usd(rig_scene, str(tmp_path / "ours.usdc"), frames).errors
    assert plain.objects.relative > 0.1 and plain.joints.relative > 0.1 and plain.points["Skin"].relative > 0.05
    assert ours.objects.relative < 1e-5 and ours.joints.relative < 1e-3 and ours.points["Skin"].relative < 1e-3
    # Independently of write_usd's check: Blender read again, the file read by usd-core,
    # each joint compared in a loop.
    series = read_frames(rig_scene, frames.frames())
    request = scene_request(series, {"Skin"})
    read = read_usd(str(tmp_path / "ours.usdc"), request)
    bones, worlds = read.joints["Rig"]
    names = [k[1] for k in series.keys if k[0] == "Rig" and k[1]]
    scale = max(1.0, np.abs(series.world).max())
    for c, b in enumerate(bones):
        column = series.keys.index(("Rig", names[b]))
        for t in range(len(series.frames)):
            assert np.abs(worlds[t, c] - series.world[t, column]).max() / scale < 1e-3


@pytest.fixture(scope="module")
def rigify_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    rig = animated_scenes.stretchy_rigify(scene, frames=16, period=8)
    export_scenes.skin_boxes(scene, rig)
    return scene


@pytest.mark.parametrize("deform_only", [False, True])
def test_rigify_squash_and_stretch(rigify_scene, tmp_path, deform_only):
    scene = bpy.context.scene
    frames = FrameRange(1, 16, 1)
    plain = usd_export.write_usd(scene, str(tmp_path / "p.usdc"), frames, fix=False, only_deform_bones=deform_only)
    ours = usd_export.write_usd(scene, str(tmp_path / "o.usdc"), frames, only_deform_bones=deform_only)
    assert plain.errors.joints.relative > 0.05
    assert ours.errors.joints.relative < 1e-3 and len(ours.helpers) > 20
    body = ours.errors.points["Body"]
    assert body.relative < 1e-3  # the vertices a skeleton can carry
    assert ours.bbone == ["Body"] and body.bbone_vertex >= 0  # B-Bones named, with their worst point
    if deform_only:  # Blender's joints whose parent bone is left out: placed under the nearest exported one
        assert len(ours.reparented) > 10 and plain.errors.joints.relative > 1.0
        assert all(label.startswith("rig > DEF-") for label in ours.reparented)
    else:
        assert ours.reparented == []


def test_usd_export_operator_and_menu(addon, tmp_path):
    """The panel's and File > Export's USD: the scene's range, corrected and read back;
    the scene as before; a bad path refused; the menu entry registered; the only deform
    bones and xform-op options reach the exporter."""
    scene = bpy.context.scene
    export_scenes.sheared_objects(scene)
    export_scenes.inherit_scale_rig(scene)
    scene.frame_set(10)
    before = _state(scene)
    out = tmp_path / "scene.usda"
    assert bpy.ops.hierarchy_inspector.export_usd(filepath=str(out), xform_op_mode="TOS") == {"FINISHED"}
    assert _state(scene) == before
    text = out.read_text()
    assert "xformOp:orient" in text and "Child_ALIGNED_shear_helper" in text
    series = read_frames(scene, list(range(scene.frame_start, scene.frame_end + 1)))
    read = read_usd(str(out), scene_request(series, {"Skin"}))
    index = {n: k for k, n in enumerate(read.object_names)}
    for name in ("Skewed", "Tip"):
        column = series.keys.index((name, ""))
        err = np.abs(read.object_world[:, index[name]] - series.world[:, column]).max()
        assert err < 1e-5 * max(1.0, np.abs(series.world).max())
    with pytest.raises(RuntimeError, match="does not exist"):
        bpy.ops.hierarchy_inspector.export_usd(filepath=str(tmp_path / "x" / "y.usda"))
    draws = [getattr(f, "__name__", "") for f in bpy.types.TOPBAR_MT_file_export._dyn_ui_initialize()]
    assert "draw_export_usd_menu" in draws
