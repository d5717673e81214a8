"""core.blender_math without Blender: properties of the helpers and of every inherit-scale
mode, the exact correspondences with the matrix and accumulated models, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import random_forest
from hierarchy_inspector import core
from hierarchy_inspector.core import blender_math as bm

MODES = bm.INHERIT_SCALE_MODES


def _rotations(rng, shape) -> np.ndarray:
    return core.quat_to_matrix(core.quat_normalize(rng.normal(size=tuple(shape) + (4,))))


def _rigid(rng, n) -> np.ndarray:
    m = np.zeros((n, 4, 4))
    m[:, :3, :3] = _rotations(rng, (n,))
    m[:, :3, 3] = rng.normal(size=(n, 3)) * 2.0
    m[:, 3, 3] = 1.0
    return m


def _scales(rng, n, negative=True) -> np.ndarray:
    s = rng.uniform(0.4, 2.5, size=(n, 3))
    if negative:
        s *= rng.choice([-1.0, 1.0], size=(n, 3))
    return s


def _rig(rng, n, *, mode=None, inherit_rotation=None, local_location=None, connected=None, negative=True):
    """A random rig: parents (shuffled order), rest matrices, flags, basis from TRS."""
    parents = random_forest(rng, n, max_roots=3)
    rest = _rigid(rng, n)
    q = rng.normal(size=(n, 4))
    t = rng.normal(size=(n, 3))
    s = _scales(rng, n, negative)
    basis = core.TRS(t, q, s).to_matrix()

    def flag(value, p):
        return np.full(n, value) if value is not None else rng.random(n) < p

    return dict(
        parents=parents,
        rest=rest,
        length=rng.uniform(0.2, 2.0, size=n),
        mode=np.full(n, MODES.index(mode)) if mode is not None else rng.integers(0, 6, size=n),
        inherit=flag(inherit_rotation, 0.7),
        local=flag(local_location, 0.7),
        connected=flag(connected, 0.3),
        basis=basis,
        trs=(t, core.quat_normalize(q), s),
    )


def _pose(rig, **overrides):
    r = {**rig, **overrides}
    return bm.pose_matrices(r["parents"], r["rest"], r["mode"], r["inherit"], r["local"], r["connected"], r["basis"])


def _offsets(rig):
    """``inv(parent rest) @ rest`` per bone, ``rest`` for roots."""
    parents, rest = rig["parents"], rig["rest"]
    offs = rest.copy()
    child = parents >= 0
    offs[child] = np.linalg.inv(rest[parents[child]]) @ rest[child]
    return offs


# -- ortho_stable and fixshear_scale ----------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (7,), (3, 5)])
@pytest.mark.parametrize("keep_volume", [True, False])
def test_ortho_stable_orthogonal_columns_y_kept(rng, shape, keep_volume):
    m = rng.normal(size=shape + (3, 3))
    out = bm.ortho_stable(m, keep_volume)
    assert out.shape == m.shape
    cols = np.swapaxes(out, -1, -2)
    unit = cols / np.linalg.norm(cols, axis=-1, keepdims=True)
    gram = unit @ np.swapaxes(unit, -1, -2)
    assert np.allclose(gram, np.eye(3), atol=1e-12)
    # Column Y keeps its direction (and, with keep_volume, its length).
    y, y0 = out[..., :, 1], m[..., :, 1]
    assert np.allclose(np.cross(y, y0), 0.0, atol=1e-12)
    assert np.all(np.einsum("...i,...i->...", y, y0) > 0)
    det, det0 = np.linalg.det(out), np.linalg.det(m)
    assert np.all(np.sign(det) == np.sign(det0))  # orientation kept
    if keep_volume:
        assert np.allclose(y, y0)
        assert np.allclose(np.abs(det), np.abs(det0), rtol=1e-12)
    else:
        assert np.allclose(np.linalg.norm(cols, axis=-1), 1.0)


def test_ortho_stable_is_symmetric_and_leaves_orthogonal_matrices(rng):
    m = rng.normal(size=(50, 3, 3))
    out = bm.ortho_stable(m, keep_volume=True)
    # X and Z turn by the same angle in their plane (after losing their Y component).
    y = m[:, :, 1] / np.linalg.norm(m[:, :, 1], axis=-1, keepdims=True)
    x0 = m[:, :, 0] - y * np.einsum("ni,ni->n", m[:, :, 0], y)[:, None]
    z0 = m[:, :, 2] - y * np.einsum("ni,ni->n", m[:, :, 2], y)[:, None]

    def angle(a, b):
        cos = np.einsum("ni,ni->n", a, b) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
        return np.arccos(np.clip(cos, -1, 1))

    assert np.allclose(angle(out[:, :, 0], x0), angle(out[:, :, 2], z0), atol=1e-9)
    # Rotation @ diag(scale): nothing to do.
    clean = _rotations(rng, (20,)) * _scales(rng, 20)[:, None, :]
    assert np.allclose(bm.ortho_stable(clean, True), clean, atol=1e-12)
    assert np.allclose(bm.ortho_stable(clean, False), clean / np.abs(_scales_of(clean))[:, None, :], atol=1e-12)


def _scales_of(m3):
    return np.linalg.norm(m3, axis=-2)


def test_ortho_stable_blender_threshold_and_degenerate_input():
    # |cos| <= 1e-4 between X and Z is left alone (Blender's threshold), above it is fixed.
    for cos, fixed in ((5e-5, False), (2e-4, True)):
        x = np.array([1.0, 0.0, 0.0])
        z = np.array([cos, 0.0, math.sqrt(1 - cos * cos)])
        m = np.stack((x * 2.0, [0.0, 3.0, 0.0], z * 0.5), axis=-1)
        out = bm.ortho_stable(m, keep_volume=True)
        assert np.allclose(out, m) != fixed
    # Zero columns: no warnings (they are errors in this suite), finite, zero stays zero.
    for m in (np.zeros((3, 3)), np.diag([0.0, 1.0, 2.0]), np.diag([1.0, 0.0, 2.0]), np.ones((3, 3))):
        for keep in (True, False):
            out = bm.ortho_stable(m, keep)
            assert np.isfinite(out).all()
    assert np.array_equal(bm.ortho_stable(np.zeros((3, 3)), False), np.zeros((3, 3)))
    with pytest.raises(core.InputError, match=r"m3: expected shape \(\.\.\., 3, 3\)"):
        bm.ortho_stable(np.eye(4), True)


def test_fixshear_scale(rng):
    m = rng.normal(size=(40, 3, 3))
    s = bm.fixshear_scale(m)
    assert np.allclose(s.prod(axis=-1), np.abs(np.linalg.det(m)))
    norms = _scales_of(m)
    ratio = s / norms
    assert np.allclose(ratio, ratio[:, :1])  # proportional to the column lengths
    assert np.all(ratio <= 1.0 + 1e-12)  # shear only ever shrinks the volume (Hadamard)
    clean = _rotations(rng, (10,)) * _scales(rng, 10)[:, None, :]
    assert np.allclose(bm.fixshear_scale(clean), np.abs(_scales_of(clean)))
    assert np.array_equal(bm.fixshear_scale(np.diag([0.0, 2.0, 3.0])), [0.0, 2.0, 3.0])


# -- basis matrices -------------------------------------------------------------------------


def test_basis_matrices_modes_and_quirks(rng):
    n = 16
    modes = np.arange(n) % 8
    quat = rng.normal(size=(n, 4))
    quat[0] = 0.0  # mode 0: all-zero quaternion
    euler = rng.uniform(-3, 3, size=(n, 3))
    axis_angle = rng.normal(size=(n, 4))
    axis_angle[7, 1:] = 0.0  # mode 7: zero axis
    loc, scale = rng.normal(size=(n, 3)), _scales(rng, n)
    out = bm.basis_matrices(loc, modes, quat, euler, axis_angle, scale)
    for i in range(n):
        mode = bm.ROTATION_MODES[modes[i]]
        if mode == "QUATERNION":
            r = core.quat_to_matrix(core.quat_normalize(quat[i], zero="blender"))
        elif mode == "AXIS_ANGLE":
            r = core.axis_angle_to_matrix(axis_angle[i, 1:], axis_angle[i, 0])
        else:
            r = core.euler_to_matrix(euler[i], mode)
        want = np.eye(4)
        want[:3, :3] = r * scale[i]
        want[:3, 3] = loc[i]
        assert np.allclose(out[i], want), mode
    assert np.allclose(out[0, :3, :3], np.diag([1.0, -1.0, -1.0]) * scale[0])  # 180 degrees about X
    assert np.allclose(out[7, :3, :3], np.diag(scale[7]))  # identity rotation
    # Identifiers work as codes do.
    named = bm.basis_matrices(loc, [bm.ROTATION_MODES[c] for c in modes], quat, euler, axis_angle, scale)
    assert np.array_equal(named, out)


def test_basis_matrices_deltas_follow_the_rotation_mode(rng):
    n = 24
    modes = np.arange(n) % 8
    args = (rng.normal(size=(n, 3)), modes, rng.normal(size=(n, 4)), rng.normal(size=(n, 3)), rng.normal(size=(n, 4)))
    scale, d_loc, d_scale = _scales(rng, n), rng.normal(size=(n, 3)), _scales(rng, n)
    d_euler, d_quat = rng.normal(size=(n, 3)), rng.normal(size=(n, 4))
    plain = bm.basis_matrices(*args, scale)
    out = bm.basis_matrices(*args, scale, d_loc, d_euler, d_quat, d_scale)
    rot = plain[:, :3, :3] / scale[:, None, :]
    for i in range(n):
        mode = bm.ROTATION_MODES[modes[i]]
        if mode == "QUATERNION":
            delta = core.quat_to_matrix(core.quat_normalize(d_quat[i]))
        elif mode == "AXIS_ANGLE":
            delta = np.eye(3)  # Blender: no delta rotation in axis-angle mode
        else:
            delta = core.euler_to_matrix(d_euler[i], mode)
        assert np.allclose(out[i, :3, :3], delta @ rot[i] * (scale[i] * d_scale[i])), mode
        assert np.allclose(out[i, :3, 3], args[0][i] + d_loc[i])


def test_dna_conversions_and_bad_codes():
    assert bm.rotation_mode_codes_from_dna([0, 1, 6, -1]).tolist() == [0, 1, 6, 7]
    assert [MODES[c] for c in bm.inherit_scale_codes_from_dna([0, 1, 2, 3, 4, 5])] == [
        "FULL",
        "FIX_SHEAR",
        "AVERAGE",
        "NONE",
        "NONE_LEGACY",
        "ALIGNED",
    ]
    with pytest.raises(core.InputError, match=r"values\[1\] = 7"):
        bm.rotation_mode_codes_from_dna([0, 7])
    with pytest.raises(core.InputError, match=r"values\[0\] = -1"):
        bm.inherit_scale_codes_from_dna([-1])
    z3, z4 = np.zeros((2, 3)), np.zeros((2, 4))
    with pytest.raises(core.InputError, match=r"rotation_mode\[1\] = 8 is not a code 0\.\.7"):
        bm.basis_matrices(z3, [0, 8], z4, z3, z4, z3)
    with pytest.raises(core.InputError, match=r"rotation_mode\[0\]: unknown identifier 'XXY'"):
        bm.basis_matrices(z3, ["XXY", "XYZ"], z4, z3, z4, z3)
    with pytest.raises(core.InputError, match=r"rotation_quaternion: expected shape \(\.\.\., 4\)"):
        bm.basis_matrices(z3, [0, 1], z3, z3, z4, z3)
    with pytest.raises(core.InputError, match=r"scale: expected shape \(2, 3\), got \(3, 3\)"):
        bm.basis_matrices(z3, [0, 1], z4, z3, z4, np.ones((3, 3)))
    with pytest.raises(core.InputError, match=r"location\[1\]: contains NaN"):
        bm.basis_matrices([[0, 0, 0], [np.nan, 0, 0]], [0, 1], z4, z3, z4, z3)


# -- pose matrices: exact correspondences -----------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_full_is_the_plain_matrix_product(seed):
    """All FULL with inherited rotation and local location: pose = P @ offs @ basis, i.e.
    the matrix model with local matrices ``offs @ basis`` (translation dropped when connected)."""
    rng = np.random.default_rng(seed)
    rig = _rig(rng, 60, mode="FULL", inherit_rotation=True, local_location=True)
    basis = rig["basis"].copy()
    basis[rig["connected"], :3, 3] = 0.0
    want = core.Hierarchy(rig["parents"]).world_matrices(_offsets(rig) @ basis)
    assert np.allclose(_pose(rig), want, atol=1e-10)


@pytest.mark.parametrize("local_location", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_aligned_is_the_accumulated_model(seed, local_location):
    """All ALIGNED, rotation inherited, positive scales: Blender's pose matrices are the
    accumulated model (Hierarchy.accumulate) of these local TRS per bone, ``offs`` being
    ``inv(parent rest) @ rest`` (``rest`` for roots) and ``C`` the basis (T, R, S):

    - translation ``offs.t + offs3 @ C.t`` (``offs.t + C.t`` without local location;
      ``offs.t`` for connected bones),
    - rotation ``offs3 @ R``, scale ``S``.
    """
    rng = np.random.default_rng(seed)
    rig = _rig(rng, 60, mode="ALIGNED", inherit_rotation=True, local_location=local_location, negative=False)
    t, q, s = rig["trs"]
    t = np.where(rig["connected"][:, None], 0.0, t)
    offs = _offsets(rig)
    offs3 = offs[:, :3, :3]
    moved = np.einsum("nij,nj->ni", offs3, t) if local_location else t
    local = core.TRS(offs[:, :3, 3] + moved, core.matrix_to_quat(offs3 @ core.quat_to_matrix(q)), s)
    acc = core.Hierarchy(rig["parents"]).accumulate(local).to_matrix()
    assert np.allclose(_pose(rig), acc, atol=1e-10)


def test_aligned_differs_from_accumulated_with_negative_scales():
    rng = np.random.default_rng(3)
    rig = _rig(rng, 40, mode="ALIGNED", inherit_rotation=True, local_location=True, connected=False)
    t, q, s = rig["trs"]
    offs = _offsets(rig)
    local = core.TRS(
        offs[:, :3, 3] + np.einsum("nij,nj->ni", offs[:, :3, :3], t),
        core.matrix_to_quat(offs[:, :3, :3] @ core.quat_to_matrix(q)),
        s,
    )
    acc = core.Hierarchy(rig["parents"]).accumulate(local).to_matrix()
    pose = _pose(rig)
    roots = rig["parents"] < 0
    assert np.allclose(pose[roots], acc[roots])
    assert np.abs(pose - acc).max() > 0.1  # the reflection stays in the parent's rotation part


@pytest.mark.parametrize("seed", range(3))
def test_mode_properties(seed):
    """What each mode promises, bone by bone, against its parent's pose matrix P."""
    rng = np.random.default_rng(seed)
    rig = _rig(rng, 120)
    pose = _pose(rig)
    parents, offs = rig["parents"], _offsets(rig)
    c3 = rig["basis"][:, :3, :3]
    child = np.flatnonzero(parents >= 0)
    p = pose[parents[child]]
    p3, o3, pose3, own = p[:, :3, :3], offs[child, :3, :3], pose[child, :3, :3], c3[child]
    mode, inherit = rig["mode"][child], rig["inherit"][child]
    det = np.abs(np.linalg.det(pose3))
    det_parent, det_own = np.abs(np.linalg.det(p3)), np.abs(np.linalg.det(own))
    own_scale = np.linalg.norm(own, axis=-2)

    def sel(name, inherit_rotation=None):
        m = mode == MODES.index(name)
        return m if inherit_rotation is None else m & (inherit == inherit_rotation)

    # Volume inherited: FULL, FIX_SHEAR, AVERAGE (any rotation inheritance); ALIGNED with
    # rotation inherited keeps |det| only up to the parent's shear (its post scale is
    # the volume-corrected column lengths of the orthogonalised parent).
    for name in ("FULL", "FIX_SHEAR", "AVERAGE"):
        m = sel(name, True)
        assert np.allclose(det[m], det_parent[m] * det_own[m], rtol=1e-9), name
    for name in ("FIX_SHEAR", "AVERAGE"):
        m = sel(name, False)
        assert np.allclose(det[m], det_parent[m] * det_own[m], rtol=1e-9), name
    # NONE / NONE_LEGACY hinge and NONE: only the bone's own scale.
    for m in (sel("NONE"), sel("NONE_LEGACY", False)):
        assert np.allclose(np.linalg.norm(pose3[m], axis=-2), own_scale[m])
    # The spec's table, rotation inherited.
    m = sel("FIX_SHEAR", True)
    assert np.allclose(pose3[m], bm.ortho_stable(p3[m] @ o3[m], keep_volume=True) @ own[m])
    m = sel("AVERAGE", True)
    cbrt = np.cbrt(det_parent[m])[:, None, None]
    assert np.allclose(pose3[m], bm.ortho_stable(p3[m], keep_volume=False) * cbrt @ o3[m] @ own[m])
    m = sel("NONE", True)
    assert np.allclose(pose3[m], bm.ortho_stable(p3[m], keep_volume=False) @ o3[m] @ own[m])
    m = sel("ALIGNED", True)
    q = bm.ortho_stable(p3[m], keep_volume=True)
    post = np.linalg.norm(q, axis=-2)
    assert np.allclose(pose3[m], q / post[:, None, :] @ o3[m] @ own[m] * post[:, None, :])
    # NONE_LEGACY keeps the parent's shear: normalised columns of P, then offs and C.
    m = sel("NONE_LEGACY", True)
    unit_p = p3[m] / np.linalg.norm(p3[m], axis=-2, keepdims=True)
    assert np.allclose(pose3[m], unit_p @ o3[m] @ own[m])
    # FULL with rotation inherited: plain product.
    m = sel("FULL", True)
    assert np.allclose(pose3[m], p3[m] @ o3[m] @ own[m])
    # Hinge: orientation from the parent's rest frame, independent of its pose rotation.
    rest3 = rig["rest"][parents[child], :3, :3]
    m = sel("NONE", False)
    assert np.allclose(pose3[m], rest3[m] @ o3[m] @ own[m])
    m = sel("AVERAGE", False)
    cbrt = np.cbrt(det_parent[m])[:, None, None]
    assert np.allclose(pose3[m], rest3[m] * cbrt @ o3[m] @ own[m])
    m = sel("FULL", False)
    assert np.allclose(pose3[m], rest3[m] * np.linalg.norm(p3[m], axis=-2)[:, None, :] @ o3[m] @ own[m])
    m = sel("ALIGNED", False)
    post = bm.fixshear_scale(p3[m])
    assert np.allclose(pose3[m], rest3[m] @ o3[m] @ own[m] * post[:, None, :])


