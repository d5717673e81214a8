"""Why nodes are flagged, grouped the way a rigger edits: by the node whose scale
channels are non-uniform (the squash-and-stretch edit) nearest above each flagged node.

A *source* is a node whose own scale is non-uniform: the scale channels the user typed
when the scene adapter read them (``Nodes.channel_scale``), else the scale of its local
matrix. Each node's *cause* is the nearest source on its chain, itself included (-1:
none, e.g. shear that comes from a parent inverse or constraints). Vectorised: one numpy
step per depth level, no per-node Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..inspection import Inspection
from ..thresholds import NON_UNIFORM_RATIO


def non_uniform(scales: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: the ``(N, 3)`` scales differ per axis by more than the policy's ratio."""
    mags = np.abs(np.asarray(scales, dtype=np.float64)).reshape(-1, 3)
    if not len(mags):
        return np.zeros(0, dtype=bool)
    top = mags.max(axis=-1)
    return top - mags.min(axis=-1) > NON_UNIFORM_RATIO * np.maximum(top, 1e-12)


def scale_sources(inspection: Inspection) -> np.ndarray:
    """``(N,)`` bool: nodes whose own scale is non-uniform (see the module docstring)."""
    channel = inspection.nodes.channel_scale
    known = np.isfinite(channel).all(axis=-1)
    local = non_uniform(inspection.analysis.local.scale)
    return np.where(known, non_uniform(np.where(known[:, None], channel, 1.0)), local)


def _levels(inspection: Inspection) -> list[np.ndarray]:
    depth = inspection.hierarchy.depth
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2)) if len(depth) else [0]
    return [order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]


def nearest_sources(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    """Per node ``(N,)``: the nearest source on its chain (itself included; -1 none),
    and how many sources its chain holds (computed once per inspection)."""
    if "nearest_sources" not in inspection.derived:
        inspection.derived["nearest_sources"] = _nearest_sources(inspection)
    return inspection.derived["nearest_sources"]


def _nearest_sources(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    sources = scale_sources(inspection)
    parents = inspection.nodes.parents
    cause = np.where(sources, np.arange(len(sources)), -1)
    count = sources.astype(np.int64)
    for level in _levels(inspection)[1:]:
        up = parents[level]
        inherit = cause[level] < 0
        cause[level] = np.where(inherit, cause[up], cause[level])
        count[level] += count[up]
    return cause, count


@dataclass
class CauseGroup:
    """Flagged nodes sharing one cause. ``members`` worst first (largest corner distance)."""

    cause: int  #: node index of the source, -1: no scaled ancestor
    members: np.ndarray
    worst_corner: float


def cause_groups(inspection: Inspection, indices=None) -> list[CauseGroup]:
    """``indices`` (default: the flagged nodes) grouped by cause, worst group first."""
    idx = np.flatnonzero(inspection.flagged) if indices is None else np.asarray(indices, dtype=np.int64)
    if not len(idx):
        return []
    cause, _count = nearest_sources(inspection)
    ordered = inspection.worst_first(idx)  # then grouped by a stable sort: worst first inside each group
    by_cause = ordered[np.argsort(cause[ordered], kind="stable")]
    causes, starts = np.unique(cause[by_cause], return_index=True)
    members = np.split(by_cause, starts[1:])
    worst = inspection.worst_corner[by_cause[starts]]
    groups = [CauseGroup(int(c), m, float(w)) for c, m, w in zip(causes.tolist(), members, worst.tolist(), strict=True)]
    groups.sort(key=lambda g: (-g.worst_corner, g.cause))
    return groups


def group_label(inspection: Inspection, group: CauseGroup) -> str:
    """``torso (1.3, 1, 0.7)``: the scaled node and its scale, or what the nodes
    without a scaled ancestor share."""
    if group.cause < 0:
        return "no scaled parent (constraints, parent inverse)"
    nodes = inspection.nodes
    scale = nodes.channel_scale[group.cause]
    if not np.isfinite(scale).all():
        scale = inspection.analysis.local.scale[group.cause]
    values = ", ".join(f"{v:.3g}" for v in np.asarray(scale, dtype=float) + 0.0)
    return f"{nodes.name(group.cause)} ({values})"
