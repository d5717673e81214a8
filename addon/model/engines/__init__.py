"""Engine paths (see :mod:`.paths`): what each engine shows from a file, Blender-free."""
