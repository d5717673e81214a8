"""One pass over a hierarchy that answers the artist's question: what will each engine
family show, compared with what Blender shows?

Input is what an exporter sees: each node's local matrix (parent space) and the world
matrix Blender displays. Exporters write the TRS of the local matrix and drop its
shear: the translation, the column lengths and the rotation Blender's
``Matrix.decompose()`` gives (``decompose(..., rotation="blender")``: where the local
leans, that rotation is not the X-keeping one, and every descendant follows it); then

- matrix-composing engines (glTF viewers, Unity, Godot) multiply those TRS matrices:
  ``world_matrix_model``;
- accumulating engines (Unreal, Ogre) combine them with ``CombineTransforms``:
  ``accumulated``.

Both are compared with the reference (Blender's world) node by node.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .decompose import Decomposition, _rotation_frames, _shear_angles, decompose_with_frames
from .errors import InputError, as_array
from .hierarchy import Hierarchy, lossy_scale_of
from .metrics import Deviation, _deviation
from .rotations import quat_to_matrix
from .trs import TRS

__all__ = ["Analysis", "analyze"]

#: Largest node count whose two decompositions and two deviations run as one batch each.
JOIN_MAX = 1024


class Analysis(NamedTuple):
    """Per-node results of :func:`analyze`, all with N on the first axis."""

    local: Decomposition  #: TRS an exporter writes, and the shear it loses
    world_reference: np.ndarray  #: (N, 4, 4) the world matrices compared against
    reference: Decomposition  #: ``world_reference`` decomposed
    world_matrix_model: np.ndarray  #: (N, 4, 4) exported TRS composed as matrices
    accumulated: TRS  #: (N,) exported TRS accumulated (Unreal / Ogre)
    accumulated_matrix: np.ndarray  #: (N, 4, 4) ``accumulated.to_matrix()``
    global_rotation: np.ndarray  #: (N, 4) product of local rotations (wxyz)
    lossy_scale: np.ndarray  #: (N, 3) Unity's lossyScale of the matrix model
    shear_deg: np.ndarray  #: (N, 3) shear of the reference world matrices
    matrix_model_deviation: Deviation  #: matrix model vs reference
    accumulated_deviation: Deviation  #: accumulated model vs reference


def analyze(
    hierarchy: Hierarchy,
    local_matrices,
    world_reference=None,
    box_min=None,
    box_max=None,
) -> Analysis:
    """Compare both engine models with a reference, for every node.

    Parameters
    ----------
    hierarchy : Hierarchy
        N nodes.
    local_matrices : array_like, shape (N, 4, 4)
        Each node's matrix in its parent's space (what an exporter decomposes).
    world_reference : array_like, shape (N, 4, 4), optional
        The world matrices to compare against (Blender's ``matrix_world``); default:
        ``local_matrices`` composed, shear included.
    box_min, box_max : array_like, shape (N, 3), optional
        Local bounding boxes for the corner distance; default the cube ``[-1, 1]^3``.
    """
    if not isinstance(hierarchy, Hierarchy):
        raise InputError(f"hierarchy: expected a Hierarchy, got {type(hierarchy).__name__}", "hierarchy")
    local = as_array(local_matrices, "local_matrices", (4, 4))
    if local.shape[0:1] != (len(hierarchy),) or local.ndim != 3:
        raise InputError(
            f"local_matrices: expected shape ({len(hierarchy)}, 4, 4), got {local.shape}", "local_matrices"
        )
    if world_reference is None:
        reference = hierarchy.world_matrices(local)
    else:
        reference = as_array(world_reference, "world_reference", (4, 4))
        if reference.shape != local.shape:
            raise InputError(f"world_reference: expected shape {local.shape}, got {reference.shape}", "world_reference")
    n = local.shape[0]
    # Small batches (the panel's chain is a dozen nodes) pay per numpy call, not per
    # node: both decompositions then run as one batch, both deviations as one. The same
    # numbers row by row; large batches run apart (joining would only copy them).
    joined = n <= JOIN_MAX
    reference_parts = None
    if joined:
        try:
            (parts, reference_parts), (local_frames, reference_frames) = _decompose_pair(local, reference)
        except InputError:  # raised again below, in the order of the separate steps
            pass
    if reference_parts is None:
        parts, local_frames = decompose_with_frames(local, rotation="blender")
    local_trs = TRS.from_decomposition(parts)
    # Hierarchy.world_matrices and .accumulate, their folds as one.
    world_matrix_model, accumulated = hierarchy._world_matrices_and_accumulate(
        _affine(local_frames * parts.scale[:, None, :], parts.translation), local_trs
    )
    accumulated_frames = quat_to_matrix(accumulated.rotation)
    accumulated_matrix = _affine(accumulated_frames * accumulated.scale[:, None, :], accumulated.translation)
    # Hierarchy.lossy_scale with the global rotation's matrices already at hand (and
    # its check: an overflowed model is named as there).
    lossy = lossy_scale_of(accumulated_frames, as_array(world_matrix_model, "world_matrices", (None, None))[:, :3, :3])
    if reference_parts is None:
        reference_parts, reference_frames = decompose_with_frames(reference)
    # The checks deviation() would make, in its order; then its arithmetic on both models.
    lo = _box(box_min, "box_min", n, -1.0)
    hi = _box(box_max, "box_max", n, 1.0)
    as_array(accumulated_matrix, "world_b", (4, 4))
    model_frames = _rotation_frames(world_matrix_model[:, :3, :3])[0]
    if joined:
        both = _deviation(
            np.concatenate((reference, reference)),
            np.concatenate((world_matrix_model, accumulated_matrix)),
            np.concatenate((lo, lo)),
            np.concatenate((hi, hi)),
            np.concatenate((reference_frames, reference_frames)),
            np.concatenate((model_frames, accumulated_frames)),
        )
        matrix_deviation = Deviation(*(field[:n] for field in both))
        accumulated_deviation = Deviation(*(field[n:] for field in both))
    else:
        matrix_deviation = _deviation(reference, world_matrix_model, lo, hi, reference_frames, model_frames)
        accumulated_deviation = _deviation(reference, accumulated_matrix, lo, hi, reference_frames, accumulated_frames)
    return Analysis(
        local=parts,
        world_reference=reference,
        reference=reference_parts,
        world_matrix_model=world_matrix_model,
        accumulated=accumulated,
        accumulated_matrix=accumulated_matrix,
        global_rotation=accumulated.rotation,
        lossy_scale=lossy,
        shear_deg=_shear_angles(reference[:, :3, :3]),
        matrix_model_deviation=matrix_deviation,
        accumulated_deviation=accumulated_deviation,
    )


def _box(box, what: str, n: int, default: float) -> np.ndarray:
    """``box`` (``(N, 3)`` or broadcastable to it; None: ``default`` on every axis, as in
    :func:`~.metrics.deviation`) as a contiguous ``(N, 3)`` array (so that joined and
    separate batches are computed alike to the last bit)."""
    if box is None:
        return np.full((n, 3), default)
    return np.ascontiguousarray(np.broadcast_to(as_array(box, what, (3,)), (n, 3)))


def _decompose_pair(local: np.ndarray, reference: np.ndarray) -> tuple[tuple, tuple]:
    """:func:`decompose_with_frames` of ``local`` and of ``reference`` (``(N, 4, 4)``
    each) in one call (its errors name an index of the pair: callers redo the steps
    separately for the message)."""
    n = local.shape[0]
    joined, frames = decompose_with_frames(np.concatenate((local, reference)), rotation=np.arange(2 * n) < n)
    first = Decomposition(*(field[:n] for field in joined))
    second = Decomposition(*(field[n:] for field in joined))
    return (first, second), (frames[:n], frames[n:])


def _affine(linear: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Affine matrices ``(N, 4, 4)`` from their 3x3 parts ``(N, 3, 3)`` and translations ``(N, 3)``."""
    out = np.zeros(linear.shape[:-2] + (4, 4))
    out[..., :3, :3] = linear
    out[..., :3, 3] = translation
    out[..., 3, 3] = 1.0
    return out
