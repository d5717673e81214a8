"""Helper bones for the FBX export-ready copy: FBX joints are the armature's bones, so
a bone whose local matrix holds shear gets a temporary helper BONE above it for the
length of the export, and every edit is undone afterwards.

Blender's FBX exporter writes each bone's local TRS as ``inv(parent.matrix) @
bone.matrix`` (pose matrices in armature space, decomposed: shear dropped) with
InheritType RSrs (plain matrix composition, which ufbx and engines evaluate as
``parent @ local``). So the pose matrices of the copy are made to be

    helper.matrix = parent.matrix @ outer(t),   bone.matrix = helper.matrix @ inner(t)

with ``(outer, inner)`` the continuous exact split of Blender's original local matrix
(:func:`..model.exports.animated_split.continuous_split`): their product is the
original pose matrix at every exported frame, and each factor is one TRS.

The edit, per armature: in edit mode a helper bone with the bone's rest head, tail and
roll, parented (not connected) to the bone's parent; the bone re-parented to it, not
connected; both Inherit Scale FULL, inheriting rotation, local location. In pose: the
bone's constraints and the drivers of its transform channels muted, both bones'
channels keyed (LINEAR) at every exported frame in a temporary copy of the armature's
action, from which the bone's own transform curves are removed: ``basis =
inv(rest_rel) @ target_local`` (Blender's ``pose = parent_pose @ rest_rel @ basis`` for
Inherit Scale FULL). :func:`restore` puts back the edit bones (parents, connection,
inheritance), removes the helpers and the temporary action, and restores the action,
its slot, the constraints, drivers, rotation modes and channel values, the active
object and its mode. Over NLA tracks with no active action the temporary action is set
to Replace at full influence for the export; an armature whose active action is blended
over its tracks is not edited (:func:`editable`: the keys would be blended too). Vertex
groups keep the bone's name: skinned meshes follow it.

Shapes: ``(T, K, 4, 4)`` local matrices (armature space relative to the parent bone,
or to the armature for root bones), time first; quaternions ``(w, x, y, z)``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import bpy
import numpy as np

from .... import core
from ...model.exports.animated_split import continuous_quaternions
from ...model.exports.euler_pole import turned
from ..edits.editing import as_np, put_back, set_saved

_TRANSFORMS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
_KEYED = {"location": "translation", "rotation_quaternion": "rotation", "scale": "scale"}  #: pose channel -> TRS field
_BONE_FLAGS = ("use_connect", "inherit_scale", "use_inherit_rotation", "use_local_location", "use_relative_parent")
_LINEAR = 1  # Keyframe.interpolation 'LINEAR' (BEZT_IPO_LIN)
#: A channel whose values over the frames span at most this times max(1, its largest
#: value) is held at their middle (no curve): two single-precision epsilons, below
#: what the pose channel, the F-curve and the FBX file (all single precision) keep.
_HELD = 2.0 * float(np.finfo(np.float32).eps)


class _Bone(NamedTuple):
    name: str
    parent: str | None
    flags: tuple
    rotation_mode: str
    channels: tuple


class _Armature(NamedTuple):
    obj: object
    bones: list  #: _Bone of each sheared bone
    helpers: list  #: helper bone names, in the order of ``bones``
    had_anim: bool
    action: object  #: the user's action (or None)
    slot: object  #: the user's action slot (Blender 4.4+; else None)
    temp: list  #: the temporary action, once made
    changed: list  #: what :func:`..edits.editing.set_saved` changed (constraints, drivers, blending)


class BoneEdits(NamedTuple):
    armatures: list
    active: Any  #: the active object before (an Object, or None)
    mode: Any  #: its mode


def editable(obj, view_layer) -> str:
    """Why the armature ``obj`` cannot get helper bones ('' when it can)."""
    if obj.library is not None:
        return "linked armature: left as it is"
    if getattr(obj, "override_library", None) is not None:
        return "library override: Blender allows no edit mode on it for the helper bones (glTF is exact): left as it is"
    if obj.data.library is not None or obj.data.users > 1:
        return "armature data linked or shared: left as it is"
    if view_layer.objects.get(obj.name) is None or not obj.visible_get(view_layer=view_layer):
        return "armature hidden or not in the view layer: left as it is"
    anim = obj.animation_data
    if (
        anim is not None
        and anim.action is not None
        and _tracks_play(anim)
        and (anim.action_blend_type != "REPLACE" or anim.action_influence < 1.0)
    ):
        return (
            f"its active action is blended ({anim.action_blend_type.title()}, influence {anim.action_influence:g}) "
            "over NLA tracks, so helper keys in it would be blended too: left as it is"
        )
    return ""


def _tracks_play(anim) -> bool:
    """Whether NLA tracks are evaluated beneath ``anim``'s active action (one is unmuted):
    the rule :func:`editable` refuses a blended action by and :func:`apply` keys by."""
    return any(not track.mute for track in anim.nla_tracks)


def _switch(mode: Any) -> None:
    """The active object's mode, through the operator itself: ``bpy.ops`` evaluates the
    whole scene before and after every call (for a Rigify rig about 0.06 s each, and the
    export evaluates every frame anyway). Blender before 4.0 goes through ``bpy.ops``."""
    try:
        from _bpy import ops as _ops  # type: ignore[import-not-found]  # Blender's operator caller
    except ImportError:  # pragma: no cover - always there in Blender
        _ops = None
    if _ops is None or bpy.app.version < (4, 0, 0):
        bpy.ops.object.mode_set(mode=mode)
        return
    if "FINISHED" not in _ops.call("object.mode_set", {"mode": mode}):
        raise RuntimeError(f"Blender could not switch the active object to {mode} mode")


def _mode_set(obj, mode: Any) -> None:
    bpy.context.view_layer.objects.active = obj
    if obj.mode != mode:
        _switch(mode)


def _action_slot(anim):
    return getattr(anim, "action_slot", None)


def _curve_lists(action) -> list:
    """The F-curve collections of ``action`` (legacy, or every channel bag)."""
    layers = getattr(action, "layers", None)
    if layers:
        return [bag.fcurves for layer in layers for strip in layer.strips for bag in strip.channelbags]
    return [action.fcurves] if hasattr(action, "fcurves") else []


def _bone_paths(name: str) -> set[str]:
    quoted = bpy.utils.escape_identifier(name)
    return {f'pose.bones["{quoted}"].{channel}' for channel in _TRANSFORMS}


def _constraint_prefix(name: str) -> str:
    """The start of the data paths of a pose bone's constraints."""
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"].constraints['


