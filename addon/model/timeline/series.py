"""A hierarchy over a frame range: frames as a leading batch axis, analysed in one pass.

The scene layer reads Blender at T frames into a :class:`FrameSeries` (world matrices
``(T, N, 4, 4)``, boxes ``(T, N, 3)``); :func:`analyse_frames` runs what the single-frame
:func:`~.inspection.inspect` decides on (world shear, local shear an exporter drops, the
corner distance of both engine models) for all ``T x N`` node-frames together: the forest
is tiled T times (:meth:`core.Hierarchy.tile`), so each fold is one numpy step per depth
level over every frame at once, with no per-frame or per-node Python work.
:class:`OverFrames` holds the per-frame values ``(T, N)``, the maxima over the range and
each node's worst frame. Blender-free: tested without bpy.
"""

from __future__ import annotations

import numpy as np

from .... import core
from ....core.fields import MAX_LEVELS
from ..engines.files import plain_file
from ..engines.paths import UNREAL_FBX, UNREAL_INTERCHANGE
from ..engines.predict import engine_worlds
from ..errors import SceneDataError
from ..inspection import local_matrices_of
from ..thresholds import DEFAULT, LOCAL_NOISE_FACTOR, LOCAL_SHEAR_FLOOR_DEG, Thresholds
from .frame_series import FrameSeries
from .over_frames import CORNER_FIELD, OverFrames

__all__ = ["FrameSeries", "OverFrames", "CORNER_FIELD", "analyse_frames", "changes", "check_finite", "with_ancestors"]
from .repeats import repeated_frames

_EPS32 = float(np.finfo(np.float32).eps)


def check_finite(series: FrameSeries) -> None:
    """:class:`SceneDataError` naming the first node and frame whose world matrix or box
    holds NaN or infinity."""
    with np.errstate(over="ignore", invalid="ignore"):  # a sum is finite when every term is
        if np.isfinite(series.world.sum()) and np.isfinite(series.box_min.sum() + series.box_max.sum()):
            return
    bad = ~np.isfinite(series.world).all(axis=(2, 3))
    bad |= ~(np.isfinite(series.box_min).all(axis=2) & np.isfinite(series.box_max).all(axis=2))
    if bad.any():
        t, i = (int(v) for v in np.argwhere(bad)[0])
        count = int(bad.any(axis=0).sum())
        more = f" (and {count - 1} more nodes)" if count > 1 else ""
        raise SceneDataError(
            f"'{series.label(i)}'{more}: its world matrix or bounds contain NaN or infinity at frame {series.frames[t]}"
        )


def _noise_deg(cond: np.ndarray) -> np.ndarray:
    """The single-frame float32 noise of a local shear (degrees) for parents of condition
    number ``cond`` (:attr:`.inspection.Inspection.local_shear_noise_deg`)."""
    return np.degrees(LOCAL_NOISE_FACTOR * _EPS32 * np.minimum(cond, 1e12))


