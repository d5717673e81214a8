"""A forest of transforms given by parent indices, and its world transforms in both
models: matrices composed (Blender, Unity, glTF viewers) and TRS accumulated (Unreal,
Ogre, the seed article), plus the seed's world-space getters.

Everything is batched over the N nodes: no per-node Python loop, no recursion, so a
chain a million nodes deep is as easy as a million roots (see :mod:`.fold`).

**Why the accumulated model can be folded.** ``CombineTransforms`` is not
associative (``(a.b).c`` and ``a.(b.c)`` differ once scales are non-uniform), so it
cannot be regrouped directly. But its parts can: world rotation is the product of the
rotations and world scale the per-axis product of the scales, both associative; and
once every node's parent world rotation and scale are known, a node's world position
is its parent's plus the known offset ``R_parent (s_parent * p)``, a plain sum down the
tree. Three associative folds reproduce the strictly sequential root-to-leaf
definition exactly (checked against it on deep chains and random forests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import HierarchyError, InputError, as_array
from .fold import FoldSchedule
from .rotations import norm, quat_multiply, quat_rotate, quat_to_matrix
from .trs import TRS

__all__ = ["Hierarchy"]


def _quat_product(p, c):
    return (quat_multiply(p[0], c[0]),)


def _rotation_scale_product(p, c):
    return quat_multiply(p[0], c[0]), p[1] * c[1]


def _matrix_rotation_scale_product(p, c):
    """:func:`_matrix_product` and :func:`_rotation_scale_product` in one step."""
    return np.matmul(p[0], c[0]), quat_multiply(p[1], c[1]), p[2] * c[2]


def _vector_sum(p, c):
    return (p[0] + c[0],)


def _matrix_product(p, c):
    return (np.matmul(p[0], c[0]),)


def _affine_product(p, c):
    """(linear, translation) pairs: ``(Lp, tp) o (Lc, tc) = (Lp Lc, tp + Lp tc)``."""
    return np.matmul(p[0], c[0]), p[1] + np.einsum("nij,nj->ni", p[0], c[1])


def _linear_and_rotation_product(p, c):
    return np.matmul(p[0], c[0]), quat_multiply(p[1], c[1])


def lossy_scale_of(rotation_matrices: np.ndarray, linear: np.ndarray) -> np.ndarray:
    """Unity's ``lossyScale`` ``(N, 3)`` from the global rotations as matrices
    ``(N, 3, 3)`` and the world matrices' 3x3 parts ``(N, 3, 3)`` (checked arrays): the
    diagonal of ``R^T @ linear`` (see :meth:`Hierarchy.lossy_scale`)."""
    return np.einsum("nji,nji->ni", rotation_matrices, linear)


class Hierarchy:
    """A validated forest of N nodes.

    Parameters
    ----------
    parents : array_like of int, shape (N,)
        Parent index of each node, ``-1`` for a root. Any order (parents need not come
        before children).
    names : sequence of str, optional
        Node names, used only in error messages.

    Raises
    ------
    HierarchyError
        A parent index out of range, a node that is its own parent, or a cycle; the
        message names the node (and the cycle).
    """

    def __init__(self, parents, names: Sequence[str] | None = None):
        raw = np.asarray(parents)
        if raw.ndim != 1:
            raise HierarchyError(f"parents: expected shape (N,), got {raw.shape}", "parents")
        if raw.size and not np.issubdtype(raw.dtype, np.integer):
            as_float = np.asarray(raw, dtype=np.float64)
            if not np.all(np.isfinite(as_float)) or not np.all(as_float == np.round(as_float)):
                bad = int(np.flatnonzero(~np.isfinite(as_float) | (as_float != np.round(as_float)))[0])
                raise HierarchyError(f"parents[{bad}] = {raw[bad].item()!r} is not an integer index", "parents", (bad,))
        n = raw.shape[0]
        if raw.size:  # before the conversion: uint64 2**64 - 1 would wrap to -1 (a root)
            outside = (raw < -1) | (raw >= n)
            if outside.any():
                i = int(np.flatnonzero(outside)[0])
                raise HierarchyError(
                    f"parents[{i}] = {np.asarray(raw[i]).item()} is out of range for {n} nodes "
                    f"({self._label_of(names, i)}; use -1 for a root)",
                    "parents",
                    (i,),
                )
        self.parents = raw.astype(np.int64, copy=True)
        self.names = list(names) if names is not None else None
        if self.names is not None and len(self.names) != len(self.parents):
            raise HierarchyError(f"names: {len(self.names)} names for {len(self.parents)} nodes", "names")
        self.parents.flags.writeable = False
        self.depth = self._validate_and_measure()
        self.depth.flags.writeable = False
        self._schedule: FoldSchedule | None = None

    # -- structure -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.parents)

    def _label(self, i: int) -> str:
        return self._label_of(self.names, i)

    @staticmethod
    def _label_of(names, i: int) -> str:
        return f"node {i} ({names[i]!r})" if names is not None and i < len(names) else f"node {i}"

    def _validate_and_measure(self) -> np.ndarray:
        parents = self.parents
        n = len(parents)
        out_of_range = (parents < -1) | (parents >= n)
        if out_of_range.any():
            i = int(np.flatnonzero(out_of_range)[0])
            raise HierarchyError(
                f"parents[{i}] = {parents[i]} is out of range for {n} nodes ({self._label(i)}; use -1 for a root)",
                "parents",
                (i,),
            )
        own = parents == np.arange(n)
        if own.any():
            i = int(np.flatnonzero(own)[0])
            raise HierarchyError(f"parents[{i}] = {i}: {self._label(i)} is its own parent", "parents", (i,))
        # Pointer jumping: after k rounds anc[i] is the 2^k-th ancestor and depth[i]
        # the distance to it (or to the root, once anc[i] == -1).
        anc = parents.copy()
        depth = (parents >= 0).astype(np.int64)
        for _ in range(max(1, math.ceil(math.log2(max(n, 2)))) + 1):
            live = np.flatnonzero(anc >= 0)
            if not len(live):
                break
            up = anc[live]
            depth[live] += depth[up]
            anc[live] = anc[up]
        live = np.flatnonzero(anc >= 0)
        if len(live):
            # anc[] of a node in or under a cycle has jumped at least N steps: it is on
            # the cycle. Walk it once to name the members (error path only).
            start = int(anc[live[0]])
            cycle, node = [start], int(parents[start])
            while node != start and len(cycle) < 8:
                cycle.append(node)
                node = int(parents[node])
            loop = " -> ".join(self._label(c) for c in cycle) + (
                " -> ..." if node != start else f" -> {self._label(start)}"
            )
            raise HierarchyError(f"parents: cycle {loop}", "parents", (start,))
        return depth

    def tile(self, count: int) -> Hierarchy:
        """``count`` copies of this forest side by side, ``count * N`` nodes: copy ``k``
        holds nodes ``k * N .. k * N + N - 1`` with the same structure.

        How a leading batch axis (frames) is folded in one pass: arrays ``(T, N, ...)``
        reshaped to ``(T * N, ...)`` go through the tiled forest, and results reshape
        back. No validation is repeated (a copy of a valid forest is valid).
        """
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
            raise InputError(f"count: expected a whole number of copies, got {count!r}", "count")
        count = int(count)
        if count < 0:
            raise InputError(f"count: expected a number of copies >= 0, got {count}", "count")
        n = len(self)
        offsets = (n * np.arange(count, dtype=np.int64))[:, None]
        out = Hierarchy.__new__(Hierarchy)
        out.parents = np.where(self.parents[None, :] >= 0, self.parents[None, :] + offsets, -1).reshape(-1)
        out.parents.flags.writeable = False
        out.names = None if self.names is None else self.names * count
        out.depth = np.tile(self.depth, count)
        out.depth.flags.writeable = False
        out._schedule = None
        return out

    @property
    def roots(self) -> np.ndarray:
        """Indices of the root nodes."""
        return np.flatnonzero(self.parents < 0)

    @property
    def max_depth(self) -> int:
        """Depth of the deepest node (roots are at depth 0); -1 for an empty forest."""
        return int(self.depth.max()) if len(self.depth) else -1

    @property
    def schedule(self) -> FoldSchedule:
        """The fold schedule, built on first use and reused."""
        if self._schedule is None:
            self._schedule = FoldSchedule(self.parents, self.depth)
        return self._schedule

    def fold(self, values: Sequence[np.ndarray], compose) -> tuple[np.ndarray, ...]:
        """Fold per-node ``values`` root to leaf with an associative ``compose``.

        ``out[i] = compose(out[parent[i]], values[i])``; see :class:`.fold.FoldSchedule`.
        """
        return self.schedule.fold(values, compose)

    def _check_nodes(self, arr: np.ndarray, what: str) -> np.ndarray:
        if arr.ndim < 1 or arr.shape[0] != len(self):
            raise InputError(f"{what}: expected {len(self)} nodes on the first axis, got shape {arr.shape}", what)
        return arr

    def _check_trs(self, local_trs: TRS) -> TRS:
        if not isinstance(local_trs, TRS):
            raise InputError(f"local_trs: expected a TRS, got {type(local_trs).__name__}", "local_trs")
        if local_trs.shape != (len(self),):
            raise InputError(f"local_trs: expected shape ({len(self)},), got {local_trs.shape}", "local_trs")
        return local_trs

    def parent_values(self, world: np.ndarray, root_value) -> np.ndarray:
        """``world[parent[i]]`` per node, ``root_value`` for roots."""
        out = np.take(world, np.maximum(self.parents, 0), axis=0)
        out[self.parents < 0] = root_value
        return out

    # -- matrix model ----------------------------------------------------------------

    def world_matrices(self, local_matrices) -> np.ndarray:
        """World matrices ``(N, k, k)``: local matrices composed, ``world = parent @ local``.

        The matrix model (Blender, Unity, Godot, glTF viewers). ``local_matrices`` is
        ``(N, 4, 4)`` (or any ``(N, k, k)``, e.g. 3x3 homogeneous 2D transforms).
        """
        m = self._check_nodes(as_array(local_matrices, "local_matrices", (None, None)), "local_matrices")
        if m.shape[-1] != m.shape[-2] or m.ndim != 3:
            raise InputError(f"local_matrices: expected shape (N, k, k), got {m.shape}", "local_matrices")
        return self.fold((m,), _matrix_product)[0]

    def global_position(self, local_trs: TRS) -> np.ndarray:
        """World positions ``(N, 3)`` of the matrix model, from TRS without 4x4 matrices.

        The seed's ``GetGlobalPosition``: each ancestor's scale, then rotation, then
        translation applied to the node's position; equal to the translation column
        of :meth:`world_matrices`.
        """
        trs = self._check_trs(local_trs)
        return self.fold((trs.rotation_scale_matrix(), trs.translation), _affine_product)[1]

    def global_rotation(self, local_trs: TRS) -> np.ndarray:
        """World rotations ``(N, 4)``: product of the rotations root to node (wxyz).

        The seed's ``GetGlobalRotation``; the same in both models. The quaternion sign
        is the product's own (not made canonical), so it matches a sequential loop.
        """
        trs = self._check_trs(local_trs)
        q = self.fold((trs.rotation,), _quat_product)[0]
        return q / norm(q)[:, None]

    def lossy_scale(self, local_trs: TRS, *, world_matrices=None, global_rotation=None) -> np.ndarray:
        """Unity's ``lossyScale`` ``(N, 3)`` (GPU Pro 5, "Managing Transformations in
        Hierarchy"): the diagonal of ``inverse(global rotation) @ world (R S)``.

        Equals the true world scale where there is no shear; under shear it is the
        best per-axis guess and what Unity reports. Pass ``world_matrices`` (from
        :meth:`world_matrices` of the same TRS) and ``global_rotation`` (from
        :meth:`global_rotation` or ``accumulate(...).rotation``) when you have them
        already: the folds are then skipped.
        """
        trs = self._check_trs(local_trs)
        if world_matrices is None:
            linear = None
        else:
            linear = self._check_nodes(as_array(world_matrices, "world_matrices", (None, None)), "world_matrices")
            linear = linear[:, :3, :3]
        if global_rotation is not None:
            q = self._check_nodes(as_array(global_rotation, "global_rotation", (4,)), "global_rotation")
        if linear is None and global_rotation is None:
            linear, q = self.fold((trs.rotation_scale_matrix(), trs.rotation), _linear_and_rotation_product)
            q = q / norm(q)[:, None]
        elif linear is None:
            linear = self.fold((trs.rotation_scale_matrix(),), _matrix_product)[0]
        elif global_rotation is None:
            q = self.global_rotation(trs)
        return lossy_scale_of(quat_to_matrix(q), linear)

    # -- accumulated model -----------------------------------------------------------

    def accumulate(self, local_trs: TRS) -> TRS:
        """World TRS ``(N,)`` of the accumulated model (Unreal / Ogre / the seed).

        Defined by folding :func:`~.trs.accumulate` from each root down; computed with
        three associative folds (see the module docstring), no recursion.
        """
        trs = self._check_trs(local_trs)
        q, s = self.fold((trs.rotation, trs.scale), _rotation_scale_product)
        return self._accumulated(q, s, trs)

    def _world_matrices_and_accumulate(self, local_matrices: np.ndarray, local_trs: TRS) -> tuple[np.ndarray, TRS]:
        """:meth:`world_matrices` of checked ``(N, 4, 4)`` float64 matrices and
        :meth:`accumulate` of a checked TRS, the matrix product and the rotation and
        scale products folded together (one fold instead of two: the same numbers)."""
        m, q, s = self.fold((local_matrices, local_trs.rotation, local_trs.scale), _matrix_rotation_scale_product)
        return m, self._accumulated(q, s, local_trs)

    def _accumulated(self, q: np.ndarray, s: np.ndarray, trs: TRS) -> TRS:
        """:meth:`accumulate` from the folded rotation ``q (N, 4)`` and scale ``s (N, 3)``
        products: the positions, a plain sum down the tree."""
        q = q / norm(q)[:, None]
        parent_q = self.parent_values(q, (1.0, 0.0, 0.0, 0.0))
        parent_s = self.parent_values(s, 1.0)
        offset = quat_rotate(parent_q, parent_s * trs.translation)
        position = self.fold((offset,), _vector_sum)[0]
        return TRS._trusted(position, q, s)
