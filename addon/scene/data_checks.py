"""Which of a node's own properties hold NaN or infinity, named the way the user finds
them in Blender's Transform panel. Only the few nodes whose world matrix is not finite
are looked at, one Python step each."""

from __future__ import annotations

import math

import bpy
import numpy as np

from ..model.inspection import non_finite
from ..model.nodes import Nodes
from .edits.editing import OBJECT_CHANNELS

_OBJECT_PROPERTIES = (*OBJECT_CHANNELS, "matrix_parent_inverse")
_BONE_PROPERTIES = ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale")


def _flat(value) -> list[float]:
    if hasattr(value, "__len__") and len(value) and hasattr(value[0], "__len__"):
        return [float(x) for row in value for x in row]
    return [float(x) for x in value]


def bad_properties(item, names: tuple[str, ...]) -> list[str]:
    """Names of ``item``'s properties (among ``names``) that hold NaN or infinity."""
    return [name for name in names if not all(math.isfinite(x) for x in _flat(getattr(item, name)))]


def describe(nodes: Nodes) -> None:
    """Fill ``nodes.problems`` for every node whose world matrix or box is not finite:
    which of its own properties hold NaN or infinity (empty when none: the values come
    from a parent, a constraint, a driver or an overflow)."""
    bad = non_finite(nodes)
    for i in np.flatnonzero(bad):
        p = int(nodes.parents[i])
        if p >= 0 and bad[p]:
            continue  # below a bad node: the message names where it starts
        object_name, bone_name = nodes.keys[i]
        obj = bpy.data.objects.get(object_name)
        if obj is None:
            continue
        if bone_name:
            item = obj.pose.bones.get(bone_name) if obj.pose is not None else None
            names = bad_properties(item, _BONE_PROPERTIES) if item is not None else []
        else:
            names = bad_properties(obj, _OBJECT_PROPERTIES)
        if names:
            nodes.problems[int(i)] = f"{', '.join(names)} {'hold' if len(names) > 1 else 'holds'} NaN or infinity"
