"""What the sidebar panel shows, as plain data: sections of (label, value) rows, the
chain rows and the comparison text. The UI layer only lays these out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import core
from ...core import unreal_math as ue
from .advice.actions import advice
from .engines.paths import ACCUMULATED, MATRIX, UNREAL_FBX, UNREAL_INTERCHANGE
from .explain import explain
from .inspection import Inspection
from .nodes import BONE
from .text import DEG, PLAIN, Units, fmt_num, fmt_vec

_EULER_EPS = 16 * float(np.finfo(np.float32).eps)


def euler_xyz_deg(q) -> np.ndarray:
    """XYZ Euler angles in degrees ``(3,)`` of a wxyz quaternion, as Blender's Rotation
    fields show them (of the two solutions, the one with the smaller angle sum, like
    ``mathutils.Matrix.to_euler('XYZ')``)."""
    r = core.quat_to_matrix(core.quat_normalize(np.asarray(q, dtype=np.float64)))
    cy = float(np.hypot(r[0, 0], r[1, 0]))
    if cy > _EULER_EPS:
        first = np.array([np.arctan2(r[2, 1], r[2, 2]), np.arctan2(-r[2, 0], cy), np.arctan2(r[1, 0], r[0, 0])])
        second = np.array([np.arctan2(-r[2, 1], -r[2, 2]), np.arctan2(-r[2, 0], -cy), np.arctan2(-r[1, 0], -r[0, 0])])
        best = first if np.abs(first).sum() <= np.abs(second).sum() else second
    else:
        best = np.array([np.arctan2(-r[1, 2], r[1, 1]), np.arctan2(-r[2, 0], cy), 0.0])
    return np.degrees(best)


@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    note: str = ""  #: one sentence under the title (why these values look the way they do)


#: Why a bone's local values differ from its Item tab (shown under the Local section).
BONE_LOCAL_NOTE = (
    "A bone's local is relative to its parent bone as posed; the Item tab shows the change from the rest pose."
)


def _moved(dev, i: int, units: Units) -> str:
    """``70.7 cm, 12.3°``: how far the origin moves and how far the axes turn."""
    return f"{units.length(dev.position[i])}, {fmt_num(dev.rotation_deg[i], 1)}{DEG}"


def accumulated_export_residual(inspection: Inspection) -> np.ndarray | None:
    """``(N,)`` largest corner distance left by Fix > Export accumulated TRS (None when
    a zero scale makes that export impossible).

    That export rebuilds every world as Blender's world decomposed (translation,
    rotation, scale; the shear dropped), so what it leaves is the distance between the
    world and that TRS, node by node, without the export's hierarchy fold (equal to
    :func:`.exports.accumulated.accumulated_locals`'s residual: tested on the demo and
    on a Rigify rig). The panel computes it on every change.
    """
    nodes, world = inspection.nodes, inspection.world
    has = nodes.parents >= 0
    if np.any(world.scale[nodes.parents[has]] == 0.0):
        return None
    return core.box_corner_distance(
        nodes.world, core.TRS.from_decomposition(world).to_matrix(), nodes.box_min, nodes.box_max
    )


def unreal_export_residual(inspection: Inspection) -> np.ndarray:
    """``(N,)`` largest corner distance left by Export FBX (exact) in Unreal's classic
    importer: the file's globals are Blender's worlds, and the importer keeps each as an
    ``FTransform`` (its shear dropped), so what is left is each world's own skew."""
    nodes = inspection.nodes
    if not len(nodes):
        return np.zeros(0)
    kept = ue.to_matrix(*ue.from_matrix(nodes.world))
    return core.box_corner_distance(nodes.world, kept, nodes.box_min, nodes.box_max)


#: The row under each path's distance: how far its origin moves and its axes turn.
MOVED = {
    MATRIX: "glTF moved",
    UNREAL_FBX: "UE anim moved",
    UNREAL_INTERCHANGE: "UE locals moved",
    ACCUMULATED: "Ogre moved",
}
#: The panel's short name of each engine path (rows at the default sidebar width).
SHORT = {MATRIX: "glTF, Unity", UNREAL_FBX: "Unreal FBX", UNREAL_INTERCHANGE: "Unreal locals", ACCUMULATED: "Ogre"}


