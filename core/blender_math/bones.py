"""Pose bones: armature-space ``pose_bone.matrix`` before constraints and IK, all six
Inherit Scale modes, hinge, local location and connected bones
(``BKE_pose_where_is_bone``), and the two ``blenlib`` helpers those modes are built from
(:func:`ortho_stable`, :func:`fixshear_scale`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..decompose import determinant3
from ..errors import as_array
from ..hierarchy import Hierarchy
from ._common import (
    _affine_inverse,
    _batch,
    _check_rigid,
    _codes,
    _column_norms,
    _cross,
    _dot,
    _flags,
    _normalize,
    _normalize_columns,
)
from .codes import _ALIGNED, _AVERAGE, _FIX_SHEAR, _FULL, _NONE, _NONE_LEGACY, INHERIT_SCALE_MODES

__all__ = [
    "ortho_stable",
    "fixshear_scale",
    "bone_parent_transforms",
    "pose_matrices",
    "pose_matrices_given_parents",
]

#: ``FLT_EPSILON``: Blender's threshold for "parallel" in ``orthogonalize_stable``.
_FLT_EPSILON = float(np.finfo(np.float32).eps)
#: ``orthogonalize_stable`` leaves X and Z alone when ``|cos(angle)|`` is at most this.
_SHEAR_MIN_COS = 1.0e-4


# -- pose bones ---------------------------------------------------------------------------


def ortho_stable(m3, keep_volume: bool) -> np.ndarray:
    """Blender's ``orthogonalize_m4_stable(m, 1, !keep_volume)`` on 3x3 matrices ``(..., 3, 3)``.

    Column Y keeps its direction. X and Z lose their components along Y (a projection,
    which keeps the determinant); if they are then not at 90 degrees (``|cos| > 1e-4``,
    and not parallel) both are rotated symmetrically in their plane until they are. With
    ``keep_volume`` X and Z are then scaled by ``sqrt(sin(angle))`` so ``|det|`` is kept;
    otherwise all three columns are made unit length (a zero column stays zero).
    Mirrors ``orthogonalize_stable`` in ``blenlib/intern/math_matrix_c.cc``.

    Returns
    -------
    (..., 3, 3) float64, a new array
    """
    return _ortho_stable(as_array(m3, "m3", (3, 3)), keep_volume)


def _ortho_stable(m: np.ndarray, keep_volume: bool) -> np.ndarray:
    """:func:`ortho_stable` of a checked float64 array. X and Z go through the same
    steps, so they take them together, as the rows of one ``(..., 2, 3)`` array."""
    y = m[..., :, 1]
    xz = np.swapaxes(m[..., :, 0::2], -1, -2)
    len_sq = _dot(y, y)
    has_y = len_sq > 0.0
    inv_sq = np.where(has_y, 1.0 / np.where(has_y, len_sq, 1.0), 0.0)
    along_y = y[..., None, :]
    xz = xz - along_y * (_dot(xz, along_y) * inv_sq[..., None])[..., None]
    if not keep_volume:
        y = y * np.where(has_y, np.sqrt(inv_sq), 1.0)[..., None]

    nxz, len_xz = _normalize(xz)
    x, z, nx, nz = xz[..., 0, :], xz[..., 1, :], nxz[..., 0, :], nxz[..., 1, :]
    len_x, len_z = len_xz[..., 0], len_xz[..., 1]
    cos = _dot(nx, nz)
    fix = (np.abs(cos) > _SHEAR_MIN_COS) & (np.abs(cos) < 1.0 - _FLT_EPSILON)
    if fix.any():
        c = np.where(fix, cos, 0.0)
        angle = np.arccos(np.clip(c, -1.0, 1.0))
        target = angle + (0.5 * np.pi - angle) / 2.0
        w = nx - nz * c[..., None]
        w_len = np.sqrt(_dot(w, w))
        w_len = np.where(fix, w_len, 1.0)
        nx_fixed = w * (np.sin(target) / w_len)[..., None] + nz * np.cos(target)[..., None]
        nz_fixed = _normalize(_cross(_cross(nx_fixed, nz), nx_fixed))[0]
        nx = np.where(fix[..., None], nx_fixed, nx)
        nz = np.where(fix[..., None], nz_fixed, nz)
        if keep_volume:
            factor = np.sqrt(np.sin(angle))
            x = np.where(fix[..., None], nx * (len_x * factor)[..., None], x)
            z = np.where(fix[..., None], nz * (len_z * factor)[..., None], z)
    if not keep_volume:
        x, z = nx, nz
    return np.stack((x, y, z), axis=-1)


def fixshear_scale(m3) -> np.ndarray:
    """Blender's ``mat4_to_size_fix_shear`` on ``(..., 3, 3)``: per-axis scale ``(..., 3)``.

    The column lengths times ``cbrt(|det| / (|col0| |col1| |col2|))``, so their product is
    ``|det|`` (the volume) even when the matrix is sheared; plain column lengths when
    one of them is zero.
    """
    m = as_array(m3, "m3", (3, 3))
    size = _column_norms(m)
    volume = size.prod(axis=-1)
    ok = volume != 0.0
    factor = np.cbrt(np.abs(determinant3(m)) / np.where(ok, volume, 1.0))
    return size * np.where(ok, factor, 1.0)[..., None]


def bone_parent_transforms(
    offset, parent_rest, parent_pose, inherit_scale, inherit_rotation, local_location
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a parent bone does to its children: ``BKE_bone_parent_transform_calc_from_matrices``.

    Batched over M child bones that have a parent. A child's pose matrix is then
    ``pose3 = rotscale3 @ basis3 @ diag(post_scale)``, ``pose.t = loc @ [basis.t, 1]``
    (``BKE_bone_parent_transform_apply``).

    Parameters
    ----------
    offset : (M, 4, 4)
        ``inv(parent.matrix_local) @ bone.matrix_local`` (``BKE_bone_offset_matrix_get``).
    parent_rest : (M, 4, 4)
        The parent's ``bone.matrix_local`` (used when rotation is not inherited).
    parent_pose : (M, 4, 4)
        The parent's final ``pose_bone.matrix``.
    inherit_scale : (M,) codes into :data:`INHERIT_SCALE_MODES` or identifiers
    inherit_rotation, local_location : (M,) bool
        ``bone.use_inherit_rotation`` and ``bone.use_local_location``.

    Returns
    -------
    rotscale : (M, 4, 4)
        Applied to the basis rotation and scale.
    loc : (M, 4, 4)
        Applied to the basis location.
    post_scale : (M, 3)
        Scale applied last along the bone's own axes (ALIGNED; ones otherwise).
    """
    offs = _batch(offset, "offset", (4, 4), None)
    m = offs.shape[0]
    rest = _batch(parent_rest, "parent_rest", (4, 4), m)
    pose = _batch(parent_pose, "parent_pose", (4, 4), m)
    mode = _codes(inherit_scale, INHERIT_SCALE_MODES, "inherit_scale", m)
    inherit = _flags(inherit_rotation, m, "inherit_rotation")
    local = _flags(local_location, m, "local_location")
    return _bone_parent_transforms(offs, rest, pose, mode, inherit, local)


