"""The Blender-facing layers of Hierarchy Inspector, one subpackage each; imports point
one way, ``ui``, ``cli`` -> ``scene`` -> ``model`` -> ``core``:

- ``model``: Blender-free domain logic (nodes, inspection, explanations, view models,
  reports, exports' data); its tests run without bpy.
- ``scene``: Blender adapters (reading scenes into arrays, verifying Blender's matrices,
  scene edits, exporter integration, the live cache).
- ``ui``: registered classes (preferences, properties, operators, panels, overlay) and
  ``register()`` / ``unregister()``.
- ``cli``: the command line and the demo.

Only ``scene``, ``ui`` and ``cli`` import bpy, mathutils, gpu or bmesh (``make lint``
enforces it). See ``docs/architecture.md``.
"""
