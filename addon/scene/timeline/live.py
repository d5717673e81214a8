"""The frame-range results the panel, the timeline markers and the overlay's arrows show:
the last range scan (active chain or whole scene) and the last dynamics sample, kept
until the next scan or file load.

A range scan of the scene keeps its flagged nodes grouped by cause (the scaled node
and the frame, :func:`~...model.timeline.causes.range_groups`) for the list and one
timeline marker per cause. A range scan of the active chain is kept apart (it does not
replace the scene's results): only the chain's nodes are analysed, and its rates at every
frame of the range (:func:`~...model.timeline.dynamics.series_dynamics`) let the dynamics
section and the arrows follow the timeline without evaluating Blender again; outside the
range :func:`sample_dynamics` reads the chain at F-1, F, F+1 (three evaluations, the frame
restored). While a scan reads, :func:`progress` says how far it is. Nothing here
evaluates Blender during drawing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ...model.errors import UsageError
from ...model.frames import FrameRange, check_frame
from ...model.nodes import Nodes
from ...model.thresholds import Thresholds
from ...model.timeline import FrameSeries, OverFrames, analyse_frames
from ...model.timeline.causes import RangeGroup, list_order, range_groups
from ...model.timeline.dynamics import RangeDynamics, series_dynamics
from ..frames import FrameReader
from ..reading import active_key, chain_objects
from .channels import range_annotations, scale_channels

CHAIN, SCENE = "CHAIN", "SCENE"
#: Timeline markers this add-on adds start with this (and only those are removed).
MARKER_PREFIX = "HI: "
#: At most this many markers (one per cause, the worst first).
MARKER_LIMIT = 20


@dataclass
class RangeView:
    """A range read and analysed: ``dynamics`` for chain scans of 3 frames or more;
    for scene scans ``groups`` (worst first), ``order`` (the flagged nodes as the list
    shows them: visible ones first) and ``facts`` (deform, hidden, follows)."""

    scope: str
    frame_range: FrameRange
    over: OverFrames
    dynamics: RangeDynamics | None
    seconds: float = 0.0
    groups: list[RangeGroup] = field(default_factory=list)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    facts: Nodes | None = None

    @property
    def series(self) -> FrameSeries:
        return self.over.series


_state: dict = {"range": None, "chain": None, "sample": None, "progress": None}


def remember_range(view: RangeView) -> None:
    _state["chain" if view.scope == CHAIN else "range"] = view


def last_range() -> RangeView | None:
    """The last scan of the scene's range (chain scans are kept apart: :func:`last_chain`)."""
    return _state["range"]


def last_chain() -> RangeView | None:
    """The last range scan of an active chain."""
    return _state["chain"]


def set_progress(fraction: float | None, frame: int = 0, total: int = 0) -> None:
    """What a running range scan has read (None: no scan is running)."""
    _state["progress"] = None if fraction is None else (float(fraction), int(frame), int(total))


def progress() -> tuple[float, int, int] | None:
    """``(fraction, frame, frames)`` of the running range scan, None when none runs."""
    return _state["progress"]


def forget() -> None:
    _state["range"] = _state["chain"] = _state["sample"] = _state["progress"] = None


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


def finish(reader: FrameReader, scope: str, frame_range: FrameRange, thresholds: Thresholds, seconds: float, key=None):
    """Analyse what ``reader`` read and remember it: a chain scan (``key``: the active
    node) only the chain's nodes, with their rates; a scene scan with its cause groups."""
    series = reader.series()
    if scope == CHAIN and key is not None and key in series.keys:
        index = {k: i for i, k in enumerate(series.keys)}
        series = series.subset(_chain_of(series.parents, index[key]))
    over = analyse_frames(series, thresholds)
    dynamics = series_dynamics(series, frame_range.step) if scope == CHAIN and len(series) >= 3 else None
    view = RangeView(scope, frame_range, over, dynamics, seconds)
    if scope == SCENE:
        facts = range_annotations(series)
        view.facts = facts
        view.groups = range_groups(over, scale_channels(series), facts.follows)
        view.order = list_order(over, facts.hidden)
    remember_range(view)
    if dynamics is not None:
        _state["sample"] = view
    return view


def _chain_of(parents: np.ndarray, i: int) -> list[int]:
    """Node ``i``'s chain from its root, root first."""
    out = [i]
    while parents[out[-1]] >= 0:
        out.append(int(parents[out[-1]]))
    return out[::-1]


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
    """One timeline marker per cause at its worst frame (``HI: torso squash f20``; the
    nodes without a scaled node above them: one per distinct worst frame), at most
    :data:`MARKER_LIMIT`, worst first, replacing this add-on's earlier ones (and the
    ``HI worst:`` markers of earlier versions); with ``show`` False only removes them.
    Returns how many were added."""
    for marker in [m for m in scene.timeline_markers if m.name.startswith((MARKER_PREFIX, "HI worst: "))]:
        scene.timeline_markers.remove(marker)
    if not show or view is None:
        return 0
    keys, over = view.series.keys, view.over
    wanted: dict[tuple[str, int], None] = {}
    for group in view.groups:
        if group.cause >= 0:
            wanted[(group.marker(keys), group.frame)] = None
            continue
        for frame in dict.fromkeys(int(f) for f in over.worst_frame[group.members]):
            wanted[(f"worst f{frame}", frame)] = None
    for name, frame in list(wanted)[:MARKER_LIMIT]:
        scene.timeline_markers.new(MARKER_PREFIX + name, frame=frame)
    return min(len(wanted), MARKER_LIMIT)


def register_handlers() -> None:
    if on_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(on_load)


def unregister_handlers() -> None:
    while on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(on_load)
    forget()
