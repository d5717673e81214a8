"""Everything that touches Blender: reading scenes into arrays, the panel, the overlay,
operators, preferences and the command line. ``core`` never imports from here."""
