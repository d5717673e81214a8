"""The four numbers a frame-range report needs, for every node at every frame, in flat
component arithmetic: world shear, local shear, and the corner distance of both engine
models from the reference.

:func:`frame_fields` gives per node-frame what :func:`~.analysis.analyze` gives per node
(``abs(shear_deg).max``, ``abs(local.shear_deg).max``, ``matrix_model_deviation.max_corner``,
``accumulated_deviation.max_corner``) to round-off (tested to 1e-9 against it), without
the rest :func:`~.analysis.analyze` computes (rotation deviation, lossy scale,
quaternions, the reference's decomposition).

How it is fast (about 10x :func:`~.analysis.analyze` on a tiled forest):

- the ``T x N`` node-frames are stored *structure of arrays*: ``(12, M)`` rows (the X, Y,
  Z columns and the translation of each affine matrix), so every step is one numpy call
  on long contiguous rows, not a small-matrix kernel per node;
- the node-frames are sorted by depth once (level ``d`` holds that level's nodes at every
  frame, contiguously), so each fold step reads its parents from the level above with one
  gather and writes one contiguous slice: one Python step per depth level for all frames;
- the matrix model and the accumulated model (rotation as a 3x3 frame, per-axis scale,
  position) are folded together in that one pass;
- only what the report needs: one ``arcsin`` per node-frame and quantity (of the largest
  ``|cos|``), no quaternions.

Node-frames the closed formulas do not cover to full accuracy (squared column lengths
outside ``[1e-150, 1e150]`` or zero, a parent with no inverse, an X and Y column within
30 degrees of parallel in the local matrix) are computed by the general functions
(:func:`~.decompose.affine_inverse`, :func:`~.decompose.decompose`,
:func:`~.decompose.shear_angles`) and folded with the rest.

Hierarchies deeper than :data:`MAX_LEVELS` are left to the callers' general path (the
level loop would take one Python step per level).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .decompose import affine_inverse, decompose, shear_angles
from .errors import InputError
from .hierarchy import Hierarchy
from .rotations import quat_to_matrix

__all__ = ["FrameFields", "frame_fields", "MAX_LEVELS"]

#: Deepest hierarchy (levels = max depth + 1) :func:`frame_fields` folds level by level.
MAX_LEVELS = 128

#: Row-major 4x4 indices of the X, Y, Z columns and the translation (the SoA rows).
_ROWS = np.array([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
_LOW, _HIGH = 1e-150, 1e150


class FrameFields(NamedTuple):
    """``(T, N)`` per node-frame: largest ``|shear|`` of the reference world matrix and of
    the local matrix (degrees), largest box-corner distance of the matrix model and of
    the accumulated model from the reference (scene units)."""

    shear_deg: np.ndarray
    local_shear_deg: np.ndarray
    corner_matrix: np.ndarray
    corner_accumulated: np.ndarray


class _Levels:
    """Node-frames sorted by depth: ``order (M,)`` flat index ``t * N + i`` at each sorted
    position; level ``d`` is ``starts[d]:starts[d + 1]`` (frame-major, then the level's
    nodes); ``parent_pos (M - roots,)`` the sorted position of each non-root's parent."""

    def __init__(self, hierarchy: Hierarchy, t_count: int):
        n = len(hierarchy)
        depth, parents = hierarchy.depth, hierarchy.parents
        by_depth = np.argsort(depth, kind="stable")
        counts = np.bincount(depth, minlength=1) if n else np.zeros(1, dtype=np.int64)
        first = np.concatenate(([0], np.cumsum(counts)))
        rank = np.empty(n, dtype=np.int64)
        rank[by_depth] = np.arange(n) - first[depth[by_depth]]
        frames = np.arange(t_count, dtype=np.int64)
        self.starts = t_count * first
        order, parent_pos = [], []
        for d in range(len(counts)):
            nodes = by_depth[first[d] : first[d + 1]]
            order.append((frames[:, None] * n + nodes[None, :]).ravel())
            if d:
                above = self.starts[d - 1] + frames[:, None] * counts[d - 1]
                parent_pos.append((above + rank[parents[nodes]][None, :]).ravel())
        self.order = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
        self.parent_pos = np.concatenate(parent_pos) if parent_pos else np.zeros(0, dtype=np.int64)
        self.roots = int(self.starts[1]) if len(self.starts) > 1 else 0

    def level_parents(self, d: int) -> tuple[int, int, np.ndarray]:
        a, b = int(self.starts[d]), int(self.starts[d + 1])
        return a, b, self.parent_pos[a - self.roots : b - self.roots]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise dot products of ``(3, M)`` vectors: ``(M,)``."""
    return np.einsum("im,im->m", a, b)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


def _lin(cols: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(3x3 given by column rows cols (9, M)) @ v (3, M)``: ``(3, M)``."""
    return cols[0:3] * v[0] + cols[3:6] * v[1] + cols[6:9] * v[2]


