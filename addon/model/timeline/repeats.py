"""Frames of a range that repeat an earlier frame exactly (a cycle's pose again, a return
to the rest pose), so that the range analysis computes each distinct frame once.

Blender-free: the ``(T, 4, 4, N)`` storage of a :class:`~.series.FrameSeries` (or its
``(T, N, 4, 4)`` world matrices) and its boxes.
"""

from __future__ import annotations

import numpy as np


def repeated_frames(world: np.ndarray, box_min: np.ndarray, box_max: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """For time indices ``frames (F,)`` (increasing, none of them 0), the earlier frame each
    one equals: ``(F,)`` int, 0 or an earlier entry of ``frames`` that does not itself
    repeat one, -1 where none.

    Equal means every node's world matrix (its top three rows, the only ones the analysis
    reads) and box compare equal (``==``: NaN equals nothing, so a frame holding NaN never
    repeats one); the frames' fingerprints (each frame's bits summed as integers, an exact
    and cheap key) pick the candidates, the values decide (a frame that differs from an
    earlier one only in the sign of a zero is not found, and is analysed like any other).
    ``world (T, N, 4, 4)``, ``box_min, box_max (T, N, 3)``."""
    t_count, n = world.shape[:2]
    storage = world.transpose(0, 2, 3, 1)
    if storage.flags.c_contiguous:
        rows = storage[:, :3].reshape(t_count, 12 * n)  # a view: each frame's 12 N entries contiguous
    else:
        rows = world[:, :, :3, :].reshape(t_count, 12 * n)
    earlier = np.full(len(frames), -1, dtype=np.int64)
    seen: dict[int, list[int]] = {}
    for k, t in enumerate([0, *(int(f) for f in frames)]):
        key = int(np.add.reduce(rows[t].view(np.uint64), dtype=np.uint64))
        same = [
            s
            for s in seen.get(key, ())
            if np.array_equal(rows[t], rows[s])
            and np.array_equal(box_min[t], box_min[s])
            and np.array_equal(box_max[t], box_max[s])
        ]
        if same and k:
            earlier[k - 1] = same[0]
        else:
            seen.setdefault(key, []).append(t)
    return earlier
