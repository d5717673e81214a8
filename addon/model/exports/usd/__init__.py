"""The USD export's plan and check, Blender-free: :mod:`.plan` (which object prims get a
matrix op and which joints a helper, numpy and the core only), :mod:`.stage` (the plan
applied to the stage, in a usd-core process of its own), :mod:`.check` (that process
started and fed, Blender's side of the request, the read-back compared).
``scene/exports/usd_export.py`` runs Blender's exporter and then the check."""
