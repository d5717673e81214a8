"""The one threshold policy: what counts as sheared, lossy or off.

Every place that decides whether a node is flagged (the panel, the overlay, the scene
scan, the report and its ``--fail-on-shear`` gate) or acted on (helpers, bake, exports)
asks a :class:`Thresholds` value. Its defaults are the add-on preferences' defaults and
the command line's; the report and the fix and export messages say which values applied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .engines.paths import LABEL, PATHS
from .errors import UsageError

#: A scale counts as non-uniform when its largest and smallest magnitudes differ by more
#: than this fraction of the largest.
NON_UNIFORM_RATIO = 1e-4
#: Local shear below this (degrees) is never treated as real, whatever the threshold.
LOCAL_SHEAR_FLOOR_DEG = 1e-4
#: ``inverse(parent world) @ world`` from float32 matrices carries noise of about
#: ``eps32 * cond(parent)`` radians; shear below this many times that is not trusted.
LOCAL_NOISE_FACTOR = 8.0


@dataclass(frozen=True)
class Thresholds:
    """When a node is flagged.

    ``shear_deg``: degrees off 90 between two axes of Blender's world matrix (world
    shear) or of the local matrix an exporter writes (local shear it drops).
    ``corner``: scene units a corner of the node's box may move between Blender and an
    engine model. Both must be finite and not negative. ``engines``: the engine paths
    (:data:`.engines.paths.PATHS`) whose corner distances count (default: every path).
    """

    shear_deg: float = 0.1
    corner: float = 1e-3
    engines: tuple[str, ...] = PATHS

    def __post_init__(self):
        for name in ("shear_deg", "corner"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"threshold {name} must be a finite number >= 0, not {value!r}")
        engines = tuple(self.engines)
        if not engines or any(p not in PATHS for p in engines):
            raise ValueError(f"engines must be some of {', '.join(PATHS)}, not {self.engines!r}")
        object.__setattr__(self, "engines", tuple(p for p in PATHS if p in engines))

    def describe(self) -> str:
        """``shear > 0.1 deg, corners > 0.001 units`` (for messages and reports), and the
        engine paths when not all of them count."""
        text = f"shear > {self.shear_deg:g} deg, corners > {self.corner:g} units"
        if self.engines != PATHS:
            text += " in " + ", ".join(LABEL[p] for p in self.engines)
        return text

    def as_dict(self) -> dict:
        return {"shear_deg": float(self.shear_deg), "corner": float(self.corner), "engines": list(self.engines)}


DEFAULT = Thresholds()


def parse_threshold(text: str) -> float:
    """A threshold from the command line: a finite number >= 0 (NaN would switch a gate
    off, a negative one would always trip it); else :class:`UsageError`."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{text!r}: expected a finite number >= 0")
    return value
