"""The engine paths: how each consumer rebuilds a hierarchy from the file it is given.

Four paths (``docs/engines.md`` cites each engine's source or specification):

- ``matrix_model``: glTF viewers (three.js, Babylon.js), Godot and Unity compose the
  file's local TRS as matrices (glTF 2.0 node transforms; Unity's ``Transform``).
- ``unreal_fbx``: Unreal's classic FBX importer rebuilds each bone from the file's
  GLOBAL matrix (the FBX SDK composes the file's TRS as matrices), made an
  ``FTransform`` (its shear dropped), made relative to its parent's and composed again
  at run time: each node's world is its file global without the shear.
- ``unreal_interchange``: Unreal's Interchange importer (and the classic importer with
  "Preserve Local Transform") takes each node's LOCAL matrix as an ``FTransform`` and
  Unreal accumulates those at run time (``FTransform`` multiplication).
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
    UNREAL_INTERCHANGE: "Unreal Interchange",
    ACCUMULATED: "Ogre",
}

#: What each path stands for, in a sentence (messages, docs, the preference's tooltip).
DESCRIPTION = {
    MATRIX: "glTF viewers, Godot and Unity: the file's local TRS composed as matrices",
    UNREAL_FBX: "Unreal's classic FBX importer: each node's file global, its shear dropped",
    UNREAL_INTERCHANGE: (
        "Unreal's Interchange importer and 'Preserve Local Transform': the file's locals as FTransforms, accumulated"
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
    "ogre": ACCUMULATED,
}


def paths_of(engines) -> tuple[str, ...]:
    """The paths of ``--engine`` names (or paths), in :data:`PATHS` order; all for none."""
    chosen = {ENGINE_PATH.get(e, e) for e in engines or ()}
    unknown = chosen - set(PATHS)
    if unknown:
        raise ValueError(f"unknown engine {sorted(unknown)[0]!r}: expected one of {', '.join(ENGINE_PATH)}")
    return tuple(p for p in PATHS if p in chosen) if chosen else PATHS
