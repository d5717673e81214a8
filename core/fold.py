"""Root-to-leaf folds over a forest with no per-node Python work.

A fold computes, for every node, ``out[i] = compose(out[parent[i]], value[i])`` (roots:
``out[i] = value[i]``) for an **associative** ``compose`` acting on whole batches.

Three schedules, chosen by a cost model from the forest's shape (a Python step costs
about as much as composing ~150 nodes):

- *levels* (shallow forests): one vectorised ``compose`` per depth level, over all nodes
  of that level. Python work grows with the depth, numpy work with N.
- *blocked* (deep chains): depths are cut into blocks of ``m ~ sqrt(depth)`` levels.
  Phase 1 folds within blocks: for ``j = 1 .. m-1`` all nodes at depth ``j`` inside
  their block, across all blocks at once. The nodes on each block's last level then
  form a compressed forest of depth ``depth / m``, folded by levels (phase 2). Phase 3
  composes every node with its block head's result. About ``2 sqrt(depth)`` Python
  steps and ``2 N`` composes, instead of ``depth`` steps; a chain of a million nodes
  needs two thousand steps and no recursion. Associativity is what makes regrouping
  the product by blocks legal.

- *jump* (small forests, e.g. the panel's chain): pointer doubling. In round r every
  node composes with the value of its ``2^r``-th ancestor, so ``ceil(log2(depth))``
  steps of N composes each; the fewest steps, the most work.

Nodes are permuted once so that every step reads and writes contiguous slices; when the
parent array is already in that order (breadth-first storage) no permutation is done.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["FoldSchedule", "Compose"]

Values = tuple[np.ndarray, ...]
#: ``compose(parent_values, child_values) -> values``, each a tuple of arrays with a
#: leading batch axis of equal length.
Compose = Callable[[Values, Values], Values]

#: Cost model (microseconds on a 2-core machine): one Python step, one node composed.
_STEP_COST = 15.0
_NODE_COST = 0.1


def choose_schedule(n: int, levels: int) -> tuple[str, int]:
    """``("levels" | "blocked" | "jump", block)`` with the least estimated time."""
    if levels <= 2:
        return "levels", max(levels, 1)
    block = math.isqrt(levels - 1) + 1
    rounds = math.ceil(math.log2(levels))
    costs = {
        "levels": levels * _STEP_COST + n * _NODE_COST,
        "blocked": (block + -(-levels // block)) * _STEP_COST + 2 * n * _NODE_COST,
        "jump": rounds * (_STEP_COST + n * _NODE_COST),
    }
    kind = min(costs, key=lambda k: costs[k])
    return kind, (levels if kind == "levels" else block)


class FoldSchedule:
    """Precomputed order for folding values down a validated forest.

    Parameters
    ----------
    parents : ndarray of int64, shape (N,)
        Parent index per node, -1 for roots; already validated (no cycles).
    depth : ndarray of int64, shape (N,)
        Depth per node (roots 0).
    block : int, optional
        Levels per block (``block >= max depth + 1`` gives the levels schedule); 0
        asks for pointer jumping. Default: chosen by :func:`choose_schedule`.
    """

    def __init__(self, parents: np.ndarray, depth: np.ndarray, block: int | None = None):
        n = len(parents)
        self.size = n
        levels = int(depth.max()) + 1 if n else 0
        if block is None:
            kind, block = choose_schedule(n, levels)
            block = 0 if kind == "jump" else block
        self.jump_rounds: list[tuple[np.ndarray, np.ndarray]] | None = None
        self.compressed: FoldSchedule | None = None
        if block == 0 and levels > 1:
            self._plan_jumps(parents)
            self.block, self.blocked = 0, False
            return
        block = max(1, min(int(block), max(levels, 1)))
        self.block = block
        self.blocked = block < levels
        step = depth % block if self.blocked else depth

        order = np.argsort(step, kind="stable")
        self.order = None if np.array_equal(order, np.arange(n)) else order
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.arange(n)
        self.inverse = None if self.order is None else inverse
        counts = np.bincount(step, minlength=block)
        self.starts = np.concatenate(([0], np.cumsum(counts)))
        sorted_parents = parents[order]
        # Position of each node's parent in the sorted order (-1 for roots).
        self.parent_pos = np.where(sorted_parents >= 0, inverse[np.maximum(sorted_parents, 0)], -1)

        if self.blocked:
            self._plan_blocks(depth[order])

    def _plan_jumps(self, parents: np.ndarray) -> None:
        """Per round: the nodes that still have an ancestor, and that ancestor."""
        rounds = []
        anc = parents.copy()
        live = np.flatnonzero(anc >= 0)
        while len(live):
            rounds.append((live, anc[live]))
            anc[live] = anc[anc[live]]
            live = live[anc[live] >= 0]
        self.jump_rounds = rounds

    def _plan_blocks(self, sorted_depth: np.ndarray) -> None:
        m, starts = self.block, self.starts
        # Head of every node: its ancestor on the last level of the block above, as a
        # sorted position (-1 in the first block). A block's first level points at its
        # parent; deeper levels inherit their parent's head.
        head = np.full(self.size, -1, dtype=np.int64)
        a, b = starts[0], starts[1]
        head[a:b] = np.where(sorted_depth[a:b] >= m, self.parent_pos[a:b], -1)
        for j in range(1, m):
            a, b = starts[j], starts[j + 1]
            head[a:b] = head[self.parent_pos[a:b]]
        # Heads are the nodes of the last step, a contiguous slice; index them from 0.
        last_a, last_b = starts[m - 1], starts[m]
        self.heads = slice(int(last_a), int(last_b))
        self.tail_nodes = np.flatnonzero(head >= 0)
        self.tail_heads = head[self.tail_nodes] - last_a
        head_parent = head[last_a:last_b]
        compressed_parents = np.where(head_parent >= 0, head_parent - last_a, -1)
        compressed_depth = sorted_depth[last_a:last_b] // m
        levels = int(compressed_depth.max()) + 1 if len(compressed_depth) else 1
        self.compressed = FoldSchedule(compressed_parents, compressed_depth, block=levels)

    @property
    def kind(self) -> str:
        return "jump" if self.jump_rounds is not None else ("blocked" if self.blocked else "levels")

    @property
    def steps(self) -> int:
        """Python-level steps one fold takes (a measure of its overhead)."""
        if self.jump_rounds is not None:
            return len(self.jump_rounds)
        own = self.block
        return own + (self.compressed.steps if self.compressed is not None else 0)

    def fold(self, values: Sequence[np.ndarray], compose: Compose) -> Values:
        """Fold ``values`` (arrays with leading axis N) from the roots to the leaves.

        Returns new arrays; the inputs are not modified.
        """
        if self.jump_rounds is not None:
            return self._fold_jumps(values, compose)
        if self.order is not None:
            out = [np.take(v, self.order, axis=0) for v in values]
        else:
            out = [np.array(v, copy=True) for v in values]
        starts, parent_pos = self.starts, self.parent_pos
        for j in range(1, self.block):
            a, b = starts[j], starts[j + 1]
            if a == b:
                continue
            pp = parent_pos[a:b]
            parent_vals = tuple(o.take(pp, axis=0) for o in out)
            result = compose(parent_vals, tuple(o[a:b] for o in out))
            for o, r in zip(out, result, strict=False):
                o[a:b] = r
        if self.compressed is not None and len(self.tail_nodes):
            head_world = self.compressed.fold(tuple(o[self.heads] for o in out), compose)
            parent_vals = tuple(h.take(self.tail_heads, axis=0) for h in head_world)
            result = compose(parent_vals, tuple(o.take(self.tail_nodes, axis=0) for o in out))
            for o, r in zip(out, result, strict=False):
                o[self.tail_nodes] = r
        if self.inverse is not None:
            out = [o.take(self.inverse, axis=0) for o in out]
        return tuple(out)

    def _fold_jumps(self, values: Sequence[np.ndarray], compose: Compose) -> Values:
        out = [np.array(v, copy=True) for v in values]
        for live, anc in self.jump_rounds:
            # Gather both sides before writing: every node reads last round's values.
            result = compose(tuple(o.take(anc, axis=0) for o in out), tuple(o.take(live, axis=0) for o in out))
            for o, r in zip(out, result, strict=True):
                o[live] = r
        return tuple(out)
