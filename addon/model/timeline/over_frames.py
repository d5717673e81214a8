"""The results of a range's analysis (:func:`.series.analyse_frames`): per node-frame
values kept as their distinct rows, their maxima, worst frames and counts.

Blender-free: tested without bpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..engines.paths import ACCUMULATED, MATRIX, PATHS, UNREAL_FBX, UNREAL_INTERCHANGE
from ..inspection import worst_first
from ..thresholds import DEFAULT, Thresholds
from .frame_series import FrameSeries

#: The corner-distance field of each engine path.
CORNER_FIELD = {
    MATRIX: "corner_matrix",
    UNREAL_FBX: "corner_unreal_fbx",
    UNREAL_INTERCHANGE: "corner_unreal_interchange",
    ACCUMULATED: "corner_accumulated",
}


def _per_frame(name: str) -> cached_property:
    """An :class:`OverFrames` attribute: the ``(T, N)`` array of field ``name`` (each
    frame's row), built on first use."""

    def build(over: OverFrames) -> np.ndarray:
        return np.take(over.rows[name], over.source, axis=0)

    return cached_property(build)


@dataclass
class OverFrames:
    """Per node-frame results ``(T, N)`` of :func:`analyse_frames`, and their maxima.

    ``shear``: largest |shear angle| of Blender's world matrix (degrees); ``local_shear``:
    of the local matrix an exporter writes (degrees, the shear it drops); ``corner_matrix``,
    ``corner_unreal_fbx``, ``corner_unreal_interchange``, ``corner_accumulated``: largest
    box-corner distance of each engine path (:data:`CORNER_FIELD`) from Blender, reading
    Blender's plain export (scene units);
    ``lossy (T, N)`` bool: local shear that is real (above float32 noise) and over the
    threshold, as :attr:`.inspection.Inspection.lossy_local` decides for one frame;
    ``singular_parent (T, N)`` bool: the parent's world has no inverse at that frame (a
    scale of zero on an axis), so the node's local transform is undefined there and its
    local is the least-squares one (:func:`~..inspection.local_matrices_of`), as the
    single-frame :attr:`.inspection.Inspection.singular_parent` marks it.

    Stored compactly: ``rows`` maps each of those six names to its ``(R, N)`` distinct
    rows (a frame where nothing moved repeats the row before, a frame equal to an earlier
    one that one's row), ``source (T,)`` is each frame's row (every row used). The ``(T, N)`` arrays are built on
    first use; the maxima, worst frames and counts are computed on the rows.
    """

    series: FrameSeries
    rows: dict[str, np.ndarray]
    source: np.ndarray
    thresholds: Thresholds = DEFAULT

    @property
    def frames(self) -> np.ndarray:
        return self.series.frames

    # The (T, N) arrays, each built on first use from its rows.
    shear = _per_frame("shear")
    local_shear = _per_frame("local_shear")
    corner_matrix = _per_frame("corner_matrix")
    corner_unreal_fbx = _per_frame("corner_unreal_fbx")
    corner_unreal_interchange = _per_frame("corner_unreal_interchange")
    corner_accumulated = _per_frame("corner_accumulated")
    lossy = _per_frame("lossy")
    singular_parent = _per_frame("singular_parent")

    @cached_property
    def _row_corner(self) -> np.ndarray:
        return np.max([self.rows[CORNER_FIELD[p]] for p in self.thresholds.engines], axis=0)

    @cached_property
    def _row_flagged(self) -> np.ndarray:
        r, t = self.rows, self.thresholds
        lossy = r["lossy"] if MATRIX in t.engines else False
        return (r["shear"] > t.shear_deg) | lossy | (self._row_corner > t.corner)

    @cached_property
    def corner(self) -> np.ndarray:
        """``(T, N)`` the largest corner distance of the engine paths that count."""
        return np.take(self._row_corner, self.source, axis=0)

    def corner_max_of(self, path: str) -> np.ndarray:
        """``(N,)`` one engine path's largest corner distance over the range."""
        return self._max(self.rows[CORNER_FIELD[path]])

    @cached_property
    def flagged_frames(self) -> np.ndarray:
        """``(T, N)`` bool: flagged at that frame (the single-frame rule)."""
        return np.take(self._row_flagged, self.source, axis=0)

    @cached_property
    def flagged_frame_count(self) -> np.ndarray:
        """``(N,)`` int: how many frames of the range flag each node."""
        if not len(self.source):
            return np.zeros(self._nodes, dtype=np.int64)
        frames_per_row = np.bincount(self.source, minlength=len(self._row_flagged))
        return frames_per_row @ self._row_flagged.astype(np.int64)

    @property
    def _nodes(self) -> int:
        return len(self.series.keys)

    @cached_property
    def flagged(self) -> np.ndarray:
        """``(N,)`` bool: flagged at any frame of the range."""
        return self._row_flagged.any(axis=0) if len(self.frames) else np.zeros(self._nodes, dtype=bool)

    @cached_property
    def worst_index(self) -> np.ndarray:
        """``(N,)`` time index of each node's largest corner distance (the first such frame)."""
        first_frame = np.unique(self.source, return_index=True)[1]  # each row's first frame (every row is used)
        return first_frame[np.argmax(self._row_corner, axis=0)]

    @cached_property
    def worst_frame(self) -> np.ndarray:
        """``(N,)`` the frame of each node's largest corner distance of either model."""
        return self.frames[self.worst_index]

    def _max(self, values: np.ndarray) -> np.ndarray:
        """The maximum over the range of a field's rows ``(R, N)``: ``(N,)``."""
        return values.max(axis=0) if len(self.source) else np.zeros(values.shape[1:])

    @cached_property
    def shear_max(self) -> np.ndarray:
        return self._max(self.rows["shear"])

    @cached_property
    def local_shear_max(self) -> np.ndarray:
        return self._max(self.rows["local_shear"])

    @cached_property
    def worst_shear(self) -> np.ndarray:
        """``(N,)`` degrees over the range: :attr:`.inspection.Inspection.worst_shear` at
        every frame (world shear, or the local shear where it is lossy), its maximum."""
        r = self.rows
        return self._max(np.maximum(r["shear"], np.where(r["lossy"], r["local_shear"], 0.0)))

    @cached_property
    def corner_max(self) -> np.ndarray:
        return self._max(self._row_corner)

    def worst_first(self, indices=None) -> np.ndarray:
        """``indices`` (default: nodes flagged at any frame), largest corner distance over
        the range first, then shear."""
        if indices is None:
            indices = np.flatnonzero(self.flagged)
        return worst_first(self.corner_max, self.shear_max, indices)

    def entry(self, i: int) -> dict:
        """Node ``i``'s ``over_frames`` report entry (schema ``hierarchy_inspector.report/1``)."""
        return {
            "worst_frame": int(self.worst_frame[i]),
            "shear_deg": float(self.shear_max[i]),
            "local_shear_deg": float(self.local_shear_max[i]),
            "max_corner": {p: float(self.corner_max_of(p)[i]) for p in PATHS},
            "flagged_frames": int(self.flagged_frame_count[i]),
            **({"singular_parent_frames": self.singular_frames(i)} if self.rows["singular_parent"][:, i].any() else {}),
        }

    def singular_frames(self, i: int) -> list[int]:
        """The frames at which node ``i``'s parent has no inverse (its local is undefined)."""
        return [int(f) for f in self.frames[self.rows["singular_parent"][self.source, i]]]

    def summary(self, indices=None) -> dict:
        """Counts and maxima over the range for ``indices`` (default: all nodes)."""
        idx = np.arange(len(self.series.keys)) if indices is None else np.asarray(indices, dtype=np.int64)
        worst = self.corner_max[idx]
        top = int(idx[np.argmax(worst)]) if len(idx) else -1
        return {
            "count": len(self.frames),
            "flagged": int(self.flagged[idx].sum()),
            "sheared": int((self.shear_max[idx] > self.thresholds.shear_deg).sum()),
            "max_shear_deg": float(self.shear_max[idx].max()) if len(idx) else 0.0,
            "max_local_shear_deg": float(self.local_shear_max[idx].max()) if len(idx) else 0.0,
            "max_deviation": float(worst.max()) if len(idx) else 0.0,
            "worst_frame": int(self.worst_frame[top]) if top >= 0 else None,
        }
