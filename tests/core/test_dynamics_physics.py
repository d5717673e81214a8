"""Newtonian forces in moving frames, impulses, counteracting inherited changes, points
through non-uniformly scaled frames; the known cases of spec/dynamics.md with their numbers."""

import numpy as np
import pytest
from dynamics_harness import expm, random_skew
from hierarchy_inspector import core

H = 2e-3


def random_dynamic(rng, n, shape=(), scale=(0.3, 3.0)):
    shape = tuple(shape)
    return core.DynamicTransform(
        rng.normal(size=shape + (n,)),
        expm(random_skew(rng, n, shape, 1.5)),
        rng.uniform(*scale, size=shape),
        rng.normal(size=shape + (n,)),
        rng.normal(size=shape + (n,)),
        random_skew(rng, n, shape),
        random_skew(rng, n, shape),
    )


class FrameMotion:
    """A moving frame with known rates at tau = 0 (see test_dynamics.Motion)."""

    def __init__(self, rng, n, shape=()):
        shape = tuple(shape)
        self.t = [rng.normal(size=shape + (n,)) for _ in range(4)]
        self.r0 = expm(random_skew(rng, n, shape, 1.5))
        self.xi = [random_skew(rng, n, shape, 0.5) for _ in range(3)]
        self.s = rng.uniform(0.5, 2.0, size=shape)

    def at(self, tau):
        """translation, rotation at tau (scale constant)."""
        t = self.t[0] + self.t[1] * tau + self.t[2] * tau**2 / 2 + self.t[3] * tau**3 / 6
        return t, expm(self.xi[0] * tau + self.xi[1] * tau**2 / 2 + self.xi[2] * tau**3) @ self.r0

    def dyn(self):
        return core.DynamicTransform(self.t[0], self.r0, self.s, self.t[1], self.t[2], self.xi[0], self.xi[1])


def d1(f):
    return (-f(2 * H) + 8 * f(H) - 8 * f(-H) + f(-2 * H)) / (12 * H)


def d2(f):
    return (-f(2 * H) + 16 * f(H) - 30 * f(0.0) + 16 * f(-H) - f(-2 * H)) / (12 * H * H)


def close(actual, expected, tol):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    err = np.abs(actual - expected).max() if actual.size else 0.0
    assert err <= tol * (1.0 + np.abs(expected).max()), f"max error {err:.3g} (tol {tol:g})"


def mv(m, x):
    return np.einsum("...ij,...j->...i", m, x)


def mtv(m, x):
    return np.einsum("...ji,...j->...i", m, x)


# -- known cases (spec/dynamics.md) ------------------------------------------------------------------


def test_euler_term_known_case():
    frame = core.DynamicTransform(np.zeros(3), angular_acceleration=[0.0, 0.0, 0.5])
    for form in ("vector", "matrix"):
        got = core.inertial_accelerations(frame, [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], form=form)
        close(got.euler, [0.0, -1.0, 0.0], 1e-15)
        close(got.local, [0.0, -1.0, 0.0], 1e-15)
        for part in (got.applied, got.linear, got.centrifugal, got.coriolis):
            close(part, np.zeros(3), 0.0)


@pytest.mark.parametrize("turned", [False, True])
def test_coriolis_on_earth_known_case(rng, turned):
    """ENU frame at 45 N, 100 m/s north: deflected east by 0.0103126079 m/s^2."""
    big_omega = 7.292115e-5
    omega_enu = big_omega * np.array([0.0, np.cos(np.pi / 4), np.sin(np.pi / 4)])
    rot = expm(random_skew(rng, 3, (), 1.0)) if turned else np.eye(3)
    # the frame's angular velocity is given in the world basis: omega_world = R omega_enu
    frame = core.DynamicTransform(rng.normal(size=3), rot, 1.0, angular_velocity=rot @ omega_enu)
    for form in ("vector", "matrix"):
        got = core.inertial_accelerations(frame, [0.0, 0.0, 0.0], [0.0, 100.0, 0.0], form=form)
        np.testing.assert_allclose(got.coriolis, [0.0103126079, 0.0, 0.0], rtol=0, atol=5e-11)
    assert got.coriolis[0] > 0  # east