def _bone_parent_transforms(offs, rest, pose, mode, inherit, local) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bone_parent_transforms` of checked arrays: ``(M, 4, 4)`` float64 matrices,
    ``mode (M,)`` int64 codes, ``inherit`` and ``local`` ``(M,)`` bool."""
    m = offs.shape[0]
    p3 = pose[:, :3, :3]
    post = np.ones((m, 3))
    tmat = np.where(inherit[:, None, None], pose, rest)  # (M, 4, 4), a new array

    combo = 2 * mode + inherit  # which (mode, inherited rotation) pairs occur: most rigs use one or two
    present = frozenset(np.flatnonzero(np.bincount(combo)).tolist())
    modes = {c // 2 for c in present}
    none = np.zeros(0, dtype=np.int64)

    def rows(sel_mode, sel_inherit):
        code = 2 * sel_mode + int(sel_inherit)
        return np.flatnonzero(combo == code) if code in present else none

    # Parent pose rotation inherited: normalise the parent's pose matrix as the mode says.
    if len(i := np.concatenate((rows(_NONE, True), rows(_AVERAGE, True)))):
        tmat[i, :3, :3] = _ortho_stable(p3[i], keep_volume=False)
    if len(i := rows(_ALIGNED, True)):
        tmat[i, :3, :3], post[i] = _normalize_columns(_ortho_stable(p3[i], keep_volume=True))
    if len(i := rows(_NONE_LEGACY, True)):
        tmat[i, :3, :3] = _normalize_columns(p3[i])[0]
    # Hinge: the parent's rest orientation, with the parent's pose scale as the mode says.
    if len(i := rows(_FULL, False)):
        tmat[i, :3, :3] *= _column_norms(p3[i])[:, None, :]
    if len(i := rows(_FIX_SHEAR, False)):
        tmat[i, :3, :3] *= fixshear_scale(p3[i])[:, None, :]
    if len(i := rows(_ALIGNED, False)):
        post[i] = fixshear_scale(p3[i])
    if _AVERAGE in modes and len(i := np.flatnonzero(mode == _AVERAGE)):
        tmat[i, :3, :3] *= np.cbrt(np.abs(determinant3(p3[i])))[:, None, None]

    rotscale = tmat @ offs
    if _FIX_SHEAR in modes and len(i := np.flatnonzero(mode == _FIX_SHEAR)):
        rotscale[i, :3, :3] = _ortho_stable(rotscale[i, :3, :3], keep_volume=True)

    # Location: the parent's full pose (FULL + inherited rotation uses rotscale, which is
    # the same P @ offset), or with local location off the armature-space orientation.
    loc = pose @ offs
    if len(i := np.flatnonzero(~local)):
        loc[i, :3, :3] = p3[i]
    return rotscale, loc, post


def _apply_parent_transform(rotscale, loc, post, basis):
    """``BKE_bone_parent_transform_apply``: ``(M, 4, 4)`` pose matrices."""
    out = rotscale @ basis
    out[:, :3, 3] = np.einsum("nij,nj->ni", loc[:, :3, :3], basis[:, :3, 3]) + loc[:, :3, 3]
    out[:, :3, :3] *= post[:, None, :]
    return out


def pose_matrices(
    parents, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis
) -> np.ndarray:
    """Armature-space ``pose_bone.matrix`` ``(N, 4, 4)`` of every bone, before constraints and IK.

    Mirrors ``BKE_pose_where_is_bone`` (without constraints):
    ``BKE_bone_parent_transform_calc_from_pchan`` (see :func:`bone_parent_transforms`)
    applied to the basis. Root bones ignore the inherit flags: ``rotscale = loc =
    matrix_local`` (``loc = T(matrix_local.t)`` with local location off). Connected bones
    ignore the translation of their basis. Computed one depth level at a time, vectorised
    over all bones of a level. World space is ``armature.matrix_world @ result``.

    Parameters
    ----------
    parents : (N,) int, -1 for roots, any order; or a :class:`~.hierarchy.Hierarchy`
    bone_matrix_local : (N, 4, 4)
        Rest matrices in armature space (``bone.matrix_local``), rigid.
        (Bone lengths are not needed: a parent's length is already inside its children's
        rest matrices, ``offs.t = head + (0, parent.length, 0)``.)
    inherit_scale : (N,) codes into :data:`INHERIT_SCALE_MODES`, or identifiers
    inherit_rotation, local_location, connected : (N,) bool
        ``bone.use_inherit_rotation``, ``bone.use_local_location``, ``bone.use_connect``.
    pose_basis : (N, 4, 4)
        ``pose_bone.matrix_basis`` (:func:`basis_matrices` of the pose channels).

    Returns
    -------
    (N, 4, 4) float64

    Raises
    ------
    HierarchyError
        Bad parent indices or a cycle.
    InputError
        Wrong shapes, NaN/inf, unknown modes, a rest matrix that is not rigid.
    """
    h = parents if isinstance(parents, Hierarchy) else Hierarchy(parents)
    h, rest, mode, inherit, local, basis = _pose_inputs(
        h, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis
    )
    n = len(h)
    out = np.empty((n, 4, 4))
    if n == 0:
        return out
    order = np.argsort(h.depth, kind="stable")
    starts = np.searchsorted(h.depth[order], np.arange(h.max_depth + 2))
    roots = order[: starts[1]]
    out[roots] = _root_pose(rest[roots], local[roots], basis[roots])
    for level in range(1, h.max_depth + 1):
        idx = order[starts[level] : starts[level + 1]]
        parent_pose = _batch(out[h.parents[idx]], "parent_pose", (4, 4), len(idx))  # overflow named as before
        out[idx] = _child_pose(idx, h.parents[idx], parent_pose, rest, mode, inherit, local, basis)
    return out


def pose_matrices_given_parents(
    parents, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis, parent_pose
) -> np.ndarray:
    """Every bone's ``pose_bone.matrix`` ``(N, 4, 4)`` computed from its parent's given
    pose, in one vectorised step (no level loop).

    With Blender's evaluated poses as ``parent_pose`` this checks each bone on its own:
    a bone whose result differs from Blender's is changed by something after its own
    transform (constraints, IK, drivers), independently of what happened to its parent.
    Arguments as :func:`pose_matrices`, plus ``parent_pose (N, 4, 4)``: the pose matrix
    of each bone's parent (rows of root bones are ignored).
    """
    par, rest, mode, inherit, local, basis, offsets = _pose_inputs(
        _parent_indices(parents),
        bone_matrix_local,
        inherit_scale,
        inherit_rotation,
        local_location,
        connected,
        pose_basis,
        with_offsets=True,
    )
    n = len(par)
    given = _batch(parent_pose, "parent_pose", (4, 4), n)
    out = np.empty((n, 4, 4))
    roots = np.flatnonzero(par < 0)
    children = np.flatnonzero(par >= 0)
    out[roots] = _root_pose(rest[roots], local[roots], basis[roots])
    if len(children):
        out[children] = _child_pose(
            children, par[children], given[children], rest, mode, inherit, local, basis, offsets
        )
    return out


def _parent_indices(parents) -> np.ndarray:
    """Parent indices ``(N,)`` checked for one step (in range, no node its own parent):
    :func:`pose_matrices_given_parents` never walks the tree, so cycles do not matter."""
    if isinstance(parents, Hierarchy):
        return parents.parents
    raw = np.asarray(parents)
    if raw.ndim != 1 or (raw.size and not np.issubdtype(raw.dtype, np.integer)):
        return Hierarchy(parents).parents  # its errors name what is wrong
    par = raw.astype(np.int64)
    bad = (par < -1) | (par >= len(par)) | (par == np.arange(len(par)))
    if bad.any():
        Hierarchy(par)  # raises, naming the node
    return par


def _pose_inputs(
    parents,
    bone_matrix_local,
    inherit_scale,
    inherit_rotation,
    local_location,
    connected,
    pose_basis,
    with_offsets: bool = False,
):
    """Checked inputs; ``parents`` a :class:`Hierarchy` or an index array (returned as
    given). ``with_offsets`` (``parents`` an index array): the rest offsets of the bones
    with a parent are returned last (:func:`_rest_offsets`)."""
    h = parents
    n = len(h)
    rest = _batch(bone_matrix_local, "bone_matrix_local", (4, 4), n)
    if with_offsets:
        offsets = _rest_offsets(rest.tobytes(), np.asarray(h, dtype=np.int64).tobytes())
    else:
        _check_rigid(rest, "bone_matrix_local")
    mode = _codes(inherit_scale, INHERIT_SCALE_MODES, "inherit_scale", n)
    inherit = _flags(inherit_rotation, n, "inherit_rotation")
    local = _flags(local_location, n, "local_location")
    conn = _flags(connected, n, "connected")
    basis = _batch(pose_basis, "pose_basis", (4, 4), n).copy()
    basis[conn, :3, 3] = 0.0
    if with_offsets:
        return h, rest, mode, inherit, local, basis, offsets
    return h, rest, mode, inherit, local, basis


@lru_cache(maxsize=8)
def _rest_offsets(rest: bytes, parents: bytes) -> np.ndarray:
    """``inv(rest[parent]) @ rest`` ``(M, 4, 4)`` of the M bones with a parent (in index
    order), the rest matrices checked rigid on the way (``rest``: ``(N, 4, 4)`` float64
    bytes, ``parents``: ``(N,)`` int64 bytes).

    Kept for the next call with the same rest matrices: they change only in Edit mode,
    while the panel verifies its chain's bones again after every pose change. The key is
    the values themselves, so nothing stale can come back; read-only result.
    """
    r = np.frombuffer(rest, dtype=np.float64).reshape(-1, 4, 4)
    par = np.frombuffer(parents, dtype=np.int64)
    _check_rigid(r, "bone_matrix_local")
    children = np.flatnonzero(par >= 0)
    offsets = _affine_inverse(r[par[children]]) @ r[children]
    offsets.flags.writeable = False
    return offsets


def _root_pose(rest, local, basis):
    """Root bones ignore the inherit flags: ``rotscale = loc = matrix_local``."""
    loc = rest.copy()
    loc[~local, :3, :3] = np.eye(3)
    return _apply_parent_transform(rest, loc, np.ones((len(rest), 3)), basis)


def _child_pose(idx, par, parent_pose, rest, mode, inherit, local, basis, offsets=None):
    """Pose matrices of the bones ``idx`` (parents ``par``) given their parents' poses;
    ``offsets``: their rest offsets when known (:func:`_rest_offsets`)."""
    offs = _affine_inverse(rest[par]) @ rest[idx] if offsets is None else offsets
    rotscale, loc, post = _bone_parent_transforms(offs, rest[par], parent_pose, mode[idx], inherit[idx], local[idx])
    return _apply_parent_transform(rotscale, loc, post, basis[idx])