def _lossy(local_shear: np.ndarray, world_at, parents: np.ndarray, thresholds: Thresholds, estimate=None) -> np.ndarray:
    """``(t, n)`` bool: real local shear over the threshold, with the single-frame noise
    rule (the parent's condition number from its SVD). ``world_at(t_idx, n_idx)`` gives
    world matrices ``(K, 4, 4)`` of the block; ``parents (n,)`` indices within the block;
    ``estimate (t, n)``: the parents' Frobenius estimates (:attr:`core.FrameFields.parent_condition`),
    or None to compute them here.

    Only node-frames over the threshold are looked at, and the SVD runs only where the
    decision needs it: the Frobenius estimate ``cF = |A| |inverse(A)|`` bounds the
    condition number, ``cF / 3 <= cond <= cF``, and the noise grows with it, so a shear
    above the noise at ``cF`` is real and one below the noise at ``cF / 3`` is not."""
    flat = local_shear.reshape(-1)
    candidate = np.flatnonzero((flat > thresholds.shear_deg) & (flat > LOCAL_SHEAR_FLOOR_DEG))
    lossy = np.zeros(flat.shape, dtype=bool)
    if len(candidate):
        at, node = np.divmod(candidate, local_shear.shape[1])
        shear = flat[candidate]
        decided = np.ones(len(candidate), dtype=bool)
        has = np.flatnonzero(parents[node] >= 0)
        if len(has) and estimate is not None:
            c_f = estimate.reshape(-1)[candidate[has]]
        elif len(has):
            m3 = world_at(at[has], parents[node[has]])[:, :3, :3]
            inverse, singular = core.affine_inverse(m3)
            inverse = inverse[:, :3, :3]  # (returned 4x4: its corner 1 is not the inverse's)
            c_f = np.sqrt((m3 * m3).sum(axis=(1, 2)) * (inverse * inverse).sum(axis=(1, 2)))
            c_f[singular] = np.inf
        if len(has):
            margin = 1.0 + 1e-9  # round-off of the estimate
            real = shear[has] > _noise_deg(c_f * margin)
            unreal = shear[has] <= _noise_deg(c_f / (3.0 * margin))
            unsure = ~(real | unreal)
            decided[has] = real
            if unsure.any():
                m3 = world_at(at[has][unsure], parents[node[has][unsure]])[:, :3, :3]
                sv = np.linalg.svd(m3, compute_uv=False)
                cond = sv[:, 0] / np.maximum(sv[:, 2], 1e-300)
                decided[has[unsure]] = shear[has][unsure] > _noise_deg(cond)
        lossy[candidate] = decided
    return lossy.reshape(local_shear.shape)


_FIELDS = (
    "shear",
    "local_shear",
    "corner_matrix",
    "corner_unreal_fbx",
    "corner_unreal_interchange",
    "corner_accumulated",
    "lossy",
    "singular_parent",
)


def _analyse_block(
    series: FrameSeries, frames, nodes, hierarchy: core.Hierarchy, thresholds: Thresholds, mask=None
) -> dict:
    """The per node-frame fields ``(t, n)`` of ``series`` at time indices ``frames (t,)``
    and ``nodes (n,)`` (``hierarchy`` their forest), all at once: :func:`core.frame_fields`
    (flat component arithmetic, one fold step per depth level; ``mask (t, n)``: only those
    node-frames, the others NaN), or for hierarchies deeper than it folds, the general
    :func:`_analyse_block_general` (no mask)."""
    if hierarchy.max_depth + 1 > MAX_LEVELS:
        pick = np.ix_(frames, nodes)
        world, box_min, box_max = series.world[pick], series.box_min[pick], series.box_max[pick]
        if not (np.isfinite(world).all() and np.isfinite(box_min).all() and np.isfinite(box_max).all()):
            raise core.InputError("world or boxes: contains NaN or infinity", "world")
        return _analyse_block_general(world, box_min, box_max, hierarchy, thresholds)
    fields = core.frame_fields(
        hierarchy, series.world, series.box_min, series.box_max, frames=frames, nodes=nodes, mask=mask
    )
    world_at = lambda t, i: series.world[frames[t], nodes[i]]
    lossy = _lossy(fields.local_shear_deg, world_at, hierarchy.parents, thresholds, fields.parent_condition)
    out = {
        "shear": fields.shear_deg,
        "local_shear": fields.local_shear_deg,
        "corner_matrix": fields.corner_matrix,
        # Unreal's importers on its component path (positive scales everywhere): the
        # classic one shows each global as an FTransform, Interchange the accumulated model.
        "corner_unreal_fbx": fields.corner_global_trs,
        "corner_unreal_interchange": fields.corner_accumulated.copy(),
        "corner_accumulated": fields.corner_accumulated,
        "lossy": lossy,
        "singular_parent": fields.singular_parent,
    }
    # Frames with a mirrored, zero or tiny scale somewhere: Unreal's matrix paths, run
    # as the single-frame inspection runs them.
    odd = np.flatnonzero(~fields.positive.all(axis=1))
    if len(odd):
        pick = np.ix_(frames[odd], nodes)
        general = _analyse_block_general(
            series.world[pick], series.box_min[pick], series.box_max[pick], hierarchy, thresholds
        )
        for k in ("corner_unreal_fbx", "corner_unreal_interchange"):
            np.asarray(out[k])[odd] = general[k]
    return out


