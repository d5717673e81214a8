"""Rotations: quaternions (w, x, y, z), rotation matrices, Blender's Euler orders and
axis-angle, and the hat / vee maps between angular vectors and skew matrices.

Conventions: column vectors, ``R @ v``; quaternions are ``(w, x, y, z)`` like Blender's
and the Hamilton product ``quat_multiply(a, b)`` means "apply b, then a", so it matches
``quat_to_matrix(a) @ quat_to_matrix(b)``. Every function is batched over leading
dimensions and broadcasts them.
"""

from __future__ import annotations

import threading

import numpy as np

from .errors import InputError, as_array, batch_shape, first_index, where

__all__ = [
    "EULER_ORDERS",
    "quat_multiply",
    "quat_conjugate",
    "quat_normalize",
    "quat_rotate",
    "quat_to_matrix",
    "matrix_to_quat",
    "blender_matrix_to_quat",
    "quat_angle_deg",
    "euler_to_matrix",
    "euler_to_quat",
    "axis_angle_to_matrix",
    "axis_angle_to_quat",
    "hat",
    "vee",
]

#: Blender's Euler rotation orders; "XYZ" applies X first: ``R = Rz @ Ry @ Rx``.
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def norm(v) -> np.ndarray:
    """Euclidean norm over the last axis (``einsum``-based: fast on short axes)."""
    v = np.asarray(v, dtype=np.float64)
    return np.sqrt(np.einsum("...i,...i->...", v, v))


def _broadcast_batches(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> tuple[int, ...]:
    """The common batch shape of two arrays of vectors; :class:`InputError` naming both if none."""
    if a.shape[:-1] == b.shape[:-1]:
        return a.shape[:-1]
    try:
        return np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    except ValueError:
        raise InputError(
            f"{name_b}: batch shapes {name_a} {a.shape[:-1]}, {name_b} {b.shape[:-1]} do not broadcast together", name_b
        ) from None


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product ``a * b`` of quaternions ``(..., 4)`` (w, x, y, z).

    The rotation of the product applies ``b`` first, then ``a``.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    out = np.empty(_broadcast_batches(a, b, "a", "b") + (4,))
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def quat_conjugate(q) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)``; the inverse rotation of a unit quaternion."""
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_normalize(q, *, zero: str = "raise", what: str = "rotation") -> np.ndarray:
    """Unit quaternions ``(..., 4)``.

    ``zero="raise"`` raises :class:`InputError` naming the first zero-length
    quaternion; ``zero="blender"`` does what Blender does with an all-zero quaternion
    (it becomes ``(0, 1, 0, 0)``, 180 degrees about X).
    """
    q = as_array(q, what, (4,))
    length = norm(q)[..., None]
    is_zero = length[..., 0] == 0.0
    if is_zero.any():
        if zero == "raise":
            idx = first_index(is_zero)
            raise InputError(f"{what}{where(idx)}: zero-length quaternion", what, idx)
        if zero != "blender":
            raise ValueError(f"zero must be 'raise' or 'blender', got {zero!r}")
        q = np.where(is_zero[..., None], np.array([0.0, 1.0, 0.0, 0.0]), q)
        length = np.where(is_zero[..., None], 1.0, length)
    return q / length


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors ``v (..., 3)`` by unit quaternions ``q (..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    out = np.empty(_broadcast_batches(q, v, "q", "v") + (3,))
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    # v' = v + w t + u x t with t = 2 u x v
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    out[..., 0] = vx + w * tx + y * tz - z * ty
    out[..., 1] = vy + w * ty + z * tx - x * tz
    out[..., 2] = vz + w * tz + x * ty - y * tx
    return out


#: Quaternions converted per block by :func:`quat_to_matrix`: its scratch rows stay in cache.
_Q2M_BLOCK = 8192
#: Per thread, :func:`quat_to_matrix`'s scratch rows ``(35, <= _Q2M_BLOCK)`` (at most 2.3 MB), kept
#: between calls: fresh ones would cost page faults on every call of a few thousand quaternions.
_q2m_scratch = threading.local()


def quat_to_matrix(q, scale=None, out=None) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of unit quaternions ``(..., 4)``.

    With ``scale (..., 3)`` the columns are scaled: ``R @ diag(scale)``. With ``out``
    (``(..., 3, 3)`` or the upper-left block of ``(..., 4, 4)``) the result is written
    there and returned. The batch shapes of ``q``, ``scale`` and ``out`` broadcast (to
    ``out``'s when given). Wrong shapes raise :class:`InputError`; the quaternions are
    used as given (not normalised, not checked for NaN).

    Entry by entry the classic formulas, ``R[0, 0] = 1 - 2 (y^2 + z^2)``,
    ``R[1, 0] = 2 (x y + w z)``, ... rounded exactly as written there. Computed in blocks
    of a few thousand quaternions, every product formed once, in scratch rows kept per
    thread: no temporary arrays per entry or per call (``benchmarks/bench_rotations.py``
    times it against scipy's compiled ``Rotation.as_matrix``).
    """
    q = as_array(q, "q", (4,), finite=False)
    shape = q.shape[:-1]
    if scale is not None:
        scale = as_array(scale, "scale", (3,), finite=False)
        shape = batch_shape("scale", (q, 1), (scale, 1), names=("q", "scale"))
    if out is None:
        out = np.empty(shape + (3, 3))
    else:
        if not isinstance(out, np.ndarray) or out.shape[-2:] != (3, 3):
            got = out.shape if isinstance(out, np.ndarray) else type(out).__name__
            raise InputError(f"out: expected a (..., 3, 3) array, got {got}", "out")
        if batch_shape("out", (q, 1), (out, 2), names=("q", "out")) != out.shape[:-2] or (
            scale is not None and batch_shape("out", (scale, 1), (out, 2), names=("scale", "out")) != out.shape[:-2]
        ):
            raise InputError(f"out: batch shape {out.shape[:-2]} cannot hold the result's {shape}", "out")
        shape = out.shape[:-2]
    flat_q = np.broadcast_to(q, shape + (4,)).reshape(-1, 4)
    flat_s = None if scale is None else np.broadcast_to(scale, shape + (3,)).reshape(-1, 3)
    flat_out = out.reshape(-1, 3, 3)
    if not np.may_share_memory(flat_out, out):  # no flat view of this layout: fill a copy
        _quat_to_matrix_blocks(flat_q, flat_s, flat_out)
        out[...] = flat_out.reshape(out.shape)
    else:
        _quat_to_matrix_blocks(flat_q, flat_s, flat_out)
    return out


