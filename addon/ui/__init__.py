"""The UI layer: registered classes only, and ``register()`` / ``unregister()``.

Added, in order: preferences, property groups and the ``Scene.hierarchy_inspector``
pointer, the glTF exporter's "Keep shear exactly" extension, operators, the UI list, panels, the Add menu entry, app handlers, the overlay's
draw handler (not in background mode). ``unregister()`` removes everything in reverse
order. The command-line command is registered by :mod:`..cli` (see the package root).
"""

from __future__ import annotations

import bpy

from ..scene import live
from . import (
    gltf_extension,
    lists,
    operators_demo,
    operators_fix,
    operators_inspect,
    overlay,
    panels,
    preferences,
    properties,
)

CLASSES = (
    *preferences.CLASSES,
    *properties.CLASSES,
    *operators_inspect.CLASSES,
    *operators_fix.CLASSES,
    *operators_demo.CLASSES,
    *lists.CLASSES,
    *panels.CLASSES,
)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    gltf_extension.register()
    for menu, draw in operators_demo.MENUS:
        menu.append(draw)
    live.register_handlers()
    overlay.add_draw_handler()


def unregister() -> None:
    overlay.remove_draw_handler()
    live.unregister_handlers()
    for menu, draw in reversed(operators_demo.MENUS):
        menu.remove(draw)
    gltf_extension.unregister()
    properties.unregister_properties()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
