"""What the panel's exports take from the scene: the objects an :class:`ExportChoice`
writes, whether the scene animates (the exports' default frames), and Object mode for
the length of an export started in Pose mode (Blender's exporters evaluate in Object
mode; the glTF exporter switches to it and stays there)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import bpy

from ...model.exports.choices import ExportChoice


def exported_objects(scene, choice: ExportChoice) -> list:
    """The objects of ``scene`` a file made with ``choice`` holds (as the exporters
    filter them: the view layer's objects, visible / selected ones); ``ALL``: every
    object of the scene (a superset: what an exporter leaves out is not compared)."""
    if choice.objects == "ALL":
        return list(scene.objects)
    layer = bpy.context.view_layer if scene == bpy.context.scene else scene.view_layers[0]
    if choice.objects == "SELECTED":
        return [obj for obj in layer.objects if obj.select_get(view_layer=layer)]
    return [obj for obj in layer.objects if obj.visible_get(view_layer=layer)]


def objects_read(scene, choice: ExportChoice) -> list | None:
    """The objects an export reads from Blender for ``choice``: :func:`exported_objects`,
    or None for ``ALL`` (the reader's default: every object of the scene)."""
    return None if choice.objects == "ALL" else exported_objects(scene, choice)


def _animated(owner) -> bool:
    anim = getattr(owner, "animation_data", None)
    return anim is not None and (anim.action is not None or len(anim.nla_tracks) > 0)


def scene_animates(scene) -> bool:
    """Whether anything in ``scene`` is keyed (an action or NLA tracks on an object, its
    data or its shape keys), so that an export writes the frame range. Drivers alone do
    not count: every generated Rigify rig has them, keyed or not."""
    for obj in scene.objects:
        if _animated(obj) or _animated(obj.data):
            return True
        keys = getattr(obj.data, "shape_keys", None)
        if keys is not None and _animated(keys):
            return True
    return False


@contextlib.contextmanager
def object_mode(context) -> Iterator[str]:
    """Object mode for the block, the active object's mode (Pose mode) put back
    afterwards, also when the block raises; yields the mode it was in."""
    active = context.view_layer.objects.active if context.view_layer is not None else None
    mode = active.mode if active is not None else "OBJECT"
    if mode != "OBJECT":
        with context.temp_override(active_object=active, object=active):
            bpy.ops.object.mode_set(mode="OBJECT")
    try:
        yield mode
    finally:
        if mode != "OBJECT" and active is not None and active.name in context.view_layer.objects:
            context.view_layer.objects.active = active
            with context.temp_override(active_object=active, object=active):
                bpy.ops.object.mode_set(mode=mode)  # type: ignore[arg-type]  # (a mode name: the stubs want a Literal)


def deform_kept(keys) -> set[tuple[str, str]]:
    """The bones among ``keys`` (``(armature, bone)``) that an export of deform bones
    only writes: each deform bone and every bone above one (Blender's FBX exporter keeps
    those; the glTF exporter re-parents deform bones instead)."""
    out: set[tuple[str, str]] = set()
    for name in {obj for obj, bone in keys if bone}:
        arm = bpy.data.objects.get(name)
        if arm is None or arm.type != "ARMATURE":
            continue
        for bone in arm.data.bones:
            if bone.use_deform:
                out.add((name, bone.name))
                out.update((name, up.name) for up in bone.parent_recursive)
    return out