@pytest.mark.parametrize("n", [2, 3])
def test_bead_on_a_rotating_rod(n):
    """Frictionless rod turning at 2 rad/s, bead released at rest 0.5 m from the axis."""
    w, t = 2.0, 1.0
    r = 0.5 * np.cosh(w * t)  # r'' = w^2 r, r(0) = 0.5, r'(0) = 0
    dr = 0.5 * w * np.sinh(w * t)
    assert r == pytest.approx(1.8810978455, abs=1e-10)
    assert dr == pytest.approx(3.6268604078, abs=1e-10)
    # the world trajectory x_w(t) = r(t) (cos wt, sin wt): its acceleration is the rod's force / m
    xw = lambda tau: 0.5 * np.cosh(w * (t + tau)) * np.array([np.cos(w * (t + tau)), np.sin(w * (t + tau))])
    a_world = d2(xw)
    if n == 2:
        frame = core.DynamicTransform(np.zeros(2), core.rotation_2d(w * t), angular_velocity=w)
        pad = lambda v: np.asarray(v, dtype=float)
    else:
        frame = core.DynamicTransform(
            np.zeros(3), core.axis_angle_to_matrix([0.0, 0.0, 1.0], w * t), angular_velocity=[0.0, 0.0, w]
        )
        a_world = np.append(a_world, 0.0)
        pad = lambda v: np.append(np.asarray(v, dtype=float), 0.0)
    mass = 0.25
    got = core.inertial_accelerations(frame, pad([r, 0.0]), pad([dr, 0.0]), force=mass * a_world, mass=mass)
    close(got.local, pad([7.5243913822, 0.0]), 1e-9)
    close(got.centrifugal, pad([7.5243913822, 0.0]), 1e-10)
    close(got.coriolis, pad([0.0, -14.5074416314]), 1e-10)
    close(got.euler, pad([0.0, 0.0]), 0.0)
    close(got.linear, pad([0.0, 0.0]), 0.0)
    close(got.applied, -got.coriolis, 1e-9)  # the rod pushes sideways, exactly against Coriolis
    assert np.linalg.norm(a_world) == pytest.approx(2 * w * dr, rel=1e-9)  # |world accel| = 2 omega dr/dt
    matrix = core.inertial_accelerations(frame, pad([r, 0.0]), pad([dr, 0.0]), mass * a_world, mass, form="matrix")
    for g, m in zip(got, matrix, strict=True):
        close(g, m, 1e-13)


# -- inertial accelerations against finite differences ------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_inertial_accelerations_match_finite_differences(rng, n):
    """A particle with a known world trajectory, seen from a moving frame."""
    trials = 100
    frame = FrameMotion(rng, n, (trials,))
    c = [rng.normal(size=(trials, n)) for _ in range(4)]
    x_world = lambda tau: c[0] + c[1] * tau + c[2] * tau**2 / 2 + c[3] * tau**3 / 6

    def x_local(tau):
        t, r = frame.at(tau)
        return mtv(r, x_world(tau) - t) / frame.s[:, None]

    mass = rng.uniform(0.5, 3.0, size=trials)
    dyn = frame.dyn()
    forms = ("auto", "matrix", "vector") if n in (2, 3) else ("auto", "matrix")
    results = [
        core.inertial_accelerations(dyn, x_local(0.0), d1(x_local), mass[:, None] * c[2], mass, form=form)
        for form in forms
    ]
    got = results[0]
    close(got.local, d2(x_local), 1e-6)
    close(got.local, got.applied + got.linear + got.centrifugal + got.coriolis + got.euler, 1e-13)
    for other in results[1:]:
        for g, o in zip(got, other, strict=True):
            close(g, o, 1e-12)
    # the terms one by one, written out from the spec (matrix form)
    rt = np.swapaxes(dyn.rotation, -1, -2)
    om_b = rt @ dyn.angular_velocity @ dyn.rotation
    al_b = rt @ dyn.angular_acceleration @ dyn.rotation
    inv_s = 1.0 / frame.s[:, None]
    x, v = x_local(0.0), d1(x_local)
    close(got.applied, mv(rt, c[2]) * inv_s, 1e-12)
    close(got.linear, -mv(rt, dyn.acceleration) * inv_s, 1e-12)
    close(got.coriolis, -2 * mv(om_b, v), 1e-9)
    close(got.centrifugal, -mv(om_b, mv(om_b, x)), 1e-12)
    close(got.euler, -mv(al_b, x), 1e-12)
    if n == 3:  # cross-product form with numpy's own cross
        w_b, a_b = mtv(dyn.rotation, dyn.omega), mtv(dyn.rotation, dyn.alpha)
        close(got.coriolis, -2 * np.cross(w_b, v), 1e-9)
        close(got.centrifugal, -np.cross(w_b, np.cross(w_b, x)), 1e-12)
        close(got.euler, -np.cross(a_b, x), 1e-12)
    if n == 2:  # perpendicular form
        perp = lambda y: np.stack([-y[:, 1], y[:, 0]], axis=-1)
        close(got.coriolis, -2 * dyn.omega[:, None] * perp(v), 1e-9)
        close(got.centrifugal, dyn.omega[:, None] ** 2 * x, 1e-12)
        close(got.euler, -dyn.alpha[:, None] * perp(x), 1e-12)
    # the same through point_to_local (world acceleration = force / mass)
    pt = core.point_to_local(dyn, x_world(0.0), c[1], c[2])
    close(pt.position, x, 1e-12)
    close(pt.velocity, v, 1e-8)
    exact = core.inertial_accelerations(dyn, pt.position, pt.velocity, mass[:, None] * c[2], mass)
    close(pt.acceleration, exact.local, 1e-12)


