"""Velocities, accelerations and inertial terms at every frame of a range (``report
--dynamics --frames``), from the matrices read at those frames. Blender-free.

Rates at interior frames are central differences of the neighbouring samples
(:func:`~...core.dynamics_from_samples`, O(dt^2)); at the first and last frame they are
one-sided, from the same three samples as the next interior frame: velocity
``v(t0) = v(t1) - a(t1) dt`` (the second-order one-sided difference
``(-3 x0 + 4 x1 - x2) / 2 dt``), acceleration ``a(t0) = a(t1)`` (first order), and the
same for the angular rates. ``dt`` is the range's step in seconds (``step / fps``).
World rates are in the world basis; local rates and the inertial terms of the parent's
motion (linear, centrifugal, Coriolis, Euler, per unit mass) in the parent's basis, as in
:mod:`.dynamics`. A node-frame whose matrices (or its parent's) are singular at any of
the three samples gets ``None`` rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .... import core
from ..dynamics import _regular
from ..errors import UsageError
from ..inspection import local_matrices_of
from .series import FrameSeries


class RangeRates(NamedTuple):
    """Per frame and node ``(T, M, ...)``: the pose (``translation``, Gram-Schmidt
    ``rotation (3, 3)``, signed ``scale``) and its rates (per second); ``ok (T, M)``
    says where they are defined (elsewhere zeros)."""

    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    ok: np.ndarray


def range_rates(matrices: np.ndarray, regular: np.ndarray, dt: float) -> RangeRates:
    """Rates of affine ``matrices (T, M, 4, 4)`` sampled every ``dt`` seconds at every
    sample (``T >= 3``), central inside, one-sided at both ends; ``regular (T, M)`` bool
    marks usable samples."""
    t_count, m = matrices.shape[:2]
    if t_count < 3:
        raise UsageError(f"rates over a range need at least 3 frames, got {t_count}")
    triple = regular[:-2] & regular[1:-1] & regular[2:]  # (T-2, M) interior frames
    ok = np.zeros((t_count, m), dtype=bool)
    ok[1:-1] = triple
    ok[0], ok[-1] = triple[0], triple[-1]
    shape3 = (t_count, m, 3)
    out = {name: np.zeros(shape3) for name in ("translation", "scale", "velocity", "acceleration", "omega", "alpha")}
    rotation = np.tile(np.eye(3), (t_count, m, 1, 1))
    inner = np.argwhere(triple)  # (K, 2): interior time index - 1, node
    if len(inner):
        t, i = inner[:, 0], inner[:, 1]
        rates = core.dynamics_from_samples(matrices[t, i], matrices[t + 1, i], matrices[t + 2, i], dt)
        for name in ("velocity", "acceleration", "omega", "alpha"):
            out[name][t + 1, i] = getattr(rates, name)
        for end, near, sign in ((0, 1, -1.0), (t_count - 1, t_count - 2, 1.0)):
            nodes = np.flatnonzero(ok[end])
            for rate, change in (("velocity", "acceleration"), ("omega", "alpha")):
                out[rate][end, nodes] = out[rate][near, nodes] + sign * dt * out[change][near, nodes]
                out[change][end, nodes] = out[change][near, nodes]
    where = np.argwhere(ok)
    if len(where):
        t, i = where[:, 0], where[:, 1]
        pose = core.dynamics_from_samples(matrices[t, i], matrices[t, i], matrices[t, i], dt)  # rates unused (0)
        out["translation"][t, i], rotation[t, i], out["scale"][t, i] = pose.translation, pose.rotation, pose.scale
    return RangeRates(
        out["translation"],
        rotation,
        out["scale"],
        out["velocity"],
        out["acceleration"],
        out["omega"],
        out["alpha"],
        ok,
    )


def _rows(values: np.ndarray, ok: np.ndarray) -> list:
    """``(T, 3)`` as T lists of 3 floats (no negative zeros: ``x + 0.0``), None where
    not ``ok``; converted by numpy in one call (a rig's 709 nodes over 120 frames: 1.97 s
    one float at a time)."""
    rows = (np.asarray(values, dtype=np.float64) + 0.0).tolist()
    return rows if ok.all() else [row if good else None for row, good in zip(rows, ok.tolist(), strict=True)]


def _rates_entry(rates: RangeRates, i: int, basis: str) -> dict | None:
    ok = rates.ok[:, i]
    if not ok.any():
        return None
    return {
        "basis": basis,
        "velocity": _rows(rates.velocity[:, i], ok),
        "acceleration": _rows(rates.acceleration[:, i], ok),
        "angular_velocity": _rows(rates.omega[:, i], ok),
        "angular_acceleration": _rows(rates.alpha[:, i], ok),
    }


class RangeDynamics(NamedTuple):
    """World rates and local rates ``(T, N)`` and the inertial terms ``(T, N, 3)`` each
    (zeros where ``inertial_ok (T, N)`` is False)."""

    dt: float
    world: RangeRates
    local: RangeRates
    linear: np.ndarray
    centrifugal: np.ndarray
    coriolis: np.ndarray
    euler: np.ndarray
    inertial_ok: np.ndarray

    def entry(self, i: int) -> dict:
        """Node ``i``'s ``over_frames.dynamics`` report entry: one row per frame."""
        ok = self.inertial_ok[:, i]
        inertial = None
        if ok.any():
            inertial = {
                "basis": "parent",
                **{
                    name: _rows(getattr(self, name)[:, i], ok)
                    for name in ("linear", "centrifugal", "coriolis", "euler")
                },
            }
        return {
            "dt": self.dt,
            "local": _rates_entry(self.local, i, "parent"),
            "global": _rates_entry(self.world, i, "world"),
            "inertial": inertial,
        }


