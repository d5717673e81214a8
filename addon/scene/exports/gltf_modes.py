"""Blender evaluated the way the glTF exporter's animation modes export it: one glTF
animation at a time, with only that animation's actions (Actions, Active Actions) or
NLA tracks (NLA Tracks) playing, every other object held in the pose the exporter
wrote as the file's static pose (the frame it was on).

The user's scene is used and put back whole: every object's active action (and slot),
NLA use, track mute and solo flags, the transform properties of every animated object
and of its pose bones, and every other property any of its actions keys (custom
properties such as a rig's IK/FK switch, constraint influences, delta transforms) are
saved before and restored after (also when reading fails), then the scene is set back
on its frame.

What each mode means here, as Blender's exporter (io_scene_gltf2) evaluates it:

- ``ACTIONS``: a glTF animation per action, named after it (or after the NLA track
  holding it, where the exporter merges by track). Each object the animation animates
  gets that action as its active action with its NLA off; an armature whose action
  changes has its pose bones reset to rest first ("Reset pose bones between actions",
  the exporter's default).
- ``ACTIVE_ACTIONS``: one animation: every animated object's active action, NLA off.
- ``NLA_TRACKS``: a glTF animation per track, named after it: the object's active
  action off, NLA on, every track muted except that one and the tracks above it that
  blend into it (tracks holding a non-Replace strip: the exporter groups them); an
  armature's pose bones reset to rest first, as for Actions.
- ``BROADCAST`` (every action on every object) and ``SCENE`` are not handled here.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

import numpy as np

from ...model.errors import ExportError
from ...model.exports.gltf_animation import animated_nodes, key_times
from ...model.exports.gltf_check import node_index
from ...model.exports.gltf_file import Gltf
from ...model.exports.gltf_takes import Take
from ..edits.editing import action_fcurves
from ..frames import read_frames

PER_ANIMATION = ("ACTIONS", "ACTIVE_ACTIONS", "NLA_TRACKS")
_PROPS = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4), ("scale", 3))


def _read_props(items) -> dict[str, np.ndarray]:
    out = {}
    for prop, width in _PROPS:
        values = np.empty(len(items) * width, dtype=np.float32)
        items.foreach_get(prop, values)
        out[prop] = values
    return out


def _write_props(items, values: dict[str, np.ndarray]) -> None:
    for prop, _width in _PROPS:
        items.foreach_set(prop, values[prop])


def _actions(obj) -> list:
    """Every action ``obj`` can play: its active one and its NLA strips'."""
    ad = obj.animation_data
    found = [ad.action] + [strip.action for track in ad.nla_tracks for strip in track.strips]
    return list({id(a): a for a in found if a is not None}.values())


def _owner_and_name(obj, path: str):
    """``(owner, name, is_item)`` of an F-curve's ``path`` on ``obj``: the struct holding
    the property and its name (``is_item``: a custom property, ``owner[name]``)."""
    if path.endswith("]") and path.rfind("[") > path.rfind("."):
        k = path.rfind("[")
        key = ast.literal_eval(path[k + 1 : -1])
        return (obj.path_resolve(path[:k]) if k else obj), key, True
    k = path.rfind(".")
    return (obj.path_resolve(path[:k]) if k > 0 else obj), path[k + 1 :], False


def _keyed_values(obj) -> list[tuple]:
    """``(owner, name, is_item, index, value)`` of every property of ``obj`` that one of
    its actions keys (paths Blender cannot resolve, as Blender's evaluation ignores them,
    are skipped)."""
    out = []
    seen = set()
    for action in _actions(obj):
        for curve in action_fcurves(action):
            key = (curve.data_path, curve.array_index)
            if key in seen:
                continue
            seen.add(key)
            try:
                owner, name, is_item = _owner_and_name(obj, curve.data_path)
                value = owner[name] if is_item else getattr(owner, name)
                index = curve.array_index if hasattr(value, "__len__") and not isinstance(value, str) else None
                out.append((owner, name, is_item, index, value[index] if index is not None else value))
            except (AttributeError, KeyError, IndexError, TypeError, ValueError, SyntaxError):
                continue
    return out


