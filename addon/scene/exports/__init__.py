"""Exports that survive animation, in Blender: glTF exact at every frame
(:mod:`.gltf_animated`, the one implementation behind the command line, the panel and
the export dialog's option in :mod:`.gltf_hook`), FBX through an export-ready copy
(:mod:`.fbx_export`), and the scenes their tests and benchmark use (:mod:`.scenes`)."""
