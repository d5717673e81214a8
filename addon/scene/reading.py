"""Read Blender's hierarchy into arrays: the only place that walks bpy data.

A *node* is an object or a pose bone. Its parent is what an exporter uses: an object's
parent object, or the bone it is parented to (BONE parent type); a bone's parent bone,
or its armature object for root bones. Its world matrix is Blender's evaluated one
(``obj.matrix_world``; ``arm.matrix_world @ pose_bone.matrix`` for bones), and its local
matrix is ``inverse(parent world) @ world``: exactly what the glTF exporter decomposes.

Matrices (world, pose, basis, parent inverse) and boxes are read in bulk with
``foreach_get``. What it cannot read (parent pointers, the parent type; for bones
their rest matrices and inherit settings) takes one short Python step per node: about
7 ms for 20 000 objects, a fraction of the scan (see ``benchmarks/bench_addon.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import bpy
import numpy as np

from ..model.nodes import Nodes
from . import data_checks
from . import verify as verify_nodes


def _matrices(collection, prop: str, count: int) -> np.ndarray:
    if isinstance(collection, _Sequence):  # a short list: its matrices as they are
        out = collection.matrices(prop)
    else:
        buf = np.empty(count * 16, dtype=np.float32)
        collection.foreach_get(prop, buf)
        # Blender's flat matrix buffers are column-major: reshape then transpose.
        out = buf.reshape(count, 4, 4).transpose(0, 2, 1).astype(np.float64)
    out[:, 3] = (0.0, 0.0, 0.0, 1.0)  # affine: constraints leave float32 noise in w (0.99999994)
    return out


def _object_boxes(bulk, objects: Sequence[bpy.types.Object]) -> tuple[np.ndarray, np.ndarray]:
    """Local boxes: bound_box for geometry, the display cube for empties."""
    n = len(objects)
    corners = np.empty(n * 24, dtype=np.float32)
    if n:
        bulk.foreach_get("bound_box", corners)
    corners = corners.reshape(n, 8, 3).astype(np.float64)
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    sizes = np.empty(n, dtype=np.float32)
    if n:
        bulk.foreach_get("empty_display_size", sizes)
    is_empty = np.array([o.type == "EMPTY" for o in objects], dtype=bool)
    lo[is_empty] = -sizes[is_empty, None]
    hi[is_empty] = sizes[is_empty, None]
    return lo, hi


class _Sequence:
    """``foreach_get`` over a short list of RNA structs (the panel's chain).

    Per item, with the fastest conversion for each kind of value.
    """

    def __init__(self, items):
        self.items = list(items)

    def matrices(self, prop: str) -> np.ndarray:
        """The items' matrix property ``prop`` as ``(count, 4, 4)`` float64, rows as in
        Blender (the same numbers as a bulk read: Blender's matrices are float32)."""
        return np.array([getattr(item, prop) for item in self.items], dtype=np.float64).reshape(-1, 4, 4)

    def foreach_get(self, prop: str, buf: np.ndarray) -> None:
        if not self.items:
            return
        if prop.startswith("matrix"):
            # Column-major, like Blender's flat buffers.
            flat = np.array([getattr(item, prop) for item in self.items], dtype=np.float64).transpose(0, 2, 1)
        elif prop == "bound_box":
            flat = np.empty((len(self.items), 24), dtype=np.float32)  # as Blender stores it
            for row, item in zip(flat, self.items, strict=True):
                item.bound_box.foreach_get(row)  # the whole box in one read: Blender recomputes it per access
        else:
            flat = np.array([getattr(item, prop) for item in self.items], dtype=np.float64)
        buf[:] = flat.reshape(-1)


def _collection_of(objects):
    """The bulk-readable collection when ``objects`` is one, else a list adaptor."""
    return objects if hasattr(objects, "foreach_get") else _Sequence(objects)


def bone_boxes(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Head-to-tail boxes in bone space (Y along the bone), a tenth of the length wide."""
    half = 0.05 * lengths
    lo = np.stack((-half, np.zeros_like(lengths), -half), axis=-1)
    hi = np.stack((half, lengths, half), axis=-1)
    return lo, hi


def _pose_bones(arm: bpy.types.Object):
    return arm.pose.bones if arm.type == "ARMATURE" and arm.pose is not None else []


def read_nodes(
    objects: Iterable[bpy.types.Object],
    verify: bool = True,
    bones: dict[str, list[bpy.types.PoseBone]] | None = None,
) -> Nodes:
    """Read ``objects`` (and their pose bones) into :class:`Nodes`.

    Parents outside ``objects`` are treated as absent (the node becomes a root); pass
    whole ancestor chains (see :func:`chain_objects`) to keep them. Objects parented to
    a bone hang under that bone's node. ``bones``: per armature name, the only pose
    bones to read (a list closed under parents, root first: the panel's chain); default
    every bone of every armature. With ``verify``, every node's matrix is also
    recomputed from its own transform and its parent's (:mod:`.verify`) and ``notes`` say where Blender
    evaluates it differently. Where a world matrix holds NaN or infinity, ``problems``
    name the node's own properties that do (:mod:`.data_checks`); inspecting such nodes
    raises :class:`~..model.errors.SceneDataError` with that text.
    """
    if not hasattr(objects, "foreach_get"):
        objects = list(objects)  # a generator would be used up by the first read
    bulk = _collection_of(objects)
    objects = list(objects)
    n_obj = len(objects)
    keys: list[tuple[str, str]] = [(o.name, "") for o in objects]
    world = _matrices(bulk, "matrix_world", n_obj) if n_obj else np.zeros((0, 4, 4))
    box_min, box_max = _object_boxes(bulk, objects)
    worlds, mins, maxs = [world], [box_min], [box_max]
    bone_parent_keys: list[tuple[str, str]] = []
    armatures = []  # (armature, pose matrices, parent index within the armature, its bones read)
    for arm in objects:
        arm_bones = _pose_bones(arm) if bones is None else bones.get(arm.name, [])
        count = len(arm_bones)
        if not count:
            continue
        pose = _matrices(_collection_of(arm_bones), "matrix", count)
        worlds.append(np.asarray(arm.matrix_world, dtype=np.float64) @ pose)
        # Each name read once (every RNA access builds a Python object).
        names = [pb.name for pb in arm_bones]
        parent_names = [parent.name if (parent := pb.parent) is not None else "" for pb in arm_bones]
        local_index = {name: k for k, name in enumerate(names)}
        arm_parents = np.array([local_index[p] if p else -1 for p in parent_names], dtype=np.int64)
        armatures.append((arm, pose, arm_parents, arm_bones))
        # Rest lengths: the box lives in pose space, which already carries the pose scale.
        lo, hi = bone_boxes(np.array([pb.bone.length for pb in arm_bones], dtype=np.float64))
        mins.append(lo)
        maxs.append(hi)
        arm_name = arm.name
        keys.extend([(arm_name, name) for name in names])
        bone_parent_keys.extend([(arm_name, p) for p in parent_names])
    index = {k: i for i, k in enumerate(keys)}
    parents = np.full(len(keys), -1, dtype=np.int64)
    parent_object = np.full(n_obj, -1, dtype=np.int64)  # the parent object's node, for verification
    parent_types = [""] * n_obj
    for i, o in enumerate(objects):
        parent = o.parent
        if parent is None:
            continue
        kind = parent_types[i] = o.parent_type
        parent_object[i] = index.get((parent.name, ""), -1)
        bone = o.parent_bone if kind == "BONE" else ""
        parents[i] = index.get((parent.name, bone), parent_object[i]) if bone else parent_object[i]
    for j, key in enumerate(bone_parent_keys):
        parents[n_obj + j] = index.get(key, -1)
    nodes = Nodes(keys, parents, np.concatenate(worlds), np.concatenate(mins), np.concatenate(maxs))
    if not (np.isfinite(nodes.world).all() and np.isfinite(nodes.box_min).all() and np.isfinite(nodes.box_max).all()):
        data_checks.describe(nodes)
    if verify:
        notes = verify_nodes.check_objects(bulk, objects, parent_object, parent_types, nodes.world)
        for arm, pose, arm_parents, arm_bones in armatures:
            notes += verify_nodes.check_bones(arm, arm_parents, pose, bones=None if bones is None else arm_bones)
        nodes.notes = notes
    return nodes


def chain_objects(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """``obj`` and its ancestors, root first (parent cycles cannot exist in Blender)."""
    chain = [obj]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return chain[::-1]


def chain_bones(context, key, objects, also=()) -> dict[str, list]:
    """Per armature on the chain of ``objects`` (:func:`chain_objects`) to the node
    ``key`` (:func:`active_key`), the pose bones the chain passes through (the active
    bone's and the parent bones' of objects parented to bones, and the ``(armature,
    bone name)`` pairs ``also``, with their ancestors), root first: :func:`read_nodes`'
    ``bones``."""
    wanted: dict[str, dict] = {}  # armature -> bone name -> (depth, pose bone)

    def want(arm, bone_name: str) -> None:
        pose = arm.pose if arm is not None and arm.type == "ARMATURE" else None
        pb = pose.bones.get(bone_name) if pose is not None else None
        if pb is not None:
            bones = wanted.setdefault(arm.name, {})
            for depth, b in enumerate([*reversed(pb.parent_recursive), pb]):  # one walk up per bone
                bones.setdefault(b.name, (depth, b))

    if key[1]:
        want(context.active_object, key[1])
    for arm, bone_name in also:
        want(arm, bone_name)
    for obj in objects:
        if obj.parent is not None and obj.parent_type == "BONE" and obj.parent_bone:
            want(obj.parent, obj.parent_bone)
    return {arm: [b for _, b in sorted(bones.values(), key=lambda t: t[0])] for arm, bones in wanted.items()}


def chain_indices(nodes: Nodes, key: tuple[str, str]) -> list[int]:
    """Node indices from the root down to ``key`` (inclusive)."""
    return nodes.chain(nodes.index()[key])


def active_key(context) -> tuple[str, str] | None:
    """``(object, bone)`` of the active pose bone, else ``(object, "")``, else None."""
    obj = getattr(context, "active_object", None)
    if obj is None:
        return None
    bone = getattr(context, "active_pose_bone", None)
    if bone is not None and bone.id_data == obj and obj.mode == "POSE":
        return (obj.name, bone.name)
    return (obj.name, "")
