"""Which nodes each fix changes, decided by the one threshold policy (Blender-free).

- Helpers (matrix engines): objects whose local matrix holds shear over the threshold
  (``Inspection.lossy_local``), the same nodes the report flags for it. Bones get helper
  joints in the exported file instead (:func:`.gltf_check.add_joint_helpers`); the fix
  names them (:func:`lossy_bones`).
- Bake (accumulating engines): objects whose world matrix is sheared over the threshold
  (``Inspection.sheared``). Bones cannot be baked; they are listed.
"""

from __future__ import annotations

import numpy as np

from ..inspection import Inspection
from ..nodes import OBJECT


def helper_plan(inspection: Inspection) -> list[int]:
    """Node indices of objects with a parent whose local matrix loses shear on export."""
    nodes = inspection.nodes
    return [
        int(i) for i in np.flatnonzero(inspection.lossy_local) if nodes.kind(int(i)) == OBJECT and nodes.parents[i] >= 0
    ]


def lossy_bones(inspection: Inspection) -> list[str]:
    """Labels of the bones whose local matrix loses shear on export, root first: the
    helper fix leaves them (a helper empty cannot go inside a rig); the exact exports
    give them helper joints in the file."""
    nodes = inspection.nodes
    lossy = inspection.lossy_local
    return [nodes.label(i) for i in inspection.root_first() if lossy[i] and nodes.kind(i) != OBJECT]


def bake_plan(inspection: Inspection) -> tuple[list[str], list[str]]:
    """(object names to bake, labels of sheared bones that cannot be baked), root first."""
    nodes = inspection.nodes
    sheared = inspection.sheared
    order = [int(i) for i in inspection.root_first() if sheared[i]]
    objects = [nodes.keys[i][0] for i in order if nodes.kind(i) == OBJECT]
    bones = [nodes.label(i) for i in order if nodes.kind(i) != OBJECT]
    return objects, bones
