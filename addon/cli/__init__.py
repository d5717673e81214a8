"""The command line: ``python -m hierarchy_inspector <command> ...`` (bpy from PyPI) or
``blender -b -c hierarchy_inspector <command> ...`` (an installed extension).

- :mod:`.main`: running a command and its exit code (the one place errors become codes);
  :mod:`.arguments`: the argument parser; :mod:`.console`: what the command line shows
  (exit codes, one-line messages, progress); :mod:`.process`: signals, Blender's module;
- :mod:`.commands`: ``report``, ``export``, ``fix``: the same scene-layer code as the
  panel and the operators;
- :mod:`.demo`: ``demo``, the main job on the built-in demo scene.
"""

from __future__ import annotations

from .main import main

CLI_COMMAND = "hierarchy_inspector"
_cli_handle: list = []


# bpy is imported where it is used: ``python -m hierarchy_inspector demo`` runs (and says
# what it skipped) where Blender's module is not installed.


def register_command() -> None:
    """``blender -c hierarchy_inspector ...`` (Blender 4.2+; older Blenders have no such
    commands and nothing is registered)."""
    import bpy

    if hasattr(bpy.utils, "register_cli_command") and not _cli_handle:
        _cli_handle.append(bpy.utils.register_cli_command(CLI_COMMAND, _blender_command))


def _blender_command(argv: list[str]) -> int:
    """``blender -b -c hierarchy_inspector``: Blender quits after it, quietly."""
    return main(argv, keep_quiet=True)


def unregister_command() -> None:
    import bpy

    while _cli_handle:
        bpy.utils.unregister_cli_command(_cli_handle.pop())
