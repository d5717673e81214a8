"""What the frame-range panel and the dynamics section show, as plain data (Blender-free).

The dynamics of node ``i`` at time index ``t`` of a :class:`~.dynamics.RangeDynamics`:
world (global) and local (relative to the parent, in its basis) velocity, acceleration,
angular velocity and angular acceleration, and the inertial terms of the parent's motion
acting on the node (per unit mass, in the parent's basis), in scene units and radians
per second (the range's ``dt`` comes from the scene's ``fps / fps_base``).
"""

from __future__ import annotations

import numpy as np

from ..text import PLAIN, Units, fmt_vec
from ..views import Section
from .dynamics import RangeDynamics

#: (label, field, whether it is a length rate, the unit after the length or alone)
_RATES = (
    ("Velocity", "velocity", True, "/s"),
    ("Acceleration", "acceleration", True, "/s²"),
    ("Angular velocity", "omega", False, "rad/s"),
    ("Angular accel.", "alpha", False, "rad/s²"),
)
INERTIAL_TERMS = (("Linear", "linear"), ("Centrifugal", "centrifugal"), ("Coriolis", "coriolis"), ("Euler", "euler"))


def _value(v, units: Units, length: bool, unit: str) -> str:
    """A rate in the scene's base length unit (``m/s``; ``units/s`` without units)."""
    if not length:
        return f"{fmt_vec(v)} {unit}"
    return f"{units.vector(v)} {units.base or 'units'}{unit}"


def dynamics_sections(
    dynamics: RangeDynamics, t: int, i: int, parent_label: str | None, units: Units = PLAIN
) -> list[Section]:
    """The dynamics sections of node ``i`` at time index ``t``, lengths in ``units``'
    base unit; a section says why it is empty where the rates are undefined (a
    singular matrix, no parent)."""
    out = []
    for title, rates in (("Global (world)", dynamics.world), ("Local (relative to the parent)", dynamics.local)):
        section = Section(title)
        if rates.ok[t, i]:
            section.rows = [
                (label, _value(getattr(rates, name)[t, i], units, length, unit)) for label, name, length, unit in _RATES
            ]
        else:
            section.rows = [("", "undefined here (a singular matrix)")]
        out.append(section)
    inertial = Section(f"Inertial terms of '{parent_label}'" if parent_label else "Inertial terms")
    if parent_label is None:
        inertial.rows = [("", "none: no parent")]
    elif dynamics.inertial_ok[t, i]:
        inertial.rows = [
            (label, _value(getattr(dynamics, name)[t, i], units, True, "/s²")) for label, name in INERTIAL_TERMS
        ]
    else:
        inertial.rows = [("", "undefined here (a singular matrix)")]
    out.append(inertial)
    return out


def frame_label(frames: np.ndarray, t: int, dt: float) -> str:
    """``Frame 12, dt 0.0417 s`` for the section heading."""
    return f"Frame {int(frames[t])}, dt {dt:.4g} s"
