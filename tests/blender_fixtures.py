"""Fixtures for tests that run in real Blender (bpy from PyPI, or the real binary).

When the suite runs inside a Blender binary with the extension installed, the runner
sets ``HIERARCHY_INSPECTOR_MODULE`` to the installed module's name (the add-on is then
already registered by Blender); otherwise the package is registered here.
"""

from __future__ import annotations

import importlib
import os

import pytest

bpy = pytest.importorskip("bpy")


@pytest.fixture
def empty_scene():
    """A fresh, empty Blender session (factory settings, no objects)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy.context.scene


@pytest.fixture
def addon(empty_scene):
    """The add-on, registered, on an empty scene; yields the package module."""
    installed = os.environ.get("HIERARCHY_INSPECTOR_MODULE")
    if installed:
        # A factory reset disables the installed extension; enable it the way Blender
        # tracks (a bare register() would leave it registered behind Blender's back).
        import addon_utils

        if not addon_utils.check(installed)[1]:
            addon_utils.enable(installed, default_set=True)
        yield importlib.import_module(installed)
        return
    import hierarchy_inspector as module

    module.register()
    try:
        yield module
    finally:
        module.unregister()
