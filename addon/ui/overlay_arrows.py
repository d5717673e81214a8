"""The viewport's motion arrows: the active node's velocity and acceleration (global and
relative to its parent) and the inertial terms of its parent's motion, at the current
frame, from the last chain range scan or dynamics sample (nothing is evaluated while
drawing). Geometry from :func:`..model.timeline.arrows.arrow_lines`. A draw handler of its
own, added only when Blender has a GPU context (never in background mode).
"""

from __future__ import annotations

from typing import Any

import bpy
import gpu
from gpu_extras.batch import batch_for_shader

from ..model.timeline.arrows import arrow_lines, node_arrows
from ..scene import settings
from ..scene.timeline import live as live_frames

_reported: set[str] = set()


def draw_arrows() -> None:
    """POST_VIEW draw callback (never raises: an error is printed once)."""
    context = bpy.context
    fs = getattr(context.scene, "hierarchy_inspector_frames", None)
    if fs is None or not (fs.show_motion_arrows or fs.show_inertial_arrows):
        return
    try:
        here = live_frames.dynamics_here(context)
        if here is None:
            return
        dynamics, t, i, parent_world, series = here
        vectors = node_arrows(dynamics, t, i, parent_world, fs.show_motion_arrows, fs.show_inertial_arrows)
        coords, colours = arrow_lines(series.world[t, i, :3, 3], vectors, settings.arrow_style(context))
        if not len(coords):
            return
        shader: Any = gpu.shader.from_builtin("POLYLINE_SMOOTH_COLOR")
        batch = batch_for_shader(shader, "LINES", {"pos": coords, "color": colours})
        gpu.state.blend_set("ALPHA")
        gpu.state.depth_test_set("NONE")
        viewport: Any = gpu.state.viewport_get()
        shader.uniform_float("viewportSize", viewport[2:])
        shader.uniform_float("lineWidth", settings.overlay_style(context).line_width)
        batch.draw(shader)
        gpu.state.blend_set("NONE")
    except Exception as exc:  # a draw callback must not spam the console every frame
        message = f"{type(exc).__name__}: {exc}"
        if message not in _reported:
            _reported.add(message)
            print(f"Hierarchy Inspector arrows: {message}")


_handle: list = []


def add_draw_handler() -> None:
    if bpy.app.background or _handle:
        return
    _handle.append(bpy.types.SpaceView3D.draw_handler_add(draw_arrows, (), "WINDOW", "POST_VIEW"))


def remove_draw_handler() -> None:
    while _handle:
        bpy.types.SpaceView3D.draw_handler_remove(_handle.pop(), "WINDOW")
