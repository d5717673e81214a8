"""Small .blend files for the command-line tests, built with bpy in the test process
(the command line under test runs in a process of its own)."""

from __future__ import annotations

import math

import bpy


def _empty(name: str, parent=None):
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = parent
    return obj


def save(path) -> str:
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, compress=False)
    return str(path)


def deep_chain(path, depth: int = 3000) -> str:
    """A chain of empties deeper than the glTF exporter's recursion can follow."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    parent = None
    for i in range(depth):
        parent = _empty(f"Link {i:04d}", parent)
    return save(path)


def nan_location(path) -> str:
    """'Broken' has NaN in its location; 'Fine' beside it is clean."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _empty("Fine")
    broken = _empty("Broken")
    broken.location = (0.0, math.nan, 0.0)
    return save(path)


def tiny_local_shear(path, angle_deg: float = 4e-4) -> str:
    """'Child' parented with a parent inverse that holds ``angle_deg`` of shear (as
    Rigify's rigs do after some edits): real, but far below the default threshold."""
    from mathutils import Matrix

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_cube_add()
    child = bpy.context.active_object
    child.name = "Child"
    parent = _empty("Parent")
    child.parent = parent
    shear = Matrix.Identity(4)
    shear[0][1] = math.tan(math.radians(angle_deg))
    child.matrix_parent_inverse = shear
    return save(path)


def counter_sheared(path, angle_deg: float = 0.03) -> str:
    """'Parent' under 'Base' with a parent inverse that holds ``angle_deg`` of shear (so
    its world is sheared by that much) and 'Child' under it with a parent inverse holding
    twice as much the other way: 'Child's world is sheared ``angle_deg`` back, its local
    matrix ``2 * angle_deg``. Every shear is real and under the default threshold; the
    largest local shear is twice the largest world shear."""
    from mathutils import Matrix

    bpy.ops.wm.read_factory_settings(use_empty=True)
    base = _empty("Base")
    parent = _empty("Parent", base)
    child = _empty("Child", parent)
    for obj, k in ((parent, 1.0), (child, -2.0)):
        shear = Matrix.Identity(4)
        shear[0][1] = k * math.tan(math.radians(angle_deg))
        obj.matrix_parent_inverse = shear
    return save(path)


def many_objects(path, count: int = 20000) -> str:
    """``count`` empties in chains of ten under scaled, rotated parents (sheared): a file
    whose inspection and save take long enough to interrupt in the middle."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    parent = None
    for i in range(count):
        if i % 10 == 0:
            parent = None
        obj = _empty(f"Node {i:05d}", parent)
        obj.scale = (1.0 + (i % 3), 1.0, 1.0)
        obj.rotation_euler = (0.0, 0.0, 0.1 * (i % 7))
        parent = obj
    return save(path)


def sheared_pair():
    """'Parent' scaled (1, 3, 1) and 'Child' turned 40 degrees under it: about 53
    degrees of world shear on 'Child'."""
    parent = _empty("Parent")
    parent.scale = (1.0, 3.0, 1.0)
    child = _empty("Child", parent)
    child.rotation_euler = (0.0, 0.0, 0.7)
    return parent, child


def linked_scene(folder) -> tuple[str, str, str]:
    """``(scene, library, image)`` in ``folder``: ``lib.blend`` holds the sheared pair,
    ``linked.blend`` links both objects from it (a relative path) and loads
    ``tex.png`` (an image with a fake user, so that it is saved)."""
    import os

    folder = str(folder)
    library, scene, image = (os.path.join(folder, n) for n in ("lib.blend", "linked.blend", "tex.png"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sheared_pair()
    save(library)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    pixels = bpy.data.images.new("tex", 4, 4)
    pixels.filepath_raw = image
    pixels.file_format = "PNG"
    pixels.save()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True, relative=True) as (_src, dst):
        dst.objects = ["Parent", "Child"]
    for obj in dst.objects:
        bpy.context.scene.collection.objects.link(obj)
    bpy.data.images.load(image).use_fake_user = True
    bpy.ops.wm.save_as_mainfile(filepath=scene, copy=True, compress=False, relative_remap=True)
    return scene, library, image


def empty_scene(path) -> str:
    """A scene with no objects at all."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return save(path)


def nan_scale_at_frame(path, frame: int = 4) -> str:
    """The sheared pair over frames 1-6, 'Child''s X scale keyed NaN at ``frame`` (the
    keys around it interpolate to NaN too) and 1 elsewhere."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _parent, child = sheared_pair()
    for f in (1, frame, 6):
        child.scale = (math.nan if f == frame else 1.0, 1.0, 1.0)
        child.keyframe_insert("scale", frame=f)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 6
    return save(path)
