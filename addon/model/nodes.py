"""Nodes: a hierarchy of objects and bones as arrays, with the names a user knows.

A *node* is an object or a pose bone. ``keys[i]`` is ``(object_name, bone_name)`` with
``bone_name == ""`` for objects; every message and list names nodes by :meth:`Nodes.label`
(``Armature > Bone`` for bones), never by index.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

OBJECT = "object"
BONE = "bone"
INSTANCE = "instance"  #: a collection, geometry-nodes or particle instance (its instancer is its parent)


def node_label(object_name: str, bone_name: str = "") -> str:
    """How a node is named to the user: ``Armature > Bone`` for bones, else the object."""
    return f"{object_name} > {bone_name}" if bone_name else object_name


@dataclass
class Nodes:
    """A hierarchy read from Blender (any order; parents need not come first).

    ``parents (N,)`` int, -1 for roots; ``world (N, 4, 4)`` Blender's evaluated world
    matrices (float64 copies of Blender's float32); ``box_min, box_max (N, 3)`` local
    bounds in the node's own space (scene units). ``notes[i]`` says why node i is
    "evaluated differently" (constraints, drivers, physics...), "" when Blender's matrix
    follows from the raw properties. ``problems[i]`` says which of node i's own
    properties hold NaN or infinity (the scene layer fills it where a world matrix is
    not finite).

    Optional facts a scene adapter may add (:func:`..scene.scan.annotate`), used by
    the advice, the cause groups and the scan filter; their defaults say "unknown":
    ``channel_scale (N, 3)`` the scale the user typed (object scale times delta scale,
    a pose bone's scale; NaN unknown), ``inherit_scale[i]`` a bone's Inherit Scale mode
    ("" for objects), ``deform (N,)`` bool a bone's Deform option, ``types[i]`` an
    object's type ("MESH", "ARMATURE", ...; "" for bones), ``follows (N,)`` the node
    whose transform a node's constraints copy (a Rigify ``DEF-`` bone's Copy Transforms
    target; -1 none or unknown), ``hidden (N,)`` bool a bone the viewport does not show
    (hidden, or in no visible bone collection) or an object it does not show.
    """

    keys: list[tuple[str, str]] = field(default_factory=list)
    parents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    world: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    box_min: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    box_max: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    notes: list[str] = field(default_factory=list)
    problems: dict[int, str] = field(default_factory=dict)
    channel_scale: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    inherit_scale: list[str] = field(default_factory=list)
    deform: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    types: list[str] = field(default_factory=list)
    #: node index -> name of the instanced object, for instance nodes (see ``scene.instances``)
    instance_of: dict[int, str] = field(default_factory=dict)
    follows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    hidden: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self):
        n = len(self.keys)
        if not self.notes:
            self.notes = [""] * n
        if len(self.channel_scale) != n:
            self.channel_scale = np.full((n, 3), np.nan)
        if not self.inherit_scale:
            self.inherit_scale = [""] * n
        if len(self.deform) != n:
            self.deform = np.zeros(n, dtype=bool)
        if not self.types:
            self.types = [""] * n
        if len(self.follows) != n:
            self.follows = np.full(n, -1, dtype=np.int64)
        if len(self.hidden) != n:
            self.hidden = np.zeros(n, dtype=bool)

    def __len__(self) -> int:
        return len(self.keys)

    def name(self, i: int) -> str:
        obj, bone = self.keys[i]
        return bone or obj

    def kind(self, i: int) -> str:
        return BONE if self.keys[i][1] else INSTANCE if i in self.instance_of else OBJECT

    def armature(self, i: int) -> str | None:
        obj, bone = self.keys[i]
        return obj if bone else None

    def label(self, i: int) -> str:
        """``Armature > Bone`` for bones, the object name otherwise."""
        return node_label(*self.keys[i])

    def is_bone(self) -> np.ndarray:
        """``(N,)`` bool: which nodes are bones."""
        return np.fromiter((bool(bone) for _obj, bone in self.keys), dtype=bool, count=len(self.keys))

    def index(self) -> dict[tuple[str, str], int]:
        return {k: i for i, k in enumerate(self.keys)}

    def subset(self, keep) -> Nodes:
        """The nodes ``keep`` (indices, in this order) as a hierarchy of their own: a
        parent outside ``keep`` makes its child a root."""
        keep = np.asarray(keep, dtype=np.int64)
        new_index = np.full(len(self), -1, dtype=np.int64)
        new_index[keep] = np.arange(len(keep))
        parents = self.parents[keep]
        parents = np.where(parents >= 0, new_index[np.maximum(parents, 0)], -1)
        return Nodes(
            [self.keys[i] for i in keep],
            parents,
            self.world[keep],
            self.box_min[keep],
            self.box_max[keep],
            [self.notes[i] for i in keep],
            {int(new_index[i]): why for i, why in self.problems.items() if new_index[i] >= 0},
            self.channel_scale[keep],
            [self.inherit_scale[i] for i in keep],
            self.deform[keep],
            [self.types[i] for i in keep],
            {int(new_index[i]): name for i, name in self.instance_of.items() if new_index[i] >= 0},
            np.where(self.follows[keep] >= 0, new_index[np.maximum(self.follows[keep], 0)], -1),
            self.hidden[keep],
        )

    def chain(self, i: int) -> list[int]:
        """Indices from the root down to node ``i`` (inclusive)."""
        out = [i]
        while self.parents[out[-1]] >= 0:
            out.append(int(self.parents[out[-1]]))
        return out[::-1]
