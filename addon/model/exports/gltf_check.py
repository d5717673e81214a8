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


def node_index(gltf: Gltf, keys: list[tuple[str, str]], parents=None) -> dict[int, int]:
    """Scene node index -> glTF node index for node ``keys`` ``(object, bone)``:
    objects by name, bones as joints of their armature's skin.

    A name several object nodes of the file share (a collection instance: the exporter
    writes each instanced object again, under the instancer) is told apart by the
    parent: the file node whose parent is the node of the scene node's parent (a root
    for a root), given ``parents (N,)`` (scene node index of each key's parent, -1:
    none); without them, or when that does not decide, the node is left out
    (:func:`shared_names` names them). Bones: the joints of the skin whose joints hang
    under their armature's node (skins of instanced copies share the armature's name)."""
    file_parents = gltf.parents()
    skins = gltf.doc.get("skins", [])
    joint_nodes = {j for skin in skins for j in skin.get("joints", [])}
    by_name: dict[str, list[int]] = {}
    for k, node in enumerate(gltf.nodes):
        if k not in joint_nodes:  # an object may share a bone's name
            by_name.setdefault(node.get("name", ""), []).append(k)
    out: dict[int, int] = {}
    objects = [i for i, (_obj, bone) in enumerate(keys) if not bone]
    waiting = []
    for i in objects:
        found = by_name.get(keys[i][0], [])
        if len(found) == 1:
            out[i] = found[0]
        elif found and parents is not None:
            waiting.append(i)
    armatures = _skin_armatures(gltf, skins, file_parents)
    while waiting:  # the shared names, parents first: as many passes as the hierarchy is deep
        placed = False
        for i in list(waiting):
            p = int(parents[i])
            if p >= 0 and keys[p][1]:  # parented to a bone: its joint is needed first
                _joints_of(gltf, keys, keys[p][0], out, armatures, skins)
            if p >= 0 and p not in out:
                continue
            parent_node = out[p] if p >= 0 else -1
            match = [k for k in by_name[keys[i][0]] if file_parents[k] == parent_node]
            waiting.remove(i)
            placed = True
            if len(match) == 1:
                out[i] = match[0]
        if not placed:
            break
    for obj in {obj for obj, bone in keys if bone}:
        _joints_of(gltf, keys, obj, out, armatures, skins)
    return out


def _skin_armatures(gltf: Gltf, skins: list, file_parents: np.ndarray) -> list[int]:
    """Per skin, the node its joints hang under (the armature's; -1: none found)."""
    out = []
    for skin in skins:
        joints = set(skin.get("joints", []))
        tops = {int(file_parents[j]) for j in joints if file_parents[j] not in joints}
        out.append(tops.pop() if len(tops) == 1 else -1)
    return out


def _joints_of(gltf: Gltf, keys, armature: str, out: dict, armatures: list[int], skins: list) -> None:
    """Map the bones of ``armature`` among ``keys`` (into ``out``) to the joints of its
    skin: the skin under the armature's node when that node is mapped, else the only
    skin of that name."""
    at = next((i for i, (obj, bone) in enumerate(keys) if obj == armature and not bone), None)
    node = out.get(at, -2) if at is not None else -2
    chosen = [s for s, a in enumerate(armatures) if a == node]
    if not chosen:
        chosen = [s for s, skin in enumerate(skins) if skin.get("name", "") == armature]
    if len(chosen) != 1:
        return
    joints = {gltf.nodes[j].get("name", ""): j for j in skins[chosen[0]].get("joints", [])}
    for i, (obj, bone) in enumerate(keys):
        if obj == armature and bone and bone in joints:
            out[i] = joints[bone]


def shared_names(gltf: Gltf, keys: list[tuple[str, str]], index: dict[int, int]) -> list[str]:
    """The scene objects of ``keys`` left out of ``index`` (:func:`node_index`) because
    several nodes of the file bear their name."""
    count: dict[str, int] = {}
    for node in gltf.nodes:
        count[node.get("name", "")] = count.get(node.get("name", ""), 0) + 1
    return [obj for i, (obj, bone) in enumerate(keys) if not bone and i not in index and count.get(obj, 0) > 1]


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
