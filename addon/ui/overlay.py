"""The viewport overlay's draw handler: uploads the geometry built by
:func:`..model.overlay_geometry.overlay_lines` for the active chain or the last scan's
flagged nodes. Added by ``register()`` only when Blender has a GPU context (never in
background mode). The motion arrows (the active node's velocity and acceleration, global
and relative to its parent, and the inertial terms of its parent's motion, at the current
frame, from the last chain range scan or dynamics sample; nothing is evaluated while
drawing; geometry from :func:`..model.timeline.arrows.arrow_lines`) have a draw handler
of their own, :data:`ARROWS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bpy
import gpu
import numpy as np
from gpu_extras.batch import batch_for_shader

from ..model.inspection import Inspection
from ..model.overlay_geometry import overlay_indices, overlay_lines
from ..model.timeline.arrows import arrow_lines, node_arrows
from ..scene import live, settings
from ..scene.timeline import live as live_frames


def draw_lines(coords: np.ndarray, colours: np.ndarray, line_width: float) -> None:
    """Line endpoints ``(M, 3)`` and per-endpoint colours ``(M, 4)`` (float32), drawn
    over the scene (no depth test) with smooth, ``line_width``-pixel lines."""
    if not len(coords):
        return
    shader: Any = gpu.shader.from_builtin("POLYLINE_SMOOTH_COLOR")
    batch = batch_for_shader(shader, "LINES", {"pos": coords, "color": colours})
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("NONE")
    viewport: Any = gpu.state.viewport_get()
    shader.uniform_float("viewportSize", viewport[2:])
    shader.uniform_float("lineWidth", line_width)
    batch.draw(shader)
    gpu.state.blend_set("NONE")


class DrawHandler:
    """One POST_VIEW draw callback of the 3D viewport. ``draw()`` never raises: an
    error is printed once per distinct message (``reported`` keeps them)."""

    def __init__(self, draw: Callable[[], None], what: str) -> None:
        self._draw, self.what = draw, what
        self._handle: list = []
        self.reported: set[str] = set()

    def draw(self) -> None:
        try:
            self._draw()
        except Exception as exc:  # a draw callback must not spam the console every frame
            message = f"{type(exc).__name__}: {exc}"
            if message not in self.reported:
                self.reported.add(message)
                print(f"Hierarchy Inspector {self.what}: {message}")

    def add(self) -> None:
        if bpy.app.background or self._handle:
            return
        self._handle.append(bpy.types.SpaceView3D.draw_handler_add(self.draw, (), "WINDOW", "POST_VIEW"))

    def remove(self) -> None:
        while self._handle:
            bpy.types.SpaceView3D.draw_handler_remove(self._handle.pop(), "WINDOW")

    def active(self) -> bool:
        return bool(self._handle)


def overlay_nodes(context) -> tuple[Inspection, np.ndarray] | None:
    """What the overlay shows now: the active chain, or the last scan's flagged nodes
    (the worst N of the preferences, or one per cause), never an unflagged armature's
    cage (:func:`..model.overlay_geometry.overlay_indices`)."""
    scene_settings = getattr(context.scene, "hierarchy_inspector", None)
    if scene_settings is not None and scene_settings.overlay_scope == "FLAGGED":
        scan = live.last_scan()
        if scan is None:
            return None
        limit = settings.overlay_style(context).max_nodes
        per_cause = scene_settings.overlay_per_cause
        return scan, overlay_indices(scan, np.flatnonzero(scan.flagged), limit, per_cause)
    view = live.chain_view(context)
    return None if view is None else (view.inspection, overlay_indices(view.inspection, view.chain))


def _draw_overlay() -> None:
    context = bpy.context
    scene_settings = getattr(context.scene, "hierarchy_inspector", None)
    if scene_settings is None or not scene_settings.overlay:
        return
    shown = overlay_nodes(context)
    if shown is None:
        return
    style = settings.overlay_style(context)
    coords, colours = overlay_lines(*shown, style, axes=scene_settings.show_accumulated_axes)
    draw_lines(coords, colours, style.line_width)


HANDLER = DrawHandler(_draw_overlay, "overlay")
draw_overlay = HANDLER.draw  #: the POST_VIEW callback (never raises: an error is printed once)
add_draw_handler, remove_draw_handler, draw_handler_active = HANDLER.add, HANDLER.remove, HANDLER.active
_reported = HANDLER.reported


def _draw_arrows() -> None:
    context = bpy.context
    fs = getattr(context.scene, "hierarchy_inspector_frames", None)
    if fs is None or not (fs.show_motion_arrows or fs.show_inertial_arrows):
        return
    here = live_frames.dynamics_here(context)
    if here is None:
        return
    dynamics, t, i, parent_world, series = here
    vectors = node_arrows(dynamics, t, i, parent_world, fs.show_motion_arrows, fs.show_inertial_arrows)
    coords, colours = arrow_lines(series.world[t, i, :3, 3], vectors, settings.arrow_style(context))
    draw_lines(coords, colours, settings.overlay_style(context).line_width)


#: The motion arrows' draw handler (``ARROWS.draw`` never raises: an error is printed once).
ARROWS = DrawHandler(_draw_arrows, "arrows")
