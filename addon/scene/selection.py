"""Selecting an object or a bone by name, without operators (usable from callbacks)."""

from __future__ import annotations

from typing import Any

import bpy


def _set_mode(context, obj, mode: Any) -> None:
    """Switch ``obj`` (made active) to ``mode`` if it is not there already."""
    if obj.mode != mode:
        with context.temp_override(active_object=obj, object=obj):
            bpy.ops.object.mode_set(mode=mode)


def select_node(context, object_name: str, bone_name: str = "") -> bool:
    """Make the object (or the bone's armature) selected and active; for a bone, enter
    Pose mode on its armature and make the bone the only selected and the active one
    (so the panel follows it). An object clicked in Pose mode leaves Pose mode first.

    Returns False when the object or bone no longer exists (renamed or deleted);
    nothing changes then.
    """
    obj = bpy.data.objects.get(object_name)
    view_layer = context.view_layer
    if obj is None or view_layer.objects.get(obj.name) is None:
        return False
    if bone_name and (obj.type != "ARMATURE" or obj.data.bones.get(bone_name) is None):
        return False  # looked up before anything changes: a failed click selects nothing
    active = view_layer.objects.active
    if active is not None and active.mode != "OBJECT" and (active != obj or not bone_name):
        _set_mode(context, active, "OBJECT")
    if context.mode == "OBJECT" or active != obj:
        for other in view_layer.objects:
            if other.select_get():
                other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj
    if bone_name:
        _set_mode(context, obj, "POSE")
        bone = obj.data.bones[bone_name]
        for pose_bone in obj.pose.bones:
            set_bone_selected(obj, pose_bone.name, pose_bone.name == bone_name)
        obj.data.bones.active = bone
    return True


def frame_selected(context) -> bool:
    """Frame the selection (objects, or bones in Pose mode) in the 3D viewport the
    sidebar belongs to, else the first one on screen. False without a viewport
    (background mode)."""
    screen = getattr(context, "screen", None)
    area = getattr(context, "area", None)
    if area is None or area.type != "VIEW_3D":
        area = next((a for a in screen.areas if a.type == "VIEW_3D"), None) if screen is not None else None
    region = next((r for r in area.regions if r.type == "WINDOW"), None) if area is not None else None
    if region is None:
        return False
    try:
        with context.temp_override(area=area, region=region):
            bpy.ops.view3d.view_selected(use_all_regions=False)
    except RuntimeError:  # nothing to frame (e.g. a hidden bone): the selection stands
        return False
    return True


def set_bone_selected(armature: bpy.types.Object, bone_name: str, state: bool) -> None:
    """Select a bone: ``PoseBone.select`` in Blender 5, ``Bone.select`` before."""
    pose_bone = armature.pose.bones[bone_name]
    if hasattr(pose_bone, "select"):
        pose_bone.select = state
    else:
        armature.data.bones[bone_name].select = state


def is_bone_selected(armature: bpy.types.Object, bone_name: str) -> bool:
    pose_bone = armature.pose.bones[bone_name]
    return bool(pose_bone.select if hasattr(pose_bone, "select") else armature.data.bones[bone_name].select)
