"""How a glTF file written by Blender's exporter relates to the scene, Blender-free:
which file node is which scene node, how the exporter maps world matrices (axis
conversion), helper nodes above joints whose local matrix holds shear, and the file's
error read back the way a viewer composes it.
"""

from __future__ import annotations

import numpy as np

from .... import core
from ..inspection import Inspection
from .gltf_file import Gltf


def gltf_frames(inspection: Inspection, conversion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How Blender's exporter maps each node's world matrix into the file.

    ``world_gltf = C @ world @ F``: ``C = conversion (4, 4)`` the exporter's axis
    conversion (Y-up: Blender's ``axis_conversion(to_forward='-Z', to_up='Y')``; the
    identity without it), ``F = C^-1`` for objects (their mesh data is converted) and
    the identity for joints (bones keep Blender's axes; the bind matrices absorb the
    difference). Returns ``(C (4, 4), F (N, 4, 4))``.
    """
    c = np.asarray(conversion, dtype=np.float64)
    n = len(inspection.nodes)
    frames = np.broadcast_to(np.linalg.inv(c), (n, 4, 4)).copy()
    frames[inspection.nodes.is_bone()] = np.eye(4)
    return c, frames


def gltf_node_index(gltf: Gltf, inspection: Inspection) -> dict[int, int]:
    """Inspection node index -> glTF node index (objects by name, bones by skin)."""
    return node_index(gltf, inspection.nodes.keys)


def node_index(gltf: Gltf, keys: list[tuple[str, str]]) -> dict[int, int]:
    """Scene node index -> glTF node index for node ``keys`` ``(object, bone)``:
    objects by name, bones as their skin's joints."""
    joints = gltf.joints()
    joint_nodes = set(joints.values())
    by_name: dict[str, int] = {}
    for k, node in enumerate(gltf.nodes):
        if k not in joint_nodes:  # an object may share a bone's name
            by_name.setdefault(node.get("name", ""), k)
    out = {}
    for i, (obj, bone) in enumerate(keys):
        j = joints.get((obj, bone)) if bone else by_name.get(obj)
        if j is not None:
            out[i] = j
    return out


def add_joint_helpers(gltf: Gltf, inspection: Inspection, conversion: np.ndarray) -> list[str]:
    """Insert helper nodes above joints whose local matrix holds shear over the
    thresholds (``Inspection.lossy_local``). Returns the helpers' names."""
    _c, frames = gltf_frames(inspection, conversion)
    index = gltf_node_index(gltf, inspection)
    nodes = inspection.nodes
    added = []
    for i in np.flatnonzero(inspection.lossy_local):
        i = int(i)
        p = int(nodes.parents[i])
        if nodes.kind(i) != "bone" or i not in index or p < 0:
            continue
        local = np.linalg.inv(frames[p]) @ inspection.local_matrices[i] @ frames[i]
        outer, inner = core.split_to_trs(local)
        name = f"{nodes.name(i)} (shear helper)"
        gltf.insert_parent(index[i], outer, inner, name)
        added.append(name)
    return added


def gltf_error(path: str, inspection: Inspection, conversion: np.ndarray) -> tuple[float, dict[str, float]]:
    """Compose the file's nodes as a viewer does and compare with Blender's worlds.

    Returns the relative error (largest matrix-entry difference over the largest
    entry of Blender's world matrices, at least 1) and the absolute error per node
    label (scene units). Nodes the file lacks are skipped.
    """
    gltf = Gltf.load(path)
    worlds = gltf.world_matrices()
    c, frames = gltf_frames(inspection, conversion)
    index = gltf_node_index(gltf, inspection)
    per_node = {}
    for i, j in index.items():
        expected = c @ inspection.nodes.world[i] @ frames[i]
        per_node[inspection.nodes.label(i)] = float(np.abs(worlds[j] - expected).max())
    scale = max(1.0, float(np.abs(inspection.nodes.world).max())) if len(inspection.nodes) else 1.0
    return (max(per_node.values()) / scale if per_node else 0.0), per_node
