"""Exact TRS pairs for animated local matrices, continuous in time.

A local matrix ``M`` with shear cannot be one TRS; two can (a helper node above the
node): ``M = (T R1 S1) (R2)``, from the SVD ``M3 = U diag(s) V^T`` with ``R1 = U``,
``S1 = s``, ``R2 = V^T`` (:func:`core.split_to_trs` does it for one frame). The SVD is
unique only up to the order of the singular values, joint sign flips of ``(u_i, v_i)``
and any rotation inside a repeated singular value (a rotation times a uniform scale has
every ``V``): frame by frame it jumps, and an engine interpolating between keys would
swing the node around. :func:`continuous_split` picks, frame after frame, the SVD
closest to the previous frame's (same axis order, same signs, inside repeated values
the rotation nearest the previous one) and keeps quaternions in one hemisphere, so
consecutive keys differ only as much as the matrices do. With ``small_inner`` it picks
at the first frame the SVD whose inner rotation ``V^T`` is nearest the identity (for
FBX, which writes Euler angles): the helper then carries
the node's own rotation and scale, and the node a small correction (an arbitrary
helper rotation could sit near gimbal lock, where exporters that write Euler angles in
float32, as FBX does, lose precision; glTF writes quaternions and keeps numpy's SVD,
whose keys interpolate closer to Blender between frames on the Rigify benchmark).

Shapes: ``(T, N, 4, 4)`` local matrices, time first; quaternions ``(w, x, y, z)``;
column vectors. Vectorised over frames and nodes; the only loop runs over the few frames
next to repeated singular values.
"""

from __future__ import annotations

import itertools

import numpy as np

from .... import core

#: Singular values closer than this (relative to the largest) count as repeated.
REPEATED = 1e-6

_PERMS = np.array(list(itertools.permutations(range(3))), dtype=np.int64)  # (6, 3)


def continuous_quaternions(q: np.ndarray) -> np.ndarray:
    """``q (T, ..., 4)`` with signs chosen along T so that consecutive quaternions have
    a non-negative dot product (one hemisphere; the same rotations)."""
    q = np.array(q, dtype=np.float64, copy=True)
    if len(q) < 2:
        return q
    dots = np.einsum("t...i,t...i->t...", q[1:], q[:-1])
    flips = np.cumprod(np.where(dots < 0.0, -1.0, 1.0), axis=0)
    q[1:] *= flips[..., None]
    return q


def continuous_trs(local: np.ndarray) -> core.TRS:
    """One TRS per frame and node ``(T, N)`` for shear-free local matrices
    ``(T, N, 4, 4)`` (Blender's sign convention for scale), rotations continuous in
    time. What shear there is, is dropped (use :func:`continuous_split` for it)."""
    d = core.decompose(np.asarray(local, dtype=np.float64))
    return core.TRS(d.translation, continuous_quaternions(d.rotation), d.scale)


def trs_error(local: np.ndarray, decomposed=None) -> np.ndarray:
    """``(N,)`` largest over frames of ``|TRS(M) - M| / max(1, |M|)`` for local
    matrices ``(T, N, 4, 4)``: how far one TRS per node (shear dropped) is from them.
    ``decomposed``: ``core.decompose(local)`` when the caller has it."""
    m = np.asarray(local, dtype=np.float64)
    d = core.decompose(m) if decomposed is None else decomposed
    rebuilt = core.TRS(d.translation, d.rotation, d.scale).to_matrix()
    scale = np.maximum(1.0, np.abs(m).max(axis=(-2, -1)))
    return (np.abs(rebuilt - m).max(axis=(-2, -1)) / scale).max(axis=0)


def _proper(u: np.ndarray, s: np.ndarray, v: np.ndarray) -> None:
    """In place: make ``u`` and ``v`` rotations (det +1) by flipping the column of the
    smallest singular value together with its sign (``u diag(s) v^T`` unchanged)."""
    for mat in (u, v):
        bad = core.determinant3(mat) < 0.0
        if bad.any():
            k = np.argmin(np.abs(s[bad]), axis=-1)
            rows = np.flatnonzero(bad)
            mat[rows, :, k] *= -1.0
            s[rows, k] *= -1.0


