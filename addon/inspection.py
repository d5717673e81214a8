"""What the panel, the overlay, the scan and the reports show, computed from arrays.

No bpy here: :mod:`.reading` turns Blender data into :class:`Nodes`, this module runs
the core analysis on them and explains, in an artist's words, why a node is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import core

OBJECT = "object"
BONE = "bone"

#: Default thresholds (the add-on preferences override them).
SHEAR_THRESHOLD_DEG = 0.1
CORNER_THRESHOLD = 1e-3
#: A scale counts as non-uniform when its largest and smallest magnitudes differ by more.
NON_UNIFORM_RATIO = 1e-4
#: Local shear below this (degrees) is never treated as real.
LOCAL_SHEAR_FLOOR_DEG = 1e-4
#: ``inverse(parent world) @ world`` from float32 matrices carries noise of about
#: ``eps32 * cond(parent)`` radians; shear below this many times that is not trusted.
LOCAL_NOISE_FACTOR = 8.0
_EPS32 = float(np.finfo(np.float32).eps)


@dataclass
class Nodes:
    """A hierarchy read from Blender (any order; parents need not come first).

    ``keys[i]`` is ``(object_name, bone_name)``, ``bone_name == ""`` for objects.
    ``world`` are Blender's evaluated world matrices; boxes are local ``(N, 3)`` bounds.
    ``notes[i]`` says why node i is "evaluated differently" (constraints, drivers,
    physics...), "" when Blender's matrix follows from the raw properties.
    """

    keys: list[tuple[str, str]] = field(default_factory=list)
    parents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    world: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    box_min: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    box_max: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.notes:
            self.notes = [""] * len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def name(self, i: int) -> str:
        obj, bone = self.keys[i]
        return bone or obj

    def kind(self, i: int) -> str:
        return BONE if self.keys[i][1] else OBJECT

    def armature(self, i: int) -> str | None:
        obj, bone = self.keys[i]
        return obj if bone else None

    def label(self, i: int) -> str:
        """``Armature > Bone`` for bones, the object name otherwise."""
        obj, bone = self.keys[i]
        return f"{obj} > {bone}" if bone else obj

    def index(self) -> dict[tuple[str, str], int]:
        return {k: i for i, k in enumerate(self.keys)}

    def chain(self, i: int) -> list[int]:
        """Indices from the root down to node ``i`` (inclusive)."""
        out = [i]
        while self.parents[out[-1]] >= 0:
            out.append(int(self.parents[out[-1]]))
        return out[::-1]


@dataclass
class Inspection:
    """The analysis of :class:`Nodes`; arrays have N on the first axis."""

    nodes: Nodes
    hierarchy: core.Hierarchy
    local_matrices: np.ndarray  #: (N, 4, 4) ``inverse(parent world) @ world``
    analysis: core.Analysis
    world: core.Decomposition  #: Blender's world matrices decomposed
    singular_parent: np.ndarray  #: (N,) bool, parent world not invertible
    shear_threshold_deg: float = SHEAR_THRESHOLD_DEG
    corner_threshold: float = CORNER_THRESHOLD

    # Derived per-node arrays: computed once (``explain`` and the report read them per node).

    @cached_property
    def local_shear_deg(self) -> np.ndarray:
        """Shear angles ``(N, 3)`` of the local matrices (what an exporter drops)."""
        return self.analysis.local.shear_deg

    @cached_property
    def shear_max(self) -> np.ndarray:
        """Largest |shear angle| of Blender's world matrix, degrees ``(N,)``."""
        return np.abs(self.analysis.shear_deg).max(axis=-1) if len(self.nodes) else np.zeros(0)

    @cached_property
    def local_shear_max(self) -> np.ndarray:
        """Largest |shear angle| of the local matrix (what an exporter drops) ``(N,)``."""
        return np.abs(self.local_shear_deg).max(axis=-1) if len(self.nodes) else np.zeros(0)

    @cached_property
    def local_shear_noise_deg(self) -> np.ndarray:
        """Float32 noise of the local shear ``(N,)``, degrees: Blender's matrices are
        float32, and inverting the parent's world amplifies their round-off by its
        condition number (a parent scaled (50, 0.02, 1) makes a clean child look
        sheared by a few thousandths of a degree)."""
        n = len(self.nodes)
        noise = np.zeros(n)
        has = self.nodes.parents >= 0
        if has.any():
            sv = np.linalg.svd(self.nodes.world[self.nodes.parents[has], :3, :3], compute_uv=False)
            cond = sv[:, 0] / np.maximum(sv[:, 2], 1e-300)
            noise[has] = np.degrees(LOCAL_NOISE_FACTOR * _EPS32 * np.minimum(cond, 1e12))
        return noise

    @cached_property
    def local_shear_real(self) -> np.ndarray:
        """Local shear an exporter really drops (above the floor and the noise) ``(N,)``."""
        return self.local_shear_max > np.maximum(LOCAL_SHEAR_FLOOR_DEG, self.local_shear_noise_deg)

    @cached_property
    def worst_corner(self) -> np.ndarray:
        """Largest corner distance of either engine model from Blender ``(N,)``."""
        return np.maximum(self.analysis.matrix_model.max_corner, self.analysis.accumulated_deviation.max_corner)

    @cached_property
    def sheared(self) -> np.ndarray:
        return self.shear_max > self.shear_threshold_deg

    @cached_property
    def flagged(self) -> np.ndarray:
        """Nodes an artist should look at: sheared, a lossy local, or models apart."""
        lossy = self.local_shear_real & (self.local_shear_max > self.shear_threshold_deg)
        return self.sheared | lossy | (self.worst_corner > self.corner_threshold)

    def summary(self) -> dict:
        n = len(self.nodes)
        return {
            "nodes": n,
            "sheared": int(self.sheared.sum()),
            "flagged": int(self.flagged.sum()),
            "max_shear_deg": float(self.shear_max.max()) if n else 0.0,
            "max_deviation": float(self.worst_corner.max()) if n else 0.0,
        }


