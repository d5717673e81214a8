"""The report's frame-range parts (``report --frames``): the top-level ``frames`` object,
each node's ``over_frames`` entry, their CSV columns and the range's text table.

Blender-free. :class:`RangeResults` ties the analysis of a range (:class:`~.timeline.OverFrames`,
optionally :class:`~.dynamics.RangeDynamics`) to the single-frame inspection's
node indices, which the report is built from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engines.paths import LABEL, PATHS
from ..errors import SceneDataError
from ..frames import FrameRange
from ..inspection import worst_first
from ..nodes import node_label
from ..text import fmt_num, format_table
from .dynamics import RangeDynamics
from .series import OverFrames

OVER_FRAMES_COLUMNS = (
    "worst_frame",
    "range_shear_max_deg",
    "range_local_shear_max_deg",
    "range_matrix_model_max_corner",
    "range_unreal_fbx_max_corner",
    "range_unreal_interchange_max_corner",
    "range_accumulated_max_corner",
    "range_flagged_frames",
)


@dataclass
class RangeResults:
    """A range's results for a report whose nodes are ``keys`` (the single-frame
    inspection's order): ``position[i]`` is node i's index in the range's series."""

    frame_range: FrameRange
    over: OverFrames
    position: np.ndarray
    dynamics: RangeDynamics | None = None

    @classmethod
    def for_keys(
        cls, keys: list, frame_range: FrameRange, over: OverFrames, dynamics: RangeDynamics | None = None
    ) -> RangeResults:
        """Match ``keys`` to the series' nodes; :class:`SceneDataError` naming a node the
        range does not have."""
        index = {k: j for j, k in enumerate(over.series.keys)}
        missing = [k for k in keys if k not in index]
        if missing:
            raise SceneDataError(
                f"'{node_label(*missing[0])}' is not in the frame range {frame_range.start}..{frame_range.end}: "
                "the scene's nodes change between frames"
            )
        return cls(frame_range, over, np.array([index[k] for k in keys], dtype=np.int64), dynamics)

    def entry(self, i: int) -> dict:
        """The ``over_frames`` entry of the report's node ``i``."""
        j = int(self.position[i])
        out = self.over.entry(j)
        if self.dynamics is not None:
            out["dynamics"] = self.dynamics.entry(j)
        return out

    def worst_shear(self, indices) -> np.ndarray:
        """:attr:`.over_frames.OverFrames.worst_shear` of the report's nodes ``indices``."""
        return self.over.worst_shear[self.position[np.asarray(indices, dtype=np.int64)]]

    def frames_entry(self, order) -> dict:
        """The top-level ``frames`` object: the range and its summary over ``order``."""
        return {**self.frame_range.as_dict(), **self.over.summary(self.position[np.asarray(order, dtype=np.int64)])}


def over_frames_cells(entry: dict) -> list:
    """The CSV cells of :data:`OVER_FRAMES_COLUMNS` for one node's report entry."""
    o = entry["over_frames"]
    return [
        o["worst_frame"],
        o["shear_deg"],
        o["local_shear_deg"],
        *(o["max_corner"][p] for p in PATHS),
        o["flagged_frames"],
    ]


def range_table(report: dict, limit: int = 15) -> str:
    """The nodes flagged at some frame of the range, worst first (largest corner distance
    over the range), with their worst frame and maxima; and the range's summary line."""
    f = report["frames"]
    nodes = report["nodes"]
    over = [e["over_frames"] for e in nodes]
    limits = report.get("thresholds")
    paths = tuple(limits.get("engines", PATHS)) if limits else PATHS
    corner = np.array([max(o["max_corner"][p] for p in paths) for o in over])
    shear = np.array([o["shear_deg"] for o in over])
    flagged = [k for k, o in enumerate(over) if o["flagged_frames"]]
    order = worst_first(corner, shear, flagged) if nodes else np.zeros(0, dtype=np.int64)
    head = (
        f"Frames {f['start']}..{f['end']} (step {f['step']}, {f['count']} frames): {f['flagged']} of {len(nodes)} "
        f"nodes flagged at some frame; max shear {f['max_shear_deg']:.2f} deg, "
        f"max corner deviation {f['max_deviation']:.4g}"
        + (f" (frame {f['worst_frame']})" if f.get("worst_frame") is not None else "")
    )
    rows = []
    for k in order[:limit]:
        e, o = nodes[k], over[k]
        rows.append(
            (
                node_label(e["armature"] or e["name"], e["name"] if e["armature"] else ""),
                str(o["worst_frame"]),
                str(o["flagged_frames"]),
                fmt_num(o["shear_deg"], 2),
                fmt_num(o["local_shear_deg"], 2),
                *(fmt_num(o["max_corner"][p]) for p in paths),
            )
        )
    notes = "".join(f"\n{line}" for line in singular_lines(nodes, limit))
    if not rows:
        return head + notes
    headers = ("node", "worst frame", "frames flagged", "max shear", "max local shear", *(LABEL[p] for p in paths))
    more = f"\n... and {len(order) - limit} more" if len(order) > limit else ""
    return f"{head}\n{format_table(headers, rows)}{more}{notes}"


def singular_lines(nodes: list[dict], limit: int = 15, frames_shown: int = 5) -> list[str]:
    """One line per report node whose parent has no inverse at some frames of the range
    (``singular_parent_frames``): the single-frame warning's words, with those frames."""
    lines = []
    for e in nodes:
        frames = e["over_frames"].get("singular_parent_frames")
        if not frames:
            continue
        label = node_label(e["armature"] or e["name"], e["name"] if e["armature"] else "")
        shown = ", ".join(str(f) for f in frames[:frames_shown])
        if len(frames) > frames_shown:
            shown += f" and {len(frames) - frames_shown} more"
        lines.append(
            f"'{label}': its parent has zero scale on an axis at frame{'s' if len(frames) > 1 else ''} {shown}; "
            "its local transform is undefined there"
        )
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit} more nodes with a collapsed parent"]
    return lines
