import numpy as np
import pytest
from conftest import affine
from hierarchy_inspector import core
from hypothesis import given


@given(affine)
def test_split_reproduces_any_affine_matrix(m):
    outer, inner = core.split_to_trs(m)
    assert np.allclose(outer.to_matrix() @ inner.to_matrix(), m, atol=1e-9 * max(1.0, np.abs(m).max()))
    assert np.allclose(inner.translation, 0) and np.allclose(inner.scale, 1)


def test_split_handles_reflections_and_singular_matrices():
    mirror_sheared = np.eye(4)
    mirror_sheared[:3, :3] = np.diag([-1.0, 2.0, 1.0]) @ core.axis_angle_to_matrix([0, 0, 1], 0.7) @ np.diag([1, 3, 1])
    singular = np.diag([1.0, 0.0, 2.0, 1.0])
    singular[0, 1] = 0.5
    m = np.stack([mirror_sheared, singular])
    outer, inner = core.split_to_trs(m)
    assert np.allclose(outer.to_matrix() @ inner.to_matrix(), m, atol=1e-12)
    for q in (outer.rotation, inner.rotation):  # proper rotations, reflection kept in scale
        assert np.allclose(np.linalg.det(core.quat_to_matrix(q)), 1.0)
    assert np.prod(np.sign(outer.scale[0])) < 0


def test_split_of_a_trs_is_that_trs_and_identity(rng):
    trs = core.TRS(rng.normal(size=(5, 3)), rng.normal(size=(5, 4)), rng.uniform(0.5, 2, size=(5, 3)))
    m = trs.to_matrix()
    outer, inner = core.split_to_trs(m)
    assert core.is_trs(m).all()
    assert np.allclose(outer.to_matrix(), m)
    assert np.allclose(inner.to_matrix(), np.eye(4))


def test_split_sheared_local_matrix_of_rotated_child():
    ex = core.examples.rotated_child()
    world = ex.hierarchy.world_matrices(ex.local.to_matrix())
    assert not core.is_trs(world[1])
    outer, inner = core.split_to_trs(world[1])
    assert np.allclose(outer.to_matrix() @ inner.to_matrix(), world[1], rtol=0, atol=1e-14)


def test_deviation_known_numbers():
    a = np.eye(4)
    b = np.eye(4)
    b[:3, 3] = [3.0, 4.0, 0.0]
    b[:3, :3] = core.axis_angle_to_matrix([0, 0, 1], np.pi / 2)
    dev = core.deviation(a, b, box_min=[0, 0, 0], box_max=[1, 1, 1])
    assert np.isclose(dev.position, 5.0)
    assert np.isclose(dev.rotation_deg, 90.0)
    # Corner (1, 0, z) goes to (3, 5, z): distance sqrt(4 + 25).
    assert np.isclose(dev.max_corner, np.sqrt(29.0))


def test_deviation_batch_equals_loop_and_checks_shapes(rng):
    a = np.tile(np.eye(4), (2, 3, 1, 1))
    a[..., :3, :] += rng.normal(size=(2, 3, 3, 4)) * 0.1
    b = a + np.pad(rng.normal(size=(2, 3, 3, 4)) * 0.1, ((0, 0), (0, 0), (0, 1), (0, 0)))
    dev = core.deviation(a, b)
    for idx in np.ndindex(2, 3):
        one = core.deviation(a[idx], b[idx])
        assert np.allclose([d[idx] for d in dev], list(one))
    with pytest.raises(core.InputError, match="world_b: shape"):
        core.deviation(a, b[0])


def test_box_corners():
    corners = core.box_corners([0, 0, 0], [1, 2, 3])
    assert corners.shape == (8, 3)
    assert {tuple(c) for c in corners} == {(x, y, z) for x in (0, 1) for y in (0, 2) for z in (0, 3)}


def test_analyze_reports_exported_trs_and_both_models():
    ex = core.examples.rotated_child()
    local = ex.local.to_matrix()
    h = ex.hierarchy
    result = core.analyze(h, local, box_min=ex.box_min, box_max=ex.box_max)
    assert np.allclose(result.world_reference, h.world_matrices(local))
    assert np.allclose(result.world_matrix_model, result.world_reference)  # locals are TRS here
    assert np.allclose(result.shear_deg[1], [-36.869897645844, 0, 0])
    assert np.isclose(result.accumulated_deviation.max_corner[1], 1.0)
    assert np.allclose(result.lossy_scale, h.lossy_scale(ex.local))
    assert np.allclose(result.global_rotation, h.global_rotation(ex.local))


def test_analyze_sees_the_shear_an_exporter_drops():
    # A child whose *local* matrix is sheared (e.g. a parent inverse of a rotated,
    # non-uniformly scaled parent): the exported TRS loses it, the viewer is off.
    h = core.Hierarchy([-1, 0])
    local = np.stack([np.eye(4), np.eye(4)])
    local[1, :3, :3] = np.diag([2.0, 1.0, 1.0]) @ core.axis_angle_to_matrix([0, 0, 1], np.pi / 4)
    result = core.analyze(h, local)
    assert np.abs(result.local.shear_deg[1]).max() > 30
    assert result.matrix_model_deviation.max_corner[1] > 0.5
    with pytest.raises(core.InputError, match=r"local_matrices: expected shape \(2, 4, 4\)"):
        core.analyze(h, local[:1])


def test_box_corner_distance_equals_explicit_corners(rng):
    a = np.tile(np.eye(4), (50, 1, 1))
    a[:, :3, :] += rng.normal(size=(50, 3, 4))
    b = a.copy()
    b[:, :3, :] += rng.normal(size=(50, 3, 4)) * 0.3
    lo = rng.normal(size=(50, 3))
    hi = lo + rng.uniform(0, 2, size=(50, 3))
    corners = core.box_corners(lo, hi)
    explicit = [
        max(np.linalg.norm((b[i] @ np.append(c, 1))[:3] - (a[i] @ np.append(c, 1))[:3]) for c in corners[i])
        for i in range(50)
    ]
    assert np.allclose(core.corner_distance(a, b, corners), explicit)
    assert np.allclose(core.box_corner_distance(a, b, lo, hi), explicit)


def test_rotation_angle_is_accurate_near_0_and_180():
    from hierarchy_inspector.core.metrics import rotation_angle_deg

    for angle in (1e-7, 0.3, np.pi - 1e-7):
        r = core.axis_angle_to_matrix([1, 2, 3], angle)
        assert np.isclose(rotation_angle_deg(np.eye(3), r), np.degrees(angle), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_affine_inverse_equals_numpy_and_flags_singular(rng, batch):
    m = np.zeros(batch + (4, 4))
    m[..., :3, :] = rng.normal(size=batch + (3, 4))
    m[..., 3, 3] = 1.0
    inv, singular = core.affine_inverse(m)
    assert not singular.any()
    assert np.allclose(inv, np.linalg.inv(m))
    flat = np.diag([1.0, 0.0, 2.0, 1.0])
    inv, singular = core.affine_inverse(np.stack([np.eye(4), flat]))
    assert singular.tolist() == [False, True] and np.isfinite(inv).all()
