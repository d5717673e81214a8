"""The numbers a frame-range report needs, for every node at every frame, in flat
component arithmetic: world shear, local shear, and the corner distance of each engine
model from the reference (the matrix model, the accumulated model, and the matrix
model's world made an Unreal ``FTransform``).

:func:`frame_fields` gives per node-frame what :func:`~.analysis.analyze` gives per node
(``abs(shear_deg).max``, ``abs(local.shear_deg).max``, ``matrix_model_deviation.max_corner``,
``accumulated_deviation.max_corner``) to round-off (tested to 1e-9 against it), without
the rest :func:`~.analysis.analyze` computes (rotation deviation, lossy scale,
quaternions, the reference's decomposition).

How it is fast (about 10x :func:`~.analysis.analyze` on a tiled forest):

- the ``T x N`` node-frames are stored *structure of arrays*: ``(12, M)`` rows (the X, Y,
  Z columns and the translation of each affine matrix), so every step is one numpy call
  on long contiguous rows, not a small-matrix kernel per node;
- the node-frames of a block of frames (:data:`BLOCK` node-frames) are sorted by depth
  (level ``d`` holds that level's nodes at every frame of the block, contiguously), so
  each fold step reads its parents from the level above with one gather and writes one
  contiguous slice: one Python step per depth level for all the block's frames; the
  blocks' rows are one buffer, reused from block to block (arrays for a whole range
  would be fresh memory, a page fault per 4 KB); a mask of node-frames (each with its
  parent) takes only those, so that different frames can hold different nodes in one
  pass (the range's first frame whole, the moving chains after it);
- the matrix model and the accumulated model (rotation as a 3x3 frame, per-axis scale,
  position) are folded together in that one pass;
- only what the report needs: one ``arcsin`` per node-frame and quantity (of the largest
  ``|cos|``), no quaternions; the parent's condition estimate comes from the adjugate the
  local matrix needs anyway.

Node-frames the closed formulas do not cover to full accuracy (squared column lengths
outside ``[1e-150, 1e150]`` or zero, a parent with no inverse or an ill-conditioned one,
an X and Y column within 30 degrees of parallel in the local matrix) are computed by the general functions
(:func:`~.decompose.affine_inverse`, :func:`~.decompose.decompose`,
:func:`~.decompose.shear_angles`) and folded with the rest.

Hierarchies deeper than :data:`MAX_LEVELS` are left to the callers' general path (the
level loop would take one Python step per level).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import unreal_math
from ._columns import (
    _corner_distance,
    _cross,
    _dot,
    _matmul,
    _max_abs_arcsin_deg,
    _ordinary,
    _pair_cosines,
    _squares,
)
from .decompose import affine_inverse, affine_pseudo_inverse, decompose, shear_angles
from .errors import InputError
from .hierarchy import Hierarchy
from .rotations import blender_matrix_to_quat, quat_to_matrix

__all__ = ["FrameFields", "frame_fields", "affine_pseudo_inverse", "MAX_LEVELS"]

#: Deepest hierarchy (levels = max depth + 1) :func:`frame_fields` folds level by level.
MAX_LEVELS = 128

#: Node-frames per chunk (the temporaries of a chunk stay in cache).
CHUNK = 1 << 14
#: Node-frames per block of frames taken through the whole pass at once (at least one
#: frame): a block's rows are one buffer of 65 float64 rows (about 31 MB), reused from
#: block to block. Larger blocks mean fewer level steps; this one stays under glibc's
#: largest mmap threshold (32 MiB), so a freed buffer is reused from the heap by the
#: next call instead of coming back as fresh pages (a fault per 4 KB).
BLOCK = 60_000

#: Row-major 4x4 indices of the X, Y, Z columns and the translation (the SoA rows).
_ROWS = np.array([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
#: Scales above this keep Unreal's ``FTransform`` on its component path (a squared axis
#: length above ``UE_SMALL_NUMBER``).
_POSITIVE = 1e-4
#: Parents whose |det| is at most this fraction of their column lengths' product take the
#: general path (condition numbers above about 1e6).
_ILL = 1e-6


class FrameFields(NamedTuple):
    """``(T, N)`` per node-frame: largest ``|shear|`` of the reference world matrix and of
    the local matrix (degrees), largest box-corner distance of the matrix model and of
    the accumulated model from the reference (scene units), ``singular_parent`` (bool):
    the parent's world has no inverse there (:func:`affine_pseudo_inverse`: the local is
    the least-squares one, and undefined as a transform), and ``parent_condition``: the
    Frobenius estimate ``|A| |inverse(A)|`` of the condition number of the parent
    world's 3x3 part ``A`` (``cond <= it <= 3 cond``; inf where ``A`` has no inverse as
    :func:`~.decompose.affine_inverse` decides, 1 for roots)."""

    shear_deg: np.ndarray
    local_shear_deg: np.ndarray
    corner_matrix: np.ndarray
    corner_accumulated: np.ndarray
    singular_parent: np.ndarray
    parent_condition: np.ndarray
    #: ``(T, N)`` the largest box-corner distance of the matrix model's world made an
    #: Unreal ``FTransform`` (:func:`~.unreal_math.from_linear`: the classic FBX
    #: importer's world wherever :attr:`positive` holds) from the reference.
    corner_global_trs: np.ndarray | None = None
    #: ``(T, N)`` bool: the local's scale and the matrix model's world's scale are all
    #: above ``1e-4`` and not mirrored: Unreal's component path applies (its importers'
    #: worlds are then the global TRS and the accumulated model).
    positive: np.ndarray | None = None


class _Levels:
    """Node-frames sorted by depth: level ``d`` is ``starts[d]:starts[d + 1]`` (frame-major,
    then the level's nodes). ``order (M,)``: each sorted position's flat index ``t * N + i``
    into the caller's ``(T, N)`` arrays (``frames[t']``, ``nodes[i']``); ``start (M,)`` the
    same node-frame's index ``t * 16 N + i`` into a ``(T, 4, 4, N)`` storage (its first
    entry); ``out (M,)`` its index ``t' * N' + i'`` in the result; ``parent_pos (M - roots,)``
    the sorted position of each non-root's parent. The node-frames of ``mask (t', N')``
    (each with its parent), or all."""

    def __init__(self, hierarchy: Hierarchy, frames: np.ndarray, nodes: np.ndarray, n_all: int, mask=None):
        n, t = len(hierarchy), len(frames)
        depth, parents = hierarchy.depth, hierarchy.parents
        by_depth = np.argsort(depth, kind="stable")
        counts = np.bincount(depth, minlength=1) if n else np.zeros(1, dtype=np.int64)
        first = np.concatenate(([0], np.cumsum(counts)))[depth[by_depth]]  # (n,) each column's level start
        # Unmasked, column j of by_depth at step s sits at t * first + s * count + (j - first)
        # (its level's block, frame-major); invert that, then keep the mask's in that order.
        sorted_at = (t - 1) * first + np.arange(n) + np.arange(t)[:, None] * counts[depth[by_depth]]
        cell = np.empty(t * n, dtype=np.int64)
        cell[sorted_at.ravel()] = np.arange(t * n)  # each sorted position's s * n + j
        if mask is not None:
            cell = cell[mask[:, by_depth].ravel()[cell]]
        s, j = np.divmod(cell, n)
        node = by_depth[j]
        self.starts = np.concatenate(([0], np.cumsum(np.bincount(depth[node], minlength=len(counts)))))
        self.order = frames[s] * n_all + nodes[node]
        self.start = self.order + frames[s] * (15 * n_all)
        self.out = s * n + node
        self.roots = r = int(self.starts[1]) if len(self.starts) > 1 else 0
        column = np.empty(n, dtype=np.int64)
        column[by_depth] = np.arange(n)
        position = np.empty(t * n, dtype=np.int64)
        position[cell] = np.arange(len(cell))
        self.parent_pos = position[s[r:] * n + column[parents[node[r:]]]]


def _general(world: np.ndarray, parent_world: np.ndarray | None):
    """The general path for a few node-frames: ``world (K, 4, 4)`` and its parents'
    (None: roots). Returns ``(world shear, local shear, frame (9, K), scale (3, K),
    translation (3, K), singular parent (K,), parent condition estimate (K,))``."""
    if parent_world is None:
        local, singular = world, np.zeros(len(world), dtype=bool)
        cond = np.ones(len(world))
    else:
        inv, singular = affine_pseudo_inverse(parent_world)
        local = inv @ world
        local[:, 3] = (0.0, 0.0, 0.0, 1.0)  # affine: the product of two affine matrices
        m3 = parent_world[:, :3, :3]
        inverse, none = affine_inverse(m3)
        inv3 = inverse[:, :3, :3]  # (4x4 returned)
        cond = np.sqrt((m3 * m3).sum(axis=(1, 2)) * (inv3 * inv3).sum(axis=(1, 2)))
        cond[none] = np.inf
    parts = decompose(local, rotation="blender")
    frame = quat_to_matrix(parts.rotation)  # (K, 3, 3): rows of the SoA are its columns
    return (
        np.abs(shear_angles(world)).max(axis=-1),
        np.abs(parts.shear_deg).max(axis=-1),
        frame.transpose(2, 1, 0).reshape(9, -1),
        parts.scale.T,
        parts.translation.T,
        singular,
        cond,
    )


def _locals(w: np.ndarray, levels: _Levels, a: int, b: int, cond: np.ndarray):
    """Local matrices ``(12, b - a)`` ``inverse(parent world) @ world`` of sorted positions
    ``a:b`` (roots: the world), and ``(b - a,)`` bool where the closed form does not apply
    (a singular or extreme parent); the parents' Frobenius condition estimates into
    ``cond (b - a,)`` (1 for roots; where the closed form does not apply, undefined)."""
    local = w[:, a:b].copy()
    odd = np.zeros(b - a, dtype=bool)
    c = max(a, levels.roots)  # the first non-root
    cond[: c - a] = 1.0
    if c >= b:
        return local, odd
    p = np.take(w, levels.parent_pos[c - levels.roots : b - levels.roots], axis=1)
    p0, p1, p2 = p[0:3], p[3:6], p[6:9]
    adj = np.empty((3, 3, p.shape[1]))  # rows of the adjugate
    _cross(p1, p2, adj[0]), _cross(p2, p0, adj[1]), _cross(p0, p1, adj[2])
    det = _dot(p0, adj[0])
    psq = _squares(p)
    size = np.sqrt(psq).prod(axis=0)
    # Singular (the general path's pseudo-inverse) or ill-conditioned parents (round-off
    # amplified past 1e-10): the general path, so both give the single-frame numbers.
    odd[c - a :] = (np.abs(det) <= _ILL * np.maximum(size, 1e-300)) | ~_ordinary(psq)
    scale = 1.0 / np.where(odd[c - a :], 1.0, det)
    # |A| |inverse(A)| with inverse(A) = adjugate / det.
    np.sqrt(psq.sum(axis=0) * np.einsum("ijm,ijm->m", adj, adj), out=cond[c - a :])
    cond[c - a :] *= np.abs(scale)
    child = w[:, c:b]
    # Row i of the inverse is adj[i] / det: local column j, entry i = adj[i] . world column j.
    _matmul(adj, child[0:9].reshape(3, 3, -1), local[0:9, c - a :].reshape(3, 3, -1), rows="ikm")
    local[0:9, c - a :] *= scale
    np.einsum("ikm,km->im", adj, child[9:12] - p[9:12], out=local[9:12, c - a :])
    local[9:12, c - a :] *= scale
    return local, odd


def _decompose(local: np.ndarray):
    """The exporters' rotation frames ``(9, M)`` (Blender's rule, as :func:`~.decompose.decompose`
    with ``rotation="blender"``), signed scales ``(3, M)``, local shear ``(M,)`` and
    ``(M,)`` bool where the closed form does not apply (extreme or nearly parallel columns)."""
    sq = _squares(local)
    odd = ~_ordinary(sq)
    sign = np.where(_dot(local[0:3], _cross(local[3:6], local[6:9])) < 0.0, -1.0, 1.0)
    scale = sign * np.sqrt(sq)
    n = (local[0:9].reshape(3, 3, -1) / np.where(odd, 1.0, scale)[:, None, :]).reshape(9, -1)
    x, y, z = n[0:3], n[3:6], n[6:9]
    u0 = x / np.sqrt(_dot(x, x))
    cos_xy = _dot(y, u0)
    w1 = y - cos_xy * u0
    odd |= _dot(w1, w1) < 0.25
    # Blender's quaternion of the normalised columns (n[m, r, c] as a strided view of the
    # column rows), as a frame in column rows again.
    q = blender_matrix_to_quat(n.reshape(3, 3, -1).transpose(2, 1, 0))
    frame = np.ascontiguousarray(quat_to_matrix(q).transpose(2, 1, 0)).reshape(9, -1)
    # The columns of n are unit vectors (to round-off): their dot products are the cosines.
    shear = _max_abs_arcsin_deg(np.stack((cos_xy, _dot(y, z), _dot(z, x))))
    return frame, scale, shear, odd


def _models(frame: np.ndarray, scale: np.ndarray, translation: np.ndarray, parent, out: np.ndarray) -> None:
    """One fold step of both engine models for m node-frames into ``out (27, m)``: rows
    0-8 the matrix model's linear part (exported TRS composed as matrices; column rows),
    9-17 the accumulated rotation frame, 18-20 the matrix model's translation, 21-23 the
    accumulated position, 24-26 the accumulated scale. ``parent (27, m)`` the parents'
    rows in the same layout (None: roots)."""
    m = frame.shape[1]
    rotation = frame.reshape(3, 3, m)  # R as column blocks
    if parent is None:
        np.multiply(rotation, scale[:, None, :], out=out[0:9].reshape(3, 3, m))
        out[9:18], out[18:21], out[21:24], out[24:27] = frame, translation, translation, scale
        return
    # The 3x3 products (matrix model, accumulated rotation) x (R S, R), and the
    # translation as each model moves it.
    scaled = np.multiply(rotation, scale[:, None, :])  # R diag(s)
    linear, product = parent[0:18].reshape(2, 3, 3, m), out[0:18].reshape(2, 3, 3, m)
    _matmul(linear[0], scaled, product[0])
    np.einsum("kim,km->im", linear[0], translation, out=out[18:21])
    _matmul(linear[1], rotation, product[1])
    np.einsum("kim,km->im", linear[1], parent[24:27] * translation, out=out[21:24])
    out[18:24] += parent[18:24]
    np.multiply(parent[24:27], scale, out=out[24:27])


def _rows(world: np.ndarray, levels: _Levels, out: np.ndarray) -> np.ndarray:
    """The SoA rows ``(12, M)`` of ``world (T, N, 4, 4)`` at the node-frames of ``levels``,
    into ``out``.

    Storage ``(T, 4, 4, N)`` (``world`` its transposed view, as the scene layer reads
    ranges) is gathered row by row; any other layout through ``(M, 16)`` rows."""
    t_count, n = world.shape[:2]
    storage = world.transpose(0, 2, 3, 1)
    if storage.flags.c_contiguous:
        flat = storage.reshape(-1)
        at = np.empty_like(levels.start)
        for k, entry in enumerate(_ROWS):
            np.add(levels.start, int(entry) * n, out=at)
            np.take(flat, at, out=out[k])
        return out
    out[...] = np.take(world.reshape(t_count * n, 16), levels.order, axis=0)[:, _ROWS].T
    return out


def frame_fields(hierarchy: Hierarchy, world, box_min, box_max, *, frames=None, nodes=None, mask=None) -> FrameFields:
    """The report's numbers for the nodes of ``hierarchy`` at T' frames: ``(T', N')``.

    ``world (T, N, 4, 4)`` the reference world matrices (Blender's), ``box_min, box_max
    (T, N, 3)`` local boxes; ``frames (T',)`` time indices and ``nodes (N',)`` node
    indices to analyse (default: all; ``hierarchy`` has the N' nodes, its parents indices
    into ``nodes``); ``mask (T', N')`` bool: only these node-frames (each with its parent
    at the same frame), the others NaN (default: all). Local matrices are ``inverse(parent world) @ world`` (a singular
    parent's pseudo-inverse), exported as their TRS (shear dropped); see
    :class:`FrameFields`. Raises :class:`InputError` for a hierarchy deeper than
    :data:`MAX_LEVELS` levels (use :func:`~.analysis.analyze` on the tiled forest), and
    naming ``(t, i)`` (indices into ``world``) for the first node-frame it reads whose
    matrix (its top three rows, the only ones read) or box holds NaN or infinity.
    """
    if not isinstance(hierarchy, Hierarchy):
        raise InputError(f"hierarchy: expected a Hierarchy, got {type(hierarchy).__name__}", "hierarchy")
    world = np.asarray(world, dtype=np.float64)
    if world.ndim != 4 or world.shape[2:] != (4, 4):
        raise InputError(f"world: expected shape (T, N, 4, 4), got {world.shape}", "world")
    t_all, n_all = world.shape[:2]
    frames = np.arange(t_all) if frames is None else _indices(frames, "frames", t_all)
    nodes = np.arange(n_all) if nodes is None else _indices(nodes, "nodes", n_all)
    if len(nodes) != len(hierarchy):
        raise InputError(f"nodes: {len(nodes)} nodes for a hierarchy of {len(hierarchy)}", "nodes")
    if hierarchy.max_depth + 1 > MAX_LEVELS:
        raise InputError(f"hierarchy: {hierarchy.max_depth + 1} levels, more than {MAX_LEVELS}", "hierarchy")
    box_min, box_max = (_box(box, what, world.shape[:2]) for box, what in ((box_min, "box_min"), (box_max, "box_max")))
    shape = (len(frames), len(nodes))
    per_frame = np.full(len(frames), len(nodes)) if mask is None else _check_mask(mask, shape, hierarchy)
    numbers = np.empty((6,) + shape) if mask is None else np.full((6,) + shape, np.nan)
    flags = np.zeros((2,) + shape, dtype=bool)
    flags[1] = True  # (node-frames outside the mask count as positive)
    # A block of frames at a time through the whole pass (at most BLOCK node-frames, at
    # least one frame), in one buffer reused from block to block (arrays for a whole
    # range would be fresh memory, a page fault per 4 KB).
    bounds = _blocks(per_frame)
    ends = np.concatenate(([0], np.cumsum(per_frame)))
    scratch = _Scratch(int(np.diff(ends[bounds]).max(initial=0)))
    for f, g in zip(bounds[:-1], bounds[1:], strict=True):
        sub = None if mask is None else mask[f:g]
        _block_fields(
            hierarchy, world, box_min, box_max, frames[f:g], nodes, numbers[:, f:g], flags[:, f:g], scratch, sub
        )
    return FrameFields(numbers[0], numbers[1], numbers[2], numbers[3], flags[0], numbers[4], numbers[5], flags[1])


def _indices(value, what: str, size: int) -> np.ndarray:
    """``value`` as int64 indices ``(K,)`` into an axis of ``size``; :class:`InputError`
    naming ``what`` and the first index that is not a whole number in ``[0, size)``
    (a negative index is refused, not counted from the end)."""
    raw = np.asarray(value)
    if raw.ndim != 1:
        raise InputError(f"{what}: expected shape (K,), got {raw.shape}", what)
    if raw.size and not np.issubdtype(raw.dtype, np.integer):
        raise InputError(f"{what}: expected whole-number indices, got {raw.dtype}", what)
    bad = (raw < 0) | (raw >= size)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what}[{k}] = {raw[k].item()} is out of range for {size}", what, (k,))
    return raw.astype(np.int64)


def _box(value, what: str, shape: tuple[int, int]) -> np.ndarray:
    """A box corner array of shape ``shape + (3,)`` (float64), else :class:`InputError`."""
    try:
        box = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: cannot be read as an array of numbers ({exc})", what) from None
    if box.shape != (*shape, 3):
        raise InputError(f"{what}: expected shape {(*shape, 3)}, got {box.shape}", what)
    return box


def _check_mask(mask, shape: tuple[int, int], hierarchy: Hierarchy) -> np.ndarray:
    """``mask``'s node-frames per frame ``(T',)``; :class:`InputError` when its shape is
    not ``shape`` or a node-frame's parent is not in it."""
    mask = np.asarray(mask)
    if mask.shape != shape or mask.dtype != bool:
        raise InputError(f"mask: expected bool {shape}, got {mask.dtype} {mask.shape}", "mask")
    has = np.flatnonzero(hierarchy.parents >= 0)
    orphan = mask[:, has] & ~mask[:, hierarchy.parents[has]]
    if orphan.any():
        t, k = np.argwhere(orphan)[0]
        raise InputError(f"mask[{t}, {has[k]}]: a node-frame without its parent", "mask", (int(t), int(has[k])))
    return mask.sum(axis=1)


def _blocks(per_frame: np.ndarray) -> list[int]:
    """Frame bounds ``[0, ..., T']`` of consecutive blocks of at most :data:`BLOCK`
    node-frames (at least one frame each), given the node-frames of each frame."""
    ends, bounds = np.cumsum(per_frame), [0]
    while bounds[-1] < len(per_frame):
        base = ends[bounds[-1] - 1] if bounds[-1] else 0
        bounds.append(max(bounds[-1] + 1, int(np.searchsorted(ends, base + BLOCK, side="right"))))
    return bounds


class _Scratch:
    """The float64 rows of a block, carved from one buffer allocated once per call:
    ``rows(name, m)`` is a contiguous ``(k, m)`` view (``k`` rows of that name)."""

    _LAYOUT = {"w": 12, "lo": 3, "size": 3, "result": 6, "frame": 9, "scale": 3, "translation": 3, "v": 27}

    def __init__(self, capacity: int):
        self._buffer = np.empty(sum(self._LAYOUT.values()) * capacity)
        self._offset = dict(zip(self._LAYOUT, np.cumsum([0, *self._LAYOUT.values()])[:-1] * capacity, strict=True))

    def rows(self, name: str, m: int) -> np.ndarray:
        start = int(self._offset[name])
        return self._buffer[start : start + self._LAYOUT[name] * m].reshape(-1, m)


def _check_finite(rows: np.ndarray, levels: _Levels, n_all: int, what: str) -> None:
    """:class:`InputError` naming the first ``(t, i)`` whose column in ``rows (k, M)`` is
    not finite (one sum when all are)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(rows.sum()):
            return
    bad = ~np.isfinite(rows).all(axis=0)
    if bad.any():  # (a sum of finite values can overflow)
        t, i = divmod(int(levels.order[bad].min()), n_all)
        raise InputError(f"{what}[{t}, {i}]: contains NaN or infinity", what, (t, i))


def _block_fields(hierarchy: Hierarchy, world, box_min, box_max, frames, nodes, numbers, flags, scratch, mask) -> None:
    """:func:`frame_fields` for a block of ``frames (t,)`` (``mask (t, N')`` or None),
    written into ``numbers (6, t, N')`` and ``flags (2, t, N')`` (singular parent,
    positive), its arrays views of ``scratch``."""
    levels = _Levels(hierarchy, frames, nodes, world.shape[1], mask)
    order, m = levels.order, len(levels.order)
    w = _rows(world, levels, scratch.rows("w", m))
    lo, size = scratch.rows("lo", m), scratch.rows("size", m)
    lo[...] = np.take(box_min.reshape(-1, 3), order, axis=0).T
    size[...] = np.take(box_max.reshape(-1, 3), order, axis=0).T
    _check_finite(w, levels, world.shape[1], "world")
    _check_finite(lo, levels, world.shape[1], "box_min")
    _check_finite(size, levels, world.shape[1], "box_max")
    size -= lo
    # shear, local shear, corner distance of each model, parent condition, global TRS corner
    result = scratch.rows("result", m)
    positive = np.empty(m, dtype=bool)
    frame, scale, translation = scratch.rows("frame", m), scratch.rows("scale", m), scratch.rows("translation", m)
    singular = np.zeros(m, dtype=bool)  # set by the general path only (the closed form hands those over)
    # Per node-frame work in chunks of at most CHUNK node-frames (a chunk's temporaries
    # stay in cache and the allocator reuses them), across levels; only the fold goes
    # level by level (a dozen numpy calls per level).
    for a in range(0, m, CHUNK):
        b = min(m, a + CHUNK)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            sq = _squares(w[:, a:b])
            result[0, a:b] = _max_abs_arcsin_deg(_pair_cosines(w[:, a:b], sq))
            local, odd = _locals(w, levels, a, b, result[4, a:b])
            frame[:, a:b], scale[:, a:b], result[1, a:b], odd_local = _decompose(local)
        translation[:, a:b] = local[9:12]
        odd |= odd_local | ~_ordinary(sq)
        if odd.any():
            k = a + np.flatnonzero(odd)
            _patch(k, world, levels, result, frame, scale, translation, singular)
    v = scratch.rows("v", m)  # both models folded, the layout of _models
    r = levels.roots
    for d in range(len(levels.starts) - 1):
        a, b = int(levels.starts[d]), int(levels.starts[d + 1])
        parent = np.take(v, levels.parent_pos[a - r : b - r], axis=1) if d else None
        _models(frame[:, a:b], scale[:, a:b], translation[:, a:b], parent, v[:, a:b])
    for a in range(0, m, CHUNK):
        b = min(m, a + CHUNK)
        diff = np.empty((12, b - a))
        np.subtract(v[0:9, a:b], w[0:9, a:b], out=diff[0:9])
        np.subtract(v[18:21, a:b], w[9:12, a:b], out=diff[9:12])
        result[2, a:b] = _corner_distance(diff, lo[:, a:b], size[:, a:b])
        np.multiply(v[9:18, a:b].reshape(3, 3, -1), v[24:27, a:b][:, None, :], out=diff[0:9].reshape(3, 3, -1))
        diff[0:9] -= w[0:9, a:b]
        np.subtract(v[21:24, a:b], w[9:12, a:b], out=diff[9:12])
        result[3, a:b] = _corner_distance(diff, lo[:, a:b], size[:, a:b])
        # The matrix model's world as Unreal's FTransform (the classic importer's world).
        q, s = unreal_math.from_linear(v[0:9, a:b].reshape(3, 3, -1).transpose(2, 1, 0))
        diff[0:9] = quat_to_matrix(q, s).transpose(2, 1, 0).reshape(9, -1)
        diff[0:9] -= w[0:9, a:b]
        np.subtract(v[18:21, a:b], w[9:12, a:b], out=diff[9:12])
        result[5, a:b] = _corner_distance(diff, lo[:, a:b], size[:, a:b])
        positive[a:b] = (s > 0.0).all(axis=1) & (scale[:, a:b] > _POSITIVE).all(axis=0)
    numbers.reshape(len(result), -1)[:, levels.out] = result  # (a view: the block's frames are contiguous)
    flags[0].reshape(-1)[levels.out] = singular
    flags[1].reshape(-1)[levels.out] = positive


def _patch(idx, world, levels: _Levels, result, frame, scale, translation, singular) -> None:
    """Recompute the node-frames at sorted positions ``idx`` with the general functions."""
    r, n = levels.roots, world.shape[1]
    for roots in (True, False):
        pick = idx[idx < r] if roots else idx[idx >= r]
        if not len(pick):
            continue
        flat = levels.order[pick]
        parent = None
        if not roots:
            up = levels.order[levels.parent_pos[pick - r]]
            parent = world[up // n, up % n]
        general = _general(world[flat // n, flat % n], parent)
        result[0, pick], result[1, pick], frame[:, pick], scale[:, pick], translation[:, pick] = general[:5]
        singular[pick], result[4, pick] = general[5:]
