"""The FBX exports' plans, Blender-free: what Blender's FBX exporter must be shown so
that the file holds what an engine needs. Blender's exporter has no hook to change what
it writes, so the scene itself is changed for the length of the export (an
*export-ready copy*), as a plan says: :mod:`.facts` (what the plans need to know about
the scene, read in one pass by ``scene/exports/fbx_facts.py``), :mod:`.copy_plan` (the
plan's shape: helpers, keys, what is muted, and Blender's pose channels for a bone's
local), :mod:`.exact` (the exact file: helpers with the split, Euler-pole turns, what is
left out and why), :mod:`.readers` (constraints that would compute something else in
the copy), :mod:`.accumulated` (the file right for accumulating engines, and its
check). ``scene/edits/fbx_copy.py`` applies a plan and undoes it."""
