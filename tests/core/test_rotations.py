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


@pytest.mark.parametrize("batch", [(), (1,), (7,), (8191,), (8193,), (3, 5), (2, 0), (0,)])
def test_quat_to_matrix_is_the_textbook_formula_bit_for_bit(batch, rng):
    """The blocked kernel rounds every entry exactly as the formula does, for any batch
    (across block boundaries too) and for non-unit quaternions; with scale, with out."""
    q = rng.normal(size=batch + (4,))
    s = rng.normal(size=batch + (3,))
    assert np.array_equal(core.quat_to_matrix(q), ref.quat_matrix_formula(q))
    assert np.array_equal(core.quat_to_matrix(q, s), ref.quat_matrix_formula(q, s))
    block = np.full(batch + (4, 4), 7.0)
    returned = core.quat_to_matrix(q, s, out=block[..., :3, :3])
    assert np.array_equal(block[..., :3, :3], ref.quat_matrix_formula(q, s))
    assert np.all(block[..., 3, :] == 7.0) and np.all(block[..., :3, 3] == 7.0)
    assert returned.shape == batch + (3, 3) and (not returned.size or np.shares_memory(returned, block))


def test_quat_to_matrix_broadcasts_and_checks_shapes(rng):
    q = rng.normal(size=(5, 4))
    s = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(core.quat_to_matrix(q, s), ref.quat_matrix_formula(q, s))
    transposed = np.zeros((3, 5, 3, 3)).swapaxes(0, 1)  # no flat view: filled through a copy
    q2 = rng.normal(size=(5, 3, 4))
    core.quat_to_matrix(q2, out=transposed)
    assert np.array_equal(transposed, ref.quat_matrix_formula(q2))
    assert np.array_equal(core.quat_to_matrix(q[::2]), ref.quat_matrix_formula(q[::2]))  # strided input
    with pytest.raises(core.InputError, match=r"q: expected shape \(\.\.\., 4\)"):
        core.quat_to_matrix(np.ones((2, 3)))
    with pytest.raises(core.InputError, match=r"scale: batch shapes"):
        core.quat_to_matrix(q, np.ones((4, 3)))
    with pytest.raises(core.InputError, match=r"out: "):
        core.quat_to_matrix(q, out=np.zeros((4, 3, 3)))
    with pytest.raises(core.InputError, match=r"out: expected a \(\.\.\., 3, 3\) array"):
        core.quat_to_matrix(q, out=np.zeros((5, 4, 4)))
