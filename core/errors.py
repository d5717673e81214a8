"""Errors raised by the core, and the checks that raise them.

Every check names the argument and, where it makes sense, the first offending index,
so a pipeline log says what to fix without a debugger.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["InputError", "HierarchyError", "ShearError"]


class InputError(ValueError):
    """Bad input to a core function: wrong shape, NaN/inf, a zero quaternion, ...

    ``what`` names the argument; ``index`` is the first offending batch index (a
    tuple) or ``None`` when the problem is not tied to one element.
    """

    def __init__(self, message: str, what: str = "", index: tuple[int, ...] | None = None):
        super().__init__(message)
        self.what = what
        self.index = index


class HierarchyError(InputError):
    """Invalid parent array: out-of-range index, self-parent or cycle."""


class ShearError(InputError):
    """A matrix holds shear where only a translation / rotation / scale was expected."""


def _where(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]" if index else ""


def first_index(mask: np.ndarray) -> tuple[int, ...]:
    """Batch index of the first True element of ``mask`` (any number of dimensions)."""
    flat = int(np.flatnonzero(mask.reshape(-1))[0])
    return tuple(int(i) for i in np.unravel_index(flat, mask.shape)) if mask.ndim else ()


def as_array(value, what: str, tail: Sequence[int | None] = (), *, finite: bool = True) -> np.ndarray:
    """Convert ``value`` to a float64 array whose last dimensions match ``tail``.

    ``tail`` entries that are ``None`` accept any size. Raises :class:`InputError`
    naming ``what`` and the shapes on a mismatch, and the first offending batch index
    when ``finite`` and the array holds NaN or inf.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: cannot be read as an array of numbers ({exc})", what) from None
    tail = tuple(tail)
    k = len(tail)
    got = arr.shape[arr.ndim - k :] if k else ()
    if arr.ndim < k or (got != tail and any(want is not None and g != want for g, want in zip(got, tail, strict=True))):
        expected = "(..., " + ", ".join("n" if t is None else str(t) for t in tail) + ")"
        if not tail:
            expected = "any shape"
        raise InputError(f"{what}: expected shape {expected}, got {arr.shape}", what)
    if finite and arr.size and not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        if tail:
            bad = bad.reshape(arr.shape[: arr.ndim - len(tail)] + (-1,)).any(axis=-1)
        idx = first_index(bad)
        raise InputError(f"{what}{_where(idx)}: contains NaN or infinity", what, idx)
    return arr


def batch_shape(
    what: str, *arrays_and_tails: tuple[np.ndarray, int], names: Sequence[str] | None = None
) -> tuple[int, ...]:
    """Broadcast the batch shapes of several arrays (each given with its core ndim).

    With ``names`` (one per array) the error names each argument with its batch shape.
    """
    shapes = [a.shape[: a.ndim - nd] for a, nd in arrays_and_tails]
    if all(s == shapes[0] for s in shapes):  # the common case, without numpy's broadcasting call
        return tuple(shapes[0])
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = shapes if names is None else ", ".join(f"{n} {s}" for n, s in zip(names, shapes, strict=True))
        raise InputError(f"{what}: batch shapes {listed} do not broadcast together", what) from None


def where(index: tuple[int, ...]) -> str:
    """Format a batch index as ``[i, j]`` (empty for a single element)."""
    return _where(index)
