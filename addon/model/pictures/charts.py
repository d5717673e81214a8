"""The two pictures, drawn with :class:`.canvas.Canvas` (numpy + zlib only, so they work
in a stock Blender, whose Python has no plotting library).

- :func:`worst_nodes_png`: for the worst nodes, the box as Blender places it, as a glTF
  viewer composes the exported TRS, and as an accumulating engine places it (orthographic
  view from azimuth -60 deg, elevation 30 deg, Z up; equal scale on all axes).
- :func:`deviation_chart_png`: corner deviation per flagged node for both engine
  families, with the shear Blender shows.
"""

from __future__ import annotations

import math

import numpy as np

from ..inspection import Inspection
from ..outputs import write_with
from ..overlay_geometry import box_edges
from .canvas import LINE_HEIGHT, Canvas

#: (legend, colour, dash (on, off) pixels or None, width pixels) per placement.
MODEL_STYLES = (
    ("Blender", "#303030", None, 2.2),
    ("exported TRS (glTF, Unity, Godot)", "#f08c00", (7.0, 4.0), 1.6),
    ("accumulated (Unreal, Ogre)", "#1c7ed6", None, 1.6),
)
SHEAR_RED, GRID, FRAME = "#e03131", "#e6e6e6", "#bdbdbd"
PANEL_W, PANEL_H, HEADER = 520, 440, 64


def view_basis(azimuth_deg: float = -60.0, elevation_deg: float = 30.0) -> np.ndarray:
    """``(2, 3)``: the screen's right and up directions in world space (Z up)."""
    a, e = math.radians(azimuth_deg), math.radians(elevation_deg)
    right = np.array([-math.sin(a), math.cos(a), 0.0])
    up = np.array([-math.sin(e) * math.cos(a), -math.sin(e) * math.sin(a), math.cos(e)])
    return np.stack([right, up])


def _write_png(canvas: Canvas, path: str) -> None:
    data = canvas.png()

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    write_with(path, write)


def _legend(canvas: Canvas, x: float, y: float) -> None:
    for name, colour, dash, width in MODEL_STYLES:
        canvas.lines([[x, y - 4]], [[x + 30, y - 4]], colour, width, dash)
        x += 38 + canvas.text(x + 38, y, name) + 24


def _panel(canvas: Canvas, x0: float, y0: float, inspection: Inspection, i: int) -> str:
    nodes, a = inspection.nodes, inspection.analysis
    label = nodes.label(i)
    canvas.rect(x0 + 4, y0 + 4, x0 + PANEL_W - 4, y0 + 5, FRAME)
    canvas.text(x0 + 14, y0 + 22, label)
    canvas.text(
        x0 + 14,
        y0 + 22 + LINE_HEIGHT,
        f"shear {inspection.shear_max[i]:.1f} deg; corners off: exported "
        f"{a.matrix_model_deviation.max_corner[i]:.2f}, accumulated {a.accumulated_deviation.max_corner[i]:.2f}",
        "#555555",
    )
    lo, hi = nodes.box_min[i], nodes.box_max[i]
    placements = (nodes.world[i], a.world_matrix_model[i], a.accumulated_matrix[i])
    edges = np.stack([box_edges(m[None], lo[None], hi[None])[0] for m in placements])  # (3, 12, 2, 3)
    basis = view_basis()
    flat = edges @ basis.T  # (3, 12, 2, 2): screen x right, y up
    top, bottom, side = y0 + 60, y0 + PANEL_H - 40, 30
    span = np.ptp(flat.reshape(-1, 2), axis=0).max()
    scale = min(PANEL_W - 2 * side, bottom - top) / max(span, 1e-9)
    centre = (flat.reshape(-1, 2).max(axis=0) + flat.reshape(-1, 2).min(axis=0)) / 2
    mid = np.array([x0 + PANEL_W / 2, (top + bottom) / 2])
    screen = (flat - centre) * scale * np.array([1.0, -1.0]) + mid
    for (_name, colour, dash, width), segs in zip(MODEL_STYLES, screen, strict=True):
        canvas.lines(segs[:, 0], segs[:, 1], colour, width, dash)
    # The world axes, for orientation.
    origin = np.array([x0 + 34, y0 + PANEL_H - 22])
    for axis, colour, name in ((0, "#c92a2a", "X"), (1, "#2b8a3e", "Y"), (2, "#1864ab", "Z")):
        tip = origin + (basis[:, axis] * np.array([1.0, -1.0])) * 18
        canvas.lines([origin], [tip], colour, 1.5)
        canvas.text(tip[0] + 2, tip[1] + 4, name, colour)
    return label


