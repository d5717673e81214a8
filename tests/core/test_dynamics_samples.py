"""dynamics_from_samples: central differences of sampled (Blender-like) matrices against
analytic motion, their O(dt^2) accuracy, batches and errors."""

import numpy as np
import pytest
from hierarchy_inspector import core


def rot3(v, t):
    """exp(t hat(v)) for (..., 3) vectors v."""
    v = np.asarray(v, dtype=float)
    return core.axis_angle_to_matrix(v, t * _norm(v))


def _norm(v):
    return np.sqrt(np.einsum("...i,...i->...", v, v))


class Analytic3D:
    """R(t) = exp(t hat(w1)) exp(t hat(w2)) R0, t(t) trigonometric; scale diag(d), constant.

    Spatial rates: omega = w1 + E1 w2, alpha = w1 x (E1 w2) (E1 = exp(t hat(w1))).
    """

    def __init__(self, rng, shape=(), scale=None):
        shape = tuple(shape)
        self.w1 = rng.normal(size=shape + (3,))
        self.w2 = rng.normal(size=shape + (3,))
        self.r0 = core.quat_to_matrix(core.quat_normalize(rng.normal(size=shape + (4,))))
        self.amp = rng.normal(size=shape + (3,))
        self.freq = rng.uniform(0.5, 2.0, size=shape + (3,))
        self.d = rng.uniform(0.3, 3.0, size=shape + (3,)) if scale is None else np.broadcast_to(scale, shape + (3,))

    def matrix(self, t):
        rot = rot3(self.w1, t) @ rot3(self.w2, t) @ self.r0
        m = np.zeros(rot.shape[:-2] + (4, 4))
        m[..., :3, :3] = rot * self.d[..., None, :]
        m[..., :3, 3] = self.amp * np.sin(self.freq * t)
        m[..., 3, 3] = 1.0
        return m

    def rates(self, t):
        e1w2 = np.einsum("...ij,...j->...i", rot3(self.w1, t), self.w2)
        return (
            self.amp * self.freq * np.cos(self.freq * t),
            -self.amp * self.freq**2 * np.sin(self.freq * t),
            self.w1 + e1w2,
            np.cross(self.w1, e1w2),
        )


def errors(motion, t, dt):
    got = core.dynamics_from_samples(motion.matrix(t - dt), motion.matrix(t), motion.matrix(t + dt), dt)
    want = motion.rates(t)
    return got, [float(np.abs(g - w).max()) for g, w in zip((got[3], got[4], got.omega, got.alpha), want, strict=True)]


@pytest.mark.parametrize("mirrored", [False, True])
def test_matches_analytic_motion_with_non_uniform_scale(rng, mirrored):
    motion = Analytic3D(rng, (50,))
    if mirrored:
        motion.d = -motion.d  # det < 0: Blender reports all three scales negative
    t = 0.37
    got, err = errors(motion, t, 1e-3)
    assert max(err) < 5e-5, err
    np.testing.assert_allclose(got.scale, motion.d, rtol=1e-12)
    np.testing.assert_allclose(got.rotation, rot3(motion.w1, t) @ rot3(motion.w2, t) @ motion.r0, atol=1e-12)
    np.testing.assert_allclose(got.translation, motion.matrix(t)[..., :3, 3], atol=0)
    with pytest.raises(core.InputError, match=r"scale\[0\] = \(.*\): not uniform"):
        got.to_dynamic_transform()
    # O(dt^2): halving dt divides every error by about four
    _, err_half = errors(motion, t, 5e-4)
    for e, eh in zip(err, err_half, strict=True):
        assert 3.0 < e / eh < 5.0, (e, eh)


def test_exact_for_uniformly_accelerated_rotation_about_a_fixed_axis(rng):
    axis = core.quat_normalize(rng.normal(size=4))[1:]
    axis /= np.linalg.norm(axis)
    w0, a0, v0, acc0 = 1.3, -0.7, rng.normal(size=3), rng.normal(size=3)

    def matrix(t):
        m = np.eye(4)
        m[:3, :3] = core.axis_angle_to_matrix(axis, w0 * t + a0 * t * t / 2) * np.array([1.0, 2.0, 0.5])
        m[:3, 3] = v0 * t + acc0 * t * t / 2
        return m

    t, dt = 0.8, 1 / 24  # one film frame: still exact
    got = core.dynamics_from_samples(matrix(t - dt), matrix(t), matrix(t + dt), dt)
    np.testing.assert_allclose(got.velocity, v0 + acc0 * t, atol=1e-12)
    np.testing.assert_allclose(got.acceleration, acc0, atol=1e-10)
    np.testing.assert_allclose(got.omega, (w0 + a0 * t) * axis, atol=1e-12)
    np.testing.assert_allclose(got.alpha, a0 * axis, atol=1e-10)