def _align(u, s, v, u0, v0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The SVD ``(u, s, v)`` (batch ``(N, ...)``) reordered, re-signed and rotated inside
    repeated singular values to be closest to the previous frame's ``(u0, v0)``."""
    n = len(s)
    # Axis order: the permutation whose columns match the previous ones best.
    match = np.abs(np.einsum("nki,nkj->nij", u0, u)) + np.abs(np.einsum("nki,nkj->nij", v0, v))
    scores = match[:, np.arange(3)[None, :], _PERMS].sum(axis=-1)  # (N, 6)
    perm = _PERMS[np.argmax(scores, axis=-1)]  # (N, 3): new column i <- old column perm[i]
    rows = np.arange(n)[:, None]
    u = u[rows, :, perm].transpose(0, 2, 1)
    v = v[rows, :, perm].transpose(0, 2, 1)
    s = s[rows, perm]
    # Signs: flip (u_i, v_i) together where they point away from the previous frame's.
    dots = np.einsum("nki,nki->ni", u0, u) + np.einsum("nki,nki->ni", v0, v)
    sign = np.where(dots < 0.0, -1.0, 1.0)
    u, v = u * sign[:, None, :], v * sign[:, None, :]
    # Repeated singular values: inside each group any rotation R works (u R, v R); take
    # the one nearest the previous frame (the polar factor of v^T v0 restricted to the group).
    big = np.maximum(np.abs(s).max(axis=-1, keepdims=True), 1e-300)
    close = np.abs(np.abs(s)[:, :, None] - np.abs(s)[:, None, :]) <= REPEATED * big[..., None]
    close = close & (np.sign(s)[:, :, None] == np.sign(s)[:, None, :])
    group = (close.astype(np.int64) @ close.astype(np.int64)) > 0  # transitive for 3 values
    has = group.sum(axis=(-2, -1)) > 3
    if has.any():
        g = np.einsum("nki,nkj->nij", v[has], v0[has]) * group[has]
        gu, _gs, gvt = np.linalg.svd(g)
        r = gu @ gvt
        ok = core.determinant3(r) > 0.0
        idx = np.flatnonzero(has)[ok]
        u[idx] = u[idx] @ r[ok]
        v[idx] = v[idx] @ r[ok]
    return u, s, v


def _repeated(s: np.ndarray) -> np.ndarray:
    """``(...,)`` whether any two of the singular values ``s (..., 3)`` are repeated."""
    a = np.abs(s)
    big = np.maximum(a.max(axis=-1), 1e-300)
    gaps = np.abs(a[..., [0, 0, 1]] - a[..., [1, 2, 2]])
    return (gaps <= REPEATED * big[..., None]).any(axis=-1)


def _hold_isotropic(u_raw, s_raw, v_raw, m3, hold: float = REPEATED) -> np.ndarray:
    """``held (T, N)``: frames whose three singular values are all repeated (a rotation
    times a uniform scale: every ``V`` works, and the alignment keeps the previous
    frame's) after some frame whose values are not. In place, their raw ``v`` becomes
    that last frame's and ``u = M v / s``: the step into and through them is the
    identity, so :func:`_aligned_path` need not loop over them (the frame after such a
    run is aligned as one next to repeated values). A rig unscaled at most frames has
    such frames at most frames."""
    a = np.abs(s_raw)
    big = np.maximum(a.max(axis=-1), 1e-300)
    iso = (a.max(axis=-1) - a.min(axis=-1)) <= REPEATED * big  # (T, N)
    frame = np.arange(len(s_raw))[:, None]
    last = np.maximum.accumulate(np.where(iso, -1, frame), axis=0)  # (T, N): the last other frame, -1 none
    held = iso & (last >= 0)
    if held.any():
        t_idx, n_idx = np.nonzero(held)
        v = v_raw[last[t_idx, n_idx], n_idx]
        v_raw[t_idx, n_idx] = v
        u_raw[t_idx, n_idx] = (m3[t_idx, n_idx] @ v) / s_raw[t_idx, n_idx][:, None, :]
    return held


def _relative_alignment(u, v, u0, v0) -> tuple[np.ndarray, np.ndarray]:
    """For SVD bases ``u, v`` and the previous frame's ``u0, v0`` (batch ``(M, 3, 3)``):
    ``perm (M, 3)`` and ``sign (M, 3)`` with ``u[:, perm[c]] * sign[c]`` the column
    matching ``u0[:, c]`` (the same choice as :func:`_align`, without repeated values)."""
    match = np.abs(np.einsum("nki,nkj->nij", u0, u)) + np.abs(np.einsum("nki,nkj->nij", v0, v))
    scores = match[:, np.arange(3)[None, :], _PERMS].sum(axis=-1)
    perm = _PERMS[np.argmax(scores, axis=-1)]
    rows = np.arange(len(u))[:, None]
    dots = np.einsum("nki,nki->ni", u0, u[rows, :, perm].transpose(0, 2, 1))
    dots += np.einsum("nki,nki->ni", v0, v[rows, :, perm].transpose(0, 2, 1))
    return perm, np.where(dots < 0.0, -1.0, 1.0)


def _aligned_path(u_svd, s_svd, v_svd, m3, small_inner: bool, hold: float = REPEATED):
    """Every frame's SVD aligned to the one before for all nodes at once, repeated
    singular values included: ``(u, s, v, ok)``, ``ok (N,)`` False for the nodes whose
    aligned bases change handedness along the path (the caller aligns those frame by
    frame, :func:`_frame_by_frame`).

    Each frame's bases are made proper first (:func:`_proper`, every frame at once);
    aligned, they are ``u_svd @ Q``, ``v_svd @ Q`` with ``Q (T, N, 3, 3)`` orthogonal.
    Where neither a frame nor the one before has repeated singular values, ``Q_t`` is
    the step's signed permutation (the previous frame's raw SVD matched, computed for
    every frame at once) times ``Q_{t-1}``: the products of all steps are computed at
    once (by doubling: log2(T) batched products; signed permutations multiply
    exactly). Where one of them has, :func:`_align` matches the previous frame's
    aligned bases (a rotation inside the repeated values is no permutation: it cannot
    be composed) and the products restart from there; only those frames are looped
    over (a rig unscaled at its first frame: one or two). ``s`` is ``diag(u^T M v)``
    (exact where values differ; where they repeat, the least-squares diagonal)."""
    t_count, n = s_svd.shape[:2]
    u_raw, s_raw, v_raw = u_svd.copy(), s_svd.copy(), v_svd.copy()
    flat = (t_count * n, 3, 3)
    u_flat, s_flat, v_flat = u_raw.reshape(flat), s_raw.reshape(t_count * n, 3), v_raw.reshape(flat)
    _proper(u_flat, s_flat, v_flat)  # views: in place
    rep = _repeated(s_raw)  # (T, N)
    held = _hold_isotropic(u_raw, s_raw, v_raw, m3, hold)
    q = np.empty((t_count, n, 3, 3))
    if small_inner:  # the first frame as the frame-by-frame path picks it
        u0, s0, v0 = _align(
            u_raw[0].copy(),
            s_raw[0].copy(),
            v_raw[0].copy(),
            np.zeros_like(u_raw[0]),
            np.broadcast_to(np.eye(3), v_raw[0].shape),
        )
        _proper(u0, s0, v0)
        q[0] = np.swapaxes(v_raw[0], -2, -1) @ v0
    else:
        q[0] = np.eye(3)
    if t_count > 1:
        step = ((t_count - 1) * n, 3, 3)
        perm, sign = _relative_alignment(
            u_raw[1:].reshape(step), v_raw[1:].reshape(step), u_raw[:-1].reshape(step), v_raw[:-1].reshape(step)
        )
        rel = np.zeros(step)  # raw_t @ rel ~ raw_{t-1}: rel[perm[c], c] = sign[c]
        rel[np.arange(step[0])[:, None], perm, np.arange(3)[None, :]] = sign
        rel = rel.reshape(t_count - 1, n, 3, 3)
        # prefix[t] = rel[t-1] @ ... @ rel[0] (prefix[0] = I): by doubling, log2(T) products
        prefix = np.concatenate([np.broadcast_to(np.eye(3), (1, n, 3, 3)), rel])
        d = 1
        while d < t_count:
            prefix[d:] = prefix[d:] @ prefix[:-d]
            d *= 2
        # Between frames next to repeated values, q[t] = prefix[t] @ anchor: the anchor is
        # set at the first frame and at every such frame s (prefix[s]^T @ q[s], :func:`_align`).
        special = np.zeros((t_count, n), dtype=bool)
        free = rep & ~held  # held frames step by the identity (their raw bases are the frame before's)
        special[1:] = free[1:] | free[:-1] | (held[:-1] & ~held[1:])
        anchor = np.empty((t_count, n, 3, 3))
        anchor[0] = q[0]
        for t in np.flatnonzero(special.any(axis=1)):
            idx = np.flatnonzero(special[t])
            last = np.where(special[:t, idx], np.arange(t)[:, None], 0).max(axis=0)  # their anchors so far
            prev = prefix[t - 1, idx] @ anchor[last, idx]
            _u, _s, v = _align(
                u_raw[t, idx], s_raw[t, idx], v_raw[t, idx], u_raw[t - 1, idx] @ prev, v_raw[t - 1, idx] @ prev
            )
            anchor[t, idx] = np.swapaxes(prefix[t, idx], -2, -1) @ np.swapaxes(v_raw[t, idx], -2, -1) @ v
        frame = np.arange(t_count)[:, None]
        last = np.maximum.accumulate(np.where(special, frame, 0), axis=0)  # (T, N): each frame's anchor
        q = prefix @ anchor[last, np.arange(n)[None, :]]
    u, v = u_raw @ q, v_raw @ q
    s = np.einsum("tnki,tnkl,tnli->tni", u, m3, v)
    ok = (core.determinant3(u) > 0.0).all(axis=0) & (core.determinant3(v) > 0.0).all(axis=0)
    return u, s, v, ok


def _frame_by_frame(u_svd, s_svd, v_svd, small_inner: bool):
    """The reference alignment, one frame after the other (batch over nodes): each
    frame's SVD aligned to the previous frame's aligned bases, then made proper."""
    t_count = len(s_svd)
    u_all, s_all, v_all = np.empty_like(u_svd), np.empty_like(s_svd), np.empty_like(v_svd)
    for t in range(t_count):
        u, s, v = u_svd[t].copy(), s_svd[t].copy(), v_svd[t].copy()
        if t:
            u, s, v = _align(u, s, v, u_all[t - 1], v_all[t - 1])
        elif small_inner:  # the first frame: the SVD whose inner rotation is nearest the identity
            u, s, v = _align(u, s, v, np.zeros_like(u), np.broadcast_to(np.eye(3), v.shape))
        _proper(u, s, v)
        u_all[t], s_all[t], v_all[t] = u, s, v
    return u_all, s_all, v_all


def continuous_split(
    local: np.ndarray, *, small_inner: bool = False, hold: float = REPEATED
) -> tuple[core.TRS, core.TRS]:
    """Exact two-node TRS for every frame and node of ``local (T, N, 4, 4)``:
    ``(outer, inner)`` batches ``(T, N)`` with ``outer.to_matrix() @ inner.to_matrix()
    == local`` (to about ``REPEATED`` times the scale where singular values repeat,
    ~1e-15 elsewhere), continuous in time (see the module docstring). ``inner`` has no
    translation and unit scale: only its rotation animates. Every node is aligned
    along the whole path at once (:func:`_aligned_path`); a node whose bases would
    change handedness on the way is aligned frame by frame (:func:`_frame_by_frame`).
    ``hold``: frames whose singular values spread less than this (relative) keep the
    previous frame's bases (:func:`_hold_isotropic`; above :data:`REPEATED` the split is
    exact only to about ``hold``)."""
    m = np.asarray(local, dtype=np.float64)
    t_count, n = m.shape[:2]
    m3 = m[..., :3, :3]
    u_svd, s_svd, vt_svd = np.linalg.svd(m3)  # every frame at once; aligned below
    v_svd = np.swapaxes(vt_svd, -2, -1)
    u_all, s_all, v_all, ok = _aligned_path(u_svd, s_svd, v_svd, m3, small_inner, hold)
    if not ok.all():
        slow = np.flatnonzero(~ok)
        u_all[:, slow], s_all[:, slow], v_all[:, slow] = _frame_by_frame(
            u_svd[:, slow], s_svd[:, slow], v_svd[:, slow], small_inner
        )
    q_outer = continuous_quaternions(core.matrix_to_quat(u_all))
    q_inner = continuous_quaternions(core.matrix_to_quat(np.swapaxes(v_all, -2, -1)))
    outer = core.TRS(m[..., :3, 3], q_outer, s_all)
    inner = core.TRS(np.zeros((t_count, n, 3)), q_inner, np.ones((t_count, n, 3)))
    return outer, inner
