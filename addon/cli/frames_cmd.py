"""``report --frames``: the frame range parsed before anything is opened, read from the
scene (one evaluation and bulk reads per frame), analysed in one pass, and with
``--dynamics`` the rates at every frame of the range."""

from __future__ import annotations

import numpy as np

from ..model.errors import UsageError
from ..model.frames import FrameRange, parse_frame_range
from ..model.inspection import Inspection
from ..model.system.memory import check_memory
from ..model.timeline import analyse_frames
from ..model.timeline.chart import range_chart_png
from ..model.timeline.dynamics import series_dynamics
from ..model.timeline.report import RangeResults
from ..scene.frames import read_frames
from .console import say

#: Ranges of more node-frames than this report progress on stderr.
PROGRESS_NODE_FRAMES = 200_000


def check_range(text: str | None) -> None:
    """Refuse a malformed ``--frames`` before the file is opened (``scene`` needs the file)."""
    if text is not None and text.strip() != "scene":
        parse_frame_range(text)


def scene_range(scene, text: str) -> FrameRange:
    return parse_frame_range(text, (scene.frame_start, scene.frame_end))


def check_range_memory(scene, args, job: str, nodes: int | None = None) -> None:
    """Refuse ``--frames`` when ``job`` over it would take more memory than this process
    may use (:func:`~..model.system.memory.check_memory`), before anything is read or exported.
    ``nodes``: default the scene's objects and pose bones."""
    if nodes is None:
        nodes = len(scene.objects) + sum(len(o.pose.bones) for o in scene.objects if o.pose is not None)
    count = scene_range(scene, args.frames).count()
    check_memory(job, nodes, count, f"--frames {args.frames}", getattr(args, "max_memory", None))


def range_results(scene, inspection: Inspection, text: str, thresholds, with_dynamics: bool) -> RangeResults:
    """Read ``scene`` over the range ``text`` and analyse it for ``inspection``'s nodes.
    The scene is left on the frame it was on."""
    frame_range = scene_range(scene, text)
    frames = frame_range.frames()
    if with_dynamics and len(frames) < 3:
        raise UsageError(f"--dynamics with --frames needs at least 3 frames, {text!r} has {len(frames)}")
    progress = None
    if len(frames) * len(inspection.nodes) > PROGRESS_NODE_FRAMES:
        step = max(1, len(frames) // 10)

        def progress(fraction, message):
            done = round(fraction * len(frames))
            if done % step == 0:
                say(f"{int(100 * fraction):3d}% read ({message})")

    series = read_frames(scene, frames, progress=progress)
    over = analyse_frames(series, thresholds)
    dynamics = series_dynamics(series, frame_range.step) if with_dynamics else None
    return RangeResults.for_keys(inspection.nodes.keys, frame_range, over, dynamics)


def write_chart(path: str, results: RangeResults, indices) -> None:
    """The range chart of the report's nodes (``indices``: inspection indices, None: all)."""
    nodes = None if indices is None else results.position[np.asarray(indices, dtype=np.int64)]
    range_chart_png(results.over, path, indices=nodes)