def _edit_structure(arm, bones: list[str], saved: list[_Bone], helpers: list[str], make_helpers: bool = True) -> None:
    """In edit mode: plain matrix inheritance for each bone (Inherit Scale FULL,
    inheriting rotation, local location, not connected) and, with ``make_helpers``, a
    helper above it with the same; what to restore and the helpers' names are appended
    to ``saved`` and ``helpers`` as it goes."""
    for name in bones:
        eb = arm.edit_bones[name]
        saved.append(
            _Bone(name, eb.parent.name if eb.parent else None, tuple(getattr(eb, f) for f in _BONE_FLAGS), "", ())
        )
        plain = [eb]
        if make_helpers:
            helper = arm.edit_bones.new(f"{name} (shear helper)")
            helpers.append(helper.name)
            helper.head, helper.tail, helper.roll = eb.head.copy(), eb.tail.copy(), eb.roll
            helper.parent = eb.parent
            helper.use_deform = False
            plain.append(helper)
        for bone in plain:
            bone.use_connect = False
            bone.inherit_scale = "FULL"
            bone.use_inherit_rotation = True
            bone.use_local_location = True
            bone.use_relative_parent = False
        if make_helpers:
            eb.parent = plain[1]


def _basis(arm, pairs: list[tuple[str, str]], outer: core.TRS, inner: core.TRS) -> tuple[core.TRS, core.TRS]:
    """Pose channels ``(T, K)`` of the helpers and the bones ``pairs`` (helper, bone)
    that give ``outer`` and ``inner (T, K)`` as their local matrices (``basis =
    inv(rest_rel) @ local``), all at once, after :func:`turned`."""
    outer, inner = turned(outer, inner)
    rest_h = np.array([as_np(arm.bones[h].matrix_local) for h, _b in pairs])
    rest_p = np.array(
        [as_np(arm.bones[h].parent.matrix_local) if arm.bones[h].parent else np.eye(4) for h, _b in pairs]
    )
    rest_b = np.array([as_np(arm.bones[b].matrix_local) for _h, b in pairs])
    out = []
    for rest_rel, trs in ((np.linalg.inv(rest_p) @ rest_h, outer), (np.linalg.inv(rest_h) @ rest_b, inner)):
        d = core.decompose(np.linalg.inv(rest_rel)[None] @ trs.to_matrix())
        out.append(core.TRS(d.translation, continuous_quaternions(d.rotation), d.scale))
    return out[0], out[1]


