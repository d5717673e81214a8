"""The frame-range results the panel, the timeline markers and the overlay's arrows show:
the last range scan (active chain or whole scene) and the last dynamics sample, kept
until the next scan or file load.

A range scan of the active chain also keeps the chain's rates at every frame of the
range (:func:`~...model.timeline.dynamics.series_dynamics`), so the dynamics section and
the arrows follow the timeline without evaluating Blender again; outside the range
:func:`sample_dynamics` reads the chain at F-1, F, F+1 (three evaluations, the frame
restored). Nothing here evaluates Blender during drawing.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ...model.errors import UsageError
from ...model.frames import FrameRange, check_frame
from ...model.thresholds import Thresholds
from ...model.timeline import FrameSeries, OverFrames, analyse_frames
from ...model.timeline.dynamics import RangeDynamics, series_dynamics
from ..frames import FrameReader
from ..reading import active_key, chain_objects

CHAIN, SCENE = "CHAIN", "SCENE"
#: Timeline markers this add-on adds start with this (and only those are removed).
MARKER_PREFIX = "HI worst: "
#: At most this many markers (the worst flagged nodes).
MARKER_LIMIT = 20


@dataclass
class RangeView:
    """A range read and analysed: ``dynamics`` for chain scans of 3 frames or more."""

    scope: str
    frame_range: FrameRange
    over: OverFrames
    dynamics: RangeDynamics | None
    seconds: float = 0.0

    @property
    def series(self) -> FrameSeries:
        return self.over.series


_state: dict = {"range": None, "sample": None}


def remember_range(view: RangeView) -> None:
    _state["range"] = view


def last_range() -> RangeView | None:
    return _state["range"]


def forget() -> None:
    _state["range"] = _state["sample"] = None


@persistent
def on_load(*_args) -> None:
    forget()


def frame_range_of(scene, settings) -> FrameRange:
    """The panel's range: the scene's own, or the start / end / step set in the panel
    (:class:`~..model.errors.UsageError` when END < START or a frame is out of range)."""
    if settings.use_scene_range:
        start, end, step = scene.frame_start, scene.frame_end, 1
    else:
        start, end, step = settings.frame_start, settings.frame_end, settings.frame_step
    check_frame(start, "range start")
    check_frame(end, "range end")
    if end < start:
        raise UsageError(f"the range's end ({end}) is before its start ({start})")
    if step < 1:
        raise UsageError(f"the range's step must be 1 or more, not {step}")
    return FrameRange(start, end, step)


def start_reader(context, scope: str, frame_range: FrameRange) -> FrameReader:
    """A reader of the active chain's objects (and their bones) or of the whole scene."""
    objects = None
    if scope == CHAIN:
        if context.active_object is None:
            raise UsageError("select an object or a pose bone to scan its chain")
        objects = chain_objects(context.active_object)
    return FrameReader(context.scene, frame_range.frames(), objects)


def finish(reader: FrameReader, scope: str, frame_range: FrameRange, thresholds: Thresholds, seconds: float):
    """Analyse what ``reader`` read and remember it (chain scans keep their rates)."""
    series = reader.series()
    over = analyse_frames(series, thresholds)
    dynamics = series_dynamics(series, frame_range.step) if scope == CHAIN and len(series) >= 3 else None
    view = RangeView(scope, frame_range, over, dynamics, seconds)
    remember_range(view)
    if dynamics is not None:
        _state["sample"] = view
    return view


def sample_dynamics(context) -> RangeView:
    """Read the active chain at F-1, F, F+1 and keep its rates (the frame is restored)."""
    frame = context.scene.frame_current
    frame_range = FrameRange(frame - 1, frame + 1, 1)
    reader = start_reader(context, CHAIN, frame_range)
    try:
        while not reader.step():
            pass
    finally:
        reader.restore()
    series = reader.series()
    view = RangeView(CHAIN, frame_range, analyse_frames(series), series_dynamics(series))
    _state["sample"] = view
    return view


def dynamics_here(context):
    """``(dynamics, t, i, parent_world, series)`` for the active node at the current
    frame from the last chain scan or sample covering it, else None."""
    view = _state["sample"]
    key = active_key(context)
    if view is None or view.dynamics is None or key is None:
        return None
    series = view.series
    hits = np.flatnonzero(series.frames == context.scene.frame_current)
    index = {k: i for i, k in enumerate(series.keys)}
    if not len(hits) or key not in index:
        return None
    t, i = int(hits[0]), index[key]
    parent = int(series.parents[i])
    return view.dynamics, t, i, (series.world[t, parent] if parent >= 0 else None), series


def set_markers(scene, view: RangeView | None, show: bool) -> int:
    """Timeline markers at the worst frames of the flagged nodes (at most
    :data:`MARKER_LIMIT`, worst first), replacing this add-on's earlier ones; with
    ``show`` False only removes them. Returns how many were added."""
    for marker in [m for m in scene.timeline_markers if m.name.startswith(MARKER_PREFIX)]:
        scene.timeline_markers.remove(marker)
    if not show or view is None:
        return 0
    over = view.over
    added = 0
    for i in over.worst_first()[:MARKER_LIMIT]:
        scene.timeline_markers.new(MARKER_PREFIX + over.series.label(int(i)), frame=int(over.worst_frame[i]))
        added += 1
    return added


def register_handlers() -> None:
    if on_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(on_load)


def unregister_handlers() -> None:
    while on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(on_load)
    forget()
