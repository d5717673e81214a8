"""Warnings in an artist's words: what is wrong with a node, why, and what to do.

Blender-free: reads an :class:`~.inspection.Inspection` and names nodes by label.
"""

from __future__ import annotations

import numpy as np

from ... import core
from .inspection import Inspection
from .nodes import BONE
from .text import PLAIN, Units
from .thresholds import NON_UNIFORM_RATIO


def _is_non_uniform(scale: np.ndarray) -> bool:
    mags = np.abs(scale)
    return bool(mags.max() - mags.min() > NON_UNIFORM_RATIO * max(mags.max(), 1e-12))


def _is_axis_aligned(rotation_matrix: np.ndarray, tolerance: float = 1e-5) -> bool:
    """True when a rotation only permutes / flips axes (multiples of 90 degrees)."""
    return bool(np.all(np.abs(np.abs(rotation_matrix) - np.round(np.abs(rotation_matrix))) < tolerance))


def _fmt3(v) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in np.asarray(v, dtype=float) + 0.0) + ")"


def _rotation_deg(m3: np.ndarray) -> float:
    q = core.matrix_to_quat(m3)
    return float(np.degrees(2.0 * np.arctan2(np.linalg.norm(q[1:]), abs(q[0]))))


def explain(inspection: Inspection, i: int, units: Units = PLAIN) -> list[str]:
    """Plain-language warnings for node ``i``: what is wrong and why (lengths in
    ``units``). What to do is :func:`.advice.actions.advice`'s (per engine family)."""
    nodes, a = inspection.nodes, inspection.analysis
    limits = inspection.thresholds
    name = nodes.label(i)
    out: list[str] = []
    if nodes.notes[i]:
        out.append(f"'{name}' is evaluated differently ({nodes.notes[i]}): Blender's matrix is not its raw transform.")
    if inspection.singular_parent[i]:
        parent = nodes.label(int(nodes.parents[i]))
        out.append(f"Parent '{parent}' has zero scale on an axis: the local transform of '{name}' is undefined.")
    if inspection.lossy_local[i]:
        local_shear = float(inspection.local_shear_max[i])
        why = (
            "its Inherit Scale mode under a non-uniformly scaled parent"
            if nodes.kind(i) == BONE
            else "often a parent inverse set while the parent was rotated and scaled non-uniformly"
        )
        out.append(
            f"The local matrix of '{name}' holds {local_shear:.1f}\N{DEGREE SIGN} of shear ({why}); "
            f"plain glTF and FBX exports drop it."
        )
    shear = float(inspection.shear_max[i])
    if inspection.sheared[i]:
        cause = shear_cause(inspection, i)
        if cause is not None:
            ancestor, angle = cause
            scale = a.local.scale[ancestor]
            out.append(
                f"'{name}' is skewed {shear:.1f}\N{DEGREE SIGN}: its ancestor '{nodes.label(ancestor)}' is scaled "
                f"non-uniformly {_fmt3(scale)} and '{name}' is rotated {angle:.0f}\N{DEGREE SIGN} relative to it."
            )
        else:
            out.append(f"'{name}' is skewed {shear:.1f}\N{DEGREE SIGN} in Blender; no engine can show that.")
    acc = float(a.accumulated_deviation.max_corner[i])
    if acc > limits.corner:
        out.append(
            f"Unreal and Ogre put '{name}' up to {units.length(acc)} off: they scale each child along its own "
            f"axes, Blender along its parent's."
        )
    mat = float(a.matrix_model_deviation.max_corner[i])
    if mat > limits.corner:
        out.append(f"A plain glTF or FBX export (Unity, Godot) puts '{name}' up to {units.length(mat)} off.")
    return out


def shear_cause(inspection: Inspection, i: int) -> tuple[int, float] | None:
    """The nearest ancestor whose own non-uniform scale combines with a rotation below
    it, and that rotation in degrees; None when no ancestor explains the shear.

    The rotation between them is the product of the local rotations in between (the
    global rotations' difference), not the sheared world matrices' axes.
    """
    nodes, a = inspection.nodes, inspection.analysis
    rot_i = core.quat_to_matrix(a.global_rotation[i])
    node = int(nodes.parents[i])
    while node >= 0:
        if _is_non_uniform(a.local.scale[node]):
            rel = core.quat_to_matrix(a.global_rotation[node]).T @ rot_i
            if not _is_axis_aligned(rel):
                return node, _rotation_deg(rel)
        node = int(nodes.parents[node])
    return None