def _quat_to_matrix_blocks(q: np.ndarray, scale: np.ndarray | None, out: np.ndarray) -> None:
    """:func:`quat_to_matrix` on flat ``q (M, 4)``, ``scale (M, 3)``, ``out (M, 3, 3)``.

    Per block of B quaternions, rows of length B (structure of arrays, so every ufunc
    runs one long contiguous loop): ``v`` holds ``w, x, y, z, x, y`` (x, y repeated so the
    cyclic pairs ``(y, z), (z, x), (x, y)`` are row slices) and ``v2 = 2 v``; the nine
    entries land in ``e`` row ``3 i + j`` and go to ``out`` in one transposing copy.
    """
    m = q.shape[0]
    if m == 0:
        return
    b = min(_Q2M_BLOCK, m)
    scratch = getattr(_q2m_scratch, "rows", None)
    if scratch is None or scratch.shape[1] < b:
        scratch = _q2m_scratch.rows = np.empty((35, b))
    rows = scratch[:, :b]
    v, v2, sq, pair, wv, e, s = rows[:6], rows[6:12], rows[12:17], rows[17:20], rows[20:23], rows[23:32], rows[32:]
    for start in range(0, m, b):
        stop = min(m, start + b)
        if stop - start != b:  # the last, shorter block
            b = stop - start
            v, v2, sq, pair, wv, e, s = (a[:, :b] for a in (v, v2, sq, pair, wv, e, s))
        np.copyto(v[:4], q[start:stop].T)
        np.copyto(v[4:], v[1:3])
        np.multiply(v, 2.0, out=v2)
        np.multiply(v[1:], v2[1:], out=sq)  # 2xx 2yy 2zz 2xx 2yy
        diagonal = e[0::4]  # R00 R11 R22
        np.add(sq[1:4], sq[2:5], out=diagonal)  # 2(yy + zz), 2(zz + xx), 2(xx + yy)
        np.subtract(1.0, diagonal, out=diagonal)
        np.multiply(v[2:5], v2[3:6], out=pair)  # 2yz 2zx 2xy
        np.multiply(v2[0], v[1:4], out=wv)  # 2wx 2wy 2wz
        for k, (plus, minus) in enumerate(((7, 5), (2, 6), (3, 1))):  # (R21, R12), (R02, R20), (R10, R01)
            np.add(pair[k], wv[k], out=e[plus])
            np.subtract(pair[k], wv[k], out=e[minus])
        by_column = e.reshape(3, 3, b)  # [i, j] = R[i, j], a view
        if scale is not None:
            np.copyto(s, scale[start:stop].T)
            np.multiply(by_column, s, out=by_column)
        np.copyto(out[start:stop], by_column.transpose(2, 0, 1))


