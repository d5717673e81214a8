"""The overlay's motion arrows with numpy (no GPU, tested without Blender): the active
node's velocity and acceleration (global, and relative to its parent) and the inertial
terms of its parent's motion, each an arrow from the node's origin, ``scale`` seconds
(or seconds squared) long per unit of the rate, with a two-stroke head.

Vectors given in the parent's basis (local rates, inertial terms) are drawn in the world
through the parent's world linear map, as the parent's space is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Arrow kinds in drawing and legend order: (key, legend label).
ARROWS = (
    ("velocity", "Velocity"),
    ("acceleration", "Acceleration"),
    ("relative_velocity", "Velocity rel. parent"),
    ("relative_acceleration", "Acceleration rel. parent"),
    ("linear", "Inertial: linear"),
    ("centrifugal", "Inertial: centrifugal"),
    ("coriolis", "Inertial: Coriolis"),
    ("euler", "Inertial: Euler"),
)
MOTION = ARROWS[:4]
INERTIAL = ARROWS[4:]


@dataclass(frozen=True)
class ArrowStyle:
    """Arrow colours (RGBA 0..1) by kind and the length scale; the add-on preferences'
    defaults."""

    scale: float = 0.25  #: drawn length per unit of rate (seconds for velocities)
    colour_velocity: tuple = (0.2, 1.0, 0.3, 1.0)
    colour_acceleration: tuple = (1.0, 0.55, 0.0, 1.0)
    colour_relative_velocity: tuple = (0.0, 0.9, 0.9, 1.0)
    colour_relative_acceleration: tuple = (0.45, 0.65, 1.0, 1.0)
    colour_linear: tuple = (0.9, 0.2, 0.9, 1.0)
    colour_centrifugal: tuple = (1.0, 0.15, 0.15, 1.0)
    colour_coriolis: tuple = (1.0, 1.0, 0.2, 1.0)
    colour_euler: tuple = (0.6, 0.3, 1.0, 1.0)

    def colour(self, kind: str) -> tuple:
        return getattr(self, f"colour_{kind}")


def arrow_lines(origin: np.ndarray, vectors: dict[str, np.ndarray], style: ArrowStyle):
    """Line endpoints ``(M, 3)`` and colours ``(M, 4)`` (float32) of one arrow per
    ``vectors[kind] (3,)`` (world vectors) from ``origin (3,)``: the shaft and a head of
    two strokes a fifth of the length, in the plane of the shaft and the world axis
    least aligned with it. Zero vectors draw nothing."""
    lines, colours = [], []
    origin = np.asarray(origin, dtype=np.float64)
    for kind, vector in vectors.items():
        v = np.asarray(vector, dtype=np.float64) * style.scale
        length = float(np.linalg.norm(v))
        if not np.isfinite(length) or length < 1e-9:
            continue
        tip = origin + v
        d = v / length
        side = np.cross(d, np.eye(3)[int(np.argmin(np.abs(d)))])
        side /= np.linalg.norm(side)
        back, wing = tip - 0.2 * length * d, 0.1 * length * side
        lines += [origin, tip, tip, back + wing, tip, back - wing]
        colours += [style.colour(kind)] * 6
    if not lines:
        return np.zeros((0, 3), dtype=np.float32), np.zeros((0, 4), dtype=np.float32)
    return np.array(lines, dtype=np.float32), np.array(colours, dtype=np.float32)


def node_arrows(dynamics, t: int, i: int, parent_world, motion: bool = True, inertial: bool = True) -> dict:
    """World vectors of node ``i``'s arrows at time index ``t`` of a
    :class:`~.dynamics.RangeDynamics`; ``parent_world (4, 4)`` maps the
    parent-basis ones (None: no parent, those are left out)."""
    out = {}
    if motion and dynamics.world.ok[t, i]:
        out["velocity"] = dynamics.world.velocity[t, i]
        out["acceleration"] = dynamics.world.acceleration[t, i]
    if parent_world is None:
        return out
    linear = np.asarray(parent_world, dtype=np.float64)[:3, :3]
    if motion and dynamics.local.ok[t, i]:
        out["relative_velocity"] = linear @ dynamics.local.velocity[t, i]
        out["relative_acceleration"] = linear @ dynamics.local.acceleration[t, i]
    if inertial and dynamics.inertial_ok[t, i]:
        for kind, _label in INERTIAL:
            out[kind] = linear @ getattr(dynamics, kind)[t, i]
    return out