def local_matrices(nodes: Nodes) -> tuple[np.ndarray, np.ndarray]:
    """``inverse(parent world) @ world`` per node, and which parents are singular.

    A parent with zero scale has no inverse: its children get the pseudo-inverse (the
    best local an exporter could write) and are marked.
    """
    world = nodes.world
    local = world.copy()
    has_parent = nodes.parents >= 0
    singular = np.zeros(len(nodes), dtype=bool)
    if has_parent.any():
        parent_world = world[nodes.parents[has_parent]]
        inv, bad = core.affine_inverse(parent_world)
        if bad.any():
            inv[bad] = np.linalg.pinv(parent_world[bad])
        local[has_parent] = inv @ world[has_parent]
        singular[np.flatnonzero(has_parent)[bad]] = True
    return local, singular


def inspect(
    nodes: Nodes,
    shear_threshold_deg: float = SHEAR_THRESHOLD_DEG,
    corner_threshold: float = CORNER_THRESHOLD,
) -> Inspection:
    """Run the core analysis on ``nodes`` (Blender's world matrices as the reference)."""
    names = [nodes.label(i) for i in range(len(nodes))]
    hierarchy = core.Hierarchy(nodes.parents, names)
    local, singular = local_matrices(nodes)
    analysis = core.analyze(hierarchy, local, nodes.world, nodes.box_min, nodes.box_max)
    return Inspection(
        nodes=nodes,
        hierarchy=hierarchy,
        local_matrices=local,
        analysis=analysis,
        world=analysis.reference,
        singular_parent=singular,
        shear_threshold_deg=shear_threshold_deg,
        corner_threshold=corner_threshold,
    )


# -- explanations ------------------------------------------------------------------------


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
    name = nodes.label(i)
    out: list[str] = []
    if nodes.notes[i]:
        out.append(f"'{name}' is evaluated differently ({nodes.notes[i]}): Blender's matrix is not its raw transform.")
    if inspection.singular_parent[i]:
        parent = nodes.label(int(nodes.parents[i]))
        out.append(f"Parent '{parent}' has zero scale on an axis: the local transform of '{name}' is undefined.")
    local_shear = float(inspection.local_shear_max[i])
    if local_shear > inspection.shear_threshold_deg and inspection.local_shear_real[i]:
        out.append(
            f"The local matrix of '{name}' holds {local_shear:.1f} deg of shear (often a parent inverse set while "
            f"the parent was rotated and scaled non-uniformly). glTF and FBX exporters drop it silently: "
            f"Fix > Insert helpers keeps it exact, or clear the parent inverse."
        )
    shear = float(inspection.shear_max[i])
    if shear > inspection.shear_threshold_deg:
        cause = _shear_cause(inspection, i)
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
    if acc > inspection.corner_threshold:
        out.append(
            f"In Unreal / Ogre (scale accumulated along each child's own axes) '{name}' moves up to {acc:.3g} units "
            f"from where Blender shows it."
        )
    mat = float(a.matrix_model.max_corner[i])
    if mat > inspection.corner_threshold:
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


def _shear_cause(inspection: Inspection, i: int) -> tuple[int, float] | None:
    """The nearest ancestor whose own non-uniform scale combines with a rotation below it.

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
