"""What exports and fixes write, Blender-free: the glTF file itself (:mod:`.gltf_file`),
how it maps to the scene and how far it is from Blender (:mod:`.gltf_check`), the
corrected TRS for accumulating engines (:mod:`.accumulated`), and which nodes the
helpers and the bake change (:mod:`.fix_plans`)."""
