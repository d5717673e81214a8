"""The FBX export-ready copy as one scene transaction: :func:`export_ready` changes the
scene as a :class:`...model.exports.fbx.copy_plan.CopyPlan` says for the length of a
``with`` block (Blender's FBX exporter runs inside it) and puts everything back after
it, the last change first, also when the block or the edits themselves fail.

In the order of the plan: per object, its channels saved, its constraints and transform
drivers muted and its delta transforms zeroed (when the plan says ``mute``), a helper
empty put between it and its parent (linked beside it, taking its parenting), its
parent inverse, its keys in a new action replacing its own (Replace at full influence
over its NLA tracks); per armature, in edit mode, plain matrix inheritance for its bones
and a helper bone above each (the bone's rest and old parent), their constraints and
drivers muted, and their keys in a temporary copy of its action without their own
curves. The keys are LINEAR at every frame, filled in bulk (no ``keyframe_insert`` per
key); a bone's channels that stay put within single precision are set on the pose
channel instead (:func:`...model.exports.fbx.copy_plan.bone_channels`). Temporary data
blocks (helpers, actions) are removed after everything else is back, in one pass, and
the view layer updated once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import bpy
import numpy as np

from ...model.exports.fbx.copy_plan import KEYED, ArmatureEdit, CopyPlan, ObjectEdit, bone_channels
from .editing import OBJECT_CHANNELS, Parenting, as_np, to_blender

#: Delta transforms zeroed on a muted object (Blender applies them on top of the keys).
NO_DELTA = {
    "delta_location": (0.0, 0.0, 0.0),
    "delta_rotation_euler": (0.0, 0.0, 0.0),
    "delta_rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
    "delta_scale": (1.0, 1.0, 1.0),
}
_BONE_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
_BONE_FLAGS = ("use_connect", "inherit_scale", "use_inherit_rotation", "use_local_location", "use_relative_parent")
_LINEAR = 1  # Keyframe.interpolation 'LINEAR' (BEZT_IPO_LIN)


class Undo:
    """What a transaction changed, to put back the last change first; temporary data
    blocks are removed after that, in one pass (``bpy.data.batch_remove``)."""

    def __init__(self):
        self.steps: list = []  #: (function, args)
        self.temporary: list = []  #: data blocks to remove

    def set(self, owner, attribute: str, value) -> None:
        """``owner.attribute = value``, its value before put back on undo."""
        self.steps.append((setattr, (owner, attribute, getattr(owner, attribute))))
        setattr(owner, attribute, value)

    def then(self, function, *args) -> None:
        """Call ``function(*args)`` on undo, before the steps recorded earlier."""
        self.steps.append((function, args))

    def run(self) -> None:
        """Every step in reverse, the temporary data removed, the view layer updated.
        A step that fails does not stop the others; the first failure is raised after."""
        failed: Exception | None = None
        for function, args in reversed(self.steps):
            try:
                function(*args)
            except Exception as exc:  # noqa: BLE001 - the rest is put back first
                failed = failed or exc
        if self.temporary:  # one pass over the file's users for all (objects.remove makes one each)
            bpy.data.batch_remove(self.temporary)
        if self.steps or self.temporary:
            bpy.context.view_layer.update()
        self.steps, self.temporary = [], []
        if failed is not None:
            raise failed


@contextlib.contextmanager
def export_ready(plan: CopyPlan, scene=None) -> Iterator[None]:
    """The scene as ``plan`` says for the block (see the module docstring); put back
    after it. ``scene``: where helpers without collections are linked (the current
    one by default)."""
    scene = scene or bpy.context.scene
    undo = Undo()
    try:
        for edit in plan.objects:
            _edit_object(scene, edit, plan.frames, undo, plan.selected)
        if plan.armatures:
            _edit_armatures(plan.armatures, plan.frames, undo)
        yield
    finally:
        undo.run()


# Objects


def _edit_object(scene, edit: ObjectEdit, frames: list, undo: Undo, selected: bool = False) -> None:
    obj = bpy.data.objects[edit.name]
    if edit.mute or edit.keys is not None:  # its channels change: put back whole
        undo.then(_put_channels, obj, obj.rotation_mode, tuple(tuple(getattr(obj, c)) for c in OBJECT_CHANNELS))
    if edit.mute:
        _mute_object(obj, undo)
    if edit.helper or edit.parent_inverse is not None:
        undo.then(Parenting.save(obj).restore)
    if edit.helper:
        helper = bpy.data.objects.new(edit.helper, None)
        undo.temporary.append(helper)
        undo.then(_drop_action, undo, helper)
        _link_beside(scene, obj, helper)
        if selected:
            helper.select_set(True)
        if edit.helper_parent_inverse is not None:
            helper.matrix_parent_inverse = to_blender(edit.helper_parent_inverse)
        if edit.helper_rotation is not None:
            helper.rotation_mode = "QUATERNION"
            helper.rotation_quaternion = np.asarray(edit.helper_rotation).tolist()
        obj.parent, obj.parent_type = helper, "OBJECT"
        if edit.helper_keys is not None:
            _key_object(helper, frames, edit.helper_keys)
    if edit.parent_inverse is not None:
        obj.matrix_parent_inverse = to_blender(edit.parent_inverse)
    if edit.keys is not None:
        anim = obj.animation_data
        undo.then(_put_action, undo, obj, anim is not None, anim.action if anim is not None else None)
        if anim is not None:
            anim.action = None
            # the keys replace whatever the NLA tracks below give (an active action
            # blended Add at half influence over a track put the object 3 units off)
            undo.set(anim, "action_blend_type", "REPLACE")
            undo.set(anim, "action_influence", 1.0)
        _key_object(obj, frames, edit.keys)


def _mute_object(obj, undo: Undo) -> None:
    """``obj``'s constraints and the drivers of its transform channels and constraints
    muted (a driven mute or influence would switch a constraint back on), its delta
    transforms zeroed (put back with its channels)."""
    for con in obj.constraints:
        undo.set(con, "mute", True)
    if obj.animation_data is not None:
        for fc in obj.animation_data.drivers:
            if fc.data_path in OBJECT_CHANNELS or fc.data_path.startswith("constraints["):
                undo.set(fc, "mute", True)
    for name, value in NO_DELTA.items():
        setattr(obj, name, value)


def _link_beside(scene, obj, helper) -> None:
    """``helper`` linked into ``obj``'s collections (the scene's when it has none) with
    ``obj``'s parent, parent type and parent bone: the place a helper above ``obj``
    takes."""
    for coll in list(obj.users_collection) or [scene.collection]:
        coll.objects.link(helper)
    helper.parent, helper.parent_type = obj.parent, obj.parent_type
    if obj.parent_type == "BONE":
        helper.parent_bone = obj.parent_bone


def _key_object(obj, frames: list, trs) -> None:
    """``obj``'s location, quaternion and scale keyed at ``frames`` with ``trs (T,)``:
    one key per channel creates the curves, then they are filled in bulk."""
    obj.rotation_mode = "QUATERNION"
    values = {"location": trs.translation, "rotation_quaternion": trs.rotation, "scale": trs.scale}
    for path, value in values.items():
        setattr(obj, path, value[0].tolist())
        obj.keyframe_insert(path, frame=frames[0])
    wanted = {path: np.asarray(value) for path, value in values.items()}
    for curves in _curve_lists(obj.animation_data.action):
        for fc in curves:
            if fc.data_path in wanted:
                _fill(fc, frames, wanted[fc.data_path][:, fc.array_index])


def _put_channels(obj, rotation_mode: str, channels: tuple) -> None:
    obj.rotation_mode = rotation_mode
    for name, value in zip(OBJECT_CHANNELS, channels, strict=True):
        setattr(obj, name, value)


def _put_action(undo: Undo, obj, had_anim: bool, action) -> None:
    """``obj``'s action back (its animation data cleared if it had none); the action
    the keys made is removed with the temporary data."""
    anim = obj.animation_data
    made = anim.action if anim is not None else None
    if anim is not None:
        anim.action = action
        if not had_anim:
            obj.animation_data_clear()
    if made is not None and made != action:
        undo.temporary.append(made)


def _drop_action(undo: Undo, helper) -> None:
    """The action the keys made for ``helper`` removed with it."""
    if helper.animation_data is not None and helper.animation_data.action is not None:
        undo.temporary.append(helper.animation_data.action)


# Armatures


def _edit_armatures(armatures: list[ArmatureEdit], frames: list, undo: Undo) -> None:
    view_layer = bpy.context.view_layer
    active = view_layer.objects.active
    undo.then(_put_active, active, active.mode if active is not None else "OBJECT")
    if active is not None and active.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    for edit in armatures:
        _edit_armature(edit, frames, undo)
    view_layer.update()


def _edit_armature(edit: ArmatureEdit, frames: list, undo: Undo) -> None:
    rig = bpy.data.objects[edit.name]
    arm = rig.data
    structure: list[tuple] = []  # (bone, old parent, flags)
    helpers: dict[str, str] = {}  # bone -> its helper's name
    undo.then(_put_structure, rig, structure, helpers)
    _mode_set(rig, "EDIT")
    try:
        _plain_inheritance(arm, edit.bones, structure, helpers if edit.helpers else None)
    finally:
        _switch("OBJECT")
    pose = rig.pose.bones
    saved = [(b, pose[b].rotation_mode, tuple(tuple(getattr(pose[b], c)) for c in _BONE_CHANNELS)) for b in edit.bones]
    undo.then(_put_pose, rig, saved)
    had: Any = rig.animation_data  # (action slots: Blender 4.4+, not in the 4.2 stubs)
    action = had.action if had is not None else None
    undo.then(_put_rig_action, rig, had is not None, action, getattr(had, "action_slot", None))
    anim: Any = had or rig.animation_data_create()
    temp: Any = action.copy() if action is not None else bpy.data.actions.new(f"{rig.name} (shear helpers)")
    undo.temporary.append(temp)
    anim.action = temp
    paths = {p for b in edit.bones for p in _bone_paths(b)}
    for curves in _curve_lists(temp):
        for fc in [fc for fc in curves if fc.data_path in paths]:
            curves.remove(fc)
    # The drivers of the bones' transform channels and of their constraints (a driven
    # mute or influence would switch a muted constraint back on: Rigify drives its IK
    # constraints' this way).
    prefixes = tuple(f'pose.bones["{bpy.utils.escape_identifier(b)}"].constraints[' for b in edit.bones)
    for fc in anim.drivers:
        if fc.data_path in paths or fc.data_path.startswith(prefixes):
            undo.set(fc, "mute", True)
    for b in edit.bones:
        for con in pose[b].constraints:
            undo.set(con, "mute", True)
    if edit.replace:  # the keys replace what the tracks give
        undo.set(anim, "action_blend_type", "REPLACE")
        undo.set(anim, "action_influence", 1.0)
    keyed = edit.keyed()
    names = [helpers[b] if helper else b for b, helper in keyed]
    bones = arm.bones
    rest = np.array([as_np(bones[name].matrix_local) for name in names]).reshape(-1, 4, 4)
    rest_parent = np.array(
        [as_np(bones[name].parent.matrix_local) if bones[name].parent else np.eye(4) for name in names]
    ).reshape(-1, 4, 4)
    every = [edit.every and not helper for _b, helper in keyed]
    _key_bones(rig, temp, names, bone_channels(rest_parent, rest, edit.local, every), frames)
    if getattr(anim, "action_slot", "") is None and getattr(temp, "slots", None):
        anim.action_slot = temp.slots[0]  # 4.4, 4.5: the legacy curves' slot of a new action is not bound


def _plain_inheritance(arm, bones: list[str], structure: list, helpers: dict | None) -> None:
    """In edit mode: plain matrix inheritance for each bone (Inherit Scale FULL,
    inheriting rotation, local location, not connected) and, with ``helpers``, a helper
    above it with the same; what to put back and the helpers' names recorded as it goes."""
    for name in bones:
        eb = arm.edit_bones[name]
        structure.append((name, eb.parent.name if eb.parent else None, tuple(getattr(eb, f) for f in _BONE_FLAGS)))
        plain = [eb]
        if helpers is not None:
            helper = arm.edit_bones.new(f"{name} (shear helper)")
            helpers[name] = helper.name
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
        if helpers is not None:
            eb.parent = plain[1]


