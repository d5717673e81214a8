"""Argument checks shared by the frame conversions (:mod:`.deltas`, :mod:`.inertial`,
:mod:`.sampling`): the frame itself, its optional per-axis scale, positive masses and
time steps.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, as_array, batch_shape, first_index, where
from .transform import DynamicTransform

#: Relative spread of a per-axis scale below which it counts as uniform.
UNIFORM_TOLERANCE = 1e-9


def _check_frame(frame, what: str = "frame") -> DynamicTransform:
    if not isinstance(frame, DynamicTransform):
        raise InputError(f"{what}: expected a DynamicTransform, got {type(frame).__name__}", what)
    return frame


def _frame_batch(what: str, frame: DynamicTransform, **inputs: tuple[np.ndarray, int]) -> tuple[int, ...]:
    """The batch shape of a frame and its inputs (``name=(array, core ndim)``); an
    :class:`InputError` naming every argument with its batch shape where they do not broadcast."""
    return batch_shape(what, (frame.scale, 0), *inputs.values(), names=("frame", *inputs))


def _axis_scale(frame: DynamicTransform, axis_scale):
    """Per-axis scale ``d (..., n) = s * axis_scale`` of the frame's linear map ``R diag(d)``."""
    n = frame.dim
    s = frame.scale[..., None]
    if axis_scale is None:
        return s, None
    k = as_array(axis_scale, "axis_scale", (None,))
    if k.shape[-1] != n:
        raise InputError(
            f"axis_scale: expected (..., {n}) per-axis scales for {n}-d frames, got shape {k.shape}", "axis_scale"
        )
    batch_shape("axis_scale", (frame.scale, 0), (k, 1), names=("frame", "axis_scale"))
    return s * k, k


def _inverse_axis_scale(d: np.ndarray, axis_scale) -> np.ndarray:
    zero = (d == 0.0).any(axis=-1)
    if zero.any():
        idx = first_index(zero)
        what = "frame.scale" if axis_scale is None else "frame.scale * axis_scale"
        raise InputError(f"{what}{where(idx)}: zero scale has no inverse", what, idx)
    return 1.0 / d


def _require_uniform(axis_scale, what: str) -> None:
    if axis_scale is None or not axis_scale.size:
        return
    spread = axis_scale.max(axis=-1) - axis_scale.min(axis=-1)
    bad = spread > UNIFORM_TOLERANCE * np.abs(axis_scale).max(axis=-1)
    if bad.any():
        idx = first_index(bad)
        values = ", ".join(f"{float(v):.6g}" for v in axis_scale[idx])
        raise InputError(
            f"{what}: cannot convert angular rates through the non-uniformly scaled frame "
            f"axis_scale{where(idx)} = ({values}): a rotation seen through a non-uniform scale is sheared and "
            "has no angular velocity or acceleration. Linear velocities and accelerations of points do convert "
            "(point_to_global, point_to_local, inertial_accelerations).",
            what,
            idx,
        )


def _positive(value, what: str) -> np.ndarray:
    arr = as_array(value, what)
    bad = ~(arr > 0.0)
    if bad.any():
        idx = first_index(bad)
        raise InputError(f"{what}{where(idx)}: must be positive, got {float(arr[idx])!r}", what, idx)
    return arr
