"""Transforms for accumulating engines (Unreal, Ogre): per node, the local translation /
rotation / scale whose accumulation (``CombineTransforms``, see :func:`core.accumulate`)
lands every node at Blender's world position and rotation, with the world scale Blender
shows, and the residual where no TRS can: Blender's world itself is sheared.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from .... import core
from ..errors import ExportError
from ..inspection import Inspection

ACCUMULATED_SCHEMA = "hierarchy_inspector.accumulated/1"
CSV_COLUMNS = (
    "name",
    "kind",
    "armature",
    "parent",
    "tx",
    "ty",
    "tz",
    "qw",
    "qx",
    "qy",
    "qz",
    "sx",
    "sy",
    "sz",
    "residual_max_corner",
)


def accumulated_locals(inspection: Inspection) -> tuple[core.TRS, core.Deviation]:
    """Local TRS ``(N,)`` per node for accumulating engines, and what remains off.

    Each node's world is estimated as Blender's world decomposed (translation,
    rotation, signed column lengths); the local TRS is the one ``CombineTransforms``
    turns the parent's estimate into this node's: exact position and rotation, and
    exact scale wherever Blender's world is not sheared. The returned deviation
    compares the accumulation of these locals with Blender's world matrices.
    """
    nodes = inspection.nodes
    world = inspection.world
    parents = nodes.parents
    has = parents >= 0
    p = np.where(has, parents, 0)
    ps = world.scale[p]
    zero = has & np.any(ps == 0.0, axis=-1)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        raise ExportError(
            f"'{nodes.label(int(parents[i]))}' has zero scale on an axis: no local scale of "
            f"'{nodes.label(i)}' can reproduce Blender in an accumulating engine"
        )
    pq_inv = core.quat_conjugate(world.rotation[p])
    offset = core.quat_rotate(pq_inv, world.translation - world.translation[p])
    safe = np.where(has[:, None], ps, 1.0)
    translation = np.where(has[:, None], offset / safe, world.translation)
    rotation = np.where(has[:, None], core.quat_multiply(pq_inv, world.rotation), world.rotation)
    scale = np.where(has[:, None], world.scale / safe, world.scale)
    local = core.TRS(translation, rotation, scale)
    rebuilt = inspection.hierarchy.accumulate(local).to_matrix()
    return local, core.deviation(nodes.world, rebuilt, nodes.box_min, nodes.box_max)


def accumulated_document(inspection: Inspection) -> dict:
    """The corrected local TRS per node (root first) for pipelines that set transforms."""
    local, residual = accumulated_locals(inspection)
    nodes = inspection.nodes
    entries = []
    for i in inspection.root_first():
        i = int(i)
        parent = int(nodes.parents[i])
        entries.append(
            {
                "name": nodes.name(i),
                "kind": nodes.kind(i),
                "armature": nodes.armature(i),
                "parent": nodes.name(parent) if parent >= 0 else None,
                "parent_armature": nodes.armature(parent) if parent >= 0 else None,
                "translation": local.translation[i].tolist(),
                "rotation": local.rotation[i].tolist(),
                "scale": local.scale[i].tolist(),
                "residual": {
                    "position": float(residual.position[i]),
                    "rotation_deg": float(residual.rotation_deg[i]),
                    "max_corner": float(residual.max_corner[i]),
                },
            }
        )
    return {
        "schema": ACCUMULATED_SCHEMA,
        "convention": "world = CombineTransforms(parent world, local); rotation wxyz; "
        "translation in the parent's scaled, rotated frame",
        "nodes": entries,
        "max_residual_corner": float(residual.max_corner.max()) if len(entries) else 0.0,
    }


def accumulated_csv(document: dict) -> str:
    """One CSV row per node of :func:`accumulated_document` (columns :data:`CSV_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in document["nodes"]:
        writer.writerow(
            [
                e["name"],
                e["kind"],
                e["armature"] or "",
                e["parent"] or "",
                *e["translation"],
                *e["rotation"],
                *e["scale"],
                e["residual"]["max_corner"],
            ]
        )
    return buf.getvalue()