def range_dynamics(
    world: np.ndarray, local: np.ndarray, singular_parent: np.ndarray, parents: np.ndarray, dt: float
) -> RangeDynamics:
    """Rates of every node at every frame of world and local matrices ``(T, N, 4, 4)``
    (``singular_parent (T, N)``: the local is a pseudo-inverse there), and the inertial
    terms of each parent's motion acting on its children (``dt`` seconds per sample)."""
    t_count, n = world.shape[:2]
    world_regular = _regular(world.reshape(-1, 4, 4)).reshape(t_count, n)
    local_regular = world_regular & ~singular_parent & _regular(local.reshape(-1, 4, 4)).reshape(t_count, n)
    glob = range_rates(world, world_regular, dt)
    loc = range_rates(local, local_regular, dt)
    terms = {name: np.zeros((t_count, n, 3)) for name in ("linear", "centrifugal", "coriolis", "euler")}
    has_parent = parents >= 0
    inertial_ok = loc.ok & has_parent[None, :] & glob.ok[:, np.maximum(parents, 0)]
    pairs = np.argwhere(inertial_ok)
    if len(pairs):
        t, i = pairs[:, 0], pairs[:, 1]
        p = parents[i]
        frame = core.DynamicTransform(
            glob.translation[t, p],
            glob.rotation[t, p],
            1.0,
            glob.velocity[t, p],
            glob.acceleration[t, p],
            core.hat(glob.omega[t, p]),  # skew matrices: a batch of 3 vectors would read as one matrix
            core.hat(glob.alpha[t, p]),
        )
        result = core.inertial_accelerations(
            frame, loc.translation[t, i], loc.velocity[t, i], axis_scale=glob.scale[t, p]
        )
        for name in terms:
            terms[name][t, i] = getattr(result, name)
    return RangeDynamics(dt, glob, loc, inertial_ok=inertial_ok, **terms)


def series_dynamics(series: FrameSeries, step: int = 1) -> RangeDynamics:
    """:func:`range_dynamics` of a series read every ``step`` frames (``dt = step / fps``)."""
    t_count, n = series.world.shape[:2]
    tiled = core.Hierarchy(series.parents).tile(t_count).parents
    local, singular = local_matrices_of(series.world.reshape(-1, 4, 4), tiled)
    return range_dynamics(
        series.world,
        local.reshape(t_count, n, 4, 4),
        singular.reshape(t_count, n),
        series.parents,
        step / series.fps,
    )
