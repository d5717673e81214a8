"""A hierarchy read over a frame range (Blender-free): :class:`FrameSeries`, world
matrices ``(T, N, 4, 4)`` time first; what is computed from it is in :mod:`.series`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..nodes import Nodes, node_label


@dataclass
class FrameSeries:
    """One hierarchy read at T frames (the same nodes at every frame).

    ``frames (T,)`` int; ``keys`` N ``(object, bone)`` pairs; ``parents (N,)`` int, -1
    for roots; ``world (T, N, 4, 4)`` Blender's evaluated world matrices (float64 copies
    of Blender's float32); ``box_min, box_max (T, N, 3)`` local boxes per frame (scene
    units); ``fps`` frames per second (``fps / fps_base``); ``boxes_vary (K,)`` int, when
    known: the only nodes whose boxes can differ from frame to frame (the reader's; None:
    any node's), so that :func:`changes` compares only theirs.
    """

    frames: np.ndarray
    keys: list[tuple[str, str]]
    parents: np.ndarray
    world: np.ndarray
    box_min: np.ndarray
    box_max: np.ndarray
    fps: float = 24.0
    notes: list[str] = field(default_factory=list)
    boxes_vary: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.frames)

    def label(self, i: int) -> str:
        return node_label(*self.keys[i])

    def position(self, frame: int) -> int:
        """Index ``t`` of ``frame`` on the time axis (ValueError when it was not read)."""
        hits = np.flatnonzero(self.frames == frame)
        if not len(hits):
            raise ValueError(f"frame {frame} is not in the series ({self.frames[0]}..{self.frames[-1]})")
        return int(hits[0])

    def subset(self, keep) -> FrameSeries:
        """The nodes ``keep`` (indices, parents before children) as a series of their
        own: a parent outside ``keep`` makes its child a root."""
        keep = np.asarray(keep, dtype=np.int64)
        new = np.full(len(self.keys), -1, dtype=np.int64)
        new[keep] = np.arange(len(keep))
        parents = self.parents[keep]
        parents = np.where(parents >= 0, new[np.maximum(parents, 0)], -1)
        return FrameSeries(
            self.frames.copy(),
            [self.keys[i] for i in keep],
            parents,
            self.world[:, keep],
            self.box_min[:, keep],
            self.box_max[:, keep],
            self.fps,
            [self.notes[i] for i in keep] if self.notes else [],
        )

    def nodes_at(self, t: int) -> Nodes:
        """The hierarchy at time index ``t`` as single-frame :class:`Nodes`."""
        return Nodes(
            list(self.keys), self.parents.copy(), self.world[t].copy(), self.box_min[t].copy(), self.box_max[t].copy()
        )
