"""What the frame-range panel and the dynamics section show, as plain data (Blender-free).

The dynamics of node ``i`` at time index ``t`` of a :class:`~.dynamics.RangeDynamics`:
world (global) and local (relative to the parent, in its basis) velocity, acceleration,
angular velocity and angular acceleration, and the inertial terms of the parent's motion
acting on the node (per unit mass, in the parent's basis), in scene units and radians
per second (the range's ``dt`` comes from the scene's ``fps / fps_base``).
"""

from __future__ import annotations

import numpy as np

from ..text import fmt_vec
from ..views import Section
from .dynamics import RangeDynamics

_RATES = (
    ("Velocity", "velocity", "units/s"),
    ("Acceleration", "acceleration", "units/s²"),
    ("Angular velocity", "omega", "rad/s"),
    ("Angular accel.", "alpha", "rad/s²"),
)
INERTIAL_TERMS = (("Linear", "linear"), ("Centrifugal", "centrifugal"), ("Coriolis", "coriolis"), ("Euler", "euler"))


def dynamics_sections(dynamics: RangeDynamics, t: int, i: int, parent_label: str | None) -> list[Section]:
    """The dynamics sections of node ``i`` at time index ``t``; a section says why it is
    empty where the rates are undefined (a singular matrix, no parent)."""
    out = []
    for title, rates in (("Global (world)", dynamics.world), ("Local (relative to the parent)", dynamics.local)):
        section = Section(title)
        if rates.ok[t, i]:
            section.rows = [(label, f"{fmt_vec(getattr(rates, name)[t, i])} {unit}") for label, name, unit in _RATES]
        else:
            section.rows = [("", "undefined here (a singular matrix)")]
        out.append(section)
    inertial = Section(f"Inertial terms of '{parent_label}'" if parent_label else "Inertial terms")
    if parent_label is None:
        inertial.rows = [("", "none: no parent")]
    elif dynamics.inertial_ok[t, i]:
        inertial.rows = [
            (label, f"{fmt_vec(getattr(dynamics, name)[t, i])} units/s²") for label, name in INERTIAL_TERMS
        ]
    else:
        inertial.rows = [("", "undefined here (a singular matrix)")]
    out.append(inertial)
    return out


def frame_label(frames: np.ndarray, t: int, dt: float) -> str:
    """``Frame 12 (dt 0.0417 s)`` for the section heading."""
    return f"Frame {int(frames[t])} (dt {dt:.4g} s)"