def deviation_section(inspection: Inspection, i: int, units: Units = PLAIN, residual=None) -> Section:
    """How far each engine path that counts puts node ``i`` with Blender's plain export
    (largest box-corner distance), how far its origin moves and its axes turn where it
    is off, then what the exports right for those paths leave: Export glTF / FBX (exact)
    nothing in glTF, Unity and Godot; Export FBX (exact) the world's own skew in Unreal's
    classic importer; Export FBX (accumulated) the same skew in Interchange and Ogre
    (``residual``: :func:`accumulated_export_residual`, when the caller has it)."""
    limit = inspection.thresholds.corner
    paths = inspection.thresholds.engines
    rows = []
    for p in paths:  # each path's distance, and under it how far it moves and turns (where off)
        rows.append((SHORT[p], units.length(inspection.corner(p)[i])))
        if inspection.corner(p)[i] > limit:
            rows.append((MOVED[p], _moved(inspection.deviations[p], i, units)))
    if MATRIX in paths:
        rows.append(("Exact glTF/FBX", units.length(0.0)))
    if UNREAL_FBX in paths:
        rows.append(("Exact FBX, UE", units.length(unreal_export_residual(inspection)[i])))
    if UNREAL_INTERCHANGE in paths or ACCUMULATED in paths:
        residual = accumulated_export_residual(inspection) if residual is None else residual
        rows.append(("Accum. FBX", "n/a (zero scale)" if residual is None else units.length(residual[i])))
    return Section("Off in engines (largest corner)", rows)


def node_sections(inspection: Inspection, i: int, units: Units = PLAIN, residual=None) -> list[Section]:
    """The detail sections for node ``i``, most important first: how far engines put
    it, then the local values exporters write, Blender's world, the accumulated world
    and Unity's world getters. Vectors are in the scene's base unit (see the labels)."""
    a = inspection.analysis
    w = inspection.world
    unit = f" ({units.base})" if units.base else ""
    local = Section(
        "Local (what exporters write)",
        [
            ("Location" + unit, units.vector(a.local.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(a.local.rotation[i]), 2) + DEG),
            ("Scale", fmt_vec(a.local.scale[i])),
            ("Shear lost", fmt_vec(inspection.local_shear_deg[i], 2) + DEG),
        ],
        BONE_LOCAL_NOTE if inspection.nodes.kind(i) == BONE else "",
    )
    world = Section(
        "Blender world",
        [
            ("Location" + unit, units.vector(w.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(w.rotation[i]), 2) + DEG),
            ("Scale", fmt_vec(w.scale[i])),
            ("Shear XY/YZ/ZX", fmt_vec(a.shear_deg[i], 2) + DEG),
        ],
    )
    accumulated = Section(
        "Accumulated world (Unreal, Ogre)",
        [
            ("Location" + unit, units.vector(a.accumulated.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(a.accumulated.rotation[i]), 2) + DEG),
            ("Scale", fmt_vec(a.accumulated.scale[i])),
        ],
    )
    getters = Section(
        "What Unity's world getters return",
        [
            ("rotation", fmt_vec(euler_xyz_deg(a.global_rotation[i]), 2) + DEG),
            ("lossyScale", fmt_vec(a.lossy_scale[i])),
        ],
        "lossyScale: the world scale without shear, as Unity reports it.",
    )
    return [deviation_section(inspection, i, units, residual), local, world, accumulated, getters]


@dataclass
class ChainRow:
    """One chain row: node index, depth (indentation), name, summary, flagged."""

    index: int
    depth: int
    name: str
    summary: str
    flagged: bool


def chain_rows(inspection: Inspection, chain: list[int], units: Units = PLAIN) -> list[ChainRow]:
    """One row per chain node, root first: its own name (the armature is the row above
    its root bones), and its shear and largest corner distance (never elided)."""
    flagged = inspection.flagged
    return [
        ChainRow(
            int(i),
            depth,
            inspection.nodes.name(i),
            f"{fmt_num(inspection.shear_max[i], 1)}{DEG}  {units.length(inspection.worst_corner[i])}",
            bool(flagged[i]),
        )
        for depth, i in enumerate(chain)
    ]


def comparison_text(inspection: Inspection, i: int, units: Units = PLAIN) -> str:
    """The panel's content for node ``i`` as plain text (Copy comparison)."""
    nodes = inspection.nodes
    lines = [f"{nodes.label(i)} ({nodes.kind(i)})"]
    for section in node_sections(inspection, i, units):
        lines.append(f"{section.title}:")
        lines += [f"  {label}: {value}" for label, value in section.rows]
        if section.note:
            lines.append(f"  ({section.note})")
    warnings = explain(inspection, i, units)
    if warnings:
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in warnings]
    todo = advice(inspection, i)
    if todo:
        lines.append("What to do:")
        lines += [f"  - {a.text}" for a in todo]
    return "\n".join(lines)


def focus_index(inspection: Inspection, chain: list[int], chosen: tuple[str, str]) -> int:
    """The chain node whose details are shown: the ``chosen`` (object, bone) while it is
    on the chain, else the chain's last (active) node."""
    keys = inspection.nodes.keys
    return next((i for i in chain if keys[i] == chosen), chain[-1])
