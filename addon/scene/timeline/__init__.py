"""Frame ranges in Blender beyond reading them (:mod:`..frames`): what the UI keeps of
the last range scan (:mod:`.live`) and animated scenes for tests and benchmarks
(:mod:`.animated`)."""
