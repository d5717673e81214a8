"""The scene layer's tests run in real Blender (bpy from PyPI, or the real binary)."""

from blender_fixtures import addon, empty_scene, rigger_blend  # noqa: F401
