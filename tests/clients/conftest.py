"""Real clients of the exported files, run under node (tests/js): three.js and the Khronos
glTF validator, on files exported in real Blender (bpy). ``make test`` runs them; the
Blender binary's run (make test-blender) and the other bpy versions (make test-versions)
do not collect this folder."""

from blender_fixtures import addon, empty_scene  # noqa: F401