def _key_bones(rig, action, names: list[str], channels, frames: list) -> None:
    """Key the bones ``names`` with ``channels`` (:class:`...BoneChannels`) at
    ``frames`` in ``action`` (assigned to ``rig``; the bones have no curves in it): a
    held channel set on the pose channel, every other one a curve made directly in the
    bone's group (no ``keyframe_insert``, which resolves the path and evaluates the
    channel per call) and filled in bulk."""
    pose_values = {path: channels.pose[path].tolist() for path in KEYED}
    for j, name in enumerate(names):
        pb = rig.pose.bones[name]
        pb.rotation_mode = "QUATERNION"
        for path in KEYED:
            setattr(pb, path, pose_values[path][j])
            moving = np.flatnonzero(~channels.held[path][j])
            if len(moving):
                data_path = pb.path_from_id(path)
                for index in moving.tolist():
                    fc = _new_curve(action, rig, data_path, index, name)
                    _fill(fc, frames, channels.values[path][:, j, index])


def _put_structure(rig, structure: list, helpers: dict) -> None:
    """In edit mode: the bones' parents and inheritance back, the helper bones removed."""
    if not structure and not helpers:
        return
    _mode_set(rig, "EDIT")
    try:
        arm = rig.data
        for name, parent, flags in structure:
            eb = arm.edit_bones[name]
            eb.parent = arm.edit_bones[parent] if parent else None
            for flag, value in zip(_BONE_FLAGS, flags, strict=True):
                setattr(eb, flag, value)
        for helper in helpers.values():
            arm.edit_bones.remove(arm.edit_bones[helper])
    finally:
        _switch("OBJECT")


