"""What an export's read-back decides beyond its nodes, Blender-free: skinned meshes
checked by their vertices (:mod:`.skinned`), never worse than Blender's plain export
(:mod:`.plain`), and glTF files without unused parts (:mod:`.prune`)."""
