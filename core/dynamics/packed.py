"""The algebra of dynamic transforms on packed tuples, and the checks of its inputs.

A dynamic transform is handled internally as the tuple ``(t, R, s, v, a, w, alpha)``:
translation ``(..., n)``, rotation ``(..., n, n)``, uniform scale ``(...)``, velocity and
acceleration ``(..., n)`` and the angular velocity / acceleration in **packed** form:
3D vectors ``(..., 3)`` (``W = hat(w)``), 2D scalars ``(...)`` (``W = w J``), other n skew
matrices ``(..., n, n)``. Rates are in the parent's basis and units, spatial convention
``dR/dt = W R`` (see :mod:`hierarchy_inspector.core.dynamics`).

Holds the small batched helpers (``m @ x``, cross and perpendicular products), the
angular operations in packed form (``W x``, ``R W R^T``, commutators), the validation of
vector and angular inputs, and the group law itself: :func:`_compose_packed` (associative,
for :meth:`Hierarchy.fold`), :func:`_inverse_packed`, :func:`_relative_packed`
(``P^-1 o C`` directly) and :func:`_identity_packed`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, as_array, batch_shape, first_index, where
from ..group import inverse_scale
from ..rotations import hat, vee

#: Largest ``|W + W^T|`` entry, relative to ``max(1, |W|)``, accepted as skew-symmetric.
SKEW_TOLERANCE = 1e-6


# -- small batched helpers ---------------------------------------------------------------


def _mv(m, x):
    """``m @ x`` for matrices ``(..., n, n)`` and vectors ``(..., n)``."""
    return np.einsum("...ij,...j->...i", m, x)


def _mtv(m, x):
    """``m^T @ x``."""
    return np.einsum("...ji,...j->...i", m, x)


def _t(m):
    return np.swapaxes(m, -1, -2)


def _cross(a, b):
    """Row-wise cross product of ``(..., 3)`` vectors (faster than ``np.cross``)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _perp(x):
    """2D perpendicular ``(-y, x)`` = ``J x``."""
    out = np.empty(x.shape)
    out[..., 0] = -x[..., 1]
    out[..., 1] = x[..., 0]
    return out


# -- angular rates in packed form ----------------------------------------------------------
# 3D: vectors (..., 3); 2D: scalars (...); other n: skew matrices (..., n, n).


def _ang_ndim(n: int) -> int:
    return 1 if n == 3 else 0 if n == 2 else 2


def _ang_zeros(n: int, shape=()) -> np.ndarray:
    return np.zeros(tuple(shape) + ((3,) if n == 3 else () if n == 2 else (n, n)))


def _ang_apply(n: int, w, x):
    """``W x``."""
    if n == 3:
        return _cross(w, x)
    if n == 2:
        return w[..., None] * _perp(x)
    return _mv(w, x)


def _ang_rotate(n: int, r, w):
    """``R W R^T`` (2D rotations commute with W)."""
    if n == 3:
        return _mv(r, w)
    if n == 2:
        return w + np.zeros(r.shape[:-2])
    return r @ w @ _t(r)


def _ang_rotate_back(n: int, r, w):
    """``R^T W R``."""
    if n == 3:
        return _mtv(r, w)
    if n == 2:
        return w + np.zeros(r.shape[:-2])
    return _t(r) @ w @ r


def _ang_bracket(n: int, a, b):
    """Commutator ``[A, B] = AB - BA`` (3D: cross product; 2D: zero)."""
    if n == 3:
        return _cross(a, b)
    if n == 2:
        return np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)))
    return a @ b - b @ a


def _ang_to_matrix(n: int, w) -> np.ndarray:
    if n == 3:
        return hat(w)
    if n == 2:
        return hat(np.asarray(w)[..., None])
    return np.array(w, copy=True)


def _ang_view(n: int, w, what: str) -> np.ndarray:
    if n not in (2, 3):
        raise InputError(f"{what}: only 2D and 3D angular rates have a vector / scalar form; this is {n}-d", what)
    return w


def _check_skew(m: np.ndarray, what: str) -> np.ndarray:
    if not m.size:
        return m
    err = np.abs(m + _t(m)).max(axis=(-2, -1))
    bound = SKEW_TOLERANCE * np.maximum(1.0, np.abs(m).max(axis=(-2, -1)))
    bad = err > bound
    if bad.any():
        idx = first_index(bad)
        raise InputError(
            f"{what}{where(idx)}: not skew-symmetric (|W + W^T| = {float(err[idx]):.3g}); angular rates are "
            "skew (..., n, n) matrices in the parent's basis (dR/dt = W R)",
            what,
            idx,
        )
    return 0.5 * (m - _t(m))


