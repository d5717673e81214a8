"""Shared by :mod:`.basis`, :mod:`.objects` and :mod:`.bones`: the checks of their
arguments (codes or identifiers, per-node flags, batches of fixed shape, rigid rest
matrices) and small batched helpers mirroring ``blenlib``'s (``normalize_v3``,
``normalize_m4``, ``invert_m4_m4``).
"""

from __future__ import annotations

import numpy as np

from ..decompose import _cross
from ..errors import InputError, as_array

#: ``normalize_v3`` treats a vector whose squared length is at most this as zero.
_NORMALIZE_MIN_SQ = 1.0e-35


# -- validation ---------------------------------------------------------------------------


def _codes(values, names: tuple[str, ...], what: str, n: int | None = None) -> np.ndarray:
    """Integer codes ``(N,)`` from codes or identifiers; checks range and length."""
    raw = np.asarray(values)
    if raw.dtype.kind in "US":
        lookup = {name: i for i, name in enumerate(names)}
        flat = raw.reshape(-1)
        bad = [i for i, v in enumerate(flat.tolist()) if v not in lookup]
        if bad:
            raise InputError(
                f"{what}[{bad[0]}]: unknown identifier {flat[bad[0]].item()!r}, expected one of {', '.join(names)}",
                what,
                (bad[0],),
            )
        codes = np.array([lookup[v] for v in flat.tolist()], dtype=np.int64).reshape(raw.shape)
    else:
        if raw.size and not np.issubdtype(raw.dtype, np.integer):
            as_float = np.asarray(raw, dtype=np.float64)
            if not np.all(np.isfinite(as_float) & (as_float == np.round(as_float))):
                raise InputError(f"{what}: expected integer codes or identifiers", what)
        codes = raw.astype(np.int64)
        out = (codes < 0) | (codes >= len(names))
        if out.any():
            i = int(np.flatnonzero(out.reshape(-1))[0])
            raise InputError(
                f"{what}[{i}] = {codes.reshape(-1)[i]} is not a code 0..{len(names) - 1} of {', '.join(names)}",
                what,
                (i,),
            )
    if n is not None:
        codes = _per_node(codes, n, what)
    return codes


def _per_node(arr: np.ndarray, n: int, what: str) -> np.ndarray:
    """Broadcast a scalar to ``(n,)``; otherwise require shape ``(n,)``."""
    if arr.ndim == 0:
        return np.broadcast_to(arr, (n,))
    if arr.shape != (n,):
        raise InputError(f"{what}: expected shape ({n},), got {arr.shape}", what)
    return arr


def _flags(values, n: int, what: str) -> np.ndarray:
    raw = np.asarray(values)
    if raw.dtype != bool:
        as_float = as_array(raw, what)
        if not np.all((as_float == 0.0) | (as_float == 1.0)):
            raise InputError(f"{what}: expected booleans", what)
        raw = as_float != 0.0
    return _per_node(raw, n, what)


def _batch(value, what: str, tail: tuple[int, ...], n: int | None) -> np.ndarray:
    arr = as_array(value, what, tail)
    if arr.ndim != len(tail) + 1 or (n is not None and arr.shape[0] != n):
        want = f"({'N' if n is None else n}, {', '.join(map(str, tail))})"
        raise InputError(f"{what}: expected shape {want}, got {arr.shape}", what)
    return arr


def _check_rigid(m: np.ndarray, what: str) -> None:
    """Bone rest matrices are rotations plus translation; name the first that is not.

    Loose on purpose: Blender's own ``bone.matrix_local`` is orthonormal only to float32
    accumulation (measured up to 7e-5 off), and is inverted exactly.
    """
    r = m[..., :3, :3]
    err = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3)).max(axis=(-1, -2)) if r.size else np.zeros(0)
    bottom = np.abs(m[..., 3, :] - (0.0, 0.0, 0.0, 1.0)).max(axis=-1) if r.size else np.zeros(0)
    bad = (err > 1e-2) | (bottom > 1e-6)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{what}[{i}]: not a rigid transform (rotation + translation), as Blender's bone.matrix_local always is",
            what,
            (i,),
        )


# -- small batched helpers ----------------------------------------------------------------


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def _normalize(v):
    """Blender's ``normalize_v3``: ``(unit vectors, lengths)``; tiny vectors become zero."""
    sq = _dot(v, v)
    ok = sq > _NORMALIZE_MIN_SQ
    length = np.sqrt(np.where(ok, sq, 0.0))
    unit = v * np.where(ok, 1.0 / np.where(ok, length, 1.0), 0.0)[..., None]
    return unit, length


def _column_norms(m3):
    return np.sqrt(np.einsum("...ij,...ij->...j", m3, m3))


def _normalize_columns(m3):
    """``normalize_m4`` / ``normalize_m4_ex`` on the 3x3 part: unit columns and their lengths."""
    cols, lengths = _normalize(np.swapaxes(m3, -1, -2))
    return np.swapaxes(cols, -1, -2), lengths


def _affine_inverse(m):
    """Exact inverse of affine ``(..., 4, 4)`` matrices with an invertible 3x3 part (Blender's
    ``invert_m4_m4``; not the transpose: rest matrices are not exactly orthonormal)."""
    out = np.zeros_like(m)
    a, b, c = m[..., :3, 0], m[..., :3, 1], m[..., :3, 2]
    # The adjugate over the determinant: np.linalg.inv was the largest single cost of the
    # panel's per-change work on a rig (cProfile, a 14-bone chain of a Rigify rig).
    rows = np.stack((_cross(b, c), _cross(c, a), _cross(a, b)), axis=-2)
    inv3 = rows / _dot(a, rows[..., 0, :])[..., None, None]
    out[..., :3, :3] = inv3
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