def _write_keyed(values: list[tuple]) -> None:
    for owner, name, is_item, index, value in values:
        try:
            if index is not None:
                (owner[name] if is_item else getattr(owner, name))[index] = value
            elif is_item:
                owner[name] = value
            else:
                setattr(owner, name, value)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            continue  # a property that took no value: nothing of the user's to put back


class AnimationState:
    """Every animated object's assignments and transform properties (and its pose
    bones'), saved; :meth:`restore` puts them back and the scene on its frame."""

    def __init__(self, scene):
        self.scene = scene
        self.frame = (scene.frame_current, scene.frame_subframe)
        self.objects = [obj for obj in scene.objects if obj.animation_data is not None]
        self.saved = []
        for obj in self.objects:
            ad = obj.animation_data
            tracks = [(t.mute, t.is_solo) for t in ad.nla_tracks]
            slot = getattr(ad, "action_slot", None)
            bones = _read_props(obj.pose.bones) if obj.pose is not None else None
            own = {prop: np.array(getattr(obj, prop), dtype=np.float64) for prop, _w in _PROPS}
            self.saved.append((ad.action, slot, ad.use_nla, tracks, own, bones))
        self.keyed = [_keyed_values(obj) for obj in self.objects]

    def restore(self) -> None:
        for obj, (action, slot, use_nla, tracks, _own, _bones) in zip(self.objects, self.saved, strict=True):
            ad = obj.animation_data
            for track in ad.nla_tracks:
                track.is_solo = False
            for track, (mute, _solo) in zip(ad.nla_tracks, tracks, strict=True):
                track.mute = mute
            for track, (_mute, solo) in zip(ad.nla_tracks, tracks, strict=True):
                if solo:
                    track.is_solo = True
            ad.use_nla = use_nla
            ad.action = action
            if slot is not None:
                ad.action_slot = slot
        self.scene.frame_set(self.frame[0], subframe=self.frame[1])
        for obj, (_a, _s, _n, _t, own, bones) in zip(self.objects, self.saved, strict=True):
            for prop, values in own.items():
                setattr(obj, prop, values)
            if bones is not None:
                _write_props(obj.pose.bones, bones)
        for keyed in self.keyed:
            _write_keyed(keyed)
        _update(self.scene)


def _update(scene) -> None:
    """Re-evaluate the scene after properties were written (the view layer's update)."""
    for layer in scene.view_layers:
        layer.update()


@contextlib.contextmanager
def saved_animation(scene) -> Iterator[AnimationState]:
    """The scene's animation state saved for the block and restored after it (first
    evaluated on its frame: an exporter may leave properties where its last action put
    them)."""
    scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    state = AnimationState(scene)
    try:
        yield state
    finally:
        state.restore()


def _assign(obj, action) -> None:
    """``action`` as ``obj``'s active action, with a slot for it (Blender 4.4+) when the
    assignment did not pick one."""
    ad = obj.animation_data
    ad.action = action
    if action is None or not hasattr(ad, "action_slot") or ad.action_slot is not None:
        return
    slots = [s for s in getattr(action, "slots", ()) if s.target_id_type in ("OBJECT", "UNSPECIFIED")]
    if len(slots) != 1:
        raise ExportError(f"action '{action.name}' has no single object slot for '{obj.name}'")
    ad.action_slot = slots[0]


def _reset_pose(obj) -> None:
    if obj.pose is None:
        return
    n = len(obj.pose.bones)
    rest = {
        "location": np.zeros(3 * n),
        "rotation_quaternion": np.tile([1.0, 0.0, 0.0, 0.0], n),
        "rotation_euler": np.zeros(3 * n),
        "rotation_axis_angle": np.tile([0.0, 0.0, 1.0, 0.0], n),
        "scale": np.ones(3 * n),
    }
    _write_props(obj.pose.bones, rest)


def _track_group(ad, name: str) -> list[int] | None:
    """Indices of the NLA track ``name`` and of the tracks above it that blend into it
    (the exporter's grouping), or None when ``name`` is no track with strips."""
    tracks = list(ad.nla_tracks)
    start = next((k for k, t in enumerate(tracks) if t.name == name and len(t.strips)), None)
    if start is None:
        return None
    group = [start]
    for k in range(start + 1, len(tracks)):
        if not len(tracks[k].strips) or all(s.blend_type == "REPLACE" for s in tracks[k].strips):
            break
        group.append(k)
    return group