def _analyse_block_general(world, box_min, box_max, hierarchy: core.Hierarchy, thresholds: Thresholds) -> dict:
    """:func:`_analyse_block` with the general core functions: the forest tiled t times
    and folded in one pass (any depth: the core's blocked and pointer-jumping folds)."""
    t_count, n = world.shape[:2]
    tiled = hierarchy.tile(t_count)
    world = world.reshape(t_count * n, 4, 4)
    lo, hi = box_min.reshape(t_count * n, 3), box_max.reshape(t_count * n, 3)
    local, singular = local_matrices_of(world, tiled.parents)
    parts = core.decompose(local, rotation="blender")  # what the exporters write
    trs = core.TRS.from_decomposition(parts)
    matrix_model = tiled.world_matrices(trs.to_matrix())
    unreal = engine_worlds(plain_file(tiled.parents, trs), (UNREAL_FBX, UNREAL_INTERCHANGE), globals_=matrix_model)
    accumulated = tiled.accumulate(trs).to_matrix()
    local_shear = np.abs(parts.shear_deg).max(axis=-1)
    values = {
        "shear": np.abs(core.shear_angles(world)).max(axis=-1),
        "local_shear": local_shear,
        "corner_matrix": core.box_corner_distance(world, matrix_model, lo, hi),
        "corner_unreal_fbx": core.box_corner_distance(world, unreal[UNREAL_FBX], lo, hi),
        "corner_unreal_interchange": core.box_corner_distance(world, unreal[UNREAL_INTERCHANGE], lo, hi),
        "corner_accumulated": core.box_corner_distance(world, accumulated, lo, hi),
    }
    out = {k: v.reshape(t_count, n) for k, v in values.items()}
    out["singular_parent"] = singular.reshape(t_count, n)
    blocks = world.reshape(t_count, n, 4, 4)
    out["lossy"] = _lossy(out["local_shear"], lambda t, i: blocks[t, i], hierarchy.parents, thresholds)
    return out