def test_location_rules():
    rng = np.random.default_rng(9)
    rig = _rig(rng, 80)
    pose = _pose(rig)
    parents, offs = rig["parents"], _offsets(rig)
    basis_t = np.where(rig["connected"][:, None], 0.0, rig["basis"][:, :3, 3])
    for i in range(len(parents)):
        if parents[i] < 0:
            rest = rig["rest"][i]
            moved = rest[:3, :3] @ basis_t[i] if rig["local"][i] else basis_t[i]
            want = rest[:3, 3] + moved  # roots ignore the inherit flags
        else:
            p = pose[parents[i]]
            moved = p[:3, :3] @ (offs[i, :3, :3] @ basis_t[i] if rig["local"][i] else basis_t[i])
            want = p[:3, 3] + p[:3, :3] @ offs[i, :3, 3] + moved
        assert np.allclose(pose[i, :3, 3], want), i


def test_roots_ignore_inherit_flags_and_connected_ignores_location():
    rng = np.random.default_rng(4)
    rig = _rig(rng, 30)
    roots = rig["parents"] < 0
    base = _pose(rig)
    for mode in range(6):
        other = _pose(rig, mode=np.full(30, mode), inherit=~rig["inherit"])
        assert np.allclose(other[roots], base[roots])
    moved = rig["basis"].copy()
    moved[:, :3, 3] += 5.0
    out = _pose(rig, basis=moved, connected=np.ones(30, dtype=bool))
    assert np.allclose(out, _pose(rig, basis=rig["basis"], connected=np.ones(30, dtype=bool)))


