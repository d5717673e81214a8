"""Instances as nodes: collection instances, geometry-nodes instances and particle
instances are what engines receive as separate nodes, so they are inspected like objects.

Read from the evaluated depsgraph (``depsgraph.object_instances``): each instance's world
matrix is Blender's (``instance.matrix_world``), its parent is its instancer (the object
carrying the collection instance, the geometry-nodes modifier or the particle system;
nested instances hang under the top instancer, as Blender reports them), and its box is
the instanced object's bounds. Keys name them uniquely and stably:
``"Instancer / Object #i.j"`` with ``i.j`` Blender's ``persistent_id`` (the instance's
index at each level of nesting: the same on every evaluation of an unchanged scene).

``object_instances`` has no bulk access: one short Python step per instance (about
5 microseconds; see benchmarks/bench_addon.py for the scan as a whole).
"""

from __future__ import annotations

import numpy as np

from ..model.nodes import Nodes

_UNUSED = 2**31 - 1  #: persistent_id levels that are not used


def instance_key(instancer: str, instanced: str, persistent_id) -> str:
    """``"Instancer / Object #3"`` (``#3.1`` for nested instances; Blender fills the unused
    levels of ``persistent_id`` with INT_MAX, which are dropped)."""
    ids = [int(v) for v in persistent_id]
    while len(ids) > 1 and ids[-1] == _UNUSED:
        ids.pop()
    return f"{instancer} / {instanced} #{'.'.join(map(str, ids))}"


def _box(obj) -> tuple[np.ndarray, np.ndarray]:
    if obj.type == "EMPTY":
        size = float(obj.empty_display_size)
        return np.full(3, -size), np.full(3, size)
    corners = np.array([tuple(c) for c in obj.bound_box], dtype=np.float64).reshape(8, 3)
    return corners.min(axis=0), corners.max(axis=0)


def read_instances(depsgraph, instancers: dict[str, int]):
    """``(keys, parents, world (M, 4, 4), box_min (M, 3), box_max (M, 3), instanced names)``
    for every instance whose instancer is one of ``instancers`` (object name -> node index)."""
    keys, parents, worlds, mins, maxs, of = [], [], [], [], [], []
    boxes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for inst in depsgraph.object_instances:
        if not inst.is_instance or inst.parent is None:
            continue
        parent = instancers.get(inst.parent.original.name)
        if parent is None:
            continue
        obj = inst.instance_object
        name = obj.original.name
        keys.append(instance_key(inst.parent.original.name, name, inst.persistent_id))
        parents.append(parent)
        worlds.append(np.array(inst.matrix_world, dtype=np.float64))
        if name not in boxes:
            boxes[name] = _box(obj)
        mins.append(boxes[name][0])
        maxs.append(boxes[name][1])
        of.append(name)
    m = len(keys)
    return (
        keys,
        np.array(parents, dtype=np.int64),
        np.array(worlds).reshape(m, 4, 4),
        np.array(mins).reshape(m, 3),
        np.array(maxs).reshape(m, 3),
        of,
    )


def with_instances(nodes: Nodes, depsgraph) -> Nodes:
    """``nodes`` (objects and bones, as read by ``reading.read_nodes``) followed by every
    instance of their objects, each a node under its instancer."""
    objects = {key[0]: i for i, key in enumerate(nodes.keys) if not key[1]}
    keys, parents, world, lo, hi, of = read_instances(depsgraph, objects)
    if not keys:
        return nodes
    n = len(nodes)
    taken = set(nodes.keys)
    unique = []
    for key in keys:  # an instance key that repeats an object's name (unlikely) gets a suffix
        candidate, k = key, 1
        while (candidate, "") in taken:
            k += 1
            candidate = f"{key} ({k})"
        taken.add((candidate, ""))
        unique.append((candidate, ""))
    extra = len(keys)
    return Nodes(
        keys=[*nodes.keys, *unique],
        parents=np.concatenate([nodes.parents, parents]),
        world=np.concatenate([nodes.world, world]),
        box_min=np.concatenate([nodes.box_min, lo]),
        box_max=np.concatenate([nodes.box_max, hi]),
        notes=[*nodes.notes, *([""] * extra)],
        problems=dict(nodes.problems),
        channel_scale=np.concatenate([nodes.channel_scale, np.full((extra, 3), np.nan)]),
        inherit_scale=[*nodes.inherit_scale, *([""] * extra)],
        deform=np.concatenate([nodes.deform, np.zeros(extra, dtype=bool)]),
        types=[*nodes.types, *([""] * extra)],
        instance_of={**nodes.instance_of, **{n + j: name for j, name in enumerate(of)}},
    )
