"""What a file holds, as an engine reads it: its node hierarchy and each node's local TRS.

A Blender node becomes one file node; an exact export adds a helper node above every
node whose local matrix holds shear (the helper and the node then hold two TRS whose
product is the local). :class:`ExportedFile` keeps the file's own hierarchy (F nodes,
parents before or after children, any order) and which file node stands for each of
Blender's N nodes, so that an engine path can be run on the file and compared with
Blender node by node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .... import core


@dataclass(frozen=True)
class ExportedFile:
    """``parents (F,)`` the file's hierarchy (-1 roots), ``local`` its local TRS ``(F,)``
    as the file stores them (rotations unit quaternions wxyz), ``node_of (N,)`` the file
    node of each of Blender's nodes; ``helpers`` how many file nodes are helpers."""

    parents: np.ndarray
    local: core.TRS
    node_of: np.ndarray
    helpers: int = 0

    def __len__(self) -> int:
        return len(self.parents)


def plain_file(parents: np.ndarray, local: core.TRS) -> ExportedFile:
    """A file with one node per Blender node holding ``local (N,)``: Blender's plain glTF
    or FBX export when ``local`` is the exporters' decomposition of the local matrices
    (``core.TRS.from_decomposition(core.decompose(..., rotation="blender"))``, what ``Matrix.decompose()`` gives),
    or the accumulated export when it is :func:`.exports.accumulated.accumulated_locals`."""
    parents = np.asarray(parents, dtype=np.int64)
    return ExportedFile(parents, local, np.arange(len(parents)))


def exact_file(parents: np.ndarray, local_matrices: np.ndarray, plain: core.TRS, split: np.ndarray) -> ExportedFile:
    """The exact export at one frame: every node keeps ``plain``'s TRS except those in
    ``split (N,)`` (their local matrix needs two TRS), which get a helper node above
    them (file node ``N + k`` for the k-th of them, ordered by index) holding the outer
    factor of :func:`core.split_to_trs` while the node holds the inner one."""
    parents = np.asarray(parents, dtype=np.int64)
    n = len(parents)
    which = np.flatnonzero(split)
    if not len(which):
        return plain_file(parents, plain)
    outer, inner = core.split_to_trs(np.asarray(local_matrices, dtype=np.float64)[which])
    helper = n + np.arange(len(which))
    file_parents = np.concatenate((parents, parents[which]))
    file_parents[which] = helper
    t = np.concatenate((plain.translation, outer.translation))
    q = np.concatenate((plain.rotation, outer.rotation))
    s = np.concatenate((plain.scale, outer.scale))
    t[which], q[which], s[which] = inner.translation, inner.rotation, inner.scale
    return ExportedFile(file_parents, core.TRS._trusted(t, q, s), np.arange(n), len(which))


def read_back_file(parents: np.ndarray, globals_: np.ndarray) -> ExportedFile:
    """A file as an independent reader gives it back (ufbx, pygltflib): its hierarchy
    ``parents (F,)`` and each node's global ``(F, 4, 4)``. The locals are ``inverse(parent
    global) @ global`` decomposed (a file's nodes hold no shear, so the rotation rule does
    not matter); ``node_of`` is every file node in order."""
    parents = np.asarray(parents, dtype=np.int64)
    g = np.asarray(globals_, dtype=np.float64)
    local = g.copy()
    has = parents >= 0
    local[has] = core.affine_inverse(g[parents[has]])[0] @ g[has]
    return ExportedFile(
        parents, core.TRS.from_decomposition(core.decompose(local, rotation="blender")), np.arange(len(parents))
    )
