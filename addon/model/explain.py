"""Warnings in an artist's words: what is wrong with a node, why, and what to do.

Blender-free: reads an :class:`~.inspection.Inspection` and names nodes by label.
"""

from __future__ import annotations

import numpy as np

from ... import core
from .inspection import Inspection
from .nodes import BONE, Nodes
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


def explain(inspection: Inspection, i: int) -> list[str]:
    """Plain-language warnings for node ``i``: what is wrong, why, and what to do."""
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
        out.append(
            f"The local matrix of '{name}' holds {local_shear:.1f} deg of shear (often a parent inverse set while "
            f"the parent was rotated and scaled non-uniformly). glTF and FBX exporters drop it silently: "
            f"Fix > Insert helpers keeps it exact, or clear the parent inverse."
        )
    shear = float(inspection.shear_max[i])
    if inspection.sheared[i]:
        cause = shear_cause(inspection, i)
        if cause is not None:
            ancestor, angle = cause
            scale = a.local.scale[ancestor]
            tip = _fix_tip(nodes, i, ancestor)
            out.append(
                f"'{name}' is skewed {shear:.1f} deg: its ancestor '{nodes.label(ancestor)}' is scaled non-uniformly "
                f"{_fmt3(scale)} and '{name}' is rotated {angle:.0f} deg relative to it. To fix, {tip}."
            )
        else:
            out.append(f"'{name}' is skewed {shear:.1f} deg in Blender; no engine can show that.")
    acc = float(a.accumulated_deviation.max_corner[i])
    if acc > limits.corner:
        out.append(
            f"In Unreal / Ogre (scale accumulated along each child's own axes) '{name}' moves up to {acc:.3g} units "
            f"from where Blender shows it."
        )
    mat = float(a.matrix_model_deviation.max_corner[i])
    if mat > limits.corner:
        out.append(
            f"After a glTF / FBX export (Unity, Godot, viewers) '{name}' moves up to {mat:.3g} units: "
            f"use Fix > Insert helpers before exporting."
        )
    return out


def _fix_tip(nodes: Nodes, i: int, ancestor: int) -> str:
    """What to do, by what the scaled ancestor is."""
    label = nodes.label(ancestor)
    if nodes.kind(ancestor) == BONE:
        if nodes.kind(i) == BONE:
            return "set the Inherit Scale of the bones below it to Aligned or Fix Shear"
        return f"parent to a bone without non-uniform scale, or remove the scale of '{label}'"
    if nodes.kind(i) == BONE and nodes.armature(i) == nodes.keys[ancestor][0]:
        # Bones never see the armature object's scale through Inherit Scale.
        return f"apply the scale of the armature object '{label}' (Ctrl+A); Inherit Scale cannot help"
    return f"apply the scale of '{label}' (Ctrl+A) or parent to an unscaled empty"


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