def test_inertial_accelerations_free_motion_and_errors(rng):
    frame = random_dynamic(rng, 3)
    free = core.inertial_accelerations(frame, [1.0, 2.0, 3.0], [0.0, 1.0, 0.0])
    close(free.applied, np.zeros(3), 0.0)
    # free motion seen from a moving frame: zero world acceleration
    pt = core.point_to_local(frame, *core.point_to_global(frame, [1.0, 2.0, 3.0], [0.0, 1.0, 0.0])[:2], np.zeros(3))
    close(free.local, pt.acceleration, 1e-12)
    with pytest.raises(core.InputError, match=r"mass\[1\]: must be positive"):
        core.inertial_accelerations(frame, np.zeros((2, 3)), np.zeros((2, 3)), np.ones((2, 3)), [1.0, 0.0])
    with pytest.raises(core.InputError, match="form: 'vector' needs 2D or 3D"):
        core.inertial_accelerations(random_dynamic(rng, 4), np.zeros(4), np.zeros(4), form="vector")
    with pytest.raises(core.InputError, match="form: expected"):
        core.inertial_accelerations(frame, np.zeros(3), np.zeros(3), form="cross")
    with pytest.raises(core.InputError, match=r"position: expected \(\.\.\., 3\) vectors"):
        core.inertial_accelerations(frame, np.zeros(2), np.zeros(3))
    with pytest.raises(core.InputError, match=r"force\[0\]: contains NaN"):
        core.inertial_accelerations(frame, np.zeros(3), np.zeros(3), force=[[np.nan, 0.0, 0.0]])
    with pytest.raises(core.InputError, match="frame: expected a DynamicTransform"):
        core.inertial_accelerations(frame.transform, np.zeros(3), np.zeros(3))


# -- impulses --------------------------------------------------------------------------------------------