def _max_abs_arcsin_deg(cos: np.ndarray) -> np.ndarray:
    """``max_k |degrees(arcsin(cos_k))|`` of ``(3, M)`` cosines (arcsin is monotonic)."""
    return np.degrees(np.arcsin(np.minimum(np.abs(cos).max(axis=0), 1.0)))


def _pair_cosines(cols: np.ndarray, sq: np.ndarray) -> np.ndarray:
    """Cosines ``(3, M)`` of the XY, YZ, ZX column pairs of ``cols (9, M)``; 0 where a
    column is zero (as :func:`~.decompose.shear_angles`)."""
    x, y, z = cols[0:3], cols[3:6], cols[6:9]
    dots = np.stack((_dot(x, y), _dot(y, z), _dot(z, x)))
    denom = np.sqrt(sq * sq[[1, 2, 0]])
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0.0)


def _squares(cols: np.ndarray) -> np.ndarray:
    return np.stack((_dot(cols[0:3], cols[0:3]), _dot(cols[3:6], cols[3:6]), _dot(cols[6:9], cols[6:9])))


def _ordinary(sq: np.ndarray) -> np.ndarray:
    """``(M,)`` bool: every squared column length in ``[1e-150, 1e150]``."""
    return ((sq >= _LOW) & (sq <= _HIGH)).all(axis=0)


