"""Each engine path run on a file: the world matrices the engine shows.

Pure functions of an :class:`~.files.ExportedFile` (Blender-free, vectorised: a fold per
path, no per-node Python). :func:`engine_worlds` gives, per Blender node, the world the
engine puts it at; :func:`engine_deviations` compares that with Blender's world.

- ``matrix_model``: the file's TRS matrices multiplied root to leaf.
- ``unreal_fbx``: the classic importer, per node and time,
  ``LocalTransform = FTransform(global).GetRelativeTransform(FTransform(parent global))``
  with ``global`` the FBX SDK's ``EvaluateGlobalTransform`` (the file's TRS composed as
  matrices) and ``FTransform(global)`` modelled by :func:`core.unreal_math.from_matrix`
  (the SDK's ``FbxAMatrix::GetQ / GetS`` are closed source: see docs/engines.md); at run
  time ``Local * ParentWorld``. For positive, non-tiny scales the two steps cancel
  exactly and each world is ``FTransform(global)``; otherwise the chain is run as Unreal
  runs it, level by level.
- ``unreal_interchange``: ``FTransform(parent global^-1 @ global)`` per node (the file's
  local matrix), accumulated by ``FTransform`` multiplication (level by level where a
  scale is negative: Unreal's matrix path is not associative).
- ``accumulated``: the file's TRS accumulated (:meth:`core.Hierarchy.accumulate`).
"""

from __future__ import annotations

import numpy as np

from .... import core
from ....core import unreal_math as ue
from ....core.fold import FoldSchedule
from .files import ExportedFile
from .paths import ACCUMULATED, MATRIX, PATHS, UNREAL_FBX, UNREAL_INTERCHANGE


def _levels(hierarchy: core.Hierarchy) -> FoldSchedule:
    """A fold one depth level at a time (``out[i] = compose(out[parent], value[i])`` with
    the parent's final value: right for operations that are not associative)."""
    return FoldSchedule(hierarchy.parents, hierarchy.depth, block=max(hierarchy.max_depth + 1, 1))


def _simple(*scales: np.ndarray) -> bool:
    """No scale negative or within ``UE_SMALL_NUMBER`` of zero: Unreal's component path
    everywhere, where its operations are the accumulated model's."""
    return all(bool((s > ue.SMALL_NUMBER).all()) for s in scales)


def file_matrices(file: ExportedFile) -> np.ndarray:
    """The file's globals ``(F, 4, 4)``: its TRS composed as matrices."""
    return core.Hierarchy(file.parents).world_matrices(file.local.to_matrix())


def _matrix(file: ExportedFile, hierarchy: core.Hierarchy) -> np.ndarray:
    return hierarchy.world_matrices(file.local.to_matrix())


def _accumulated(file: ExportedFile, hierarchy: core.Hierarchy) -> np.ndarray:
    return hierarchy.accumulate(file.local).to_matrix()


def _interchange(file: ExportedFile, hierarchy: core.Hierarchy, globals_=None) -> np.ndarray:
    # As the importer does: each local from the globals (the file's local wherever the
    # parent's global inverts well; below a zero scale Unreal's inverse is the identity).
    globals_ = _matrix(file, hierarchy) if globals_ is None else globals_
    local_m = globals_.copy()
    has = file.parents >= 0
    local_m[has] = ue.inverse(globals_[file.parents[has]]) @ globals_[has]
    local = ue.from_matrix(local_m)
    if _simple(local[2]):
        q = local[1] * np.where(local[1][:, :1] < 0.0, -1.0, 1.0)  # (the sign changes nothing)
        return hierarchy.accumulate(core.TRS._trusted(local[0], q, local[2])).to_matrix()

    def compose(parent, child):
        return ue.multiply((child[0], child[1], child[2]), (parent[0], parent[1], parent[2]))

    world = _levels(hierarchy).fold(local, compose)
    return ue.to_matrix(*world)


def _unreal_fbx(file: ExportedFile, hierarchy: core.Hierarchy, globals_=None) -> np.ndarray:
    own = ue.from_matrix(_matrix(file, hierarchy) if globals_ is None else globals_)
    if _simple(own[2]):
        return ue.to_matrix(*own)

    def compose(parent, child):
        local = ue.relative((child[0], child[1], child[2]), (parent[0], parent[1], parent[2]))
        return (*child[:3], *ue.multiply(local, (parent[3], parent[4], parent[5])))

    world = _levels(hierarchy).fold((*own, *own), compose)
    return ue.to_matrix(*world[3:])


_PATH: dict = {MATRIX: _matrix, UNREAL_FBX: _unreal_fbx, UNREAL_INTERCHANGE: _interchange, ACCUMULATED: _accumulated}


def engine_worlds(file: ExportedFile, paths=PATHS, globals_=None) -> dict[str, np.ndarray]:
    """Per path, the world matrix ``(N, 4, 4)`` the engine shows for each Blender node.
    ``globals_ (F, 4, 4)``: the file's TRS composed as matrices, when the caller has them."""
    hierarchy = core.Hierarchy(file.parents)
    out = {}
    for p in paths:
        if p in (UNREAL_FBX, UNREAL_INTERCHANGE):
            out[p] = _PATH[p](file, hierarchy, globals_)[file.node_of]
        elif p == MATRIX and globals_ is not None:
            out[p] = globals_[file.node_of]
        else:
            out[p] = _PATH[p](file, hierarchy)[file.node_of]
    return out


def engine_deviations(file: ExportedFile, world, box_min, box_max, paths=PATHS) -> dict[str, core.Deviation]:
    """Per path, how far the engine puts each node from Blender's ``world (N, 4, 4)``:
    origin distance, axes' turn and the largest box-corner distance (scene units)."""
    return {p: core.deviation(world, w, box_min, box_max) for p, w in engine_worlds(file, paths).items()}
