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


@pytest.fixture(scope="session")
def rigger_blend(tmp_path_factory) -> str:
    """A rigger's scene, built once per session and saved (open it with
    ``bpy.ops.wm.open_mainfile``): a generated Rigify human ('rig'; its 'metarig'
    hidden, 220 widgets in the excluded collection 'WGTS_rig'), the torso squashed
    most at frame 20, 'forearm_tweak.L' stretched most at frame 25, every control
    bone's rotation keyed over 40 frames, and a skinned mesh 'Body'
    (:func:`hierarchy_inspector.addon.scene.exports.scenes.rigger_rig`)."""
    from hierarchy_inspector.addon.scene.exports import scenes

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scenes.rigger_rig(bpy.context.scene)
    path = str(tmp_path_factory.mktemp("rigger") / "rigger.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    return path