def _corner_distance(diff: np.ndarray, lo: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Largest distance ``(M,)`` of the 8 corners of boxes ``lo + [0, size]`` moved by the
    affine difference ``diff (12, M)`` (as :func:`~.metrics.box_corner_distance`)."""
    base = _lin(diff[0:9], lo) + diff[9:12]
    e0, e1, e2 = diff[0:3] * size[0], diff[3:6] * size[1], diff[6:9] * size[2]
    corners = np.empty((8,) + base.shape)
    corners[0] = base
    np.add(base, e0, out=corners[1])
    np.add(base, e1, out=corners[2])
    np.add(corners[1], e1, out=corners[3])
    np.add(corners[0:4], e2, out=corners[4:8])
    return np.sqrt(np.einsum("kim,kim->km", corners, corners).max(axis=0))


def _general(world: np.ndarray, parent_world: np.ndarray | None):
    """The general path for a few node-frames: ``world (K, 4, 4)`` and its parents'
    (None: roots). Returns ``(world shear, local shear, frame (9, K), scale (3, K),
    translation (3, K))``."""
    if parent_world is None:
        local = world
    else:
        inv, bad = affine_inverse(parent_world)
        if bad.any():
            inv[bad] = np.linalg.pinv(parent_world[bad])
        local = inv @ world
    parts = decompose(local)
    frame = quat_to_matrix(parts.rotation)  # (K, 3, 3): rows of the SoA are its columns
    return (
        np.abs(shear_angles(world)).max(axis=-1),
        np.abs(parts.shear_deg).max(axis=-1),
        frame.transpose(2, 1, 0).reshape(9, -1),
        parts.scale.T,
        parts.translation.T,
    )


def _locals(w: np.ndarray, sq: np.ndarray, levels: _Levels) -> tuple[np.ndarray, np.ndarray]:
    """Local matrices ``(12, M)`` ``inverse(parent world) @ world`` (roots: the world),
    and ``(M,)`` bool where the closed form does not apply (a singular or extreme parent)."""
    local = w.copy()
    odd = np.zeros(w.shape[1], dtype=bool)
    r = levels.roots
    if r == w.shape[1]:
        return local, odd
    pp = levels.parent_pos
    p = np.take(w, pp, axis=1)
    p0, p1, p2 = p[0:3], p[3:6], p[6:9]
    adj = np.stack((_cross(p1, p2), _cross(p2, p0), _cross(p0, p1)))  # rows of the adjugate (3, 3, m)
    det = _dot(p0, adj[0])
    psq = np.take(sq, pp, axis=1)
    size = np.sqrt(psq).prod(axis=0)
    odd[r:] = (np.abs(det) <= 1e-12 * np.maximum(size, 1e-300)) | ~_ordinary(psq)
    scale = 1.0 / np.where(odd[r:], 1.0, det)
    child = w[:, r:]
    for j in range(3):
        local[3 * j : 3 * j + 3, r:] = np.einsum("ikm,km->im", adj, child[3 * j : 3 * j + 3]) * scale
    local[9:12, r:] = np.einsum("ikm,km->im", adj, child[9:12] - p[9:12]) * scale
    return local, odd


def _decompose(local: np.ndarray):
    """Gram-Schmidt frames ``(9, M)``, signed scales ``(3, M)``, local shear ``(M,)`` and
    ``(M,)`` bool where the closed form does not apply (extreme or nearly parallel columns)."""
    sq = _squares(local)
    odd = ~_ordinary(sq)
    length = np.sqrt(sq)
    sign = np.where(_dot(local[0:3], _cross(local[3:6], local[6:9])) < 0.0, -1.0, 1.0)
    scale = sign * length
    n = local[0:9] / np.repeat(np.where(odd, 1.0, scale), 3, axis=0)
    x, y = n[0:3], n[3:6]
    u0 = x / np.sqrt(_dot(x, x))
    w1 = y - _dot(y, u0) * u0
    w1len = np.sqrt(_dot(w1, w1))
    odd |= w1len < 0.5
    frame = np.empty((9, local.shape[1]))
    frame[0:3] = u0
    frame[3:6] = w1 / np.where(odd, 1.0, w1len)
    frame[6:9] = _cross(frame[0:3], frame[3:6])
    shear = _max_abs_arcsin_deg(_pair_cosines(n, _squares(n)))
    return frame, scale, shear, odd


def _fold(frame: np.ndarray, scale: np.ndarray, translation: np.ndarray, levels: _Levels) -> np.ndarray:
    """Both engine models' worlds, ``(24, M)``: rows 0-11 the matrix model (exported TRS
    composed as matrices), rows 12-23 the accumulated model (rotation frame times scale,
    position), in the SoA layout."""
    m = frame.shape[1]
    own = frame * np.repeat(scale, 3, axis=0)  # R diag(s) as column rows
    # Folded rows: 0-8 matrix model linear, 9-11 its translation, 12-20 accumulated
    # rotation, 21-23 accumulated scale, 24-26 accumulated position.
    v = np.empty((27, m))
    r = levels.roots
    v[0:9, :r], v[9:12, :r], v[12:21, :r] = own[:, :r], translation[:, :r], frame[:, :r]
    v[21:24, :r], v[24:27, :r] = scale[:, :r], translation[:, :r]
    for d in range(1, len(levels.starts) - 1):
        a, b, pp = levels.level_parents(d)
        p = np.take(v, pp, axis=1)
        o, t, f, s = own[:, a:b], translation[:, a:b], frame[:, a:b], scale[:, a:b]
        for j in range(3):
            v[3 * j : 3 * j + 3, a:b] = _lin(p[0:9], o[3 * j : 3 * j + 3])
            v[12 + 3 * j : 15 + 3 * j, a:b] = _lin(p[12:21], f[3 * j : 3 * j + 3])
        v[9:12, a:b] = _lin(p[0:9], t) + p[9:12]
        v[21:24, a:b] = p[21:24] * s
        v[24:27, a:b] = p[24:27] + _lin(p[12:21], p[21:24] * t)
    out = np.empty((24, m))
    out[0:12] = v[0:12]
    out[12:21] = v[12:21] * np.repeat(v[21:24], 3, axis=0)
    out[21:24] = v[24:27]
    return out


def frame_fields(hierarchy: Hierarchy, world, box_min, box_max) -> FrameFields:
    """The report's four numbers for every node of ``hierarchy`` (N nodes) at T frames.

    ``world (T, N, 4, 4)`` the reference world matrices (Blender's), ``box_min, box_max
    (T, N, 3)`` local boxes. Local matrices are ``inverse(parent world) @ world`` (a
    singular parent's pseudo-inverse), exported as their TRS (shear dropped); see
    :class:`FrameFields`. Raises :class:`InputError` for a hierarchy deeper than
    :data:`MAX_LEVELS` levels (use :func:`~.analysis.analyze` on the tiled forest).
    """
    world = np.asarray(world, dtype=np.float64)
    t_count, n = world.shape[:2]
    if world.shape != (t_count, len(hierarchy), 4, 4):
        raise InputError(f"world: expected shape (T, {len(hierarchy)}, 4, 4), got {world.shape}", "world")
    if hierarchy.max_depth + 1 > MAX_LEVELS:
        raise InputError(f"hierarchy: {hierarchy.max_depth + 1} levels, more than {MAX_LEVELS}", "hierarchy")
    levels = _Levels(hierarchy, t_count)
    order, m = levels.order, t_count * n
    flat = world.reshape(m, 16)
    w = np.take(flat, order, axis=0)[:, _ROWS].T.copy()
    lo = np.take(np.asarray(box_min, dtype=np.float64).reshape(m, 3), order, axis=0).T.copy()
    size = np.take(np.asarray(box_max, dtype=np.float64).reshape(m, 3), order, axis=0).T - lo
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sq = _squares(w)
        shear = _max_abs_arcsin_deg(_pair_cosines(w, sq))
        local, odd = _locals(w, sq, levels)
        frame, scale, local_shear, odd_local = _decompose(local)
    odd |= odd_local | ~_ordinary(sq)
    translation = local[9:12]
    if odd.any():
        _patch(odd, flat, order, levels, shear, local_shear, frame, scale, translation)
    models = _fold(frame, scale, translation, levels)
    corner_matrix = _corner_distance(models[0:12] - w, lo, size)
    corner_accumulated = _corner_distance(models[12:24] - w, lo, size)
    out = []
    for values in (shear, local_shear, corner_matrix, corner_accumulated):
        back = np.empty(m)
        back[order] = values
        out.append(back.reshape(t_count, n))
    return FrameFields(*out)


def _patch(odd, flat, order, levels: _Levels, shear, local_shear, frame, scale, translation) -> None:
    """Recompute the ``odd`` node-frames (sorted positions) with the general functions."""
    r = levels.roots
    for roots, idx in ((True, np.flatnonzero(odd[:r])), (False, r + np.flatnonzero(odd[r:]))):
        if not len(idx):
            continue
        world = flat[order[idx]].reshape(-1, 4, 4)
        parent = None if roots else flat[order[levels.parent_pos[idx - r]]].reshape(-1, 4, 4)
        shear[idx], local_shear[idx], frame[:, idx], scale[:, idx], translation[:, idx] = _general(world, parent)
