"""Translation / rotation / scale transforms (3D, per-axis scale) and the seed's
``CombineTransforms``: the *accumulated* model used by Unreal and Ogre.
"""

from __future__ import annotations

import numpy as np

from .decompose import Decomposition, decompose
from .errors import InputError, ShearError, as_array, batch_shape, first_index, where
from .rotations import quat_multiply, quat_normalize, quat_rotate, quat_to_matrix

__all__ = ["TRS", "accumulate"]


class TRS:
    """A batch of 3D transforms kept as translation, rotation and per-axis scale.

    Parameters
    ----------
    translation : array_like, shape (..., 3)
    rotation : array_like, shape (..., 4)
        Quaternions (w, x, y, z); normalised here, a zero-length one is an error.
    scale : array_like, shape (..., 3)
        Per-axis scale along the node's own axes. Zero and negative values are legal.

    The batch shapes broadcast; all three arrays are stored at the common batch shape.
    As a matrix the transform is ``T @ R @ S`` (scale first, then rotate, then move).
    """

    __slots__ = ("translation", "rotation", "scale")

    def __init__(self, translation=(0.0, 0.0, 0.0), rotation=(1.0, 0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)):
        t = as_array(translation, "translation", (3,))
        r = quat_normalize(rotation, what="rotation")
        s = as_array(scale, "scale", (3,))
        shape = batch_shape("TRS", (t, 1), (r, 1), (s, 1))
        self.translation = np.broadcast_to(t, shape + (3,)).copy()
        self.rotation = np.broadcast_to(r, shape + (4,)).copy()
        self.scale = np.broadcast_to(s, shape + (3,)).copy()

    @classmethod
    def _trusted(cls, translation: np.ndarray, rotation: np.ndarray, scale: np.ndarray) -> TRS:
        """Wrap arrays already checked, normalised and of one batch shape (no copies)."""
        out = object.__new__(cls)
        out.translation, out.rotation, out.scale = translation, rotation, scale
        return out

    @classmethod
    def identity(cls, shape: tuple[int, ...] | int = ()) -> TRS:
        """Identity transforms of the given batch shape."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls._trusted(
            np.zeros(shape + (3,)), np.broadcast_to([1.0, 0.0, 0.0, 0.0], shape + (4,)).copy(), np.ones(shape + (3,))
        )

    @classmethod
    def from_decomposition(cls, parts: Decomposition) -> TRS:
        """The TRS an exporter writes from :func:`decompose`'s ``parts``: shear dropped.
        Already unit quaternions of one batch shape: wrapped, not checked again (copies,
        so the TRS never aliases the decomposition)."""
        return cls._trusted(parts.translation.copy(), parts.rotation.copy(), parts.scale.copy())

    @classmethod
    def from_matrix(cls, matrices, *, shear_tolerance_deg: float = 1e-3) -> TRS:
        """TRS of ``(..., 4, 4)`` affine matrices that hold no shear.

        Raises :class:`ShearError` naming the first matrix whose shear exceeds
        ``shear_tolerance_deg``: a TRS cannot hold it, and it is not dropped silently.
        Use :func:`decompose` to get the shear as well, or :func:`split_to_trs` for an
        exact two-node replacement.
        """
        d = decompose(matrices)
        worst = np.abs(d.shear_deg).max(axis=-1) if d.shear.size else np.zeros(d.shear.shape[:-2])
        over = worst > shear_tolerance_deg
        if over.any():
            idx = first_index(over)
            raise ShearError(
                f"matrices{where(idx)}: holds {float(worst[idx]):.4g} degrees of shear, which a TRS cannot hold "
                "(use decompose() to see it or split_to_trs() to keep it)",
                "matrices",
                idx,
            )
        return cls._trusted(d.translation, d.rotation, d.scale)

    @property
    def shape(self) -> tuple[int, ...]:
        """Batch shape."""
        return self.translation.shape[:-1]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a single TRS")
        return self.shape[0]

    def __getitem__(self, index) -> TRS:
        if not self.shape:
            raise IndexError("a single TRS cannot be indexed")
        return TRS._trusted(self.translation[index], self.rotation[index], self.scale[index])

    def __repr__(self) -> str:
        if self.shape:
            return f"TRS(shape={self.shape})"
        return (
            f"TRS(translation={self.translation.tolist()}, rotation={self.rotation.tolist()}, "
            f"scale={self.scale.tolist()})"
        )

    def rotation_scale_matrix(self) -> np.ndarray:
        """``R @ S`` ``(..., 3, 3)``: the linear part of :meth:`to_matrix`."""
        return quat_to_matrix(self.rotation, self.scale)

    def to_matrix(self) -> np.ndarray:
        """Affine matrices ``(..., 4, 4)`` equal to ``T @ R @ S``."""
        out = np.zeros(self.shape + (4, 4))
        quat_to_matrix(self.rotation, self.scale, out=out[..., :3, :3])
        out[..., :3, 3] = self.translation
        out[..., 3, 3] = 1.0
        return out


def accumulate(parent: TRS, child: TRS) -> TRS:
    """The seed's ``CombineTransforms(parent, child)``, broadcasting over batches.

    ``scale = parent.scale * child.scale`` (per axis, along the child's own axes),
    ``rotation = parent.rotation * child.rotation``,
    ``position = parent.position + parent.rotation * (parent.scale * child.position)``.
    Never produces shear; not associative when scales are non-uniform. Batch shapes
    that do not broadcast raise :class:`InputError` naming both.
    """
    for name, value in (("parent", parent), ("child", child)):
        if not isinstance(value, TRS):
            raise InputError(f"{name}: expected a TRS, got {type(value).__name__}", name)
    batch_shape("child", (parent.scale, 1), (child.scale, 1), names=("parent", "child"))
    return TRS._trusted(
        parent.translation + quat_rotate(parent.rotation, parent.scale * child.translation),
        quat_multiply(parent.rotation, child.rotation),
        parent.scale * child.scale,
    )
