"""What the export right for each engine path leaves of a node (Blender-free): the
largest corner distance per node after Export FBX (exact) in Unreal's FBX import and
after Export FBX (accumulated) in Unreal from locals and Ogre. Both leave only the skew
of Blender's own world, which no TRS holds; the panel, the advice and the fixes'
messages read them.
"""

from __future__ import annotations

import numpy as np

from .... import core
from ....core import unreal_math as ue
from ..inspection import Inspection


def accumulated_export_residual(inspection: Inspection) -> np.ndarray | None:
    """``(N,)`` largest corner distance left by Fix > Export accumulated TRS (None when
    a zero scale makes that export impossible).

    That export rebuilds every world as Blender's world decomposed (translation,
    rotation, scale; the shear dropped), so what it leaves is the distance between the
    world and that TRS, node by node, without the export's hierarchy fold (equal to
    :func:`.exports.accumulated.accumulated_locals`'s residual: tested on the demo and
    on a Rigify rig). The panel computes it on every change.
    """
    nodes, world = inspection.nodes, inspection.world
    has = nodes.parents >= 0
    if np.any(world.scale[nodes.parents[has]] == 0.0):
        return None
    return core.box_corner_distance(
        nodes.world, core.TRS.from_decomposition(world).to_matrix(), nodes.box_min, nodes.box_max
    )


def unreal_export_residual(inspection: Inspection) -> np.ndarray:
    """``(N,)`` largest corner distance left by Export FBX (exact) in Unreal's classic
    importer: the file's globals are Blender's worlds, and the importer keeps each as an
    ``FTransform`` (its shear dropped), so what is left is each world's own skew."""
    nodes = inspection.nodes
    if not len(nodes):
        return np.zeros(0)
    kept = ue.to_matrix(*ue.from_matrix(nodes.world))
    return core.box_corner_distance(nodes.world, kept, nodes.box_min, nodes.box_max)
