"""The engine paths: how each consumer rebuilds a hierarchy from the file it is given.

Four paths (``docs/engines.md`` cites each engine's source or specification):

- ``matrix_model``: glTF viewers (three.js, Babylon.js), Godot and Unity compose the
  file's local TRS as matrices (glTF 2.0 node transforms; Unity's ``Transform``).
- ``unreal_fbx``: Unreal's FBX import of animated bones (the classic importer, and
  Interchange since Unreal 5.4): each key is ``FTransform(global)`` made relative to
  ``FTransform(parent global)`` (``GetRelativeTransform``), the globals being the file's
  TRS composed as matrices, and composed again at run time: each bone's world is its
  file global without the shear.
- ``unreal_interchange``: what Unreal builds from each node's LOCAL matrix
  (``FTransform(parent global^-1 @ global)``), accumulated at run time by ``FTransform``
  multiplication: object hierarchies imported into a level (both importers), the
  skeleton's reference pose, Interchange's animation before Unreal 5.4 and the classic
  importer with "Preserve Local Transform".
- ``accumulated``: Ogre's ``Node`` (and anything that sets the file's TRS and combines
  translation, rotation and scale separately): the file's local TRS accumulated.

The command line names engines (``--engine``); :data:`ENGINE_PATH` maps them to paths.
"""

from __future__ import annotations

MATRIX = "matrix_model"
UNREAL_FBX = "unreal_fbx"
UNREAL_INTERCHANGE = "unreal_interchange"
ACCUMULATED = "accumulated"

#: Every path, in the order reports and the panel list them.
PATHS = (MATRIX, UNREAL_FBX, UNREAL_INTERCHANGE, ACCUMULATED)

#: Short labels (panel rows, tables).
LABEL = {
    MATRIX: "glTF, Unity, Godot",
    UNREAL_FBX: "Unreal FBX",
    UNREAL_INTERCHANGE: "Unreal locals",
    ACCUMULATED: "Ogre",
}

#: What each path stands for, in a sentence (messages, docs, the preference's tooltip).
DESCRIPTION = {
    MATRIX: "glTF viewers, Godot and Unity: the file's local TRS composed as matrices",
    UNREAL_FBX: (
        "Unreal's FBX import of animated bones (classic importer; Interchange since 5.4): each node's file global "
        "without its shear"
    ),
    UNREAL_INTERCHANGE: (
        "Unreal from each node's local matrix: objects imported into a level, reference poses, Interchange before 5.4 "
        "and 'Preserve Local Transform'"
    ),
    ACCUMULATED: "Ogre and engines that combine translation, rotation and scale separately: the file's TRS accumulated",
}

#: ``--engine`` names -> path.
ENGINE_PATH = {
    "gltf": MATRIX,
    "unity": MATRIX,
    "godot": MATRIX,
    "unreal": UNREAL_FBX,
    "unreal-interchange": UNREAL_INTERCHANGE,
    "unreal-locals": UNREAL_INTERCHANGE,
    "ogre": ACCUMULATED,
}


def paths_of(engines) -> tuple[str, ...]:
    """The paths of ``--engine`` names (or paths), in :data:`PATHS` order; all for none."""
    chosen = {ENGINE_PATH.get(e, e) for e in engines or ()}
    unknown = chosen - set(PATHS)
    if unknown:
        raise ValueError(f"unknown engine {sorted(unknown)[0]!r}: expected one of {', '.join(ENGINE_PATH)}")
    return tuple(p for p in PATHS if p in chosen) if chosen else PATHS