def _action_of(obj, active, name: str):
    """The action of ``obj`` that the Actions mode exported as the animation ``name``:
    the one of that name among its active action and its NLA strips' actions, or the
    action of its single-strip NLA track of that name (the exporter names the
    animation after the track when it merges by track: Blender 4.3, or "Merge
    Animation" by NLA track)."""
    ad = obj.animation_data
    candidates = [active] + [strip.action for track in ad.nla_tracks for strip in track.strips]
    for action in candidates:
        if action is not None and action.name == name:
            return action
    for track in ad.nla_tracks:
        strips = [strip for strip in track.strips if strip.action is not None and not strip.mute]
        if track.name == name and len(strips) == 1:
            return strips[0].action
    raise ExportError(f"animation '{name}' is neither an action nor an NLA track of '{obj.name}'")


def _isolate(state: AnimationState, mode: str, name: str, owners: set[str], reset_pose_bones: bool) -> None:
    """Set the scene up for the animation ``name``: its objects ``owners`` play it alone,
    every other animated object is held where it is (the static pose)."""
    for obj, (action, *_rest) in zip(state.objects, state.saved, strict=True):
        ad = obj.animation_data
        if ad.use_tweak_mode:
            raise ExportError(f"'{obj.name}' is in NLA tweak mode: the exporter's animations cannot be evaluated")
        for track in ad.nla_tracks:
            track.is_solo = False
        if obj.name not in owners:
            ad.use_nla = False
            ad.action = None
            continue
        if mode == "NLA_TRACKS":
            group = _track_group(ad, name)
            if group is None:
                raise ExportError(f"animation '{name}': '{obj.name}' has no NLA track of that name")
            ad.action = None
            if reset_pose_bones:  # the exporter resets pose bones before every track too
                _reset_pose(obj)
            ad.use_nla = True
            for k, track in enumerate(ad.nla_tracks):
                track.mute = k not in group
            continue
        ad.use_nla = False
        if mode == "ACTIVE_ACTIONS":
            continue
        wanted = _action_of(obj, action, name)
        if wanted != action and reset_pose_bones:
            ad.action = None
            _reset_pose(obj)
        _assign(obj, wanted)


def evaluate_takes(
    scene,
    gltf: Gltf,
    keys: list[tuple[str, str]],
    mode: str,
    static_frame: int,
    reset_pose_bones: bool = True,
) -> list[Take]:
    """Blender's world matrices ``(T, N, 4, 4)`` (the nodes ``keys`` of
    :func:`.frames.read_frames`) for every animation of ``gltf``, each with its own
    actions or tracks alone (see the module docstring), at the animation's key times;
    the objects it does not animate held in their pose at ``static_frame`` (the
    file's static pose).
    Raises :class:`ExportError` naming the animation when it cannot be evaluated (keys
    between frames, an unknown action or track). The scene is restored."""
    if mode not in PER_ANIMATION:
        raise ExportError(f"animation mode {mode} is not evaluated per animation")
    back = {j: keys[i][0] for i, j in node_index(gltf, keys).items()}
    fps = scene.render.fps / scene.render.fps_base
    takes = []
    with saved_animation(scene) as state:
        for a, anim in enumerate(gltf.doc.get("animations", [])):
            name = str(anim.get("name", f"animation {a}"))
            times = key_times(gltf, a)
            if not len(times):
                continue
            frames_f = times * fps
            frames = np.round(frames_f).astype(np.int64)
            if np.abs(frames_f - frames).max() > 1e-3:
                raise ExportError(f"animation '{name}' has keys between frames")
            owners = {back[j] for j in animated_nodes(gltf, a) if j in back}
            scene.frame_set(static_frame)  # every property on the static pose, then held there
            _isolate(state, mode, name, owners, reset_pose_bones)
            series = read_frames(scene, [int(f) for f in frames])
            if list(series.keys) != list(keys):
                raise ExportError(f"animation '{name}': the scene's nodes changed while it was evaluated")
            takes.append(Take(a, name, times, series.world, frozenset(owners)))
            state.restore()
    return takes
