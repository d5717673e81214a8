"""Edge cases from the issue tracker, each fixed as a class: decompose's accuracy for
nearly parallel X and Y columns, matrices at the limits of float64, projective bottom
rows, and batches that do not broadcast (accumulate and every other core function that
combines two batched arguments). RuntimeWarnings are errors here (pyproject), so a
call that overflows fails on its own."""

import numpy as np
import pytest
from conftest import affine
from hierarchy_inspector import core
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

EPS = np.finfo(np.float64).eps

unit3 = hnp.arrays(np.float64, 3, elements=st.floats(-1, 1)).filter(lambda v: np.linalg.norm(v) > 0.1)


def _column_errors(d: core.Decomposition, m: np.ndarray) -> np.ndarray:
    """``|T R H S - M|`` per column relative to the column's largest entry, without
    forming anything that could overflow."""
    m3 = m[..., :3, :3]
    peak = np.abs(m3).max(axis=-2)
    unit = np.where(peak > 0.0, peak, 1.0)
    rebuilt = core.quat_to_matrix(d.rotation) @ d.shear * (d.scale / unit)[..., None, :]
    return np.abs(rebuilt - m3 / unit[..., None, :]).max(axis=-2)


# -- decompose: X and Y nearly parallel ------------------------------------------------------


def _near_parallel(x, direction, log_angle, log_sx, log_sy, z):
    """Affine matrix with Y at about ``10**log_angle`` radians from X (either way round)."""
    assume(np.abs(z).max() == 0.0 or np.abs(z).max() >= 1e-300)  # a subnormal Z has subnormal precision
    x = x / np.linalg.norm(x)
    perp = direction - (direction @ x) * x
    assume(np.linalg.norm(perp) > 0.1)
    perp /= np.linalg.norm(perp)
    m = np.eye(4)
    m[:3, 0] = x * 10.0**log_sx
    m[:3, 1] = (x + 10.0**log_angle * perp) * 10.0**log_sy
    m[:3, 2] = z
    return m, perp


@given(
    unit3,
    unit3,
    st.floats(-16, -1),
    st.floats(-3, 3),
    st.floats(-3, 3) | st.floats(-3, 3).map(lambda v: -v),
    hnp.arrays(np.float64, 3, elements=st.floats(-5, 5)),
    st.booleans(),
)
@example(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), -6.5, 0.0, 0.0, np.array([0.0, 0.0, 1.0]), False)
def test_decompose_exact_when_x_and_y_are_nearly_parallel(x, direction, log_angle, log_sx, log_sy, z, mirror_y):
    """Was ~1e-10 off just above the old 1e-6 polar threshold (Gram-Schmidt cancelled);
    now each column is rebuilt to round-off, R stays orthonormal, H triangular while the
    columns are not parallel to round-off, and R's Y axis is off by no more than the
    documented ``eps / sin(angle)``."""
    m, perp = _near_parallel(x, direction, log_angle, log_sx, log_sy, z)
    if mirror_y:
        m[:3, 1] *= -1.0
    d = core.decompose(m)
    assert _column_errors(d, m).max() <= 1e-14
    r = core.quat_to_matrix(d.rotation)
    assert np.abs(r.T @ r - np.eye(3)).max() <= 1e-14
    sin_angle = 10.0**log_angle
    if sin_angle >= 1e-12:  # not parallel to round-off: Gram-Schmidt, X's direction kept
        assert np.abs(np.cross(r[:, 0], m[:3, 0])).max() <= 4 * EPS * np.linalg.norm(m[:3, 0])
        assert np.abs(np.tril(d.shear, -1)).max() <= 1e-14
        # The direction of Y's part across X moves by ~eps / sin under M's own round-off.
        assert np.linalg.norm(np.cross(r[:, 1], perp)) <= 8 * EPS / sin_angle + 4 * EPS


def test_decompose_near_parallel_batch_matches_single():
    rng = np.random.default_rng(5)
    m = np.tile(np.eye(4), (64, 1, 1))
    m[:, :3, :3] = rng.normal(size=(64, 3, 3))
    m[::2, :3, 1] = m[::2, :3, 0] * (1.0 + 1e-9) + 1e-9 * rng.normal(size=(32, 3))
    d = core.decompose(m)
    assert _column_errors(d, m).max() <= 1e-14
    for i in (0, 1, 2, 63):
        one = core.decompose(m[i])
        for got, want in zip(d, one, strict=True):
            assert np.allclose(got[i], want, rtol=0, atol=1e-15)


# -- decompose and friends at the limits of float64 --------------------------------------------


