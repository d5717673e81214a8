"""The viewport's motion arrows: the active node's velocity and acceleration (global and
relative to its parent) and the inertial terms of its parent's motion, at the current
frame, from the last chain range scan or dynamics sample (nothing is evaluated while
drawing). Geometry from :func:`..model.timeline.arrows.arrow_lines`. A draw handler of its
own, added only when Blender has a GPU context (never in background mode).
"""

from __future__ import annotations

import bpy

from ..model.timeline.arrows import arrow_lines, node_arrows
from ..scene import settings
from ..scene.timeline import live as live_frames
from .overlay import DrawHandler, draw_lines


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


HANDLER = DrawHandler(_draw_arrows, "arrows")
draw_arrows = HANDLER.draw  #: the POST_VIEW callback (never raises: an error is printed once)
add_draw_handler, remove_draw_handler, draw_handler_active = HANDLER.add, HANDLER.remove, HANDLER.active
