import numpy as np
import pytest
import reference_models as ref
from conftest import affine, quat, scale3, vec3
from hierarchy_inspector import core
from hypothesis import assume, example, given


def _rebuild(d: core.Decomposition) -> np.ndarray:
    m = np.zeros(d.translation.shape[:-1] + (4, 4))
    m[..., :3, :3] = core.quat_to_matrix(d.rotation) @ d.shear * d.scale[..., None, :]
    m[..., :3, 3] = d.translation
    m[..., 3, 3] = 1.0
    return m


@given(vec3, quat, scale3)
def test_trs_to_matrix_is_t_r_s_and_matches_reference(t, q, s):
    trs = core.TRS(t, q, s)
    assert np.allclose(trs.to_matrix(), ref.trs_matrix(t, core.quat_normalize(q), s), atol=1e-12)


@given(vec3, quat, scale3)
def test_decompose_recovers_trs_without_shear(t, q, s):
    m = core.TRS(t, q, s).to_matrix()
    d = core.decompose(m)
    assert np.allclose(d.translation, t)
    assert np.allclose(d.shear, np.eye(3), atol=1e-9)
    assert np.allclose(np.abs(core.shear_angles(m)), 0, atol=1e-7)
    assert np.allclose(core.TRS.from_decomposition(d).to_matrix(), m, atol=1e-9)
    if np.prod(np.sign(s)) > 0:  # positive determinant: scale recovered with its signs up to pairs
        assert np.allclose(np.abs(d.scale), np.abs(s))
    else:  # Blender's convention: all three negative
        assert np.all(d.scale < 0)


_NEAR_PARALLEL = np.vstack(
    [
        [
            [0.0, 9.55704018e-12, 9.55704018e-12, 9.55704018e-12],
            [9.55704018e-12, 1.0] + [9.55704018e-12] * 2,
            [9.55704018e-12, 1.0] + [9.55704018e-12] * 2,
        ],
        [0.0, 0.0, 0.0, 1.0],
    ]
)


@given(affine)
@example(_NEAR_PARALLEL)  # found by hypothesis: Y parallel to X within 1e-11
def test_decompose_is_exact_for_any_affine_matrix(m):
    d = core.decompose(m)
    assert np.allclose(_rebuild(d), m, atol=1e-9 * max(1.0, np.abs(m).max()))
    if np.linalg.norm(np.cross(m[:3, 0], m[:3, 1])) > 1e-6:  # Gram-Schmidt path: triangular
        assert np.allclose(np.tril(d.shear, -1), 0, atol=1e-12)
    assert np.allclose(np.linalg.det(core.quat_to_matrix(d.rotation)), 1.0)


def test_decompose_singular_and_mirrored():
    singular = np.diag([2.0, 0.0, 3.0, 1.0])
    d = core.decompose(singular)
    assert np.allclose(_rebuild(d), singular)
    assert d.scale.tolist() == [2.0, 0.0, 3.0]
    mirrored = np.diag([-1.0, 2.0, 3.0, 1.0])
    d = core.decompose(mirrored)
    assert np.allclose(d.scale, [-1.0, -2.0, -3.0])  # Blender: det < 0 -> all negative
    assert np.allclose(_rebuild(d), mirrored)
    assert np.allclose(core.decompose(np.diag([0.0, 0.0, 0.0, 1.0])).scale, 0)  # zero linear part


def test_shear_angles_known_values():
    # X and Y columns at 45 degrees: shear 45 on XY.
    sheared = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert np.allclose(core.shear_angles(sheared), [45.0, 0.0, 0.0])
    # Rotated child (45 deg) under parent scale (2, 1, 1): axes at 126.87 deg.
    m = np.diag([2.0, 1.0, 1.0]) @ core.axis_angle_to_matrix([0, 0, 1], np.pi / 4)
    assert np.allclose(core.shear_angles(m), [-36.869897645844, 0.0, 0.0])
    # Zero-length axis: no angle, reported as 0.
    assert np.allclose(core.shear_angles(np.diag([1.0, 0.0, 1.0])), 0.0)


