"""Why nodes are flagged over a frame range, grouped as the scene scan groups them
(:mod:`..advice.causes`): by the scaled node nearest up each node's chain (or up the
chain of the node its constraints copy) at the node's worst frame, each group named by
that node, how it is scaled there and the frame (``torso squash f20``).

Blender-free. The scene layer hands the scale channels the user keyed at the frames
(``channel (T, N, 3)``, NaN unknown: the local matrix's scale is used there), which
nodes copy another (``follows``) and which the viewport hides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .... import core
from ..advice.causes import NO_CAUSE, non_uniform, scale_label, squash_or_stretch, walk_sources
from ..inspection import local_matrices_of
from .over_frames import OverFrames


@dataclass
class RangeGroup:
    """Flagged nodes sharing one cause over the range."""

    cause: int  #: node index of the scaled node, -1: none
    frame: int  #: the worst frame of the group's worst member
    scale: np.ndarray  #: (3,) the cause's scale at that frame (NaN without a cause)
    members: np.ndarray  #: node indices, worst first
    worst_corner: float

    def label(self, keys) -> str:
        """``torso (1.3, 1, 0.7) f20`` (the list's cause row)."""
        if self.cause < 0:
            return NO_CAUSE
        obj, bone = keys[self.cause]
        return f"{scale_label(bone or obj, self.scale)} f{self.frame}"

    def marker(self, keys) -> str:
        """``torso squash f20``: a timeline marker's name (``worst f20`` without a cause)."""
        if self.cause < 0:
            return f"worst f{self.frame}"
        obj, bone = keys[self.cause]
        return f"{bone or obj} {squash_or_stretch(self.scale)} f{self.frame}"


def range_groups(over: OverFrames, channel: np.ndarray, follows: np.ndarray | None = None) -> list[RangeGroup]:
    """The nodes flagged at some frame of ``over``'s range grouped by cause, worst group
    first. ``channel (T, N, 3)``: each node's own scale channels at every frame of the
    range (NaN where unknown); ``follows (N,)``: the node each copies (-1 none). The
    causes are computed only at the distinct worst frames (one walk for all of them)."""
    series = over.series
    flagged = over.worst_first()
    if not len(flagged):
        return []
    at = over.worst_index[flagged]
    distinct, column = np.unique(at, return_inverse=True)
    world = series.world[distinct]  # (D, N, 4, 4)
    local, _singular = local_matrices_of(world.reshape(-1, 4, 4), _tiled(series.parents, len(distinct)))
    local_scale = np.linalg.norm(local.reshape(len(distinct), -1, 4, 4)[..., :3, :3], axis=-2)
    known = np.isfinite(channel[distinct]).all(axis=-1)
    scale = np.where(known[..., None], channel[distinct], local_scale)  # (D, N, 3)
    sources = non_uniform(scale.reshape(-1, 3)).reshape(known.shape)
    depth = core.Hierarchy(series.parents).depth
    cause, _count = walk_sources(sources, series.parents, depth, follows)
    node_cause = cause[column, flagged]
    groups = []
    for c in np.unique(node_cause):
        chosen = np.flatnonzero(node_cause == c)  # worst first, as flagged is
        members = flagged[chosen]
        group_scale = scale[column[chosen[0]], c] if c >= 0 else np.full(3, np.nan)
        frame = int(series.frames[over.worst_index[members[0]]])
        groups.append(RangeGroup(int(c), frame, group_scale, members, float(over.corner_max[members[0]])))
    groups.sort(key=lambda g: (-g.worst_corner, g.cause))
    return groups


def _tiled(parents: np.ndarray, copies: int) -> np.ndarray:
    """``parents (N,)`` for ``copies`` copies of the forest laid end to end."""
    n = len(parents)
    offsets = (np.arange(copies) * n)[:, None]
    return np.where(parents >= 0, parents + offsets, -1).reshape(-1)


def list_order(over: OverFrames, hidden: np.ndarray) -> np.ndarray:
    """The flagged nodes as the range list shows them: those the viewport shows first
    (a hidden ``ORG-`` or ``MCH-`` bone is not what an artist selects), each part worst
    first."""
    flagged = over.worst_first()
    shown = ~np.asarray(hidden, dtype=bool)[flagged]
    return np.concatenate((flagged[shown], flagged[~shown]))
