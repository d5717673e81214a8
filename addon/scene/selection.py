"""Selecting an object or a bone by name, without operators (usable from callbacks)."""

from __future__ import annotations

import bpy


def select_node(context, object_name: str, bone_name: str = "") -> bool:
    """Make the object (or the bone's armature) selected and active; select the bone.

    Returns False when the object or bone no longer exists (renamed or deleted).
    """
    obj = bpy.data.objects.get(object_name)
    view_layer = context.view_layer
    if obj is None or view_layer.objects.get(obj.name) is None:
        return False
    if bone_name and (obj.type != "ARMATURE" or obj.data.bones.get(bone_name) is None):
        return False  # looked up before anything changes: a failed click selects nothing
    if context.mode == "OBJECT":
        for other in context.selected_objects:
            other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj
    if bone_name:
        bone = obj.data.bones[bone_name]
        for pose_bone in obj.pose.bones:
            set_bone_selected(obj, pose_bone.name, pose_bone.name == bone_name)
        obj.data.bones.active = bone
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