def _held(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which channels of ``value (T, M, width)`` stay put over the frames ``(M, width)``
    (their span at most :data:`_HELD` times max(1, the bone's largest value of that
    channel)), and each channel's pose value ``(M, width)`` float32: the middle of the
    span where held, else the first frame's."""
    low, high = value.min(axis=0), value.max(axis=0)
    scale = np.maximum(1.0, np.abs(value).max(axis=(0, 2)))[:, None]
    held = (high - low) <= _HELD * scale
    return held, np.where(held, (low + high) / 2.0, value[0]).astype(np.float32)


def _key_bones(rig, action, names: list[str], values: dict, frames: list[int], every: frozenset) -> None:
    """Key the bones ``names`` with ``values`` (pose channel -> ``(T, M, width)``: the
    :data:`_KEYED` channels of a TRS) at ``frames``: LINEAR, in ``action`` (assigned to ``rig``; the bones have no curves in it).
    A channel that stays put over the frames (:func:`_held`: within two single-precision
    epsilons, below what the pose channel, the F-curve and the FBX file keep) gets no
    curve: the pose channel is set to it. Blender evaluates every F-curve at every frame
    (about 3 us each on a Rigify rig: its 2,800 curves made the export's frame steps
    0.4-0.5 s slower; 1,129 were constant in single precision, 280 more held within
    the epsilons). The curves are made directly in their group (no ``keyframe_insert``,
    which resolves the path and evaluates the channel per call) and filled in bulk. The
    bones in ``every`` get a curve for every channel (an NLA track may animate them: the
    active action's curves override it, a pose channel would not)."""
    plans = []
    for path, value in values.items():
        held, pose = _held(value)
        held[[name in every for name in names]] = False
        plans.append((path, value.astype(np.float32), held, pose.tolist()))
    for j, name in enumerate(names):
        pb = rig.pose.bones[name]
        pb.rotation_mode = "QUATERNION"
        for path, single, held, pose in plans:
            setattr(pb, path, pose[j])
            moving = np.flatnonzero(~held[j])
            if len(moving):
                data_path = pb.path_from_id(path)
                for index in moving.tolist():
                    _fill(_new_curve(action, rig, data_path, index, name), frames, single[:, j, index])


def _new_curve(action, owner, data_path: str, index: int, group: str):
    """A new F-curve of ``action`` (assigned to ``owner``) in the group ``group``:
    through the action's slot and channel bag (Blender 5.0+, where the legacy list is
    gone), or the legacy list (up to 4.5: 4.4 and 4.5 have no ``group_name`` there)."""
    ensure = getattr(action, "fcurve_ensure_for_datablock", None)
    if ensure is not None and not hasattr(action, "fcurves"):
        return ensure(owner, data_path, index=index, group_name=group)
    return action.fcurves.new(data_path, index=index, action_group=group)


def _fill(fc, frames: list[int], values: np.ndarray) -> None:
    """``fc`` keyed LINEAR with ``values (T,)`` at ``frames (T,)`` (its keys replaced)."""
    points = fc.keyframe_points
    if len(points) != len(frames):
        points.clear()
        points.add(len(frames))
    co = np.stack([np.asarray(frames, dtype=np.float32), values.astype(np.float32)], axis=-1)
    points.foreach_set("co", co.ravel())
    points.foreach_set("interpolation", np.full(len(frames), _LINEAR, dtype=np.int32))
    fc.update()


def fill_keys(action, wanted: dict, frames: list[int]) -> None:
    """Give every F-curve of ``action`` whose data path is in ``wanted`` (path ->
    values ``(T, width)``) a LINEAR key at each of ``frames``, in bulk."""
    for curves in _curve_lists(action):
        for fc in curves:
            if fc.data_path in wanted:
                _fill(fc, frames, wanted[fc.data_path][:, fc.array_index])


def _local_basis(arm, bones: list[str], local: core.TRS) -> core.TRS:
    """Pose channels ``(T, K)`` that give the bones their ``local (T, K)`` matrices
    relative to their parents' pose (``basis = inv(rest_rel) @ local``)."""
    rest_b = np.array([as_np(arm.bones[b].matrix_local) for b in bones])
    rest_p = np.array([as_np(arm.bones[b].parent.matrix_local) if arm.bones[b].parent else np.eye(4) for b in bones])
    rest_rel = np.linalg.inv(rest_p) @ rest_b
    d = core.decompose(np.linalg.inv(rest_rel)[None] @ local.to_matrix())
    return core.TRS(d.translation, continuous_quaternions(d.rotation), d.scale)


def apply(scene, per_armature: dict, frames: list[int], outer: core.TRS, inner: core.TRS) -> BoneEdits:
    """Give the bones ``per_armature`` (armature name -> [(bone name, k)], ``k`` the
    column of the split ``outer, inner (T, K)``) their helpers, keyed at ``frames``.
    On any failure what was done is undone and the error raised."""

    def channels(arm, helpers: list[str], bones: list[str], cols: list[int]) -> tuple[list[str], dict]:
        basis_h, basis_b = _basis(arm, list(zip(helpers, bones, strict=True)), outer[:, cols], inner[:, cols])
        both = {
            path: np.concatenate([getattr(basis_h, field), getattr(basis_b, field)], axis=1)
            for path, field in _KEYED.items()
        }
        return [*helpers, *bones], both

    return _edit(per_armature, frames, channels, make_helpers=True)


def apply_locals(scene, per_armature: dict, frames: list[int], local: core.TRS) -> BoneEdits:
    """Key the bones ``per_armature`` (armature name -> [(bone name, k)], ``k`` the
    column of ``local (T, K)``) so that Blender's FBX exporter writes ``local`` as each
    one's local TRS at ``frames`` (plain matrix inheritance, no helpers: the accumulated
    export). Undone by :func:`restore`; on any failure undone and the error raised."""

    def channels(arm, _helpers: list[str], bones: list[str], cols: list[int]) -> tuple[list[str], dict]:
        basis = _local_basis(arm, bones, local[:, cols])
        return bones, {path: getattr(basis, field) for path, field in _KEYED.items()}

    return _edit(per_armature, frames, channels, make_helpers=False)


def _edit(per_armature: dict, frames: list[int], channels, make_helpers: bool) -> BoneEdits:
    """The armature edits of :func:`apply` and :func:`apply_locals`: ``channels(arm,
    helper names, bone names, columns)`` gives the bones to key and their pose channels."""
    view_layer = bpy.context.view_layer
    active = view_layer.objects.active
    edits = BoneEdits([], active, active.mode if active is not None else "OBJECT")
    try:
        if active is not None and active.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        for rig_name, bones in per_armature.items():
            rig = bpy.data.objects[rig_name]
            arm = rig.data
            had = rig.animation_data is not None
            action = rig.animation_data.action if had else None
            slot = _action_slot(rig.animation_data) if had else None
            saved: list[_Bone] = []
            helpers: list[str] = []
            record = _Armature(rig, saved, helpers, had, action, slot, [], [])
            edits.armatures.append(record)
            _mode_set(rig, "EDIT")
            try:
                _edit_structure(arm, [b for b, _k in bones], saved, helpers, make_helpers)
            finally:
                _switch("OBJECT")
            saved[:] = [
                s._replace(
                    rotation_mode=rig.pose.bones[s.name].rotation_mode,
                    channels=tuple(tuple(getattr(rig.pose.bones[s.name], c)) for c in _TRANSFORMS),
                )
                for s in saved
            ]
            anim = rig.animation_data or rig.animation_data_create()
            temp = action.copy() if action is not None else bpy.data.actions.new(f"{rig.name} (shear helpers)")
            record.temp.append(temp)
            anim.action = temp
            paths = set().union(*(_bone_paths(s.name) for s in saved))
            for curves in _curve_lists(temp):
                for fc in [fc for fc in curves if fc.data_path in paths]:
                    curves.remove(fc)
            # The drivers of the bones' transform channels, and of their constraints (a
            # driven mute or influence would switch a muted constraint back on: Rigify
            # drives its IK constraints' this way).
            constraint_paths = tuple(_constraint_prefix(s.name) for s in saved)
            for fc in anim.drivers:
                if fc.data_path in paths or fc.data_path.startswith(constraint_paths):
                    set_saved(record.changed, fc, "mute", True)
            for s in saved:
                for con in rig.pose.bones[s.name].constraints:
                    set_saved(record.changed, con, "mute", True)
            nla = _tracks_play(anim)
            if nla and action is None:  # the keys replace what the tracks give (editable() refuses a blended action)
                set_saved(record.changed, anim, "action_blend_type", "REPLACE")
                set_saved(record.changed, anim, "action_influence", 1.0)
            every = frozenset(b for b, _k in bones) if nla else frozenset()
            names, values = channels(arm, helpers, [b for b, _k in bones], [k for _b, k in bones])
            _key_bones(rig, temp, names, values, frames, every)
            if getattr(anim, "action_slot", "") is None and getattr(temp, "slots", None):
                anim.action_slot = temp.slots[0]  # 4.4, 4.5: the legacy curves' slot of a new action is not bound
        view_layer.update()
    except BaseException:
        restore(edits)
        raise
    return edits


#: Constraint target spaces that read a bone's own transform (not its world matrix,
#: which the helper and the keys reproduce).
LOCAL_SPACES = ("LOCAL", "LOCAL_WITH_PARENT", "LOCAL_OWNER_ORIENT")


def constraint_readers(rig, split: set[str]) -> list[tuple[str, str]]:
    """``(label, why)`` for the bones of ``rig`` that keep their constraints in the
    export-ready copy (they get no helper) but whose constraints read a bone of
    ``split`` in a local space, or run an IK chain through it (:func:`reader_pairs`)."""
    return [(f"{rig.name} > {reader}", why) for reader, _bone, why in reader_pairs(rig, split)]


def reader_pairs(rig, split: set[str]) -> list[tuple[str, str, str]]:
    """``(reader, bone, why)`` for the bones of ``rig`` that keep their constraints in
    the export-ready copy (they get no helper) but whose constraints read the bone
    ``bone`` of ``split`` in a local space, or run an IK chain through it: that bone is
    rebuilt in the copy as a helper bone and keys (the same world matrix, another local
    one and another chain), so what such a constraint computes there is not what
    Blender computes in the scene. One entry per bone (its first such constraint).
    Constraints that read their targets in world or pose space (Armature, Copy
    Transforms in world space, a custom space) see the same matrices in the copy: not
    listed."""
    out = []
    for pb in rig.pose.bones:
        if pb.name in split:
            continue  # its constraints are muted: its keys hold Blender's result
        for con in pb.constraints:
            if con.mute or not getattr(con, "enabled", True):
                continue
            sub = getattr(con, "subtarget", "") if getattr(con, "target", None) == rig else ""
            if sub in split and getattr(con, "target_space", "WORLD") in LOCAL_SPACES:
                out.append(
                    (pb.name, sub, f"constraint '{con.name}' reads '{sub}' in local space, which gets a helper bone")
                )
                break
            if con.type == "IK":
                chain: list[str] = []
                bone = pb.parent
                while bone is not None and (con.chain_count == 0 or len(chain) < con.chain_count - 1):
                    chain.append(bone.name)
                    bone = bone.parent
                hit = next((b for b in chain if b in split), None)
                if hit:
                    out.append((pb.name, hit, f"IK constraint '{con.name}' spans '{hit}', which gets a helper bone"))
                    break
    return out


def ik_chains(rig, names) -> dict[str, list[str]]:
    """Bone name -> the bones its IK and Spline IK constraints pose (the chain above
    it, ``chain_count`` long; 0: up to the root), for the bones ``names`` of ``rig``."""
    out: dict[str, list[str]] = {}
    for name in names:
        pb = rig.pose.bones[name]
        for con in pb.constraints:
            if con.type not in ("IK", "SPLINE_IK") or con.mute or not getattr(con, "enabled", True):
                continue
            chain: list[str] = []
            bone = pb.parent
            while bone is not None and (con.chain_count == 0 or len(chain) < con.chain_count - 1):
                chain.append(bone.name)
                bone = bone.parent
            out.setdefault(name, []).extend(chain)
    return out


def restore(edits: BoneEdits) -> None:
    """Undo :func:`apply`: the user's armatures, actions, poses, active object and mode."""
    for record in reversed(edits.armatures):
        rig = record.obj
        anim = rig.animation_data  # type: ignore[attr-defined]
        put_back(record.changed)
        if anim is not None and record.temp:
            anim.action = record.action
            if record.slot is not None and getattr(anim, "action_slot", None) != record.slot:
                anim.action_slot = record.slot
        if not record.had_anim and anim is not None:
            rig.animation_data_clear()  # type: ignore[attr-defined]
        for temp in record.temp:
            bpy.data.actions.remove(temp)
        for s in record.bones:
            pb = rig.pose.bones[s.name]  # type: ignore[attr-defined]
            if s.channels:
                pb.rotation_mode = s.rotation_mode
                for channel, value in zip(_TRANSFORMS, s.channels, strict=True):
                    setattr(pb, channel, value)
        if not record.bones:
            continue
        _mode_set(rig, "EDIT")
        try:
            arm = rig.data  # type: ignore[attr-defined]
            for s in record.bones:
                eb = arm.edit_bones[s.name]
                eb.parent = arm.edit_bones[s.parent] if s.parent else None
                for flag, value in zip(_BONE_FLAGS, s.flags, strict=True):
                    setattr(eb, flag, value)
            for helper in record.helpers:
                arm.edit_bones.remove(arm.edit_bones[helper])
        finally:
            _switch("OBJECT")
    view_layer = bpy.context.view_layer
    view_layer.objects.active = edits.active
    if edits.active is not None and edits.mode != "OBJECT" and edits.active.mode != edits.mode:
        bpy.ops.object.mode_set(mode=edits.mode)
    view_layer.update()
