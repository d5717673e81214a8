"""Warnings in an artist's words: what is wrong with a node, why, and what to do.

Blender-free: reads an :class:`~.inspection.Inspection` and names nodes by label.
"""

from __future__ import annotations

import numpy as np

from ... import core
from .engines.paths import ACCUMULATED, MATRIX, UNREAL_FBX, UNREAL_INTERCHANGE
from .inspection import Inspection
from .nodes import BONE
from .text import PLAIN, Units
from .thresholds import NON_UNIFORM_RATIO


def _fmt3(v) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in np.asarray(v, dtype=float) + 0.0) + ")"


def explain(inspection: Inspection, i: int, units: Units = PLAIN) -> list[str]:
    """Plain-language warnings for node ``i``: what is wrong and why (lengths in
    ``units``). What to do is :func:`.advice.actions.advice`'s (per engine family)."""
    nodes, a = inspection.nodes, inspection.analysis
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
    out += _engine_lines(inspection, i, name, units)
    return out


#: Why each engine path puts a node off (after "<engine> puts 'X' up to N off").
_WHY = {
    MATRIX: "the plain export drops the shear of a local matrix on its chain",
    UNREAL_FBX: "the importer keeps each node's global without its shear",
    UNREAL_INTERCHANGE: "it scales each child along its own axes, Blender along its parent's",
    ACCUMULATED: "it scales each child along its own axes, Blender along its parent's",
}


def _engine_lines(inspection: Inspection, i: int, name: str, units: Units) -> list[str]:
    """One sentence per engine path that counts and puts node ``i`` over the corner
    threshold with Blender's plain export; paths with the same distance and reason share
    one (Interchange and Ogre usually do)."""
    limit = inspection.thresholds.corner
    groups: dict[tuple[str, str], list[str]] = {}
    for path in inspection.thresholds.engines:
        corner = float(inspection.corner(path)[i])
        if corner > limit:
            reason = _WHY[path]
            if path == UNREAL_FBX and not inspection.sheared[i]:
                reason = "the plain FBX drops the shear of a local matrix on its chain"
            groups.setdefault((units.length(corner), reason), []).append(path)
    lines = []
    for (length, reason), paths in groups.items():
        engines = " and ".join(_SUBJECT[p] for p in paths)
        verb = "puts" if len(paths) == 1 and paths[0] != MATRIX else "put"
        lines.append(f"{engines} {verb} '{name}' up to {length} off with Blender's plain export: {reason}.")
    return lines


#: Each path as the subject of a sentence.
_SUBJECT = {
    MATRIX: "glTF viewers, Unity and Godot",
    UNREAL_FBX: "Unreal's FBX importer",
    UNREAL_INTERCHANGE: "Unreal (from locals)",
    ACCUMULATED: "Ogre",
}


def shear_cause(inspection: Inspection, i: int) -> tuple[int, float] | None:
    """The nearest ancestor whose own non-uniform scale combines with a rotation below
    it, and that rotation in degrees; None when no ancestor explains the shear.

    The rotation between them is the product of the local rotations in between (the
    global rotations' difference), not the sheared world matrices' axes. Computed for
    every node at once the first time (:func:`shear_causes`).
    """
    ancestor, angle = shear_causes(inspection)
    return (int(ancestor[i]), float(angle[i])) if ancestor[i] >= 0 else None


def shear_causes(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shear_cause` of every node: the ancestor ``(N,)`` (-1: none) and the rotation
    ``(N,)`` in degrees, walking all nodes up one level per step (kept on the inspection)."""
    if "shear_causes" not in inspection.derived:
        inspection.derived["shear_causes"] = _shear_causes(inspection)
    return inspection.derived["shear_causes"]


def _shear_causes(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    parents, a = inspection.nodes.parents, inspection.analysis
    n = len(parents)
    frames = core.quat_to_matrix(a.global_rotation) if n else np.zeros((0, 3, 3))
    mags = np.abs(a.local.scale)
    top = mags.max(axis=-1) if n else np.zeros(0)
    scaled = top - (mags.min(axis=-1) if n else 0.0) > NON_UNIFORM_RATIO * np.maximum(top, 1e-12)
    ancestor = np.full(n, -1, dtype=np.int64)
    angle = np.zeros(n)
    walking = np.flatnonzero(parents >= 0)
    up = parents[walking]
    while len(walking):
        rel = np.swapaxes(frames[up], -1, -2) @ frames[walking]
        aligned = (np.abs(np.abs(rel) - np.round(np.abs(rel))) < 1e-5).all(axis=(-2, -1))
        found = scaled[up] & ~aligned
        if found.any():
            ancestor[walking[found]] = up[found]
            q = core.matrix_to_quat(rel[found])
            angle[walking[found]] = np.degrees(2.0 * np.arctan2(np.linalg.norm(q[:, 1:], axis=-1), np.abs(q[:, 0])))
        keep = ~found & (parents[up] >= 0)
        walking, up = walking[keep], parents[up[keep]]
    return ancestor, angle
