import numpy as np
import pytest
import reference_models as ref
from conftest import quat, vec3
from hierarchy_inspector import core
from hypothesis import given


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


AXIS = {"X": _rx, "Y": _ry, "Z": _rz}


@pytest.mark.parametrize("order", core.EULER_ORDERS)
def test_euler_order_applies_first_letter_first(order, rng):
    angles = rng.uniform(-np.pi, np.pi, size=3)
    expected = np.eye(3)
    for axis in order:  # X first for "XYZ": R = Rz Ry Rx
        expected = AXIS[axis](angles["XYZ".index(axis)]) @ expected
    assert np.allclose(core.euler_to_matrix(angles, order), expected, atol=1e-14)
    assert np.allclose(core.quat_to_matrix(core.euler_to_quat(angles, order)), expected, atol=1e-14)


def test_euler_xyz_known_value():
    # 90 degrees about X then 90 about Z: X axis -> Y, Y axis -> Z (then Z rotation).
    m = core.euler_to_matrix([np.pi / 2, 0, np.pi / 2], "XYZ")
    assert np.allclose(m @ [1, 0, 0], [0, 1, 0])
    assert np.allclose(m @ [0, 1, 0], [0, 0, 1])


@given(quat, quat, vec3)
def test_quaternion_product_matches_matrix_product_and_reference(a, b, v):
    a, b = core.quat_normalize(a), core.quat_normalize(b)
    ab = core.quat_multiply(a, b)
    assert np.allclose(core.quat_to_matrix(ab), core.quat_to_matrix(a) @ core.quat_to_matrix(b), atol=1e-12)
    assert np.allclose(ab, ref.qmul(a, b), atol=1e-12)
    assert np.allclose(core.quat_rotate(a, v), ref.qrot(a, v), atol=1e-10)
    assert np.allclose(core.quat_to_matrix(a), ref.qmat(a), atol=1e-12)


@given(quat)
def test_matrix_to_quat_round_trip(q):
    q = core.quat_normalize(q)
    back = core.matrix_to_quat(core.quat_to_matrix(q))
    assert back[0] >= 0
    assert np.allclose(back, q, atol=1e-12) or np.allclose(back, -q, atol=1e-12)


def test_matrix_to_quat_near_180_degrees():
    for axis in np.eye(3):
        q = core.axis_angle_to_quat(axis, np.pi - 1e-9)
        assert np.allclose(core.quat_to_matrix(core.matrix_to_quat(core.quat_to_matrix(q))), core.quat_to_matrix(q))


def test_axis_angle_normalises_axis_and_zero_axis_is_identity():
    assert np.allclose(core.axis_angle_to_matrix([0, 0, 5.0], np.pi / 2), _rz(np.pi / 2))
    assert np.allclose(core.axis_angle_to_matrix([0, 0, 0], 1.0), np.eye(3))


def test_zero_quaternion_raises_or_follows_blender():
    with pytest.raises(core.InputError, match=r"rotation\[1\]: zero-length quaternion"):
        core.quat_normalize([[1, 0, 0, 0], [0, 0, 0, 0]])
    assert np.allclose(core.quat_normalize([0, 0, 0, 0], zero="blender"), [0, 1, 0, 0])


def test_hat_vee_3d_and_2d(rng):
    w, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    assert np.allclose(np.einsum("nij,nj->ni", core.hat(w), v), np.cross(w, v))
    assert np.allclose(core.vee(core.hat(w)), w)
    w2 = rng.normal(size=(5, 1))
    j = np.array([[0, -1], [1, 0]])
    assert np.allclose(core.hat(w2), w2[:, :, None] * j)
    assert np.allclose(core.vee(core.hat(w2)), w2)
    with pytest.raises(core.InputError, match="hat"):
        core.hat(np.zeros(4))


@pytest.mark.parametrize("batch", [(), (4,), (2, 3)])
def test_batched_rotations_equal_loops(batch, rng):
    q = core.quat_normalize(rng.normal(size=batch + (4,)))
    e = rng.normal(size=batch + (3,))
    m = core.quat_to_matrix(q)
    flat_q, flat_e = q.reshape(-1, 4), e.reshape(-1, 3)
    assert np.allclose(m.reshape(-1, 3, 3), [core.quat_to_matrix(x) for x in flat_q])
    assert np.allclose(
        core.euler_to_matrix(e, "ZXY").reshape(-1, 3, 3), [core.euler_to_matrix(x, "ZXY") for x in flat_e]
    )
    assert np.allclose(core.matrix_to_quat(m).reshape(-1, 4), [core.matrix_to_quat(x) for x in m.reshape(-1, 3, 3)])


def test_bad_euler_order_and_nan():
    with pytest.raises(core.InputError, match="order"):
        core.euler_to_matrix([0, 0, 0], "XXY")
    with pytest.raises(core.InputError, match=r"euler angles\[1\]: contains NaN"):
        core.euler_to_matrix([[0, 0, 0], [0, np.nan, 0]])
