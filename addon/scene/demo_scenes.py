"""Build the demo scenes in Blender: each a collection of its own, side by side.

- ``Piston``: the Root / A / B of *Accumulating Transforms* as published (the models agree) and a
  copy with the article's slider moved (root scaled 2x along X: they part).
- ``Rotated child``: a cube rotated 45 degrees under a parent scaled (2, 1, 1).
- ``Parent inverse``: clean loc / rot / scale everywhere, but the child was parented
  (Set Parent keeps its place) while the parent was rotated and scaled non-uniformly,
  so its local matrix holds shear that exporters drop.
- ``Inherit scale``: an armature with one chain per bone Inherit Scale mode, each a
  root bone scaled (2, 1, 1) with a child twisted 45 degrees below it.
"""

from __future__ import annotations

import math

import bmesh
import bpy
from mathutils import Quaternion

from ...core import examples

COLLECTIONS = ("Piston", "Rotated child", "Parent inverse", "Inherit scale")
INHERIT_SCALE_MODES = ("FULL", "FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")

_COLOURS = {
    "magenta": (0.85, 0.1, 0.85, 1.0),
    "cyan": (0.1, 0.8, 0.9, 1.0),
    "grey": (0.6, 0.6, 0.6, 1.0),
    "orange": (0.95, 0.55, 0.1, 1.0),
}


def _mesh(name: str, shape: str) -> bpy.types.Mesh:
    """A mesh of its own for each object (so each can be baked on its own)."""
    bm = bmesh.new()
    if shape == "cylinder":  # radius 1, height 2 along Z, like the article's cylinders
        bmesh.ops.create_cone(bm, cap_ends=True, segments=24, radius1=1.0, radius2=1.0, depth=2.0)
    else:
        bmesh.ops.create_cube(bm, size=2.0)
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def _material(colour: str) -> bpy.types.Material:
    mat = bpy.data.materials.get(f"HI {colour}")
    if mat is None:
        mat = bpy.data.materials.new(f"HI {colour}")
        mat.diffuse_color = _COLOURS[colour]
    return mat


def _object(collection, name: str, shape: str | None = None, colour: str = "grey", parent=None) -> bpy.types.Object:
    data = _mesh(name, shape) if shape else None
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    if data is not None:
        obj.data.materials.clear()
        obj.data.materials.append(_material(colour))
        obj.color = _COLOURS[colour]
    else:
        obj.empty_display_type = "ARROWS"
    obj.parent = parent
    return obj


def _collection(scene, name: str) -> bpy.types.Collection:
    coll = bpy.data.collections.new(name)
    scene.collection.children.link(coll)
    return coll


def _apply_trs(obj, example: examples.Example, i: int, offset=(0.0, 0.0, 0.0)) -> None:
    t = example.local.translation[i] + (offset if example.parents[i] < 0 else 0.0)
    obj.location = tuple(float(v) for v in t)
    obj.rotation_mode = "QUATERNION"
    obj.rotation_quaternion = tuple(float(v) for v in example.local.rotation[i])
    obj.scale = tuple(float(v) for v in example.local.scale[i])


def build_example(scene, example: examples.Example, collection, shapes, offset, suffix: str = "") -> list:
    """Create the objects of a core example hierarchy under ``collection``."""
    objs: list = []
    for i, name in enumerate(example.names):
        parent = objs[example.parents[i]] if example.parents[i] >= 0 else None
        shape, colour = shapes[i]
        obj = _object(collection, name + suffix, shape, colour, parent)
        _apply_trs(obj, example, i, offset)
        objs.append(obj)
    return objs


def build_piston(scene, offset=(0.0, 0.0, 0.0)) -> None:
    coll = _collection(scene, "Piston")
    shapes = [(None, "grey"), ("cylinder", "magenta"), ("cylinder", "cyan")]
    build_example(scene, examples.piston(), coll, shapes, offset)
    slider = (offset[0], offset[1] - 8.0, offset[2])
    build_example(scene, examples.piston(root_scale=(2.0, 1.0, 1.0)), coll, shapes, slider, suffix=" (slider)")


def build_rotated_child(scene, offset=(10.0, 0.0, 0.0)) -> None:
    coll = _collection(scene, "Rotated child")
    shapes = [("cube", "grey"), ("cube", "orange")]
    build_example(scene, examples.rotated_child(), coll, shapes, offset)


def build_parent_inverse(scene, offset=(20.0, 0.0, 0.0)) -> None:
    """Child parented with Set Parent (keep transform) to a rotated, scaled parent."""
    coll = _collection(scene, "Parent inverse")
    parent = _object(coll, "Turned parent", "cube", "grey")
    parent.location = offset
    parent.rotation_euler = (0.0, 0.0, math.radians(30.0))
    parent.scale = (2.0, 1.0, 1.0)
    child = _object(coll, "Kept child", "cube", "orange")
    child.location = (offset[0] + 3.0, offset[1], offset[2])
    scene.view_layers[0].update()
    child.parent = parent
    # What Set Parent (Object, Keep Transform off) stores: the parent's inverse at that moment.
    child.matrix_parent_inverse = parent.matrix_world.inverted()


def build_inherit_scale_rig(scene, offset=(30.0, 0.0, 0.0)) -> bpy.types.Object:
    """An armature with one 3-bone chain per Inherit Scale mode."""
    coll = _collection(scene, "Inherit scale")
    arm_data = bpy.data.armatures.new("Inherit scale rig")
    arm = bpy.data.objects.new("Inherit scale rig", arm_data)
    coll.objects.link(arm)
    arm.location = offset
    view_layer = scene.view_layers[0]
    previous_active = view_layer.objects.active
    view_layer.objects.active = arm
    with bpy.context.temp_override(scene=scene, view_layer=view_layer, active_object=arm, object=arm):
        bpy.ops.object.mode_set(mode="EDIT")
        for k, mode in enumerate(INHERIT_SCALE_MODES):
            x = 1.5 * k
            root = arm_data.edit_bones.new(f"{mode}.root")
            root.head, root.tail = (x, 0.0, 0.0), (x, 0.0, 1.0)
            mid = arm_data.edit_bones.new(f"{mode}.mid")
            mid.head, mid.tail = (x, 0.0, 1.0), (x, 0.0, 2.0)
            mid.parent, mid.use_connect = root, True
            tip = arm_data.edit_bones.new(f"{mode}.tip")
            tip.head, tip.tail = (x, 0.0, 2.0), (x, 0.0, 2.8)
            tip.parent, tip.use_connect = mid, True
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = previous_active
    for mode in INHERIT_SCALE_MODES:
        for part in ("mid", "tip"):
            arm_data.bones[f"{mode}.{part}"].inherit_scale = mode  # type: ignore[assignment]
        arm.pose.bones[f"{mode}.root"].scale = (2.0, 1.0, 1.0)
        pose_mid = arm.pose.bones[f"{mode}.mid"]
        pose_mid.rotation_mode = "QUATERNION"
        pose_mid.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), math.radians(45.0))  # 45 deg about the bone's Z
    return arm


def build_demo_scene(scene=None) -> bpy.types.Scene:
    """Fill ``scene`` (default: a new scene "Hierarchy Inspector demo") with every demo."""
    if scene is None:
        scene = bpy.data.scenes.new("Hierarchy Inspector demo")
    build_piston(scene)
    build_rotated_child(scene)
    build_parent_inverse(scene)
    build_inherit_scale_rig(scene)
    scene.view_layers[0].update()
    return scene


__all__ = ["COLLECTIONS", "INHERIT_SCALE_MODES", "build_demo_scene"]