def test_hinge_ignores_parent_rotation():
    rng = np.random.default_rng(5)
    rig = _rig(rng, 40, mode="NONE", inherit_rotation=False, negative=False)
    a = _pose(rig)
    spun = rig["basis"].copy()
    spun[:, :3, :3] = _rotations(rng, (40,)) @ spun[:, :3, :3]
    b = _pose(rig, basis=spun)
    child = rig["parents"] >= 0
    # The child's own rotation changed too; undo it to compare the parent's effect.
    undo = np.linalg.inv(spun[:, :3, :3]) @ rig["basis"][:, :3, :3]
    assert np.allclose(a[child, :3, :3], b[child, :3, :3] @ undo[child])
    assert not np.allclose(a[child, :3, 3], b[child, :3, 3])


def test_node_order_does_not_matter_and_batches_match_a_loop():
    rng = np.random.default_rng(6)
    rig = _rig(rng, 50)
    base = _pose(rig)
    perm = rng.permutation(50)
    inv = np.argsort(perm)
    shuffled = {k: (v[perm] if isinstance(v, np.ndarray) else v) for k, v in rig.items()}
    shuffled["parents"] = np.where(rig["parents"][perm] >= 0, inv[np.maximum(rig["parents"][perm], 0)], -1)
    assert np.allclose(_pose(shuffled), base[perm], atol=1e-12)
    # bone_parent_transforms one bone at a time equals the batch.
    parents = rig["parents"]
    child = np.flatnonzero(parents >= 0)
    args = (
        _offsets(rig)[child],
        rig["rest"][parents[child]],
        base[parents[child]],
        rig["mode"][child],
        rig["inherit"][child],
        rig["local"][child],
    )
    batch = bm.bone_parent_transforms(*args)
    for k in range(len(child)):
        single = bm.bone_parent_transforms(*(a[k : k + 1] for a in args))
        for got, want in zip(single, batch, strict=True):
            assert np.allclose(got[0], want[k])


