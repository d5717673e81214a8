"""``report --frames``: the frame range parsed before anything is opened, read from the
scene (one evaluation and bulk reads per frame), analysed in one pass, and with
``--dynamics`` the rates at every frame of the range."""

from __future__ import annotations

from ... import core
from ..model.errors import UsageError
from ..model.frames import FrameRange, parse_frame_range
from ..model.inspection import Inspection, local_matrices_of
from ..model.report_frames import RangeResults
from ..model.timeline import analyse_frames
from ..model.timeline_dynamics import range_dynamics
from ..scene.frames import read_frames
from .main import say

#: Ranges of more node-frames than this report progress on stderr.
PROGRESS_NODE_FRAMES = 200_000


def check_range(text: str | None) -> None:
    """Refuse a malformed ``--frames`` before the file is opened (``scene`` needs the file)."""
    if text is not None and text.strip() != "scene":
        parse_frame_range(text)


def scene_range(scene, text: str) -> FrameRange:
    return parse_frame_range(text, (scene.frame_start, scene.frame_end))


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
    dynamics = None
    if with_dynamics:
        t_count, n = series.world.shape[:2]
        tiled = core.Hierarchy(series.parents).tile(t_count).parents
        local, singular = local_matrices_of(series.world.reshape(-1, 4, 4), tiled)
        dynamics = range_dynamics(
            series.world,
            local.reshape(t_count, n, 4, 4),
            singular.reshape(t_count, n),
            series.parents,
            frame_range.step / series.fps,
        )
    return RangeResults.for_keys(inspection.nodes.keys, frame_range, over, dynamics)
