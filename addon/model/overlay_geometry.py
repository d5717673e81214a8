"""The viewport overlay's geometry with numpy (no GPU, tested without Blender): each
node's box as Blender places it (coloured by skew) and as accumulating engines place
it, with the local axes along which they apply scale. The UI layer only uploads it.

What is drawn says something: an unflagged node gets its Blender box only (the engine
box would coincide), an unflagged armature object nothing (its box is a cage around
the whole rig), and many flagged nodes are cut to the worst N or one per cause group
(:func:`overlay_indices`). The palette keeps clear of Blender's theme bone colours and
Rigify's (checked against the theme by the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .advice.causes import cause_groups
from .inspection import Inspection
from .thresholds import DEFAULT, Thresholds

#: The 12 edges of a box as pairs of corner indices (corners: X varies fastest).
BOX_EDGES = np.array(
    [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]], dtype=np.int64
)
#: The 8 corners of the unit cube ``(8, 3)``, X varying fastest.
UNIT_CORNERS = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64)


@dataclass(frozen=True)
class OverlayStyle:
    """Colours (RGBA, 0..1) and line settings of the overlay; the add-on preferences'
    defaults."""

    colour_blender: tuple = (0.1, 0.1, 1.0, 0.9)
    colour_accumulated: tuple = (0.0, 1.0, 0.6, 1.0)
    colour_skew_low: tuple = (1.0, 0.8, 0.6, 1.0)
    colour_skew_high: tuple = (1.0, 0.4, 1.0, 1.0)
    skew_full_scale_deg: float = 30.0  #: shear drawn in the strong colour (degrees)
    line_width: float = 2.0  #: pixels
    max_nodes: int = 25  #: flagged nodes drawn at most (the worst first)


def overlay_indices(inspection: Inspection, indices, max_nodes: int | None = None, per_cause: bool = False):
    """Which of ``indices`` the overlay draws ``(K,)``: no unflagged armature object; of
    more than ``max_nodes`` flagged nodes, the worst ``max_nodes`` (or with
    ``per_cause`` the worst of each cause group). The unflagged chain nodes are kept."""
    idx = np.asarray(indices, dtype=np.int64)
    nodes, flagged = inspection.nodes, inspection.flagged
    keep = np.array([flagged[i] or nodes.types[i] != "ARMATURE" for i in idx], dtype=bool)
    idx = idx[keep] if len(idx) else idx
    hot = idx[flagged[idx]] if len(idx) else idx
    if per_cause and len(hot):
        chosen = [int(g.members[0]) for g in cause_groups(inspection, hot)]
        hot_keep = set(chosen[:max_nodes] if max_nodes else chosen)
    elif max_nodes is not None and len(hot) > max_nodes:
        hot_keep = set(inspection.worst_first(hot)[:max_nodes].tolist())
    else:
        return idx
    return np.array([i for i in idx if not flagged[i] or int(i) in hot_keep], dtype=np.int64)


def box_edges(matrices: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(K, 12, 2, 3)`` edge endpoints of the boxes ``lo, hi (K, 3)`` placed by
    ``matrices (K, 4, 4)``."""
    corners = lo[:, None, :] + UNIT_CORNERS * (hi - lo)[:, None, :]
    placed = np.einsum("kij,kcj->kci", matrices[:, :3, :3], corners) + matrices[:, None, :3, 3]
    return placed[:, BOX_EDGES]


def skew_colours(shear_deg: np.ndarray, style: OverlayStyle, thresholds: Thresholds = DEFAULT) -> np.ndarray:
    """``(K, 4)`` colours: the Blender box colour when unsheared, else a ramp from the
    slight to the strong skew colour reaching it at ``skew_full_scale_deg``."""
    low, high = np.array(style.colour_skew_low), np.array(style.colour_skew_high)
    t = np.clip(shear_deg / style.skew_full_scale_deg, 0.0, 1.0)[:, None]
    ramp = low + (high - low) * t
    return np.where((shear_deg > thresholds.shear_deg)[:, None], ramp, np.array(style.colour_blender))


def overlay_lines(inspection: Inspection, indices, style: OverlayStyle, axes: bool = True):
    """Line endpoints ``(M, 3)`` and per-endpoint colours ``(M, 4)`` (float32) for the overlay.

    Per node: the Blender box (skew-coloured); for flagged nodes also the engine box (as
    the engine path that counts and puts it furthest off shows it) and, with ``axes``, that
    engine's local axes from the box centre, each as long as the box's half extent times
    the engine's scale on that axis.
    """
    idx = np.asarray(indices, dtype=np.int64)
    if idx.size == 0:
        return np.zeros((0, 3), dtype=np.float32), np.zeros((0, 4), dtype=np.float32)
    nodes = inspection.nodes
    lo, hi = nodes.box_min[idx], nodes.box_max[idx]
    hot = idx[inspection.flagged[idx]]
    parts = [box_edges(nodes.world[idx], lo, hi).reshape(-1, 3)]
    colours = [np.repeat(skew_colours(inspection.shear_max[idx], style, inspection.thresholds), 24, axis=0)]
    if hot.size:
        h_lo, h_hi = nodes.box_min[hot], nodes.box_max[hot]
        worst = inspection.worst_path()
        engine = np.array([inspection.engine_worlds[worst[i]][i] for i in hot.tolist()])
        parts.append(box_edges(engine, h_lo, h_hi).reshape(-1, 3))
        colours.append(np.tile(np.array(style.colour_accumulated), (hot.size * 24, 1)))
    if axes and hot.size:
        acc = engine
        centre = 0.5 * (h_lo + h_hi)
        origin = np.einsum("kij,kj->ki", acc[:, :3, :3], centre) + acc[:, :3, 3]
        half = 0.5 * (h_hi - h_lo)
        ends = origin[:, None, :] + np.swapaxes(acc[:, :3, :3], 1, 2) * half[:, :, None]  # (K, axis, 3)
        pairs = np.stack((np.repeat(origin[:, None, :], 3, axis=1), ends), axis=2)  # (K, 3, 2, 3)
        parts.append(pairs.reshape(-1, 3))
        # In the accumulated colour: red, green and blue axes would read as Rigify's IK, FK
        # and tweak bones.
        colours.append(np.tile(np.array(style.colour_accumulated), (hot.size * 6, 1)))
    return np.concatenate(parts).astype(np.float32), np.concatenate(colours).astype(np.float32)