def test_zero_scales_and_deep_chains_stay_finite():
    rng = np.random.default_rng(8)
    rig = _rig(rng, 90)
    basis = rig["basis"].copy()
    for axis in range(3):
        basis[axis::7, :3, axis] = 0.0
    basis[5, :3, :3] = 0.0
    out = _pose(rig, basis=basis)  # RuntimeWarnings are errors in this suite
    assert np.isfinite(out).all()
    # A chain 300 deep: one Python step per level, no recursion.
    n = 300
    chain = _rig(rng, n, mode="ALIGNED", inherit_rotation=True, local_location=True, connected=False, negative=False)
    chain["parents"] = np.arange(n) - 1
    chain["basis"][:, :3, :3] = np.eye(3) * rng.uniform(0.99, 1.01, size=(n, 1, 3))
    assert np.isfinite(_pose(chain)).all()


def test_empty_and_validation():
    assert bm.pose_matrices(np.zeros(0, dtype=int), np.zeros((0, 4, 4)), [], [], [], [], np.zeros((0, 4, 4))).shape == (
        0,
        4,
        4,
    )
    eye = np.tile(np.eye(4), (2, 1, 1))
    ok = dict(
        parents=[-1, 0],
        bone_matrix_local=eye,
        inherit_scale=["FULL", "ALIGNED"],
        inherit_rotation=True,
        local_location=True,
        connected=[False, True],
        pose_basis=eye,
    )
    assert np.allclose(bm.pose_matrices(**ok), eye)
    with pytest.raises(core.HierarchyError, match="cycle"):
        bm.pose_matrices(**{**ok, "parents": [1, 0]})
    with pytest.raises(core.InputError, match=r"inherit_scale\[1\]: unknown identifier 'SOME'"):
        bm.pose_matrices(**{**ok, "inherit_scale": ["FULL", "SOME"]})
    with pytest.raises(core.InputError, match=r"inherit_scale\[0\] = 6"):
        bm.pose_matrices(**{**ok, "inherit_scale": [6, 0]})
    with pytest.raises(core.InputError, match=r"pose_basis: expected shape \(2, 4, 4\), got \(3, 4, 4\)"):
        bm.pose_matrices(**{**ok, "pose_basis": np.tile(np.eye(4), (3, 1, 1))})
    with pytest.raises(core.InputError, match=r"connected: expected shape \(2,\), got \(3,\)"):
        bm.pose_matrices(**{**ok, "connected": [True, True, False]})
    scaled = eye.copy()
    scaled[1, 0, 0] = 2.0
    with pytest.raises(core.InputError, match=r"bone_matrix_local\[1\]: not a rigid transform"):
        bm.pose_matrices(**{**ok, "bone_matrix_local": scaled})


