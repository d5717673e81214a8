"""File > Export > glTF 2.0 with "Keep shear exactly" in the exporter's per-animation
modes (Actions, NLA Tracks): every glTF animation, played alone the way an engine plays
it (pygltflib, this test's own composition), against Blender evaluated here with that
action (or track) alone, every other object held on the exporter's frame (frame 0, its
default); the user's scene unchanged by the export."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from gltf_reader import EngineView  # noqa: E402
from hierarchy_inspector.addon.scene import gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports import gltf_hook  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402
from hierarchy_inspector.addon.ui import gltf_extension  # noqa: E402
from mathutils import Matrix  # noqa: E402

#: What each glTF animation plays, per mode: animation -> {object: action or NLA track}.
PLAYS = {
    "ACTIONS": {
        "Grow": {"Stretch": "Grow"},
        "Shrink": {"Stretch": "Shrink"},
        "Spin": {"Skewed": "Spin"},
        "Bend": {"Rig": "Bend"},
        "Twist": {"Rig": "Twist"},
    },
    "NLA_TRACKS": {
        "Grow": {"Stretch": "Grow", "Skewed": "Grow"},
        "Shrink": {"Stretch": "Shrink"},
        "Bend": {"Rig": "Bend"},
        "Twist": {"Rig": "Twist"},
    },
}


NAME = os.environ.get("HIERARCHY_INSPECTOR_MODULE", "hierarchy_inspector")


def _fresh_scene():
    """An empty session with the add-on enabled and the two scenes' objects, on frame 10."""
    import addon_utils

    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not addon_utils.check(NAME)[1]:
        addon_utils.enable(NAME, default_set=True)
    importlib.import_module(NAME)
    scene = bpy.context.scene
    export_scenes.two_takes(scene)
    export_scenes.rig_two_takes(scene)
    scene.frame_set(10)
    return scene


@pytest.fixture
def scene(empty_scene):
    import addon_utils

    try:
        yield _fresh_scene()
    finally:
        addon_utils.disable(NAME, default_set=True)


def _state(scene) -> list:
    """Everything an export could leave changed: assignments, NLA flags, transforms,
    custom properties, frame."""
    out: list = [scene.frame_current]
    for obj in sorted(scene.objects, key=lambda o: o.name):
        out.append(sorted((k, round(float(v), 6)) for k, v in obj.items() if isinstance(v, (int, float))))
        ad = obj.animation_data
        if ad is not None:
            out.append((obj.name, ad.action and ad.action.name, ad.use_nla))
            out += [(t.name, t.mute, t.is_solo) for t in ad.nla_tracks]
        items = [obj] + (list(obj.pose.bones) if obj.pose else [])
        for item in items:
            out.append(
                tuple(
                    round(v, 6) for v in (*item.location, *item.rotation_euler, *item.rotation_quaternion, *item.scale)
                )
            )
    return out


def _frames(scene, mode: str, plays: dict) -> list[int]:
    frames: set[int] = set()
    for obj_name, what in plays.items():
        obj = scene.objects[obj_name]
        if mode == "ACTIONS":
            start, end = bpy.data.actions[what].frame_range
            frames |= set(range(int(start), int(end) + 1))
        else:
            for strip in obj.animation_data.nla_tracks[what].strips:
                frames |= set(range(int(strip.frame_start), int(strip.frame_end) + 1))
    return sorted(frames)


def _assignments(scene) -> list:
    """Every animated object's assignments and the values its actions may leave behind:
    its and its pose bones' matrix_basis, its custom properties."""
    return [
        (
            obj,
            obj.animation_data.action,
            obj.animation_data.use_nla,
            [t.mute for t in obj.animation_data.nla_tracks],
            obj.matrix_basis.copy(),
            [pb.matrix_basis.copy() for pb in obj.pose.bones] if obj.pose else [],
            {k: v for k, v in obj.items() if isinstance(v, (int, float))},
        )
        for obj in scene.objects
        if obj.animation_data is not None
    ]