def test_linear_impulse_on_a_turntable():
    """A puck on a table turning at 2 rad/s (table rotated 90 degrees) is kicked north."""
    table = core.DynamicTransform(
        np.zeros(3), core.axis_angle_to_matrix([0, 0, 1], np.pi / 2), 1.0, angular_velocity=[0, 0, 2.0]
    )
    d = core.linear_impulse(table, [0.0, 3.0, 0.0], mass=1.5)  # dv = (0, 2, 0) in the world
    close(d.velocity, [2.0, 0.0, 0.0], 1e-15)  # table's X points north
    # Coriolis: da_l = -2 omega x dv_l = -2 (0,0,2) x (2,0,0) = (0, -8, 0)
    close(d.acceleration, [0.0, -8.0, 0.0], 1e-15)
    close(d.angular_velocity, np.zeros((3, 3)), 0.0)
    same = core.global_delta_to_local(table, velocity=[0.0, 2.0, 0.0])
    for a, b in zip(d, same, strict=True):
        close(a, b, 0.0)
    with pytest.raises(core.InputError, match=r"mass: must be positive"):
        core.linear_impulse(table, [0.0, 3.0, 0.0], mass=0.0)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_impulse_then_world_acceleration_unchanged(rng, n):
    """After an impulse the world acceleration is what the forces say; the local one is recomputed."""
    p, l_ = random_dynamic(rng, n, (10,)), random_dynamic(rng, n, (10,))
    j, m = rng.normal(size=(10, n)), rng.uniform(1, 2, size=10)
    new_local = l_.add_delta(core.linear_impulse(p, j, m))
    before, after = p @ l_, p @ new_local
    close(after.velocity - before.velocity, j / m[:, None], 1e-12)
    close(after.acceleration, before.acceleration, 1e-12)
    close(after.angular_velocity, before.angular_velocity, 1e-12)


# -- counteracting an inherited change: the car crash ------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3])
def test_counteracting_a_parent_hit_keeps_children_and_grandchildren_moving(rng, n):
    names = ["ship", "car", "driver", "phone", "box", "wheel"]
    parents = np.array([-1, 0, 1, 2, 1, 1])  # box is not corrected, the wheel is bolted on
    h = core.Hierarchy(parents, names=names)
    local = random_dynamic(rng, n, (6,), scale=(0.5, 2.0))
    glob = core.local_to_global(h, local)
    car, driver = 1, 2
    hit = core.Delta(rng.normal(size=n), rng.normal(size=n), random_skew(rng, n), random_skew(rng, n))

    # the car's global dynamics change by `hit`: its local change through the ship
    car_local = local[car].add_delta(core.global_delta_to_local(glob[0], **hit._asdict()))
    fix = core.counteract_inherited(glob[car], local[driver], **hit._asdict())
    # spec: velocity part -R_p^T (dv_p + dW_p r) / s_p, dW_l = -R_p^T dW_p R_p
    rp, sp = glob[car].rotation, glob[car].scale
    r = sp * rp @ local[driver].translation
    close(fix.velocity, -rp.T @ (hit.velocity + hit.angular_velocity @ r) / sp, 1e-12)
    close(fix.angular_velocity, -rp.T @ hit.angular_velocity @ rp, 1e-12)
    # accelerations: L_new = P_new^-1 o C_old
    want = glob[car].add_delta(hit).inverse() @ glob[driver]
    close(local[driver].add_delta(fix).acceleration, want.acceleration, 1e-11)
    close(local[driver].add_delta(fix).angular_acceleration, want.angular_acceleration, 1e-11)

    new_local = _replace_rows(local, {car: car_local, driver: local[driver].add_delta(fix)})
    new_glob = core.local_to_global(h, new_local)
    for i, name in enumerate(names):
        new, old = new_glob[i], glob[i]
        diffs = [
            new.velocity - old.velocity,
            new.acceleration - old.acceleration,
            new.angular_velocity - old.angular_velocity,
            new.angular_acceleration - old.angular_acceleration,
        ]
        if name == "car":
            for dd, hh in zip(diffs, hit, strict=True):
                close(dd, hh, 1e-11)
        elif name in ("ship", "driver", "phone"):  # the phone inherits the driver's correction
            for dd in diffs:
                close(dd, np.zeros_like(dd), 1e-11)
        else:  # box and wheel move with the car
            assert max(np.abs(dd).max() for dd in diffs) > 1e-3
            seen = core.parent_delta_to_child(glob[car], local[i], **hit._asdict())
            for dd, ss in zip(diffs, seen, strict=True):
                close(dd, ss, 1e-11)
    close(new_glob.translation, glob.translation, 0.0)  # poses untouched
    close(new_glob.rotation, glob.rotation, 0.0)


def _replace_rows(x, rows):
    parts = {
        "translation": x.translation.copy(),
        "rotation": x.rotation.copy(),
        "scale": x.scale.copy(),
        "velocity": x.velocity.copy(),
        "acceleration": x.acceleration.copy(),
        "angular_velocity": x.angular_velocity,
        "angular_acceleration": x.angular_acceleration,
    }
    for i, row in rows.items():
        for key, arr in parts.items():
            arr[i] = getattr(row, key)
    return core.DynamicTransform(**parts)


