"""Why nodes are flagged, grouped the way a rigger edits: by the node whose scale
channels are non-uniform (the squash-and-stretch edit) nearest above each flagged node.

A *source* is a node whose own scale is non-uniform: the scale channels the user typed
when the scene adapter read them (``Nodes.channel_scale``), else the scale of its local
matrix. Each node's *cause* is the nearest source on its chain, itself included (-1:
none, e.g. shear that comes from a parent inverse). A node whose constraints copy
another's transform (``Nodes.follows``: Rigify's ``DEF-`` bones copy their tweak bones)
takes its chain from the node it follows. Vectorised: one numpy step per depth level
(per link of the longest chain where nodes follow others), no per-node Python loop,
over any leading batch axes (frames of a range).
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


def nearest_sources(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    """Per node ``(N,)``: the nearest source on its chain (itself included; -1 none),
    and how many sources its chain holds (computed once per inspection)."""
    if "nearest_sources" not in inspection.derived:
        inspection.derived["nearest_sources"] = _nearest_sources(inspection)
    return inspection.derived["nearest_sources"]


def _nearest_sources(inspection: Inspection) -> tuple[np.ndarray, np.ndarray]:
    nodes = inspection.nodes
    return walk_sources(scale_sources(inspection), nodes.parents, inspection.hierarchy.depth, nodes.follows)


def walk_sources(sources: np.ndarray, parents: np.ndarray, depth: np.ndarray, follows=None):
    """``(cause, count)`` ``(..., N)``: for ``sources (..., N)`` bool (any leading axes,
    e.g. frames), each node's nearest source up its chain (itself included; -1 none) and
    how many sources the chain holds. ``depth (N,)``: the hierarchy's; ``follows (N,)``
    (-1 none): a node that follows another takes that node's chain instead of its
    parent's (then the walk repeats until nothing changes: as many steps as the longest
    chain of links, a Rigify rig's about 30)."""
    sources = np.asarray(sources, dtype=bool)
    n = sources.shape[-1]
    idx = np.arange(n)
    cause = np.where(sources, idx, -1)
    count = sources.astype(np.int64)
    if follows is not None and (np.asarray(follows) >= 0).any():
        up = np.where(np.asarray(follows) >= 0, follows, parents)
        has = up >= 0
        above = np.maximum(up, 0)
        for _ in range(n + 1):  # every chain is at most n links; a constraint cycle stops here
            new_cause = np.where(sources, idx, np.where(has, cause[..., above], -1))
            new_count = sources + np.where(has, count[..., above], 0)
            if np.array_equal(new_cause, cause) and np.array_equal(new_count, count):
                break
            cause, count = new_cause, new_count
        return cause, count
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2)) if n else [0]
    for d in range(1, len(bounds) - 1):
        level = order[bounds[d] : bounds[d + 1]]
        up = parents[level]
        cause[..., level] = np.where(cause[..., level] < 0, cause[..., up], cause[..., level])
        count[..., level] += count[..., up]
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
        return NO_CAUSE
    nodes = inspection.nodes
    scale = nodes.channel_scale[group.cause]
    if not np.isfinite(scale).all():
        scale = inspection.analysis.local.scale[group.cause]
    return scale_label(nodes.name(group.cause), scale)


#: The group of flagged nodes with no scaled node up their chain.
NO_CAUSE = "no scaled parent (constraints, parent inverse)"


def scale_label(name: str, scale) -> str:
    """``torso (1.3, 1, 0.7)``."""
    values = ", ".join(f"{v:.3g}" for v in np.asarray(scale, dtype=float) + 0.0)
    return f"{name} ({values})"


def squash_or_stretch(scale) -> str:
    """``stretch`` when the axis scaled furthest from 1 grows, else ``squash``: how an
    animator names the edit (``torso squash``, ``forearm_tweak.L stretch``)."""
    logs = np.log(np.maximum(np.abs(np.asarray(scale, dtype=float)), 1e-12))
    return "stretch" if logs[np.argmax(np.abs(logs))] > 0 else "squash"


def copies(inspection: Inspection, i: int) -> bool:
    """Whether node ``i`` is a bone whose constraints give it another node's transform
    (it follows a node that was read: ``Nodes.follows``)."""
    nodes = inspection.nodes
    return bool(nodes.keys[i][1]) and int(nodes.follows[i]) >= 0


def copied_skew(inspection: Inspection, i: int) -> str:
    """``'DEF-upper_arm.L' copies 'upper_arm_tweak.L', below 'torso' squashed (1.3, 1,
    0.7)``, or ``'DEF-forearm.L' copies 'forearm_tweak.L', stretched (0.8, 1.5, 0.8)``:
    where a copying bone's shear comes from (the scaled node nearest up the chain of what
    it copies), which no setting of its own changes."""
    nodes = inspection.nodes
    followed, cause = int(nodes.follows[i]), int(nearest_sources(inspection)[0][i])
    text = f"'{nodes.name(i)}' copies '{nodes.name(followed)}'"
    if cause < 0:
        return text
    scale = nodes.channel_scale[cause]
    if not np.isfinite(scale).all():
        scale = inspection.analysis.local.scale[cause]
    values = scale_label("", scale).strip()
    if cause == followed:
        return f"{text}, {squash_or_stretch(scale)}ed {values}"
    return f"{text}, below '{nodes.name(cause)}' {squash_or_stretch(scale)}ed {values}"
