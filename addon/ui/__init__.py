"""The UI layer: registered classes only, and ``register()`` / ``unregister()``.

Added, in order: preferences, property groups and the ``Scene.hierarchy_inspector``
pointer, the glTF exporter's "Keep shear exactly" extension, operators, the UI list,
panels, the Add and File > Export menu entries, app handlers, the overlay's draw handler (not in background mode). ``unregister()`` removes everything in reverse
order. The command-line command is registered by :mod:`..cli` (see the package root).
"""

from __future__ import annotations

import bpy

from ..scene import live
from ..scene.timeline import live as live_frames
from . import (
    gltf_extension,
    lists,
    operators_demo,
    operators_export,
    operators_fix,
    operators_frames,
    operators_inspect,
    overlay,
    panels,
    panels_frames,
    preferences,
    properties,
    properties_frames,
)

CLASSES = (
    *preferences.CLASSES,
    *properties.CLASSES,
    *properties_frames.CLASSES,
    *operators_inspect.CLASSES,
    *operators_fix.CLASSES,
    *operators_export.CLASSES,
    *operators_demo.CLASSES,
    *operators_frames.CLASSES,
    *lists.CLASSES,
    *panels.CLASSES,
    *panels_frames.CLASSES,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    properties_frames.register_properties()
    gltf_extension.register()
    for menu, draw in (*operators_demo.MENUS, *operators_export.MENUS):
        menu.append(draw)
    live.register_handlers()
    live_frames.register_handlers()
    overlay.add_draw_handler()
    overlay.ARROWS.add()


def unregister() -> None:
    overlay.ARROWS.remove()
    overlay.remove_draw_handler()
    live_frames.unregister_handlers()
    live.unregister_handlers()
    for menu, draw in reversed((*operators_demo.MENUS, *operators_export.MENUS)):
        menu.remove(draw)
    gltf_extension.unregister()
    properties_frames.unregister_properties()
    properties.unregister_properties()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
