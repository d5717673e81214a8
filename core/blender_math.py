"""Blender's object and pose-bone transform math as batched numpy models (no bpy).

What Blender computes from raw properties, reproduced to float32 precision (checked
against real Blender 5.0.1 in ``tests/addon/test_blender_math.py``):

- :func:`basis_matrices`: ``matrix_basis`` of objects (with deltas) and pose bones,
  every rotation mode (``BKE_object_to_mat4`` / ``BKE_pchan_to_mat4``).
- :func:`object_world_matrices`: ``matrix_world = P @ matrix_parent_inverse @ basis``
  (``solve_parenting``); :func:`bone_parent_matrix` gives ``P`` for the BONE parent
  type (``ob_parbone``); :func:`object_tree_matrices` folds a whole OBJECT-parented forest.
- :func:`pose_matrices`: armature-space ``pose_bone.matrix`` before constraints and IK,
  all six Inherit Scale modes, hinge (inherit rotation off), local location, connected
  bones (``BKE_pose_where_is_bone`` via ``BKE_bone_parent_transform_calc_from_matrices``).
- :func:`ortho_stable` (``orthogonalize_m4_stable(m, 1, ...)``) and :func:`fixshear_scale`
  (``mat4_to_size_fix_shear``), the two helpers the inherit-scale modes are built from.

Integer codes index :data:`ROTATION_MODES` and :data:`INHERIT_SCALE_MODES` (Blender's
enum identifiers, which are accepted too). ``foreach_get`` hands out Blender's DNA values
instead; :func:`rotation_mode_codes_from_dna` and :func:`inherit_scale_codes_from_dna`
convert them. Matrices are column-vector ``(..., 4, 4)`` (``foreach_get`` of a matrix
property gives the transpose: reshape to ``(N, 4, 4)`` and swap the last two axes).

Everything is float64; Blender works in float32, so compare with a relative tolerance
of about 1e-5. Blender source references are to ``source/blender/blenkernel/intern/
armature.cc`` and ``object.cc`` and ``source/blender/blenlib/intern/math_matrix_c.cc``.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, as_array
from .hierarchy import Hierarchy
from .rotations import EULER_ORDERS, axis_angle_to_matrix, euler_to_matrix, quat_normalize, quat_to_matrix

__all__ = [
    "ROTATION_MODES",
    "INHERIT_SCALE_MODES",
    "ROTATION_MODE_DNA",
    "INHERIT_SCALE_DNA",
    "rotation_mode_codes_from_dna",
    "inherit_scale_codes_from_dna",
    "rotation_matrices",
    "basis_matrices",
    "object_world_matrices",
    "object_tree_matrices",
    "bone_parent_matrix",
    "ortho_stable",
    "fixshear_scale",
    "bone_parent_transforms",
    "pose_matrices",
    "pose_matrices_given_parents",
    "vertex_parent_matrix",
]

#: Blender's ``rotation_mode`` identifiers; an integer code is an index into this tuple.
ROTATION_MODES = ("QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE")
#: Blender's ``Bone.inherit_scale`` identifiers; an integer code is an index into this tuple.
INHERIT_SCALE_MODES = ("FULL", "FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")
#: DNA value (what ``foreach_get`` returns) of each entry of :data:`ROTATION_MODES`.
ROTATION_MODE_DNA = (0, 1, 2, 3, 4, 5, 6, -1)
#: DNA value (what ``foreach_get`` returns) of each entry of :data:`INHERIT_SCALE_MODES`.
INHERIT_SCALE_DNA = (0, 1, 5, 2, 3, 4)

_QUATERNION, _AXIS_ANGLE = 0, 7
_FULL, _FIX_SHEAR, _ALIGNED, _AVERAGE, _NONE, _NONE_LEGACY = range(6)

#: ``FLT_EPSILON``: Blender's threshold for "parallel" in ``orthogonalize_stable``.
_FLT_EPSILON = float(np.finfo(np.float32).eps)
#: ``normalize_v3`` treats a vector whose squared length is at most this as zero.
_NORMALIZE_MIN_SQ = 1.0e-35
#: ``orthogonalize_stable`` leaves X and Z alone when ``|cos(angle)|`` is at most this.
_SHEAR_MIN_COS = 1.0e-4


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


def rotation_mode_codes_from_dna(values) -> np.ndarray:
    """Codes into :data:`ROTATION_MODES` from Blender's DNA values ``(N,)`` (``foreach_get``).

    DNA: 0 quaternion, 1..6 the Euler orders, -1 axis-angle.
    """
    raw = np.asarray(values).astype(np.int64)
    table = np.full(8, -1, dtype=np.int64)
    for code, dna in enumerate(ROTATION_MODE_DNA):
        table[dna + 1] = code
    bad = (raw < -1) | (raw > 6)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InputError(f"values[{i}] = {raw.reshape(-1)[i]} is not a rotation mode DNA value", "values", (i,))
    return table[raw + 1]


def inherit_scale_codes_from_dna(values) -> np.ndarray:
    """Codes into :data:`INHERIT_SCALE_MODES` from Blender's DNA values ``(N,)`` (``foreach_get``).

    DNA: 0 FULL, 1 FIX_SHEAR, 2 AVERAGE, 3 NONE, 4 NONE_LEGACY, 5 ALIGNED.
    """
    raw = np.asarray(values).astype(np.int64)
    table = np.empty(6, dtype=np.int64)
    table[list(INHERIT_SCALE_DNA)] = np.arange(6)
    bad = (raw < 0) | (raw > 5)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InputError(f"values[{i}] = {raw.reshape(-1)[i]} is not an inherit scale DNA value", "values", (i,))
    return table[raw]


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


def _det3(m3):
    return _dot(m3[..., :, 0], np.cross(m3[..., :, 1], m3[..., :, 2]))


def _affine_inverse(m):
    """Exact inverse of affine ``(..., 4, 4)`` matrices with an invertible 3x3 part (Blender's
    ``invert_m4_m4``; not the transpose: rest matrices are not exactly orthonormal)."""
    out = np.zeros_like(m)
    inv3 = np.linalg.inv(m[..., :3, :3])
    out[..., :3, :3] = inv3
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


# -- rotations and basis matrices ---------------------------------------------------------


def rotation_matrices(rotation_mode, rotation_quaternion, rotation_euler, rotation_axis_angle) -> np.ndarray:
    """Rotation part ``(N, 3, 3)`` of Blender's basis, per node in its own rotation mode.

    Mirrors ``BKE_pchan_rot_to_mat3`` (and ``BKE_object_rot_to_mat3`` without deltas):
    Euler modes use ``rotation_euler`` in their order, QUATERNION the normalised
    ``rotation_quaternion`` (all zero gives 180 degrees about X), AXIS_ANGLE
    ``rotation_axis_angle`` stored as ``(angle, x, y, z)`` with the axis normalised (a
    zero axis gives the identity). Values of the other modes are ignored.

    Parameters
    ----------
    rotation_mode : (N,) int codes into :data:`ROTATION_MODES`, or identifiers
    rotation_quaternion : (N, 4) wxyz
    rotation_euler : (N, 3) radians
    rotation_axis_angle : (N, 4) angle in radians, then the axis
    """
    quat = _batch(rotation_quaternion, "rotation_quaternion", (4,), None)
    n = quat.shape[0]
    modes = _codes(rotation_mode, ROTATION_MODES, "rotation_mode", n)
    euler = _batch(rotation_euler, "rotation_euler", (3,), n)
    axis_angle = _batch(rotation_axis_angle, "rotation_axis_angle", (4,), n)
    out = np.empty((n, 3, 3))
    for code in np.unique(modes).tolist():
        sel = modes == code
        if code == _QUATERNION:
            out[sel] = quat_to_matrix(quat_normalize(quat[sel], zero="blender", what="rotation_quaternion"))
        elif code == _AXIS_ANGLE:
            out[sel] = axis_angle_to_matrix(axis_angle[sel, 1:], axis_angle[sel, 0])
        else:
            out[sel] = euler_to_matrix(euler[sel], EULER_ORDERS[code - 1])
    return out


def basis_matrices(
    location,
    rotation_mode,
    rotation_quaternion,
    rotation_euler,
    rotation_axis_angle,
    scale,
    delta_location=None,
    delta_rotation_euler=None,
    delta_rotation_quaternion=None,
    delta_scale=None,
) -> np.ndarray:
    """Blender's ``matrix_basis`` ``(N, 4, 4)`` of objects (with deltas) or pose bones.

    ``T(location + delta_location) @ R_delta @ R @ S(scale * delta_scale)``, mirroring
    ``BKE_object_to_mat4`` (``BKE_pchan_to_mat4`` for pose bones, which have no deltas).
    ``R`` is :func:`rotation_matrices`. The delta rotation follows the rotation mode:
    Euler modes use ``delta_rotation_euler`` in the object's own Euler order, QUATERNION
    the normalised ``delta_rotation_quaternion`` (all zero gives 180 degrees about X),
    and AXIS_ANGLE uses **no** delta rotation (Blender's axis-angle delta is not exposed to
    Python and is the identity; checked in Blender 5.0.1: both Python deltas are ignored).

    For a connected pose bone Blender's ``matrix_basis`` has zero translation;
    :func:`pose_matrices` takes care of that, so pass the bone's location unchanged.

    Parameters
    ----------
    location, scale : (N, 3)
    rotation_mode : (N,) int codes into :data:`ROTATION_MODES`, or identifiers
    rotation_quaternion : (N, 4) wxyz; rotation_euler : (N, 3) radians;
    rotation_axis_angle : (N, 4) ``(angle, x, y, z)`` as Blender stores it
    delta_location, delta_rotation_euler, delta_scale : (N, 3), optional
    delta_rotation_quaternion : (N, 4), optional

    Returns
    -------
    (N, 4, 4) float64
    """
    loc = _batch(location, "location", (3,), None)
    n = loc.shape[0]
    modes = _codes(rotation_mode, ROTATION_MODES, "rotation_mode", n)
    size = _batch(scale, "scale", (3,), n)
    quat = _batch(rotation_quaternion, "rotation_quaternion", (4,), n)
    rot = rotation_matrices(modes, quat, rotation_euler, rotation_axis_angle)
    if delta_location is not None:
        loc = loc + _batch(delta_location, "delta_location", (3,), n)
    if delta_scale is not None:
        size = size * _batch(delta_scale, "delta_scale", (3,), n)
    if delta_rotation_euler is not None or delta_rotation_quaternion is not None:
        d_euler = np.zeros((n, 3)) if delta_rotation_euler is None else delta_rotation_euler
        d_quat = (
            np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)) if delta_rotation_quaternion is None else delta_rotation_quaternion
        )
        d_euler = _batch(d_euler, "delta_rotation_euler", (3,), n)
        d_quat = _batch(d_quat, "delta_rotation_quaternion", (4,), n)
        # Axis-angle objects get no delta rotation: give them a zero axis (identity).
        d_axis_angle = np.zeros((n, 4))
        delta = rotation_matrices(modes, d_quat, d_euler, d_axis_angle)
        rot = delta @ rot
    out = np.zeros((n, 4, 4))
    out[:, :3, :3] = rot * size[:, None, :]
    out[:, :3, 3] = loc
    out[:, 3, 3] = 1.0
    return out


# -- objects ------------------------------------------------------------------------------


def object_world_matrices(parent_matrix, matrix_parent_inverse, basis, has_parent=None) -> np.ndarray:
    """``matrix_world = P @ matrix_parent_inverse @ basis`` (``solve_parenting``), batched.

    Parameters
    ----------
    parent_matrix : (..., 4, 4)
        ``P`` by parent type: the parent's ``matrix_world`` for OBJECT / ARMATURE /
        LATTICE parents, :func:`bone_parent_matrix` for BONE parents.
    matrix_parent_inverse : (..., 4, 4)
    basis : (..., 4, 4)
        ``matrix_basis`` (:func:`basis_matrices`). Leading dimensions broadcast.
    has_parent : (...,) bool, optional
        Where False the result is ``basis`` alone: Blender ignores the parent inverse of
        an object without a parent.

    Returns
    -------
    (..., 4, 4)
    """
    p = as_array(parent_matrix, "parent_matrix", (4, 4))
    pinv = as_array(matrix_parent_inverse, "matrix_parent_inverse", (4, 4))
    b = as_array(basis, "basis", (4, 4))
    out = p @ pinv @ b
    if has_parent is not None:
        mask = np.asarray(has_parent, dtype=bool)
        out = np.where(mask[..., None, None], out, b)
    return out


def object_tree_matrices(parents, matrix_parent_inverse, basis) -> np.ndarray:
    """World matrices ``(N, 4, 4)`` of a forest of objects parented with type OBJECT.

    ``world[i] = world[parent[i]] @ matrix_parent_inverse[i] @ basis[i]``, roots
    ``basis[i]`` (their parent inverse is ignored, as in Blender). ``parents`` (N,) int,
    -1 for roots, any order (or a :class:`~.hierarchy.Hierarchy`).
    """
    h = parents if isinstance(parents, Hierarchy) else Hierarchy(parents)
    n = len(h)
    pinv = _batch(matrix_parent_inverse, "matrix_parent_inverse", (4, 4), n)
    b = _batch(basis, "basis", (4, 4), n)
    local = np.where((h.parents >= 0)[:, None, None], pinv @ b, b)
    return h.world_matrices(local)


def bone_parent_matrix(
    armature_world, pose_matrix, bone_length, bone_matrix_local=None, use_relative_parent=False
) -> np.ndarray:
    """``P`` of an object parented to a bone (parent type BONE), mirroring ``ob_parbone``.

    Without relative parenting: ``X = pose_matrix`` with its translation moved to the
    posed tail, ``X.t += X[:, 1] * bone_length`` (column Y carries the bone's scale), and
    ``P = armature_world @ X``. With ``use_relative_parent`` Blender uses the pose
    channel's deformation matrix ``pose_matrix @ inv(bone_matrix_local)`` and no tail offset.

    Parameters
    ----------
    armature_world : (N, 4, 4) or (4, 4)
        The armature object's ``matrix_world``.
    pose_matrix : (N, 4, 4)
        The parent bone's ``pose_bone.matrix`` (armature space, after constraints).
    bone_length : (N,) or scalar
        ``bone.length`` (rest length).
    bone_matrix_local : (N, 4, 4), optional
        ``bone.matrix_local``; required where ``use_relative_parent``.
    use_relative_parent : (N,) bool or bool
        ``bone.use_relative_parent``.

    Returns
    -------
    (N, 4, 4)
    """
    pose = _batch(pose_matrix, "pose_matrix", (4, 4), None)
    n = pose.shape[0]
    arm = as_array(armature_world, "armature_world", (4, 4))
    if arm.ndim > 3 or (arm.ndim == 3 and arm.shape[0] != n):
        raise InputError(f"armature_world: expected shape (4, 4) or ({n}, 4, 4), got {arm.shape}", "armature_world")
    length = _per_node(as_array(bone_length, "bone_length"), n, "bone_length")
    relative = _flags(use_relative_parent, n, "use_relative_parent")
    x = pose.copy()
    x[:, :3, 3] += x[:, :3, 1] * length[:, None]
    if relative.any():
        if bone_matrix_local is None:
            raise InputError("bone_matrix_local: required where use_relative_parent is set", "bone_matrix_local")
        rest = _batch(bone_matrix_local, "bone_matrix_local", (4, 4), n)
        _check_rigid(rest[relative], "bone_matrix_local")
        x[relative] = pose[relative] @ _affine_inverse(rest[relative])
    return arm @ x


def vertex_parent_matrix(parent_world, vertices) -> np.ndarray:
    """``P`` of objects parented to vertices (``ob_parvert3`` / the VERTEX case of
    ``solve_parenting``).

    Parameters
    ----------
    parent_world : (N, 4, 4)
        The parent object's ``matrix_world``.
    vertices : (N, 3) or (N, 3, 3)
        One vertex (VERTEX) or three vertices (VERTEX_3) per object, in the parent's
        local space, from its evaluated mesh.

    VERTEX: ``P = T(parent_world @ v)``, position only. VERTEX_3: ``P = parent_world @
    [F | centroid]`` with F the frame of the triangle (``tri_to_quat``): Z the normal of
    ``(v1 - v2) x (v2 - v3)``, X along ``v2 - v1``, Y = Z x X.
    """
    world = as_array(parent_world, "parent_world", (4, 4))
    verts = as_array(vertices, "vertices", (3,))
    n = world.shape[0]
    if verts.ndim == 2:
        if verts.shape[0] != n:
            raise InputError(f"vertices: expected shape ({n}, 3) or ({n}, 3, 3), got {verts.shape}", "vertices")
        out = np.tile(np.eye(4), (n, 1, 1))
        out[:, :3, 3] = np.einsum("nij,nj->ni", world[:, :3, :3], verts) + world[:, :3, 3]
        return out
    if verts.shape != (n, 3, 3):
        raise InputError(f"vertices: expected shape ({n}, 3) or ({n}, 3, 3), got {verts.shape}", "vertices")
    v1, v2, v3 = verts[:, 0], verts[:, 1], verts[:, 2]
    z = _normalize(np.cross(v1 - v2, v2 - v3))[0]
    x = _normalize(v2 - v1)[0]
    x = _normalize(x - _dot(x, z)[:, None] * z)[0]
    frame = np.tile(np.eye(4), (n, 1, 1))
    frame[:, :3, 0] = x
    frame[:, :3, 1] = np.cross(z, x)
    frame[:, :3, 2] = z
    frame[:, :3, 3] = (v1 + v2 + v3) / 3.0
    return world @ frame


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
    m = as_array(m3, "m3", (3, 3))
    y = m[..., :, 1]
    x = m[..., :, 0]
    z = m[..., :, 2]
    len_sq = _dot(y, y)
    has_y = len_sq > 0.0
    inv_sq = np.where(has_y, 1.0 / np.where(has_y, len_sq, 1.0), 0.0)
    x = x - y * (_dot(x, y) * inv_sq)[..., None]
    z = z - y * (_dot(z, y) * inv_sq)[..., None]
    if not keep_volume:
        y = y * np.where(has_y, np.sqrt(inv_sq), 1.0)[..., None]

    nx, len_x = _normalize(x)
    nz, len_z = _normalize(z)
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
        nz_fixed = _normalize(np.cross(np.cross(nx_fixed, nz), nx_fixed))[0]
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
    factor = np.cbrt(np.abs(_det3(m)) / np.where(ok, volume, 1.0))
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
    p3 = pose[:, :3, :3]
    post = np.ones((m, 3))
    tmat = np.where(inherit[:, None, None], pose, rest)  # (M, 4, 4), a new array

    def rows(sel_mode, sel_inherit):
        return np.flatnonzero((mode == sel_mode) & (inherit == sel_inherit))

    # Parent pose rotation inherited: normalise the parent's pose matrix as the mode says.
    if len(i := np.concatenate((rows(_NONE, True), rows(_AVERAGE, True)))):
        tmat[i, :3, :3] = ortho_stable(p3[i], keep_volume=False)
    if len(i := rows(_ALIGNED, True)):
        tmat[i, :3, :3], post[i] = _normalize_columns(ortho_stable(p3[i], keep_volume=True))
    if len(i := rows(_NONE_LEGACY, True)):
        tmat[i, :3, :3] = _normalize_columns(p3[i])[0]
    # Hinge: the parent's rest orientation, with the parent's pose scale as the mode says.
    if len(i := rows(_FULL, False)):
        tmat[i, :3, :3] *= _column_norms(p3[i])[:, None, :]
    if len(i := rows(_FIX_SHEAR, False)):
        tmat[i, :3, :3] *= fixshear_scale(p3[i])[:, None, :]
    if len(i := rows(_ALIGNED, False)):
        post[i] = fixshear_scale(p3[i])
    if len(i := np.flatnonzero(mode == _AVERAGE)):
        tmat[i, :3, :3] *= np.cbrt(np.abs(_det3(p3[i])))[:, None, None]

    rotscale = tmat @ offs
    if len(i := np.flatnonzero(mode == _FIX_SHEAR)):
        rotscale[i, :3, :3] = ortho_stable(rotscale[i, :3, :3], keep_volume=True)

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
    h, rest, mode, inherit, local, basis = _pose_inputs(
        parents, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis
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
        out[idx] = _child_pose(idx, h.parents[idx], out[h.parents[idx]], rest, mode, inherit, local, basis)
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
    h, rest, mode, inherit, local, basis = _pose_inputs(
        parents, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis
    )
    n = len(h)
    given = _batch(parent_pose, "parent_pose", (4, 4), n)
    out = np.empty((n, 4, 4))
    roots = np.flatnonzero(h.parents < 0)
    children = np.flatnonzero(h.parents >= 0)
    out[roots] = _root_pose(rest[roots], local[roots], basis[roots])
    if len(children):
        out[children] = _child_pose(children, h.parents[children], given[children], rest, mode, inherit, local, basis)
    return out


def _pose_inputs(parents, bone_matrix_local, inherit_scale, inherit_rotation, local_location, connected, pose_basis):
    h = parents if isinstance(parents, Hierarchy) else Hierarchy(parents)
    n = len(h)
    rest = _batch(bone_matrix_local, "bone_matrix_local", (4, 4), n)
    _check_rigid(rest, "bone_matrix_local")
    mode = _codes(inherit_scale, INHERIT_SCALE_MODES, "inherit_scale", n)
    inherit = _flags(inherit_rotation, n, "inherit_rotation")
    local = _flags(local_location, n, "local_location")
    conn = _flags(connected, n, "connected")
    basis = _batch(pose_basis, "pose_basis", (4, 4), n).copy()
    basis[conn, :3, 3] = 0.0
    return h, rest, mode, inherit, local, basis


def _root_pose(rest, local, basis):
    """Root bones ignore the inherit flags: ``rotscale = loc = matrix_local``."""
    loc = rest.copy()
    loc[~local, :3, :3] = np.eye(3)
    return _apply_parent_transform(rest, loc, np.ones((len(rest), 3)), basis)


def _child_pose(idx, par, parent_pose, rest, mode, inherit, local, basis):
    offs = _affine_inverse(rest[par]) @ rest[idx]
    rotscale, loc, post = bone_parent_transforms(offs, rest[par], parent_pose, mode[idx], inherit[idx], local[idx])
    return _apply_parent_transform(rotscale, loc, post, basis[idx])