def _put_pose(rig, saved: list) -> None:
    for name, rotation_mode, values in saved:
        pb = rig.pose.bones[name]
        pb.rotation_mode = rotation_mode
        for channel, value in zip(_BONE_CHANNELS, values, strict=True):
            setattr(pb, channel, value)


def _put_rig_action(rig, had_anim: bool, action, slot) -> None:
    anim = rig.animation_data
    if anim is None:
        return
    anim.action = action
    if slot is not None and getattr(anim, "action_slot", None) != slot:
        anim.action_slot = slot
    if not had_anim:
        rig.animation_data_clear()


def _put_active(active, mode: Any) -> None:
    """The active object and its mode back."""
    bpy.context.view_layer.objects.active = active
    if active is not None and mode != "OBJECT" and active.mode != mode:
        bpy.ops.object.mode_set(mode=mode)


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


# F-curves


def _bone_paths(name: str) -> set[str]:
    quoted = bpy.utils.escape_identifier(name)
    return {f'pose.bones["{quoted}"].{channel}' for channel in _BONE_CHANNELS}


def _curve_lists(action) -> list:
    """The F-curve collections of ``action`` (legacy, or every channel bag)."""
    layers = getattr(action, "layers", None)
    if layers:
        return [bag.fcurves for layer in layers for strip in layer.strips for bag in strip.channelbags]
    return [action.fcurves] if hasattr(action, "fcurves") else []


def _new_curve(action, owner, data_path: str, index: int, group: str):
    """A new F-curve of ``action`` (assigned to ``owner``) in the group ``group``:
    through the action's slot and channel bag (Blender 5.0+, where the legacy list is
    gone), or the legacy list (up to 4.5: 4.4 and 4.5 have no ``group_name`` there)."""
    ensure = getattr(action, "fcurve_ensure_for_datablock", None)
    if ensure is not None and not hasattr(action, "fcurves"):
        return ensure(owner, data_path, index=index, group_name=group)
    return action.fcurves.new(data_path, index=index, action_group=group)


def _fill(fc, frames: list, values: np.ndarray) -> None:
    """``fc`` keyed LINEAR with ``values (T,)`` at ``frames (T,)`` (its keys replaced)."""
    points = fc.keyframe_points
    if len(points) != len(frames):
        points.clear()
        points.add(len(frames))
    co = np.stack([np.asarray(frames, dtype=np.float32), np.asarray(values, dtype=np.float32)], axis=-1)
    points.foreach_set("co", co.ravel())
    points.foreach_set("interpolation", np.full(len(frames), _LINEAR, dtype=np.int32))
    fc.update()