# -- objects --------------------------------------------------------------------------------


def test_bone_parent_matrix():
    rng = np.random.default_rng(10)
    n = 12
    arm = core.TRS(rng.normal(size=3), rng.normal(size=4), (1.0, -2.0, 0.5)).to_matrix()
    pose = core.TRS(rng.normal(size=(n, 3)), rng.normal(size=(n, 4)), _scales(rng, n)).to_matrix()
    rest = _rigid(rng, n)
    length = rng.uniform(0.5, 2.0, size=n)
    tail = bm.bone_parent_matrix(arm, pose, length)
    for i in range(n):
        x = pose[i].copy()
        x[:3, 3] += pose[i, :3, :3] @ [0.0, length[i], 0.0]  # the posed tail
        assert np.allclose(tail[i], arm @ x)
    relative = np.arange(n) % 2 == 0
    mixed = bm.bone_parent_matrix(np.broadcast_to(arm, (n, 4, 4)), pose, length, rest, relative)
    assert np.allclose(mixed[~relative], tail[~relative])
    assert np.allclose(mixed[relative], arm @ pose[relative] @ np.linalg.inv(rest[relative]))
    with pytest.raises(core.InputError, match="bone_matrix_local: required where use_relative_parent"):
        bm.bone_parent_matrix(arm, pose, length, None, True)


def test_object_world_matrices_and_trees(rng):
    n = 40
    parents = random_forest(rng, n)
    pinv = np.array(
        [core.TRS(rng.normal(size=3), rng.normal(size=4), _scales(rng, 1)[0]).to_matrix() for _ in range(n)]
    )
    pinv[:, :3, 1] += 0.3 * pinv[:, :3, 0]  # parent inverses may hold shear
    basis = core.TRS(rng.normal(size=(n, 3)), rng.normal(size=(n, 4)), _scales(rng, n)).to_matrix()
    world = bm.object_tree_matrices(parents, pinv, basis)
    # Sequential reference, root to leaf.
    ref = np.full((n, 4, 4), np.nan)
    for _ in range(n):
        for i in range(n):
            p = parents[i]
            if p < 0:
                ref[i] = basis[i]
            elif not np.isnan(ref[p]).any():
                ref[i] = ref[p] @ pinv[i] @ basis[i]
    assert np.allclose(world, ref)
    has_parent = parents >= 0
    parent_world = np.where(has_parent[:, None, None], world[np.maximum(parents, 0)], np.eye(4) * 7.0)
    assert np.allclose(bm.object_world_matrices(parent_world, pinv, basis, has_parent=has_parent), world)