def worst_nodes_png(inspection: Inspection, path: str, count: int = 4) -> list[str]:
    """Draw the ``count`` worst nodes' boxes in all three placements; returns their labels."""
    order = inspection.worst_first()[:count]
    if not len(order):
        order = np.arange(min(count, len(inspection.nodes)))
    cols = max(1, min(2, len(order)))
    rows = max(1, math.ceil(len(order) / cols))
    canvas = Canvas(cols * PANEL_W, HEADER + rows * PANEL_H)
    canvas.text(14, 26, "Where each engine family puts the worst nodes", scale=2)
    _legend(canvas, 14, 52)
    labels = []
    for k, i in enumerate(order):
        r, c = divmod(k, cols)
        labels.append(_panel(canvas, c * PANEL_W, HEADER + r * PANEL_H, inspection, int(i)))
    if not len(order):
        canvas.text(14, HEADER + 30, "no nodes")
    _write_png(canvas, path)
    return labels


def nice_ticks(top: float, count: int = 5) -> np.ndarray:
    """Round tick values from 0 to at least ``top`` (steps of 1, 2 or 5 x 10^k)."""
    top = max(float(top), 1e-12)
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return np.arange(math.ceil(top / step - 1e-9) + 1) * step


def _tick(v: float) -> str:
    return f"{v:.3g}"


def _bars(canvas: Canvas, x0: float, x1: float, top: float, bottom: float, series, title: str) -> None:
    """Horizontal bars: ``series`` is ``[(values (n,), colour, offset, thickness)]``."""
    peak = max([float(np.max(v)) for v, *_ in series if len(v)] + [0.0])
    ticks = nice_ticks(peak if peak > 0 else 1.0)
    scale = (x1 - x0) / ticks[-1]
    for t in ticks:
        x = x0 + t * scale
        canvas.lines([[x, top]], [[x, bottom]], GRID, 1.0)
        canvas.text(x, bottom + 16, _tick(t), "#555555", anchor="centre")
    for values, colour, offsets, thickness in series:
        for v, y in zip(values, offsets, strict=True):
            canvas.rect(x0, y - thickness / 2, x0 + v * scale, y + thickness / 2, colour)
    canvas.lines([[x0, top], [x0, bottom]], [[x0, bottom], [x1, bottom]], FRAME, 1.0)
    canvas.text((x0 + x1) / 2, bottom + 34, title, anchor="centre")


def deviation_chart_png(inspection: Inspection, path: str, limit: int = 30) -> int:
    """Bar chart of corner deviation per flagged node (both engine families) and the
    shear Blender shows; returns the number of nodes drawn."""
    order = inspection.worst_first()[:limit]
    nodes, a = inspection.nodes, inspection.analysis
    n = len(order)
    labels = [nodes.label(int(i)) for i in order]
    label_w = min(280.0, max([Canvas.text_width(s) for s in labels] + [60.0])) + 16
    row, top = 26, 74
    height = int(top + max(n, 3) * row + 60)
    width = 1100
    canvas = Canvas(width, height)
    canvas.text(14, 26, f"{n} flagged nodes of {len(nodes)}", scale=2)
    x = 14 + canvas.text(14, 52, "largest corner distance from Blender: ")
    for name, colour in (("exported TRS", MODEL_STYLES[1][1]), ("accumulated", MODEL_STYLES[2][1])):
        canvas.rect(x, 43, x + 14, 53, colour)
        x += 20 + canvas.text(x + 20, 52, name) + 18
    canvas.rect(x, 43, x + 14, 53, SHEAR_RED)
    canvas.text(x + 20, 52, "shear in Blender")
    bottom = top + max(n, 3) * row
    if not n:
        canvas.text(width / 2, (top + bottom) / 2, "nothing flagged", anchor="centre")
        _write_png(canvas, path)
        return 0
    centres = top + row * (np.arange(n) + 0.5)
    for label, y in zip(labels, centres, strict=True):
        shown = label if Canvas.text_width(label) <= label_w - 16 else label[: int((label_w - 16) // 7) - 1] + "~"
        canvas.text(label_w - 8, y + 4, shown, anchor="right")
    split = label_w + (width - label_w) * 0.62
    _bars(
        canvas,
        label_w,
        split - 30,
        top,
        bottom,
        [
            (a.matrix_model_deviation.max_corner[order], MODEL_STYLES[1][1], centres - 5, 9),
            (a.accumulated_deviation.max_corner[order], MODEL_STYLES[2][1], centres + 5, 9),
        ],
        "largest corner distance from Blender (scene units)",
    )
    _bars(
        canvas,
        split,
        width - 30,
        top,
        bottom,
        [(inspection.shear_max[order], SHEAR_RED, centres, 12)],
        "shear in Blender (degrees)",
    )
    _write_png(canvas, path)
    return n
