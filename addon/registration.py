"""``register()`` / ``unregister()``: everything added is removed, in reverse order.

Added, in order: preferences, property groups and the ``Scene.hierarchy_inspector``
pointer, operators, panels, app handlers, the overlay's draw handler (not in background
mode) and the ``hierarchy_inspector`` command-line command (Blender 4.2+).
"""

from __future__ import annotations

import bpy

from . import live, operators, operators_fix, overlay, panel, preferences, properties, scan

CLASSES = (
    *preferences.CLASSES,
    *properties.CLASSES,
    *operators.CLASSES,
    *scan.CLASSES,
    *operators_fix.CLASSES,
    *panel.CLASSES,
    *operators_fix.PANELS,
)

CLI_COMMAND = "hierarchy_inspector"
_cli_handle: list = []


def _run_cli(argv: list[str]) -> int:
    from .cli import main

    return main(argv)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    live.register_handlers()
    overlay.add_draw_handler()
    if hasattr(bpy.utils, "register_cli_command") and not _cli_handle:
        _cli_handle.append(bpy.utils.register_cli_command(CLI_COMMAND, _run_cli))


def unregister() -> None:
    while _cli_handle:
        bpy.utils.unregister_cli_command(_cli_handle.pop())
    overlay.remove_draw_handler()
    live.unregister_handlers()
    properties.unregister_properties()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
