"""Hierarchy Inspector: find where Blender's matrix-composed world transforms differ
from what game engines will show (shear, accumulated scale), and export transforms
that survive.

This file is the Blender extension's entry point and the Python package's root. It
imports nothing from Blender at module import: the numpy core is usable anywhere
(``from hierarchy_inspector import core``), and the add-on is loaded by ``register()``.
"""

__version__ = "0.1.0"


def register() -> None:
    """Register the add-on's classes, properties, handlers, then its CLI command."""
    from .addon import cli, ui

    ui.register()
    cli.register_command()


def unregister() -> None:
    """Remove everything :func:`register` added, in reverse order."""
    from .addon import cli, ui

    cli.unregister_command()
    ui.unregister()