@given(affine)
def test_shear_angles_match_column_angles(m):
    m3 = m[:3, :3]
    lengths = np.linalg.norm(m3, axis=0)
    assume(lengths.min() > 1e-3)
    got = core.shear_angles(m)
    for k, (i, j) in enumerate([(0, 1), (1, 2), (2, 0)]):
        assert np.isclose(got[k], 90.0 - ref.angle_between_deg(m3[:, i], m3[:, j]), atol=1e-6)


@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
def test_decompose_batch_equals_loop(batch, rng):
    m = np.zeros(batch + (4, 4))
    m[..., :3, :] = rng.normal(size=batch + (3, 4))
    m[..., 3, 3] = 1
    d = core.decompose(m)
    for idx in np.ndindex(*batch):
        one = core.decompose(m[idx])
        for got, want in zip(d, one, strict=False):
            assert np.allclose(got[idx], want)
    assert core.shear_angles(m).shape == batch + (3,)


def test_from_matrix_refuses_shear_and_names_it():
    m = np.stack([np.eye(4), np.eye(4)])
    m[1, 0, 1] = 0.5
    with pytest.raises(core.ShearError, match=r"matrices\[1\]: holds 26\.57 degrees of shear"):
        core.TRS.from_matrix(m)
    trs = core.TRS.from_matrix(m[:1])
    assert np.allclose(trs.to_matrix(), m[:1])


def test_trs_validation_errors():
    with pytest.raises(core.InputError, match=r"translation: expected shape \(\.\.\., 3\), got \(2,\)"):
        core.TRS([1, 2])
    with pytest.raises(core.InputError, match=r"scale\[1\]: contains NaN"):
        core.TRS(np.zeros((2, 3)), scale=[[1, 1, 1], [1, np.inf, 1]])
    with pytest.raises(core.InputError, match=r"rotation\[0\]: zero-length quaternion"):
        core.TRS(rotation=[[0, 0, 0, 0]])
    with pytest.raises(core.InputError, match="do not broadcast"):
        core.TRS(np.zeros((2, 3)), scale=np.ones((3, 3)))


def test_trs_broadcasts_and_indexes():
    trs = core.TRS(np.zeros((4, 3)), [0, 0, 0, 2], [1, 2, 3])
    assert trs.shape == (4,) and len(trs) == 4
    assert np.allclose(trs.rotation, [0, 0, 0, 1])
    assert trs[1:3].shape == (2,)
    assert core.TRS.identity(5).to_matrix().shape == (5, 4, 4)


@given(vec3, quat, scale3, vec3, quat, scale3)
def test_accumulate_is_the_seeds_combine(t1, q1, s1, t2, q2, s2):
    a, b = core.TRS(t1, q1, s1), core.TRS(t2, q2, s2)
    c = core.accumulate(a, b)
    rt, rq, rs = ref.combine((a.translation, a.rotation, a.scale), (b.translation, b.rotation, b.scale))
    assert np.allclose(c.translation, rt, atol=1e-9)
    assert np.allclose(c.rotation, rq)
    assert np.allclose(c.scale, rs)


@given(vec3, quat, scale3, vec3, quat)
def test_accumulate_equals_matrix_product_for_uniform_scale(t1, q1, s1, t2, q2):
    s_uniform = np.full(3, abs(s1[0]))
    a, b = core.TRS(t1, q1, s_uniform), core.TRS(t2, q2, [1.5, 1.5, 1.5])
    assert np.allclose(core.accumulate(a, b).to_matrix(), a.to_matrix() @ b.to_matrix(), atol=1e-9)


def test_accumulate_not_associative_with_nonuniform_scale():
    a = core.TRS(scale=[2.0, 1.0, 1.0])
    b = core.TRS(rotation=core.axis_angle_to_quat([0, 0, 1], np.pi / 4))
    c = core.TRS(translation=[1.0, 0.0, 0.0])
    left = core.accumulate(core.accumulate(a, b), c)
    right = core.accumulate(a, core.accumulate(b, c))
    assert not np.allclose(left.translation, right.translation)


def test_determinant3_equals_numpy_det_on_any_batch_shape(rng):
    m3 = rng.normal(size=(4, 5, 3, 3))
    m3[0, 0] = [[1, 2, 3], [2, 4, 6], [0, 1, 5]]  # singular: two rows proportional
    np.testing.assert_allclose(core.determinant3(m3), np.linalg.det(m3), rtol=1e-12, atol=1e-12)
    assert core.determinant3(m3[0, 0]).shape == ()