def _angular_input(value, n: int, what: str) -> np.ndarray:
    """Validate an angular rate and return it packed (see the section comment above)."""
    if value is None:
        return _ang_zeros(n)
    arr = as_array(value, what)
    if arr.ndim >= 2 and arr.shape[-2:] == (n, n):
        m = _check_skew(arr, what)
        return vee(m) if n == 3 else m[..., 1, 0] if n == 2 else m
    if n == 3 and arr.ndim >= 1 and arr.shape[-1] == 3:
        return arr
    if n == 2 and (arr.ndim == 0 or arr.shape[-1] == 1):
        return arr if arr.ndim == 0 else arr[..., 0]
    forms = f"skew (..., {n}, {n}) matrices"
    if n == 3:
        forms += " or (..., 3) vectors"
    elif n == 2:
        forms += " or (..., 1) rates or a scalar (a batch of 2D rates w is w[..., None])"
    raise InputError(f"{what}: expected {forms} for {n}-d transforms, got shape {arr.shape}", what)


def _vector_input(value, n: int, what: str) -> np.ndarray:
    if value is None:
        return np.zeros(n)
    arr = as_array(value, what, (None,))
    if arr.shape[-1] != n:
        raise InputError(f"{what}: expected (..., {n}) vectors for {n}-d transforms, got shape {arr.shape}", what)
    return arr


# -- the group on packed tuples (t, R, s, v, a, w, alpha) ---------------------------------


def _compose_packed(n: int):
    """The associative compose ``C = P o L`` on packed tuples, for :meth:`Hierarchy.fold`."""

    def compose(p, c):
        tp, rp, sp, vp, ap, wp, alp = p
        tl, rl, sl, vl, al, wl, all_ = c
        sp1 = sp[..., None]
        r = sp1 * _mv(rp, tl)
        u = sp1 * _mv(rp, vl)
        wr = _ang_apply(n, wp, r)
        w_rot = _ang_rotate(n, rp, wl)
        t = tp + r
        v = vp + wr + u
        # a_p + A_p r + W_p^2 r + 2 W_p u + s_p R_p a_l
        acc = ap + _ang_apply(n, alp, r) + _ang_apply(n, wp, wr + 2.0 * u) + sp1 * _mv(rp, al)
        w = wp + w_rot
        alpha = alp + _ang_rotate(n, rp, all_) + _ang_bracket(n, wp, w_rot)
        return t, rp @ rl, sp * sl, v, acc, w, alpha

    return compose


def _inverse_packed(n: int, x, what: str = "scale"):
    t, r, s, v, a, w, al = x
    inv = inverse_scale(s, what)
    i1 = inv[..., None]
    wt = _ang_apply(n, w, t)
    return (
        -_mtv(r, t) * i1,
        np.array(_t(r), copy=True),
        inv,
        _mtv(r, wt - v) * i1,
        # R^T (A t - W^2 t + 2 W v - a) / s
        _mtv(r, _ang_apply(n, al, t) - _ang_apply(n, w, wt - 2.0 * v) - a) * i1,
        -_ang_rotate_back(n, r, w),
        -_ang_rotate_back(n, r, al),
    )


def _relative_packed(n: int, p, c, inv_sp):
    """``L = P^-1 o C`` directly (spec "Global to local"); ``inv_sp = 1 / s_p``."""
    tp, rp, sp, vp, ap, wp, alp = p
    tc, rc, sc, vc, ac, wc, alc = c
    i1 = inv_sp[..., None]
    r = tc - tp
    wr = _ang_apply(n, wp, r)
    q = vc - vp - wr  # = s_p R_p v_l
    acc = ac - ap - _ang_apply(n, alp, r) - _ang_apply(n, wp, wr + 2.0 * q)
    return (
        _mtv(rp, r) * i1,
        _t(rp) @ rc,
        sc * inv_sp,
        _mtv(rp, q) * i1,
        _mtv(rp, acc) * i1,
        _ang_rotate_back(n, rp, wc - wp),
        _ang_rotate_back(n, rp, alc - alp - _ang_bracket(n, wp, wc)),
    )


def _identity_packed(n: int, shape=()):
    shape = tuple(shape)
    return (
        np.zeros(shape + (n,)),
        np.broadcast_to(np.eye(n), shape + (n, n)).copy(),
        np.ones(shape),
        np.zeros(shape + (n,)),
        np.zeros(shape + (n,)),
        _ang_zeros(n, shape),
        _ang_zeros(n, shape),
    )


def _core_ndims(n: int) -> tuple[int, ...]:
    k = _ang_ndim(n)
    return (1, 2, 0, 1, 1, k, k)


def _broadcast_parts(n: int, parts, *, shape=None, copy: bool = False):
    cores = _core_ndims(n)
    if shape is None:
        shape = batch_shape("DynamicTransform", *zip(parts, cores, strict=True))
    out = []
    for part, k in zip(parts, cores, strict=True):
        b = np.broadcast_to(part, tuple(shape) + part.shape[part.ndim - k :])
        out.append(b.copy() if copy else b)
    return tuple(out)
