"""What the sidebar panel shows, as plain data: sections of (label, value) rows, the
chain rows and the comparison text. The UI layer only lays these out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import core
from .explain import explain
from .inspection import Inspection
from .text import fmt_num, fmt_vec

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


def _deviation_row(label: str, dev, i: int) -> tuple[str, str]:
    return (
        label,
        f"{fmt_num(dev.position[i])} moved, {fmt_num(dev.rotation_deg[i], 2)} deg, corners {fmt_num(dev.max_corner[i])}",
    )


def node_sections(inspection: Inspection, i: int) -> list[Section]:
    """The detail sections for node ``i``, as (label, value) rows."""
    a = inspection.analysis
    w = inspection.world
    local = Section(
        "Local (what exporters write)",
        [
            ("Location", fmt_vec(a.local.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(a.local.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(a.local.scale[i])),
            ("Shear lost", fmt_vec(inspection.local_shear_deg[i], 2) + " deg"),
        ],
    )
    world = Section(
        "Blender world",
        [
            ("Location", fmt_vec(w.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(w.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(w.scale[i])),
            ("Shear XY/YZ/ZX", fmt_vec(a.shear_deg[i], 2) + " deg"),
        ],
    )
    accumulated = Section(
        "Accumulated world (Unreal, Ogre)",
        [
            ("Location", fmt_vec(a.accumulated.translation[i])),
            ("Rotation", fmt_vec(euler_xyz_deg(a.accumulated.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(a.accumulated.scale[i])),
        ],
    )
    getters = Section(
        "World getters",
        [
            ("Global rotation", fmt_vec(euler_xyz_deg(a.global_rotation[i]), 2) + " deg"),
            ("Lossy scale", fmt_vec(a.lossy_scale[i])),
        ],
    )
    deviation = Section(
        "Deviation from Blender",
        [
            _deviation_row("Exported (glTF, Unity)", a.matrix_model_deviation, i),
            _deviation_row("Accumulated (Unreal)", a.accumulated_deviation, i),
        ],
    )
    return [local, world, accumulated, getters, deviation]


def chain_rows(inspection: Inspection, chain: list[int]) -> list[tuple[int, str, str, bool]]:
    """One row per chain node: (index, label, summary, flagged)."""
    flagged = inspection.flagged
    rows = []
    for depth, i in enumerate(chain):
        label = ("  " * depth) + inspection.nodes.name(i)
        summary = f"shear {fmt_num(inspection.shear_max[i], 1)} deg, corners {fmt_num(inspection.worst_corner[i])}"
        rows.append((i, label, summary, bool(flagged[i])))
    return rows


def comparison_text(inspection: Inspection, i: int) -> str:
    """The panel's content for node ``i`` as plain text (Copy comparison)."""
    nodes = inspection.nodes
    lines = [f"{nodes.label(i)} ({nodes.kind(i)})"]
    for section in node_sections(inspection, i):
        lines.append(f"{section.title}:")
        lines += [f"  {label}: {value}" for label, value in section.rows]
    warnings = explain(inspection, i)
    if warnings:
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in warnings]
    return "\n".join(lines)


def focus_index(inspection: Inspection, chain: list[int], chosen: tuple[str, str]) -> int:
    """The chain node whose details are shown: the ``chosen`` (object, bone) while it is
    on the chain, else the chain's last (active) node."""
    keys = inspection.nodes.keys
    return next((i for i in chain if keys[i] == chosen), chain[-1])
