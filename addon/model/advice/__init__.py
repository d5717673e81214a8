"""What to do about a flagged node, Blender-free: the cause groups of a scan
(:mod:`.causes`), the advice per node and engine path (:mod:`.actions`), and what a
fix changed (:mod:`.after_fix`), what each path's export leaves (:mod:`.residuals`)."""
