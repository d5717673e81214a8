"""The frame range as a picture (PNG drawn with :mod:`..pictures`' numpy canvas, so it
works in a stock Blender): for the worst nodes of a range, world shear (solid) and local
shear (dotted) on top, the largest corner distance of both engine families from Blender
below (accumulated solid, exported TRS dashed), each node's worst frame marked, the
thresholds as grey lines."""

from __future__ import annotations

import numpy as np

from ..pictures.canvas import Canvas
from ..pictures.charts import FRAME, GRID, _tick, _write_png, nice_ticks
from .series import OverFrames

_NODE_COLOURS = ("#e03131", "#1c7ed6", "#2f9e44", "#f08c00", "#7048e8", "#0c8599", "#c2255c", "#5c940d")
_WIDTH, _LEFT, _RIGHT = 1000, 90, 240
_DASHED, _DOTTED = (7.0, 4.0), (2.0, 3.0)


def _axes(canvas: Canvas, frames: np.ndarray, top: float, bottom: float, peak: float, threshold: float, title: str):
    """Grid, ticks and title of one panel; returns ``(x(frame), y(value))`` mappers."""
    x0, x1 = _LEFT, _WIDTH - _RIGHT
    ticks = nice_ticks(max(peak, threshold, 1e-12))
    span = max(float(frames[-1] - frames[0]), 1.0)

    def x(f):
        return x0 + (np.asarray(f, dtype=float) - frames[0]) / span * (x1 - x0)

    def y(v):
        return bottom - np.asarray(v, dtype=float) / ticks[-1] * (bottom - top)

    for t in ticks:
        canvas.lines([[x0, y(t)]], [[x1, y(t)]], GRID, 1.0)
        canvas.text(x0 - 6, y(t) + 4, _tick(t), "#555555", anchor="right")
    for f in nice_ticks(span, 8) + frames[0]:
        if f <= frames[-1]:
            canvas.text(x(f), bottom + 16, f"{f:g}", "#555555", anchor="centre")
    canvas.lines([[x0, y(threshold)]], [[x1, y(threshold)]], "#868e96", 1.0, _DASHED)
    canvas.lines([[x0, top], [x0, bottom]], [[x0, bottom], [x1, bottom]], FRAME, 1.0)
    canvas.text(x0, top - 8, title)
    return x, y


def range_chart_png(over: OverFrames, path: str, count: int = 5, indices=None) -> list[str]:
    """Write the chart of the ``count`` worst nodes among ``indices`` (default: all)
    flagged at some frame; returns their labels (empty: the chart says nothing flagged)."""
    pool = np.flatnonzero(over.flagged)
    if indices is not None:
        pool = np.intersect1d(pool, np.asarray(indices, dtype=np.int64))
    order = [int(i) for i in over.worst_first(pool)[:count]]
    frames = np.asarray(over.frames, dtype=float)
    canvas = Canvas(_WIDTH, 640)
    canvas.text(
        14,
        26,
        f"Frames {frames[0]:g}..{frames[-1]:g}: the {len(order)} worst of {int(over.flagged.sum())} flagged",
        scale=2,
    )
    shear_peak = max(
        [float(over.shear[:, i].max()) for i in order] + [float(over.local_shear[:, i].max()) for i in order] + [0.0]
    )
    corner_peak = max([float(over.corner[:, i].max()) for i in order] + [0.0])
    sx, sy = _axes(
        canvas, frames, 70, 300, shear_peak, over.thresholds.shear_deg, "shear (deg): world solid, local dotted"
    )
    cx, cy = _axes(
        canvas,
        frames,
        370,
        600,
        corner_peak,
        over.thresholds.corner,
        "corner distance (units): accumulated solid, exported TRS dashed",
    )
    labels = []
    for k, i in enumerate(order):
        colour = _NODE_COLOURS[k % len(_NODE_COLOURS)]
        labels.append(over.series.label(i))
        canvas.polyline(np.stack([sx(frames), sy(over.shear[:, i])], axis=1), colour, 1.8)
        canvas.polyline(np.stack([sx(frames), sy(over.local_shear[:, i])], axis=1), colour, 1.2, _DOTTED)
        canvas.polyline(np.stack([cx(frames), cy(over.corner_accumulated[:, i])], axis=1), colour, 1.8)
        canvas.polyline(np.stack([cx(frames), cy(over.corner_matrix[:, i])], axis=1), colour, 1.2, _DASHED)
        t = int(over.worst_index[i])
        px, py = float(cx(frames[t])), float(cy(over.corner[t, i]))
        canvas.rect(px - 3, py - 3, px + 3, py + 3, colour)
        ly = 90 + 22 * k
        canvas.rect(_WIDTH - _RIGHT + 16, ly - 9, _WIDTH - _RIGHT + 30, ly + 1, colour)
        name = (
            labels[-1] if Canvas.text_width(labels[-1]) < _RIGHT - 50 else "~" + labels[-1][-int((_RIGHT - 60) // 7) :]
        )
        canvas.text(_WIDTH - _RIGHT + 36, ly, name)
    if not order:
        canvas.text(_WIDTH / 2, 180, "nothing flagged in the range", anchor="centre")
    _write_png(canvas, path)
    return labels