def _blender_alone(scene, mode: str, plays: dict, frames: list[int], original: list) -> list[dict]:
    """Blender's world matrices at ``frames`` with ``plays`` alone (see the module
    docstring): objects by name, bones as 'Armature > Bone'. ``original``: the scene's
    assignments and values, put back first (an object with its NLA off keeps what the
    previous take's action left on properties its active action does not key)."""
    for obj, action, use_nla, mutes, basis, bones, props in original:
        obj.animation_data.action, obj.animation_data.use_nla = action, use_nla
        for track, mute in zip(obj.animation_data.nla_tracks, mutes, strict=True):
            track.mute = mute
        obj.matrix_basis = basis
        for pb, matrix in zip(obj.pose.bones if obj.pose else (), bones, strict=True):
            pb.matrix_basis = matrix
        for key, value in props.items():
            obj[key] = value
    scene.frame_set(0)  # the exporter's static frame: objects that do not play stay here
    for obj in scene.objects:
        ad = obj.animation_data
        if ad is None:
            continue
        if obj.name not in plays:
            ad.use_nla, ad.action = False, None
        elif mode == "ACTIONS":
            ad.use_nla = False
            wanted = bpy.data.actions[plays[obj.name]]
            if ad.action != wanted:  # the exporter resets pose bones when it switches actions
                ad.action = None
                for pb in obj.pose.bones if obj.pose else ():
                    pb.matrix_basis = Matrix()
                ad.action = wanted
        else:
            ad.action, ad.use_nla = None, True
            for track in ad.nla_tracks:
                track.mute = track.name != plays[obj.name]
    out = []
    for frame in frames:
        scene.frame_set(frame)
        worlds = {}
        for obj in scene.objects:
            worlds[obj.name] = np.array(obj.matrix_world)
            if obj.type == "ARMATURE" and obj.name in plays:  # joints of other takes: in rest position
                for pb in obj.pose.bones:
                    worlds[f"{obj.name} > {pb.name}"] = np.array(obj.matrix_world) @ np.array(pb.matrix)
        out.append(worlds)
    return out


def _take_error(view: EngineView, blender: list[dict], frames: list[int], fps: float) -> float:
    c = gltf_export.gltf_conversion(True)
    names = view.names()
    joints = {j for skin in view.gltf.skins or [] for j in skin.joints}
    worst, scale = 0.0, 1.0
    for frame, worlds in zip(frames, blender, strict=True):
        got = view.worlds(frame / fps)
        for name, world in worlds.items():
            if name == "Skin":  # its vertices follow the joints
                continue
            if " > " in name:
                j = next(k for k in joints if names[k] == name.split(" > ")[1])
                expected = c @ world
            else:
                j = names.index(name)
                expected = c @ world @ np.linalg.inv(c)
            worst = max(worst, float(np.abs(got[j] - expected).max()))
            scale = max(scale, float(np.abs(world).max()))
    return worst / scale


#: Blender 4.3's exporter in Actions mode names an action held by an NLA strip after its
#: track and merges animations of the same name: 'Skewed''s 'Spin' (on its track 'Grow')
#: plays in 'Grow' with 'Stretch''s 'Grow' (4.4+ merges by action name by default).
BY_TRACK = {
    "Grow": {"Stretch": "Grow", "Skewed": "Spin"},
    "Shrink": {"Stretch": "Shrink"},
    "Bend": {"Rig": "Bend"},
    "Twist": {"Rig": "Twist"},
}


def _plays(mode: str, names: list[str]) -> dict:
    return BY_TRACK if mode == "ACTIONS" and "Spin" not in names else PLAYS[mode]


def _errors(scene, out, mode: str) -> dict[str, float]:
    fps = scene.render.fps / scene.render.fps_base
    names = EngineView(out).animation_names()
    takes = _plays(mode, names)
    assert sorted(names) == sorted(takes)
    errors = {}
    original = _assignments(scene)
    for name, plays in takes.items():
        frames = _frames(scene, mode, plays)
        view = EngineView(out, animation=names.index(name))
        errors[name] = _take_error(view, _blender_alone(scene, mode, plays, frames, original), frames, fps)
    return errors


