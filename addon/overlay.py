"""The viewport overlay: each node's box as Blender places it (coloured by skew) and as
accumulating engines place it, with the local axes along which they apply scale.

:func:`overlay_lines` builds the geometry with numpy (tested without a GPU); the draw
handler only uploads it. The handler is added by ``register()`` only when Blender has
a GPU context (never in background mode).
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from . import live, preferences
from .inspection import Inspection

#: The 12 edges of a box as pairs of corner indices (corners: X varies fastest).
BOX_EDGES = np.array(
    [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]], dtype=np.int64
)
_UNIT = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64)
_AXIS_COLOURS = np.array([[1.0, 0.25, 0.25, 1.0], [0.3, 1.0, 0.3, 1.0], [0.35, 0.5, 1.0, 1.0]])


def skew_colours(shear_deg: np.ndarray, prefs: preferences.Settings) -> np.ndarray:
    """``(K, 4)`` colours: the Blender box colour when unsheared, else a ramp from the
    slight to the strong skew colour reaching it at ``skew_full_scale_deg``."""
    low, high = np.array(prefs.colour_skew_low), np.array(prefs.colour_skew_high)
    t = np.clip(shear_deg / prefs.skew_full_scale_deg, 0.0, 1.0)[:, None]
    ramp = low + (high - low) * t
    return np.where((shear_deg > prefs.shear_threshold_deg)[:, None], ramp, np.array(prefs.colour_blender))


def _box_lines(matrices: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(K * 24, 3)`` line endpoints of the boxes placed by ``matrices (K, 4, 4)``."""
    corners = lo[:, None, :] + _UNIT * (hi - lo)[:, None, :]
    placed = np.einsum("kij,kcj->kci", matrices[:, :3, :3], corners) + matrices[:, None, :3, 3]
    return placed[:, BOX_EDGES].reshape(-1, 3)


def overlay_lines(inspection: Inspection, indices, prefs: preferences.Settings, axes: bool = True):
    """Line endpoints ``(M, 3)`` and per-endpoint colours ``(M, 4)`` for the overlay.

    Per node: the Blender box (skew-coloured), the accumulated box, and with ``axes``
    the accumulated local axes from the box centre, each as long as the box's half
    extent times the accumulated scale on that axis.
    """
    idx = np.asarray(indices, dtype=np.int64)
    if idx.size == 0:
        return np.zeros((0, 3), dtype=np.float32), np.zeros((0, 4), dtype=np.float32)
    nodes, a = inspection.nodes, inspection.analysis
    lo, hi = nodes.box_min[idx], nodes.box_max[idx]
    parts = [_box_lines(nodes.world[idx], lo, hi), _box_lines(a.accumulated_matrix[idx], lo, hi)]
    colours = [
        np.repeat(skew_colours(inspection.shear_max[idx], prefs), 24, axis=0),
        np.tile(np.array(prefs.colour_accumulated), (idx.size * 24, 1)),
    ]
    if axes:
        acc = a.accumulated_matrix[idx]
        centre = 0.5 * (lo + hi)
        origin = np.einsum("kij,kj->ki", acc[:, :3, :3], centre) + acc[:, :3, 3]
        half = 0.5 * (hi - lo)
        ends = origin[:, None, :] + np.swapaxes(acc[:, :3, :3], 1, 2) * half[:, :, None]  # (K, axis, 3)
        pairs = np.stack((np.repeat(origin[:, None, :], 3, axis=1), ends), axis=2)  # (K, 3, 2, 3)
        parts.append(pairs.reshape(-1, 3))
        colours.append(np.tile(np.repeat(_AXIS_COLOURS, 2, axis=0), (idx.size, 1)))
    return np.concatenate(parts).astype(np.float32), np.concatenate(colours).astype(np.float32)


def overlay_nodes(context) -> tuple[Inspection, np.ndarray] | None:
    """What the overlay shows now: the active chain, or the last scan's flagged nodes."""
    settings = getattr(context.scene, "hierarchy_inspector", None)
    if settings is not None and settings.overlay_scope == "FLAGGED":
        scan = live.last_scan()
        return None if scan is None else (scan, np.flatnonzero(scan.flagged))
    view = live.chain_view(context)
    return None if view is None else (view.inspection, np.asarray(view.chain))


_reported: set[str] = set()


def draw_overlay() -> None:
    """POST_VIEW draw callback (never raises: an error is printed once)."""
    context = bpy.context
    settings = getattr(context.scene, "hierarchy_inspector", None)
    if settings is None or not settings.overlay:
        return
    try:
        import gpu
        from gpu_extras.batch import batch_for_shader

        shown = overlay_nodes(context)
        if shown is None:
            return
        prefs = preferences.settings(context)
        coords, colours = overlay_lines(*shown, prefs, axes=settings.show_accumulated_axes)
        if not len(coords):
            return
        shader: Any = gpu.shader.from_builtin("POLYLINE_SMOOTH_COLOR")
        batch = batch_for_shader(shader, "LINES", {"pos": coords, "color": colours})
        gpu.state.blend_set("ALPHA")
        gpu.state.depth_test_set("NONE")
        viewport: Any = gpu.state.viewport_get()
        shader.uniform_float("viewportSize", viewport[2:])
        shader.uniform_float("lineWidth", prefs.line_width)
        batch.draw(shader)
        gpu.state.blend_set("NONE")
    except Exception as exc:  # a draw callback must not spam the console every frame
        message = f"{type(exc).__name__}: {exc}"
        if message not in _reported:
            _reported.add(message)
            print(f"Hierarchy Inspector overlay: {message}")


_handle: list = []


def add_draw_handler() -> None:
    if bpy.app.background or _handle:
        return
    _handle.append(bpy.types.SpaceView3D.draw_handler_add(draw_overlay, (), "WINDOW", "POST_VIEW"))


def remove_draw_handler() -> None:
    while _handle:
        bpy.types.SpaceView3D.draw_handler_remove(_handle.pop(), "WINDOW")


def draw_handler_active() -> bool:
    return bool(_handle)