@given(affine, st.lists(st.integers(-1000, 1000), min_size=3, max_size=3))
def test_decompose_any_magnitude_is_exact_and_scale_equivariant(m, exponents):
    """Column lengths near float64's limits used to overflow (a RuntimeWarning, an error
    here) or underflow to zero scale; powers-of-two column scaling now changes nothing
    but the scale."""
    peak = np.abs(m[:3, :3]).max(axis=0)
    assume(np.all((peak == 0.0) | (peak >= 1e-3)))  # scaled columns stay normal floats (2^-1000 * 1e-3)
    # The sign of a determinant that is zero to round-off (mirrored or not) may go either way.
    if not np.any(peak == 0.0):
        with np.errstate(under="ignore"):  # the filter's own arithmetic on subnormal entries
            assume(abs(np.linalg.det(m[:3, :3] / peak)) > 1e-9)
    e = np.array(exponents)[None, :]
    base, m = m.copy(), m.copy()
    m[:3, :3] = np.ldexp(base[:3, :3], e)
    assume(np.array_equal(np.ldexp(m[:3, :3], -e), base[:3, :3]))  # no entry lost bits on the way
    d = core.decompose(m)
    assert np.all(np.isfinite(d.scale)) and np.all(np.isfinite(d.shear))
    assert _column_errors(d, m).max() <= 1e-14
    ref = core.decompose(base)
    expected_scale = np.ldexp(ref.scale, np.array(exponents))
    assert np.allclose(d.scale, expected_scale, rtol=1e-14, atol=0.0)
    assert np.allclose(d.shear, ref.shear, rtol=0.0, atol=1e-13)
    assert np.allclose(core.shear_angles(m), core.shear_angles(base), rtol=0.0, atol=1e-9)


@pytest.mark.parametrize("magnitude", [1e-300, 1e-200, 1e-160, 1e-13, 1e150, 1e200, 1e300, 1e307])
def test_uniform_scale_at_the_limits(magnitude):
    m = np.diag([magnitude, 2.0 * magnitude, 3.0 * magnitude, 1.0])
    d = core.decompose(m)
    assert np.allclose(d.scale, [magnitude, 2.0 * magnitude, 3.0 * magnitude], rtol=1e-15, atol=0.0)
    assert d.rotation.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert np.allclose(d.shear, np.eye(3), atol=1e-15)
    assert np.allclose(core.shear_angles(m), 0.0)
    inv, singular = core.affine_inverse(m)
    assert not singular
    assert np.allclose(inv @ m, np.eye(4), rtol=0.0, atol=1e-15)


def test_tiny_columns_are_not_zero_any_more():
    """A column of length 1e-13 used to count as zero (its direction dropped, the
    product no longer M); only an exactly zero column has no direction now."""
    m = np.eye(4)
    m[:3, :3] = core.axis_angle_to_matrix([0.0, 0.0, 1.0], 0.3) * 1e-13
    d = core.decompose(m)
    assert np.allclose(d.scale, 1e-13, rtol=1e-15, atol=0.0)
    assert np.allclose(d.shear, np.eye(3), atol=1e-15)
    assert core.quat_angle_deg(d.rotation, core.axis_angle_to_quat([0.0, 0.0, 1.0], 0.3)) < 1e-12
    assert core.decompose(np.diag([0.0, 1.0, 1.0, 1.0])).scale.tolist() == [0.0, 1.0, 1.0]


def test_column_longer_than_float64_is_named():
    m = np.stack([np.eye(4), np.eye(4)])
    m[1, :3, 1] = 1.5e308  # finite entries, length 2.6e308
    with pytest.raises(
        core.InputError, match=r"matrices\[1\]: its Y column is longer than the largest float64"
    ) as info:
        core.decompose(m)
    assert info.value.index == (1,)
    assert core.decompose(m[:1]).scale.tolist() == [[1.0, 1.0, 1.0]]


def test_affine_inverse_that_does_not_fit_is_singular():
    m = np.stack([np.diag([2.0, 2.0, 2.0, 1.0]), np.diag([1e-310, 1.0, 1.0, 1.0])])
    inv, singular = core.affine_inverse(m)
    assert singular.tolist() == [False, True]
    assert np.all(np.isfinite(inv)) and np.all(inv[1, :3, :3] == 0.0)
    m = np.eye(4)
    m[:3, 3] = 1e308
    m[:3, :3] *= 1e-2  # the inverse's translation would be -1e310
    inv, singular = core.affine_inverse(m)
    assert singular and np.all(np.isfinite(inv))


# -- projective bottom rows ------------------------------------------------------------------


@given(affine, st.integers(0, 3), st.floats(1e-8, 10.0), st.booleans(), st.integers(0, 3))
def test_projective_bottom_row_is_named_not_dropped(m, column, offset, negative, batch_index):
    batch = np.stack([m] * 4)
    batch[batch_index, 3, column] += -offset if negative else offset
    for function in (core.decompose, core.affine_inverse, core.split_to_trs):
        with pytest.raises(
            core.InputError, match=rf"matrices\[{batch_index}\]: bottom row .* is not \(0, 0, 0, 1\)"
        ) as info:
            function(batch)
        assert info.value.index == (batch_index,)
        assert info.value.what == "matrices"


@given(affine, st.integers(0, 3), st.floats(-1e-10, 1e-10))
def test_round_off_in_the_bottom_row_is_accepted(m, column, offset):
    noisy = m.copy()
    noisy[3, column] += offset
    for got, want in zip(core.decompose(noisy), core.decompose(m), strict=True):  # the noise is ignored
        assert np.array_equal(got, want)
    assert core.decompose(m[:3, :3]).scale.shape == (3,)  # 3x3 input has no bottom row