# -- non-uniform scale: points convert, angular rates do not ----------------------------------------------


@pytest.mark.parametrize("n", [2, 3])
def test_points_through_a_non_uniformly_scaled_frame(rng, n):
    trials = 50
    frame = FrameMotion(rng, n, (trials,))
    k = rng.uniform(0.3, 3.0, size=(trials, n))  # per-axis scale, constant
    c = [rng.normal(size=(trials, n)) for _ in range(4)]
    x_local = lambda tau: c[0] + c[1] * tau + c[2] * tau**2 / 2 + c[3] * tau**3 / 6

    def x_world(tau):
        t, r = frame.at(tau)
        return t + mv(r, frame.s[:, None] * k * x_local(tau))

    dyn = frame.dyn()
    fwd = core.point_to_global(dyn, c[0], c[1], c[2], axis_scale=k)
    close(fwd.position, x_world(0.0), 1e-12)
    close(fwd.velocity, d1(x_world), 1e-8)
    close(fwd.acceleration, d2(x_world), 1e-6)
    back = core.point_to_local(dyn, *fwd, axis_scale=k)
    for b, want in zip(back, c[:3], strict=True):
        close(b, want, 1e-10)
    # inertial terms through the same frame: exact too
    m = rng.uniform(1.0, 2.0, size=trials)
    inertial = core.inertial_accelerations(dyn, c[0], c[1], m[:, None] * fwd.acceleration, m, axis_scale=k)
    close(inertial.local, c[2], 1e-10)
    # linear deltas through it: the difference of point motions
    dv = rng.normal(size=(trials, n))
    d = core.local_delta_to_global(dyn, velocity=dv, axis_scale=k)
    moved = core.point_to_global(dyn, c[0], c[1] + dv, c[2], axis_scale=k)
    close(d.velocity, moved.velocity - fwd.velocity, 1e-12)
    close(d.acceleration, moved.acceleration - fwd.acceleration, 1e-12)
    up = core.global_delta_to_local(dyn, velocity=d.velocity, acceleration=d.acceleration, axis_scale=k)
    close(up.velocity, dv, 1e-12)
    close(up.acceleration, np.zeros_like(dv), 1e-12)
    # the uniform special case is the plain frame with its scale multiplied
    uni = core.point_to_global(dyn, c[0], c[1], c[2], axis_scale=np.full(n, 2.0))
    plain = core.point_to_global(dyn.replace(scale=2.0 * dyn.scale), c[0], c[1], c[2])
    for a, b in zip(uni, plain, strict=True):
        close(a, b, 1e-13)


def test_angular_rates_through_a_non_uniform_scale_raise(rng):
    frame = random_dynamic(rng, 3, (3,))
    k = np.array([[2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1.0, 2.0, 1.0]])
    msg = r"angular_velocity: cannot convert angular rates through the non-uniformly scaled frame axis_scale\[2\]"
    with pytest.raises(core.InputError, match=msg) as err:
        core.local_delta_to_global(frame, angular_velocity=[0.0, 0.0, 1.0], axis_scale=k)
    assert err.value.index == (2,)
    with pytest.raises(core.InputError, match=r"angular_acceleration: .*sheared"):
        core.global_delta_to_local(frame, angular_acceleration=[0.0, 0.0, 1.0], axis_scale=k)
    # uniform rows are fine; linear-only conversion through the sheared one is fine
    core.local_delta_to_global(frame[:2], angular_velocity=[0.0, 0.0, 1.0], axis_scale=k[:2])
    core.local_delta_to_global(frame, velocity=[0.0, 0.0, 1.0], axis_scale=k)
    with pytest.raises(core.InputError, match=r"frame\.scale \* axis_scale\[1\]: zero scale has no inverse"):
        core.point_to_local(frame, np.zeros(3), axis_scale=[[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1, 1, 1]])
    with pytest.raises(core.InputError, match=r"axis_scale: expected \(\.\.\., 3\) per-axis scales"):
        core.point_to_global(frame, np.zeros(3), axis_scale=[1.0, 2.0])