@pytest.mark.parametrize("mode", ["ACTIONS", "NLA_TRACKS"])
def test_each_animation_is_exact_alone_and_the_scene_is_unchanged(scene, tmp_path, mode):
    """Unchanged: as Blender's own export leaves it (in NLA Tracks mode Blender's
    exporter itself moves 'Skewed', a child with a parent inverse: its location and
    scale are rewritten from its world matrix; Actions mode leaves the scene as it was).
    Exact against the scene as it was exported (what Blender's exporter wrote its
    static pose and samples from), not against the one it moved."""
    before = _state(scene)
    bpy.ops.export_scene.gltf(
        filepath=str(tmp_path / "plain.glb"), export_format="GLB", export_animations=True, export_animation_mode=mode
    )
    by_blender = _state(scene)
    assert (by_blender == before) == (mode == "ACTIONS")
    scene = _fresh_scene()
    scene.hierarchy_inspector_gltf.keep_shear = True
    assert _state(scene) == before
    out = tmp_path / "takes.glb"
    assert bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode=mode
    ) == {"FINISHED"}
    assert _state(scene) == by_blender
    assert sum(n.endswith("(shear helper)") for n in EngineView(out).names()) == 6
    errors = _errors(_fresh_scene(), out, mode)  # Blender as the scene was exported, not as the export left it
    assert max(errors.values()) < 1e-5, errors


def test_properties_only_another_action_keys_are_put_back(tmp_path, monkeypatch):
    """'Stretch' with its NLA off: nothing but the action playing drives its custom
    property 'squash' and its rotation, which only 'Shrink' keys; evaluating the
    animations one by one must leave them where Blender's own export left them, and
    the file is exact against the scene as it was when the export began (the file's
    static pose: Blender's exporter leaves Shrink's last values behind), by the hook's
    own check and by this test's."""
    results = []

    def recorded(*args, **kwargs):
        results.append(gltf_hook.keep_shear_in_file(*args, **kwargs))
        return results[-1]

    def setup():
        scene = _fresh_scene()
        stretch = scene.objects["Stretch"]
        stretch.animation_data.use_nla = False
        stretch["squash"] = 0.5
        scene.frame_set(10)
        return scene

    scene = setup()
    assert scene.objects["Stretch"]["squash"] == 0.5
    before = _state(scene)
    bpy.ops.export_scene.gltf(
        filepath=str(tmp_path / "plain.glb"),
        export_format="GLB",
        export_animations=True,
        export_animation_mode="ACTIONS",
    )
    by_blender = _state(scene)
    assert by_blender != before  # Blender's exporter itself leaves Shrink's last values on 'Stretch'
    scene = setup()
    scene.hierarchy_inspector_gltf.keep_shear = True
    monkeypatch.setattr(gltf_extension, "keep_shear_in_file", recorded)
    out = tmp_path / "takes.glb"
    assert bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode="ACTIONS"
    ) == {"FINISHED"}
    assert "Shrink" in EngineView(out).animation_names()
    assert _state(scene) == by_blender
    (result,) = results
    assert result.corrected and result.error.relative < 1e-5, result.message()
    assert sorted(result.animations) == sorted(EngineView(out).animation_names())  # Blender 4.3 merges by track
    errors = _errors(setup(), out, "ACTIONS")  # Blender as the scene was when exported
    assert max(errors.values()) < 1e-5, errors


@pytest.mark.parametrize("mode", ["ACTIONS", "NLA_TRACKS"])
def test_blenders_own_export_of_the_same_animations_is_off(scene, tmp_path, mode):
    """The comparison above can fail: without the option the sheared nodes drop their shear."""
    out = tmp_path / "plain.glb"
    bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode=mode
    )
    errors = _errors(scene, out, mode)
    assert min(errors.values()) > 1e-2, errors


def test_the_hook_reports_each_animation_by_name(scene, tmp_path):
    out = tmp_path / "takes.glb"
    bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode="ACTIONS"
    )
    settings = gltf_hook.HookSettings(str(out), animations=True, animation_mode="ACTIONS", static_frame=0)
    takes = _plays("ACTIONS", EngineView(out).animation_names())
    result = gltf_hook.keep_shear_in_file(scene, settings)
    assert result.corrected and sorted(result.animations) == sorted(takes)
    assert all(e.relative < 1e-5 for e in result.animations.values())
    assert all(f"'{name}'" in result.message() for name in takes)


def test_broadcast_is_left_as_blender_wrote_it_and_says_so(scene, tmp_path):
    scene.hierarchy_inspector_gltf.keep_shear = True
    out = tmp_path / "broadcast.glb"
    bpy.ops.export_scene.gltf(
        filepath=str(out), export_format="GLB", export_animations=True, export_animation_mode="BROADCAST"
    )
    assert not any(n.endswith("(shear helper)") for n in EngineView(out).names())
    settings = gltf_hook.HookSettings(str(out), animations=True, animation_mode="BROADCAST")
    result = gltf_hook.keep_shear_in_file(scene, settings)
    assert not result.corrected and "BROADCAST" in result.message()
