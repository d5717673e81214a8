"""Small shared pieces for the operations that change the scene (helpers, bake): matrix
conversion, Blender's parent matrix, the checks that must pass before anything is
touched, and saving / restoring an object's parenting so a failure changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix

#: An object's transform channels: its own, every rotation mode's, and the delta transforms.
OBJECT_CHANNELS = (
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
    "delta_rotation_euler",
    "delta_rotation_quaternion",
    "delta_scale",
)
#: Parent types through which the parent deforms the child's geometry.
DEFORMING_PARENTS = {"ARMATURE", "LATTICE"}
#: Object types whose geometry a deforming parent changes.
DEFORMABLE = {"MESH", "CURVE", "SURFACE", "FONT", "LATTICE", "GPENCIL", "GREASEPENCIL", "CURVES", "POINTCLOUD"}


def to_blender(m: np.ndarray):
    """A mathutils Matrix of a numpy ``(4, 4)``."""
    return Matrix([[float(v) for v in row] for row in m])


def as_np(m) -> np.ndarray:
    return np.asarray(m, dtype=np.float64)


def action_fcurves(action) -> list:
    """Every F-curve of ``action`` (None: none): on the action before Blender 5, in the
    channel bags of its layers' strips from Blender 5 (layered actions)."""
    if action is None:
        return []
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [c for layer in action.layers for strip in layer.strips for bag in strip.channelbags for c in bag.fcurves]


def parent_matrix(obj) -> np.ndarray:
    """Blender's current parent matrix P of ``obj`` (``matrix_world = P @ matrix_local``)."""
    return as_np(obj.matrix_world) @ np.linalg.inv(as_np(obj.matrix_local))


def check_editable(obj, error, doing: str) -> None:
    """Raise ``error`` (an exception class) if ``obj``'s transform cannot be edited
    exactly: linked data, or a zero scale (its parent matrix cannot be recovered)."""
    if obj.library is not None or obj.override_library is not None:
        raise error(f"object '{obj.name}' is linked from a library: make it local before {doing}")
    if abs(np.linalg.det(as_np(obj.matrix_local)[:3, :3])) < 1e-12:
        raise error(f"object '{obj.name}' has zero scale: {doing} cannot keep it where it is")


@dataclass
class Parenting:
    """An object's parenting, saved so that it can be restored exactly."""

    obj: bpy.types.Object
    parent: bpy.types.Object | None
    parent_type: Any  #: one of Blender's parent type identifiers ('OBJECT', 'BONE', ...)
    parent_bone: str
    parent_vertices: tuple
    matrix_parent_inverse: Matrix

    @classmethod
    def save(cls, obj) -> Parenting:
        return cls(
            obj,
            obj.parent,
            obj.parent_type,
            obj.parent_bone,
            tuple(obj.parent_vertices),
            obj.matrix_parent_inverse.copy(),
        )

    def restore(self) -> None:
        obj = self.obj
        obj.parent = self.parent
        obj.parent_type = self.parent_type
        obj.parent_bone = self.parent_bone
        obj.parent_vertices = self.parent_vertices
        obj.matrix_parent_inverse = self.matrix_parent_inverse
