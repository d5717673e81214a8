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


def test_sheared_bones_are_listed_and_the_check_sees_them(empty_scene, tmp_path):
    export_scenes.inherit_scale_rig(empty_scene)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "rig.fbx"), FrameRange(1, 25, 2))
    listed = {label for label, _why in result.not_corrected}
    assert "Rig > Child ALIGNED" in listed and "Rig > Child FULL" not in listed
    assert result.error.per_node["Rig > Child FULL"] < 1e-5  # joints without local shear are exact
    assert result.error.relative > 1e-2  # the listed ones are not, and the check says so
