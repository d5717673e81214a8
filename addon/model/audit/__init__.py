"""Auditing many .blend files: the records (:mod:`.records`: JSON Lines, shards, resume,
merge, the summary table) and the HTML page (:mod:`.page`). Blender-free."""
