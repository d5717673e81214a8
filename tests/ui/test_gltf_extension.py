""" "Keep shear exactly" in Blender's own glTF export (File > Export > glTF 2.0): the
add-on enabled the way Blender enables add-ons, the exporter run with the user's
settings, the file read back as an engine would (pygltflib) against Blender."""

from __future__ import annotations

import importlib
import json
import os
import warnings

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from gltf_reader import EngineView  # noqa: E402
from hierarchy_inspector.addon.scene import gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402


@pytest.fixture
def enabled(empty_scene):
    """The add-on enabled through addon_utils (the exporter only asks enabled add-ons)."""
    import addon_utils

    name = os.environ.get("HIERARCHY_INSPECTOR_MODULE", "hierarchy_inspector")
    addon_utils.enable(name, default_set=True)
    try:
        yield importlib.import_module(name)
    finally:
        addon_utils.disable(name, default_set=True)


@pytest.fixture
def scene(enabled):
    scene = bpy.context.scene
    export_scenes.sheared_objects(scene)
    export_scenes.inherit_scale_rig(scene)
    scene.frame_set(10)
    return scene


def _error(scene, view, frame, y_up=True, bones=True) -> float:
    c = gltf_export.gltf_conversion(y_up)
    fps = scene.render.fps / scene.render.fps_base
    worlds = view.worlds(frame / fps)
    names = view.names()
    joints = {j for skin in view.gltf.skins or [] for j in skin.joints}
    scene.frame_set(frame)
    worst = 0.0
    for obj in scene.objects:
        if obj.name == "Skin":  # its vertices follow the joints
            continue
        j = names.index(obj.name)
        worst = max(worst, float(np.abs(worlds[j] - c @ np.array(obj.matrix_world) @ np.linalg.inv(c)).max()))
        if obj.type == "ARMATURE" and bones:
            for pb in obj.pose.bones:
                j = next(k for k in joints if names[k] == pb.name)
                blender = np.array(obj.matrix_world) @ np.array(pb.matrix)
                worst = max(worst, float(np.abs(worlds[j] - c @ blender).max()))
    return worst / 3.0  # largest world entry of these scenes is about 3


def test_the_extension_is_offered_to_the_exporter(enabled):
    assert hasattr(enabled, "glTF2ExportUserExtension") and callable(enabled.draw_export)
    assert bpy.context.scene.hierarchy_inspector_gltf.keep_shear is False


def test_option_off_leaves_blenders_export_as_it_was(scene, tmp_path):
    out = tmp_path / "plain.glb"
    bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode="SCENE"
    )
    view = EngineView(out)
    assert not any(n.endswith("(shear helper)") for n in view.names())
    assert _error(scene, view, 13) > 1e-2


@pytest.mark.parametrize(
    "settings",
    [
        {"export_animations": True, "export_animation_mode": "SCENE"},
        {"export_animations": True, "export_animation_mode": "ACTIVE_ACTIONS", "export_yup": False},
        {"export_animations": True, "export_animation_mode": "SCENE", "export_frame_step": 4},
    ],
)
def test_animated_export_from_the_dialog_is_exact_at_every_frame(scene, tmp_path, settings):
    scene.hierarchy_inspector_gltf.keep_shear = True
    before = sorted(bpy.data.objects.keys())
    out = tmp_path / "exact.glb"
    assert bpy.ops.export_scene.gltf(filepath=str(out), export_format="GLB", **settings) == {"FINISHED"}
    assert sorted(bpy.data.objects.keys()) == before and scene.frame_current == 10
    view = EngineView(out)
    assert sum(n.endswith("(shear helper)") for n in view.names()) == 6
    y_up = settings.get("export_yup", True)
    for frame in range(1, 26, settings.get("export_frame_step", 1)):
        assert _error(scene, view, frame, y_up) < 1e-5, frame


def test_static_export_respects_current_frame_and_rest_pose(scene, tmp_path):
    scene.hierarchy_inspector_gltf.keep_shear = True
    out = tmp_path / "static.glb"
    bpy.ops.export_scene.gltf(
        filepath=str(out),
        export_format="GLB",
        export_animations=False,
        export_current_frame=True,
        export_rest_position_armature=False,
    )
    assert _error(scene, EngineView(out), 10) < 1e-5
    # The exporter's defaults: frame 0 for objects, joints in their rest position.
    bpy.ops.export_scene.gltf(filepath=str(out), export_format="GLB", export_animations=False)
    assert _error(scene, EngineView(out), 0, bones=False) < 1e-5


@pytest.mark.parametrize("export_format", ["GLTF_SEPARATE", "GLTF_EMBEDDED"])
def test_gltf_formats_are_corrected_in_place(scene, tmp_path, export_format):
    """.gltf with a .bin beside it, or its buffer embedded as base64: the same
    correction, written back in the same format (the .bin keeps its name)."""
    scene.hierarchy_inspector_gltf.keep_shear = True
    out = tmp_path / "exact.gltf"
    addon = bpy.context.preferences.addons.get("io_scene_gltf2")
    prefs = addon.preferences if addon is not None else None
    allowed = getattr(prefs, "allow_embedded_format", None)
    if export_format == "GLTF_EMBEDDED" and allowed is not None:
        prefs.allow_embedded_format = True  # Blender 4.2+ offers it only when asked for in its preferences
    try:
        assert bpy.ops.export_scene.gltf(
            filepath=str(out), export_format=export_format, export_animations=True, export_animation_mode="SCENE"
        ) == {"FINISHED"}
    finally:
        if allowed is not None:
            prefs.allow_embedded_format = allowed
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == (["exact.bin", "exact.gltf"] if export_format == "GLTF_SEPARATE" else ["exact.gltf"])
    uri = json.loads(out.read_text())["buffers"][0]["uri"]
    assert uri == "exact.bin" if export_format == "GLTF_SEPARATE" else uri.startswith("data:")
    with warnings.catch_warnings():  # pygltflib's note that its in-memory copy no longer uses the .bin
        warnings.simplefilter("ignore", UserWarning)
        view = EngineView(out)
    assert sum(n.endswith("(shear helper)") for n in view.names()) == 6
    for frame in range(1, 26, 3):
        assert _error(scene, view, frame) < 1e-5, frame


def test_a_failed_check_leaves_the_gltf_and_its_bin_as_blender_wrote_them(scene, tmp_path, monkeypatch):
    from hierarchy_inspector.addon.scene.exports import gltf_hook

    out = tmp_path / "plain.gltf"
    bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLTF_SEPARATE", export_animations=True, export_animation_mode="SCENE"
    )
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(gltf_hook, "animated_error", broken)
    settings = gltf_hook.HookSettings(str(out), animations=True, animation_mode="SCENE")
    with pytest.raises(OSError):
        gltf_hook.keep_shear_in_file(scene, settings)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_bug_in_the_correction_never_aborts_the_users_export(scene, enabled, tmp_path, monkeypatch, capsys):
    """An unexpected error of ours (not an InspectorError) leaves Blender's own file and
    finishes the export with a warning naming it."""
    extension = importlib.import_module(enabled.__name__ + ".addon.ui.gltf_extension")

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(extension, "keep_shear_in_file", broken)
    scene.hierarchy_inspector_gltf.keep_shear = True
    out = tmp_path / "ours.glb"
    assert bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode="SCENE"
    ) == {"FINISHED"}
    view = EngineView(out)
    assert not any(n.endswith("(shear helper)") for n in view.names())
    assert _error(scene, view, 13) > 1e-2  # Blender's file, as its exporter wrote it
    assert "RuntimeError: a bug" in capsys.readouterr().err
