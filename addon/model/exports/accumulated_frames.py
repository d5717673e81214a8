"""Per-frame transforms for accumulating engines (Unreal, Ogre) over a frame range.

The single-frame rule of :mod:`.accumulated` applied at every frame at once: each node's
world is estimated as Blender's world decomposed (translation, rotation, signed column
lengths); the local TRS is the one ``CombineTransforms`` turns the parent's estimate
into the node's. Position and rotation are exact at every frame, scale too wherever
Blender's world is not sheared; the residual (the accumulation of these locals against
Blender's world matrices, largest box-corner distance) is reported per frame.
Rotations are kept in one hemisphere along time (an engine interpolating keys takes
the short way). Shapes: ``(T, N, ...)``, time first; quaternions ``(w, x, y, z)``.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from .... import core
from ..errors import ExportError
from ..nodes import node_label
from ..timeline import FrameSeries
from .accumulated import CSV_COLUMNS
from .animated_split import continuous_quaternions

ACCUMULATED_FRAMES_SCHEMA = "hierarchy_inspector.accumulated_frames/1"


def accumulated_frame_locals(series: FrameSeries) -> tuple[core.TRS, np.ndarray]:
    """Local TRS ``(T, N)`` per frame and node for accumulating engines, and the
    residual largest corner distance ``(T, N)`` (scene units) of their accumulation."""
    world = series.world
    t_count, n = world.shape[:2]
    d = core.decompose(world)
    parents = series.parents
    has = parents >= 0
    p = np.where(has, parents, 0)
    ps = d.scale[:, p]
    zero = has[None, :] & np.any(ps == 0.0, axis=-1)
    if zero.any():
        t, i = (int(v) for v in np.argwhere(zero)[0])
        raise ExportError(
            f"'{series.label(int(parents[i]))}' has zero scale on an axis at frame {int(series.frames[t])}: no "
            f"local scale of '{series.label(i)}' can reproduce Blender in an accumulating engine"
        )
    pq_inv = core.quat_conjugate(d.rotation[:, p])
    offset = core.quat_rotate(pq_inv, d.translation - d.translation[:, p])
    safe = np.where(has[None, :, None], ps, 1.0)
    h = has[None, :, None]
    translation = np.where(h, offset / safe, d.translation)
    rotation = np.where(h, core.quat_multiply(pq_inv, d.rotation), d.rotation)
    scale = np.where(h, d.scale / safe, d.scale)
    local = core.TRS(translation, continuous_quaternions(rotation), scale)
    tiled = core.Hierarchy(parents).tile(t_count)
    flat = core.TRS(translation.reshape(-1, 3), rotation.reshape(-1, 4), scale.reshape(-1, 3))
    rebuilt = tiled.accumulate(flat).to_matrix().reshape(t_count, n, 4, 4)
    residual = core.deviation(world, rebuilt, series.box_min, series.box_max).max_corner
    return local, residual


def _root_first(parents: np.ndarray) -> np.ndarray:
    depth = core.Hierarchy(parents).depth if len(parents) else np.zeros(0, dtype=np.int64)
    return np.argsort(depth, kind="stable")


def accumulated_frames_document(series: FrameSeries) -> dict:
    """Per node (root first) its local TRS at every frame and the residual per frame."""
    local, residual = accumulated_frame_locals(series)
    entries = []
    for i in _root_first(series.parents):
        i = int(i)
        obj, bone = series.keys[i]
        parent = int(series.parents[i])
        pobj, pbone = series.keys[parent] if parent >= 0 else (None, "")
        entries.append(
            {
                "name": bone or obj,
                "label": node_label(obj, bone),
                "kind": "bone" if bone else "object",
                "armature": obj if bone else None,
                "parent": (pbone or pobj) if parent >= 0 else None,
                "parent_armature": pobj if parent >= 0 and pbone else None,
                "translation": local.translation[:, i].tolist(),
                "rotation": local.rotation[:, i].tolist(),
                "scale": local.scale[:, i].tolist(),
                "residual_max_corner": residual[:, i].tolist(),
            }
        )
    return {
        "schema": ACCUMULATED_FRAMES_SCHEMA,
        "convention": "per frame: world = CombineTransforms(parent world, local); rotation wxyz (one hemisphere "
        "along time); translation in the parent's scaled, rotated frame; lists indexed like 'frames'",
        "frames": [int(f) for f in series.frames],
        "fps": float(series.fps),
        "nodes": entries,
        "max_residual_corner": float(residual.max()) if residual.size else 0.0,
    }


def accumulated_frames_csv(document: dict) -> str:
    """One CSV row per frame and node: ``frame`` then :data:`.accumulated.CSV_COLUMNS`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("frame", *CSV_COLUMNS))
    for t, frame in enumerate(document["frames"]):
        for e in document["nodes"]:
            writer.writerow(
                [
                    frame,
                    e["name"],
                    e["kind"],
                    e["armature"] or "",
                    e["parent"] or "",
                    *e["translation"][t],
                    *e["rotation"][t],
                    *e["scale"][t],
                    e["residual_max_corner"][t],
                ]
            )
    return buf.getvalue()