def with_ancestors(parents: np.ndarray, marked: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: ``marked`` nodes and all their ancestors (pointer doubling:
    log2(depth) vectorised rounds, no per-node Python work)."""
    keep = marked.copy()
    up = parents.copy()
    while (up >= 0).any():
        live = (up >= 0) & keep
        keep[up[live]] = True
        up = np.where(up >= 0, up[np.maximum(up, 0)], -1)
    return keep


def changes(series: FrameSeries) -> tuple[np.ndarray, np.ndarray]:
    """Which frames to analyse and which nodes: ``(T,)`` bool, frames (after the first)
    where any node's world matrix or box differs from the frame before; ``(N,)`` bool,
    nodes whose own matrix or box, or an ancestor's matrix, changes at some frame, and
    their ancestors (what the folds need). Every other node-frame repeats a result already
    computed (a node's results depend only on its chain's matrices and its own box)."""
    w, lo, hi = series.world, series.box_min, series.box_max
    storage = w.transpose(0, 2, 3, 1)  # the scene layer's (T, 4, 4, N) storage: compare it in order
    if storage.flags.c_contiguous:
        moved = (storage[1:, :3] != storage[:-1, :3]).reshape(len(w) - 1, 12, w.shape[1]).any(axis=1)
    else:
        moved = (w[1:] != w[:-1]).any(axis=(2, 3))
    vary = slice(None) if series.boxes_vary is None else series.boxes_vary
    differs = lo[1:, vary] != lo[:-1, vary]
    differs |= hi[1:, vary] != hi[:-1, vary]
    resized = np.zeros(moved.shape, dtype=bool)
    resized[:, vary] = (
        differs[..., 0] | differs[..., 1] | differs[..., 2]
    )  # (a reduction over an axis of 3 is 6x slower)
    frames = np.concatenate(([False], (moved | resized).any(axis=1)))
    ever = moved.any(axis=0)
    if ever.any() and (series.parents >= 0).any():
        ever = core.Hierarchy(series.parents).fold((ever,), lambda p, c: (p[0] | c[0],))[0]
    return frames, with_ancestors(series.parents, ever | resized.any(axis=0))


def analyse_frames(series: FrameSeries, thresholds: Thresholds = DEFAULT) -> OverFrames:
    """All ``T x N`` node-frames of ``series`` in one vectorised pass.

    Per node-frame the same numbers as :func:`~.inspection.inspect` at that frame (world
    and local shear, the corner distance of both engine models), without the parts the
    range does not report (rotation deviation, lossy scale). The first frame is analysed
    whole; after it only the frames where something moved, and of those only the nodes
    whose chain moves at some frame (:func:`changes`); the rest repeat the last result
    (held poses, static props cost nothing). Raises :class:`SceneDataError` naming the
    node and frame when a matrix is not finite.

    Finiteness is checked where the analysis reads: the first frame whole, then the
    node-frames it analyses (:func:`core.frame_fields` raises for those), and the bottom
    rows of all matrices. That covers every node-frame: one that differs from the frame
    before is analysed, NaN differs from everything, and one equal to the frame before is
    finite when that one is.
    """
    try:
        return _analyse_frames(series, thresholds)
    except core.InputError:
        check_finite(series)  # the same error named by node and frame
        raise


def _analyse_frames(series: FrameSeries, thresholds: Thresholds) -> OverFrames:
    """:func:`analyse_frames`; :class:`core.InputError` for a matrix or box it reads that
    is not finite."""
    t_count, n = series.world.shape[:2]
    storage = series.world.transpose(0, 2, 3, 1)  # the scene layer's (T, 4, 4, N) storage: its bottom rows contiguous
    bottom = storage[:, 3] if storage.flags.c_contiguous else series.world[:, :, 3, :]
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(bottom.sum()):
            check_finite(series)
    try:
        hierarchy = core.Hierarchy(series.parents)
    except core.HierarchyError:  # raised again naming the nodes (labels only when needed)
        core.Hierarchy(series.parents, [series.label(i) for i in range(n)])
        raise
    frames, nodes = changes(series)
    moved, nk = np.flatnonzero(frames), np.flatnonzero(nodes)
    # Row 0: the first frame; row 1 + r: the r-th frame where something moved and that
    # repeats no earlier frame (its moving nodes analysed, the others as at the first
    # frame). A frame that repeats an earlier one takes its row, any other frame the row
    # of the last frame before it.
    earlier = repeated_frames(series.world, series.box_min, series.box_max, moved)
    ft = moved[earlier < 0]
    if hierarchy.max_depth + 1 > MAX_LEVELS:
        rows = _rows_general(series, ft, nk, hierarchy, thresholds)
    else:  # one pass: the first frame's node-frames and the moving ones together
        mask = np.empty((1 + len(ft), n), dtype=bool)
        mask[0], mask[1:] = True, nodes
        rows = _analyse_block(series, np.concatenate(([0], ft)), np.arange(n), hierarchy, thresholds, mask)
        for k in _FIELDS:
            rows[k][1:, ~nodes] = rows[k][0, ~nodes]
    row = np.full(t_count, -1, dtype=np.int64)
    row[:1], row[ft] = 0, np.arange(1, len(ft) + 1)
    row[moved[earlier >= 0]] = row[earlier[earlier >= 0]]  # (those are 0 or in ft: set)
    last = np.maximum.accumulate(np.where(row >= 0, np.arange(t_count), 0)) if t_count else row
    source = row[last]
    return OverFrames(series=series, rows=rows, source=source, thresholds=thresholds)


def _rows_general(series: FrameSeries, ft: np.ndarray, nk: np.ndarray, hierarchy: core.Hierarchy, thresholds) -> dict:
    """:func:`_analyse_frames`' rows ``(1 + len(ft), N)`` for hierarchies deeper than
    :func:`core.frame_fields` folds: the first frame whole, then frames ``ft`` of nodes
    ``nk`` (their sub-forest), the other nodes repeating the first frame."""
    n = len(series.parents)
    first = _analyse_block(series, np.zeros(1, dtype=np.int64), np.arange(n), hierarchy, thresholds)
    rows = {k: np.repeat(v, 1 + len(ft), axis=0) for k, v in first.items()}
    if len(ft):
        position = np.full(n, -1, dtype=np.int64)
        position[nk] = np.arange(len(nk))
        sub_parents = np.where(series.parents[nk] >= 0, position[np.maximum(series.parents[nk], 0)], -1)
        block = _analyse_block(series, ft, nk, core.Hierarchy(sub_parents), thresholds)
        for k in _FIELDS:
            rows[k][1:, nk] = block[k]
    return rows
