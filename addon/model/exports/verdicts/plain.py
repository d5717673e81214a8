"""Never worse than Blender's plain export, Blender-free: which nodes a corrected file
places worse than Blender's own export of the same scene, and which helpers to leave
out for them.

A helper keeps shear exactly, but the export-ready copy that carries it can change
something else: an IK chain through a bone that gets a helper bone is solved again in
the copy, a constraint reading a node in local space reads another local matrix. The
read-back shows where; Blender's plain export of the same scene, read back the same
way, says whether the file would have been better without. A node is worse when the
corrected file misses it by more than the plain file does and by more than the
tolerance; the helpers to blame are first those whose readers (constraints that read
or span them) are the node or above it, else the helpers above the node.

Shapes: ``parents (N,)`` scene node indices (-1: root); errors per node in scene units.
"""

from __future__ import annotations

import numpy as np

from ...timeline.series import with_ancestors


def worse_nodes(ours: dict, plain: dict, tolerance: float) -> dict[str, tuple[float, float]]:
    """Label -> (corrected, plain) for the nodes (labels in both ``ours`` and
    ``plain``: label -> largest matrix-entry error) the corrected file misses by more
    than ``tolerance`` (scene units) and by more than the plain file does. A
    non-finite error of ours counts as worse when the plain one is finite."""
    out = {}
    for label, mine in ours.items():
        theirs = plain.get(label)
        if theirs is None:
            continue
        bad = not np.isfinite(mine) and np.isfinite(theirs)
        if bad or (mine > tolerance and mine > theirs):
            out[label] = (float(mine), float(theirs))
    return out


def helpers_to_drop(
    worse: list[int], helpers: list[int], readers: dict[int, list[int]], parents: np.ndarray
) -> list[int]:
    """The helpers to leave out for the worse nodes. ``worse``: scene indices of the
    worse nodes; ``helpers``: the nodes given a helper; ``readers``: helper node -> the
    nodes whose constraints read it or run an IK chain through it. A helper is blamed
    when one of its readers is a worse node or above one; when no helper is blamed so,
    the helpers above (or at) the worse nodes are. One pass up the hierarchy for all
    the worse nodes together."""
    parents = np.asarray(parents, dtype=np.int64)
    mark = np.zeros(len(parents), dtype=bool)
    mark[np.asarray(worse, dtype=np.int64)] = True
    above = with_ancestors(parents, mark)
    blamed = [h for h in helpers if any(above[r] for r in readers.get(h, ()))]
    return blamed or [h for h in helpers if above[h]]


def with_chain_owners(drop: list[int], kept: list[int], chains: dict[int, list[int]]) -> list[int]:
    """``drop`` and every node of ``kept`` whose IK chain (``chains``: node -> the nodes
    its IK constraint poses) runs through a dropped node: in the export-ready copy a
    node given a helper has its constraints muted (its keys hold Blender's result), so
    the chain bones its IK posed must keep their helpers and keys too, or go with it."""
    out = list(drop)
    gone = set(out)
    changed = True
    while changed:
        changed = False
        for node in kept:
            if node not in gone and gone.intersection(chains.get(node, ())):
                out.append(node)
                gone.add(node)
                changed = True
    return out
