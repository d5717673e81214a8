"""The Blender adapter layer: reading scenes into arrays (:mod:`.reading`), verifying
Blender's matrices (:mod:`.verify`), the scene scan and the live cache for the panel,
scene edits (helpers, bake), exporter integration, opening and saving .blend files. The
only layer below the UI that imports bpy; it hands arrays to :mod:`..model`."""
