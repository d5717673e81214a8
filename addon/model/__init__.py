"""The Blender-free domain layer: nodes as arrays, their inspection under one threshold
policy, the artist's explanations, what the panel and the overlay show, the report, and
what exports write (:mod:`.exports`). Imports numpy and the core only; its tests run
without bpy."""