def test_2d_samples(rng):
    theta = lambda t: 0.3 + 1.1 * t + 0.4 * t**3
    pos = lambda t: np.array([np.cos(t), t**2])

    def matrix(t):
        m = np.eye(3)
        m[:2, :2] = core.rotation_2d(theta(t)) * np.array([2.0, 0.5])
        m[:2, 2] = pos(t)
        return m

    t, dt = 0.5, 1e-3
    got = core.dynamics_from_samples(matrix(t - dt), matrix(t), matrix(t + dt), dt)
    assert got.omega.shape == () and got.velocity.shape == (2,)
    assert float(got.omega) == pytest.approx(1.1 + 1.2 * t**2, abs=1e-6)
    assert float(got.alpha) == pytest.approx(2.4 * t, abs=1e-6)
    np.testing.assert_allclose(got.velocity, [-np.sin(t), 2 * t], atol=1e-6)
    np.testing.assert_allclose(got.acceleration, [-np.cos(t), 2.0], atol=1e-6)
    np.testing.assert_allclose(got.scale, [2.0, 0.5], rtol=1e-12)
    with pytest.raises(core.InputError, match=r"scale = \(2, 0\.5\): not uniform"):
        got.to_dynamic_transform()


@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_batch_equals_loop(rng, shape):
    motion = Analytic3D(rng, shape)
    t, dt = 0.1, 1 / 30
    mats = [motion.matrix(t + k * dt) for k in (-1, 0, 1)]
    got = core.dynamics_from_samples(*mats, dt)
    assert got.omega.shape == shape + (3,)
    for idx in np.ndindex(*shape):
        one = core.dynamics_from_samples(*(m[idx] for m in mats), dt)
        for g, o in zip(got, one, strict=True):
            np.testing.assert_allclose(g[idx], o, rtol=0, atol=1e-14)


def test_world_samples_of_a_hierarchy_agree_with_local_to_global(rng):
    """Sample the world matrices of a moving chain; the estimate matches the exact fold."""
    n_nodes = 5
    h = core.Hierarchy([-1, 0, 1, 2, 1])
    w = rng.normal(size=(n_nodes, 3))
    v = rng.normal(size=(n_nodes, 3))
    t0 = rng.normal(size=(n_nodes, 3))
    s = rng.uniform(0.5, 2.0, size=n_nodes)

    def local_at(t):  # constant angular velocity, constant velocity: rates known exactly
        return core.DynamicTransform(t0 + v * t, core.axis_angle_to_matrix(w, t * _norm(w)), s, v, None, w)

    dt = 1e-3
    world = [core.local_to_global(h, local_at(t)).transform.to_matrix() for t in (-dt, 0.0, dt)]
    est = core.dynamics_from_samples(*world, dt).to_dynamic_transform()
    exact = core.local_to_global(h, local_at(0.0))
    for name in ("translation", "rotation", "scale"):
        np.testing.assert_allclose(getattr(est, name), getattr(exact, name), atol=1e-12)
    np.testing.assert_allclose(est.velocity, exact.velocity, atol=1e-5)
    np.testing.assert_allclose(est.acceleration, exact.acceleration, atol=1e-5)
    np.testing.assert_allclose(est.omega, exact.omega, atol=1e-5)
    np.testing.assert_allclose(est.alpha, exact.alpha, atol=1e-5)
    assert np.abs(exact.acceleration).max() > 0.1  # the check is not vacuous


def test_sample_errors():
    eye = np.broadcast_to(np.eye(4), (3, 4, 4))
    with pytest.raises(core.InputError, match=r"dt: must be positive"):
        core.dynamics_from_samples(eye, eye, eye, 0.0)
    with pytest.raises(core.InputError, match=r"next: expected \(\.\.\., 4, 4\) like now"):
        core.dynamics_from_samples(eye, eye, np.eye(3), 0.1)
    with pytest.raises(core.InputError, match=r"now: expected \(\.\.\., 4, 4\) \(3D\) or \(\.\.\., 3, 3\) \(2D\)"):
        core.dynamics_from_samples(np.eye(5), np.eye(5), np.eye(5), 0.1)
    singular = eye.copy()
    singular[1, :3, 0] = 0.0
    with pytest.raises(core.InputError, match=r"now\[1\]: singular linear part") as err:
        core.dynamics_from_samples(eye, singular, eye, 0.1)
    assert err.value.index == (1,)
    nan = eye.copy()
    nan[2, 0, 3] = np.nan
    with pytest.raises(core.InputError, match=r"prev\[2\]: contains NaN"):
        core.dynamics_from_samples(nan, eye, eye, 0.1)
    with pytest.raises(core.InputError, match=r"dynamics_from_samples: batch shapes"):
        core.dynamics_from_samples(eye, eye[:2], eye, 0.1)