def matrix_to_quat(matrix) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` of rotation matrices ``(..., 3, 3)``, ``w >= 0``.

    Shepperd's method (the best-conditioned of four formulas per matrix). The input
    should be a proper rotation; for anything else the result is the quaternion of a
    nearby rotation, not a decomposition (use :func:`decompose` for that).
    :class:`InputError` naming ``matrix`` and the first batch index for another shape
    or a matrix holding NaN or infinity.
    """
    m = as_array(matrix, "matrix", (3, 3), finite=False)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    batch = m.shape[:-2]
    # Row c of the symmetric k is 4 q_c q for c = w, x, y, z (its diagonal: 4 q_c^2); the
    # row with the largest diagonal (the best conditioned) is taken, one pick per matrix.
    k = np.empty(batch + (4, 4))
    k[..., 0, 0] = 1.0 + m00 + m11 + m22
    k[..., 1, 1] = 1.0 + m00 - m11 - m22
    k[..., 2, 2] = 1.0 - m00 + m11 - m22
    k[..., 3, 3] = 1.0 - m00 - m11 + m22
    k[..., 0, 1] = k[..., 1, 0] = m[..., 2, 1] - m[..., 1, 2]
    k[..., 0, 2] = k[..., 2, 0] = m[..., 0, 2] - m[..., 2, 0]
    k[..., 0, 3] = k[..., 3, 0] = m[..., 1, 0] - m[..., 0, 1]
    k[..., 1, 2] = k[..., 2, 1] = m[..., 0, 1] + m[..., 1, 0]
    k[..., 1, 3] = k[..., 3, 1] = m[..., 0, 2] + m[..., 2, 0]
    k[..., 2, 3] = k[..., 3, 2] = m[..., 1, 2] + m[..., 2, 1]
    flat = k.reshape(-1, 4, 4)
    case = flat.diagonal(axis1=1, axis2=2).argmax(axis=-1)
    out = flat[np.arange(len(flat)), case].reshape(batch + (4,))
    # Each row is 4 q_c q; normalising removes the common factor (and w's sign is fixed).
    length = norm(out)
    length = np.where(out[..., 0] < 0.0, -length, length)
    out /= length[..., None]
    if not np.isfinite(out.sum()):  # one sum when all are finite; NaN or inf came in
        as_array(m, "matrix", (3, 3))  # raises, naming the first batch index
    return out


#: ``mat3_normalized_to_quat_fast`` normalises its result only when its squared length is
#: this far from 1 (``BLI_ASSERT_UNIT_EPSILON * 3``).
_BLENDER_UNIT_SQ_TOLERANCE = 0.0002 * 3


def blender_matrix_to_quat(normalised, *, unit: bool = True) -> np.ndarray:
    """The quaternion ``(..., 4)`` Blender's ``mat3_to_quat`` takes from 3x3 matrices whose
    columns are normalised ``(..., 3, 3)`` but not necessarily perpendicular (a sheared
    local matrix): what ``Matrix.decompose()`` returns, and so what Blender's glTF and FBX
    exporters write for a node whose local matrix holds shear.

    A port of ``mat3_normalized_to_quat_fast`` (``blenlib/intern/math_rotation.cc``,
    Blender 4.2 to 5.0; Mike Day's four branches chosen by the diagonal, ``w >= 0``). For
    a rotation matrix every branch gives the rotation's quaternion; for a sheared one the
    branch picks which off-diagonal entries count, so the result is neither the nearest
    rotation nor :func:`matrix_to_quat`'s. A negative determinant is negated first
    (``mat3_normalized_to_quat_with_checks``). Blender normalises the result only when its
    squared length is 6e-4 or more away from 1; with ``unit=True`` (what the exporters
    write: the glTF exporter calls ``normalize()``, the FBX exporter's ``to_euler``
    normalises) it is always normalised. Blender computes in float32, this in float64.
    """
    n = np.asarray(normalised, dtype=np.float64)
    if n.shape[-2:] != (3, 3):
        raise InputError(f"normalised: expected shape (..., 3, 3), got {n.shape}", "normalised")
    det = (
        n[..., 0, 0] * (n[..., 1, 1] * n[..., 2, 2] - n[..., 2, 1] * n[..., 1, 2])
        - n[..., 0, 1] * (n[..., 1, 0] * n[..., 2, 2] - n[..., 2, 0] * n[..., 1, 2])
        + n[..., 0, 2] * (n[..., 1, 0] * n[..., 2, 1] - n[..., 2, 0] * n[..., 1, 1])
    )
    n = np.where((det < 0.0)[..., None, None], -n, n)
    # Blender's mat[c][r] is n[..., r, c]; d0, d1, d2 the diagonal.
    d0, d1, d2 = n[..., 0, 0], n[..., 1, 1], n[..., 2, 2]
    a = (d2 < 0.0) & (d0 > d1)  # x largest
    b = (d2 < 0.0) & ~(d0 > d1)  # y
    c = ~(d2 < 0.0) & (d0 < -d1)  # z
    trace = np.where(
        a, 1.0 + d0 - d1 - d2, np.where(b, 1.0 - d0 + d1 - d2, np.where(c, 1.0 - d0 - d1 + d2, 1.0 + d0 + d1 + d2))
    )
    s = 2.0 * np.sqrt(trace)
    # The sign that keeps w >= 0 in the x, y and z branches.
    flip = np.where(
        a, n[..., 2, 1] < n[..., 1, 2], np.where(b, n[..., 0, 2] < n[..., 2, 0], c & (n[..., 1, 0] < n[..., 0, 1]))
    )
    s = np.where(flip, -s, s)
    inv = 1.0 / s
    sum01, sum02, sum12 = n[..., 1, 0] + n[..., 0, 1], n[..., 0, 2] + n[..., 2, 0], n[..., 2, 1] + n[..., 1, 2]
    dif_x, dif_y, dif_z = n[..., 2, 1] - n[..., 1, 2], n[..., 0, 2] - n[..., 2, 0], n[..., 1, 0] - n[..., 0, 1]
    big = 0.25 * s
    q = np.empty(n.shape[:-2] + (4,))
    q[..., 0] = np.where(a, dif_x * inv, np.where(b, dif_y * inv, np.where(c, dif_z * inv, big)))
    q[..., 1] = np.where(a, big, np.where(b, sum01 * inv, np.where(c, sum02 * inv, dif_x * inv)))
    q[..., 2] = np.where(a, sum01 * inv, np.where(b, big, np.where(c, sum12 * inv, dif_y * inv)))
    q[..., 3] = np.where(a, sum02 * inv, np.where(b, sum12 * inv, np.where(c, big, dif_z * inv)))
    length_sq = np.einsum("...i,...i->...", q, q)
    if unit:
        q /= np.sqrt(length_sq)[..., None]
    else:
        far = np.abs(length_sq - 1.0) >= _BLENDER_UNIT_SQ_TOLERANCE
        q = np.where(far[..., None], q / np.sqrt(length_sq)[..., None], q)
    return q


def quat_angle_deg(a, b) -> np.ndarray:
    """Angle in degrees of the rotation taking unit quaternion ``b`` to ``a``, in [0, 180]."""
    rel = quat_multiply(a, quat_conjugate(b))
    return np.degrees(2.0 * np.arctan2(norm(rel[..., 1:]), np.abs(rel[..., 0])))


def _axis_rotation(axis: str, angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros(angle.shape + (3, 3))
    i = "XYZ".index(axis)
    j, k = (i + 1) % 3, (i + 2) % 3
    out[..., i, i] = 1.0
    out[..., j, j] = c
    out[..., k, k] = c
    out[..., k, j] = s
    out[..., j, k] = -s
    return out


def _check_order(order: str) -> str:
    if order not in EULER_ORDERS:
        raise InputError(f"order: expected one of {', '.join(EULER_ORDERS)}, got {order!r}", "order")
    return order


def euler_to_matrix(angles, order: str = "XYZ") -> np.ndarray:
    """Blender Euler angles in radians ``(..., 3)`` (X, Y, Z) to matrices ``(..., 3, 3)``.

    ``order`` names the axes in the order they are applied: "XYZ" gives
    ``Rz @ Ry @ Rx``, exactly as Blender's ``rotation_mode``.
    """
    angles = as_array(angles, "euler angles", (3,))
    _check_order(order)
    first, second, third = ("XYZ".index(a) for a in order)
    return (
        _axis_rotation(order[2], angles[..., third])
        @ _axis_rotation(order[1], angles[..., second])
        @ _axis_rotation(order[0], angles[..., first])
    )


def euler_to_quat(angles, order: str = "XYZ") -> np.ndarray:
    """Blender Euler angles (radians, ``(..., 3)``) to unit quaternions ``(..., 4)``."""
    angles = as_array(angles, "euler angles", (3,))
    _check_order(order)
    q: np.ndarray | None = None
    for axis in order:  # applied first to last: q = q_last * ... * q_first
        half = 0.5 * angles[..., "XYZ".index(axis)]
        qa = np.zeros(half.shape + (4,))
        qa[..., 0] = np.cos(half)
        qa[..., 1 + "XYZ".index(axis)] = np.sin(half)
        q = qa if q is None else quat_multiply(qa, q)
    assert q is not None
    return np.where(q[..., :1] < 0.0, -q, q)


def axis_angle_to_quat(axis, angle) -> np.ndarray:
    """Axis ``(..., 3)`` and angle in radians ``(...)`` to unit quaternions.

    The axis is normalised; a zero axis gives the identity, as in Blender.
    """
    axis = as_array(axis, "axis", (3,))
    angle = as_array(angle, "angle")
    length = norm(axis)[..., None]
    unit = np.divide(axis, length, out=np.zeros_like(axis), where=length > 0.0)
    half = 0.5 * np.where(length[..., 0] > 0.0, angle, 0.0)
    return np.concatenate((np.cos(half)[..., None], np.sin(half)[..., None] * unit), axis=-1)


def axis_angle_to_matrix(axis, angle) -> np.ndarray:
    """Axis ``(..., 3)`` and angle (radians) to ``(..., 3, 3)``; zero axis gives identity."""
    return quat_to_matrix(axis_angle_to_quat(axis, angle))


def hat(omega) -> np.ndarray:
    """Skew-symmetric matrix of an angular quantity.

    3D: ``(..., 3)`` vectors to ``(..., 3, 3)`` with ``hat(w) @ v == cross(w, v)``.
    2D: rates ``(..., 1)`` (one component, as so(2) has one dimension) to
    ``(..., 2, 2)`` ``w J`` with ``J = [[0, -1], [1, 0]]``, so ``hat(w) @ v == w perp(v)``.
    """
    omega = np.asarray(omega, dtype=np.float64)
    if omega.ndim and omega.shape[-1] == 3:
        x, y, z = np.moveaxis(omega, -1, 0)
        zero = np.zeros_like(x)
        return np.stack((np.stack((zero, -z, y), -1), np.stack((z, zero, -x), -1), np.stack((-y, x, zero), -1)), -2)
    if omega.ndim and omega.shape[-1] == 1:
        w = omega[..., 0]
        zero = np.zeros_like(w)
        return np.stack((np.stack((zero, -w), -1), np.stack((w, zero), -1)), -2)
    raise InputError(
        f"hat: expected (..., 3) angular vectors (3D) or (..., 1) angular rates (2D), got shape {omega.shape}",
        "omega",
    )


def vee(skew) -> np.ndarray:
    """Inverse of :func:`hat`: ``(..., 3, 3) -> (..., 3)`` or ``(..., 2, 2) -> (..., 1)``.

    Reads the lower triangle; the input is assumed skew-symmetric (see
    :func:`hierarchy_inspector.core.dynamics` for a checked entry point).
    """
    skew = np.asarray(skew, dtype=np.float64)
    if skew.shape[-2:] == (3, 3):
        return np.stack((skew[..., 2, 1], skew[..., 0, 2], skew[..., 1, 0]), axis=-1)
    if skew.shape[-2:] == (2, 2):
        return skew[..., 1, 0][..., None]
    raise InputError(f"vee: expected (..., 3, 3) or (..., 2, 2) skew matrices, got shape {skew.shape}", "skew")