# -- batches that do not broadcast -------------------------------------------------------------

batch_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@given(batch_shapes, batch_shapes)
@example((3,), (2,))
@example((2, 3), (3, 2))
def test_accumulate_names_both_shapes_or_broadcasts(shape_p, shape_c):
    parent, child = core.TRS.identity(shape_p), core.TRS.identity(shape_c)
    if _broadcasts(shape_p, shape_c):
        assert core.accumulate(parent, child).shape == np.broadcast_shapes(shape_p, shape_c)
        return
    with pytest.raises(core.InputError) as info:
        core.accumulate(parent, child)
    message = str(info.value)
    assert f"parent {shape_p}" in message and f"child {shape_c}" in message
    assert info.value.what == "child"


def _dynamic(shape):
    return core.DynamicTransform(np.zeros(shape + (3,)), angular_velocity=[0.0, 0.0, 1.0])


# Every core function that combines two batched arguments: (call, names in the message).
PAIRS = {
    "quat_multiply": (lambda a, b: core.quat_multiply(np.ones(a + (4,)), np.ones(b + (4,))), ("a", "b")),
    "quat_rotate": (lambda a, b: core.quat_rotate(np.ones(a + (4,)), np.ones(b + (3,))), ("q", "v")),
    "quat_angle_deg": (lambda a, b: core.quat_angle_deg(np.ones(a + (4,)), np.ones(b + (4,))), ("a", "b")),
    "quat_to_matrix": (lambda a, b: core.quat_to_matrix(np.ones(a + (4,)), np.ones(b + (3,))), ()),
    "Transform @": (
        lambda a, b: core.Transform(np.zeros(a + (3,)), np.eye(3)) @ core.Transform(np.zeros(b + (3,)), np.eye(3)),
        ("self", "other"),
    ),
    "Transform.apply_point": (
        lambda a, b: core.Transform(np.zeros(a + (3,)), np.eye(3)).apply_point(np.zeros(b + (3,))),
        ("transform", "vectors"),
    ),
    "corner_distance": (
        lambda a, b: core.corner_distance(np.ones(a + (4, 4)), np.ones(b + (4, 4)), np.ones((8, 3))),
        ("world_a", "world_b"),
    ),
    "box_corner_distance": (
        lambda a, b: core.box_corner_distance(np.ones(a + (4, 4)), np.ones(b + (4, 4)), -np.ones(3), np.ones(3)),
        ("world_a", "world_b"),
    ),
    "DynamicTransform @": (lambda a, b: _dynamic(a) @ _dynamic(b), ()),
    "add_delta": (
        lambda a, b: _dynamic(a).add_delta(
            core.Delta(np.ones(b + (3,)), np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3)))
        ),
        ("self", "delta.velocity"),
    ),
    "point_to_global": (lambda a, b: core.point_to_global(_dynamic(a), np.ones(b + (3,))), ("frame", "position")),
    "point_to_local": (lambda a, b: core.point_to_local(_dynamic(a), np.ones(b + (3,))), ("frame", "position")),
    "point_to_global axis_scale": (
        lambda a, b: core.point_to_global(_dynamic(a), np.ones(3), axis_scale=np.ones(b + (3,))),
        ("frame", "axis_scale"),
    ),
    "inertial_accelerations": (
        lambda a, b: core.inertial_accelerations(_dynamic(a), np.ones(3), np.ones(3), np.ones(3), np.ones(b)),
        ("frame", "mass"),
    ),
    "local_delta_to_global": (
        lambda a, b: core.local_delta_to_global(_dynamic(a), velocity=np.ones(b + (3,))),
        ("frame", "velocity"),
    ),
    "global_delta_to_local": (
        lambda a, b: core.global_delta_to_local(_dynamic(a), angular_velocity=core.hat(np.ones(b + (3,)))),
        ("frame", "angular_velocity"),
    ),
    "parent_delta_to_child": (lambda a, b: core.parent_delta_to_child(_dynamic(a), _dynamic(b)), ("frame", "local")),
    "counteract_inherited": (lambda a, b: core.counteract_inherited(_dynamic(a), _dynamic(b)), ("frame", "local")),
    "linear_impulse": (lambda a, b: core.linear_impulse(_dynamic(a), np.ones(b + (3,))), ("frame", "impulse")),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize(("shape_a", "shape_b"), [((3,), (2,)), ((2, 3), (3, 2)), ((4,), (1, 3))])
def test_batches_that_do_not_broadcast_raise_input_error(name, shape_a, shape_b):
    call, names = PAIRS[name]
    if _broadcasts(shape_a, shape_b):
        call(shape_a, shape_b)  # and those that do, work
        return
    with pytest.raises(core.InputError, match="do not broadcast") as info:
        call(shape_a, shape_b)
    message = str(info.value)
    assert str(shape_a) in message and str(shape_b) in message
    for argument in names:
        assert f"{argument} " in message
