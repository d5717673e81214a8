"""What the FBX plans need to know about the scene beyond its frames, Blender-free: read
once by ``scene/exports/fbx_facts.read_facts`` (one pass over Blender's data), then
only arrays and names.

Per node of a frame series (its objects and bones, in its order) an array ``(N,)``:
False, '' or the identity for bones (their armature's facts are in :attr:`armatures`).
Every constraint of the scene's objects and their pose bones is one
:class:`ConstraintFacts` row, in Blender's order (object, its constraints, its pose
bones' constraints, bone by bone). Matrices ``(N, 4, 4)``, column vectors, at the
scene's current frame.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...nodes import node_label
from ..euler_pole import CAMERA_TURN, LIGHT_TURN

#: Object types Blender's FBX exporter writes by default (its 'OTHER': curves,
#: surfaces, text, metaballs); a parent of another type is not in the file.
EXPORTED_TYPES = frozenset({"EMPTY", "CAMERA", "LIGHT", "ARMATURE", "MESH", "CURVE", "SURFACE", "FONT", "META"})


class ArmatureFacts(NamedTuple):
    """An armature object's facts that decide whether its bones can be edited."""

    linked: bool  #: the object is linked from a library
    overridden: bool  #: the object is a library override
    data_shared: bool  #: its armature data is linked or used by other objects too
    hidden: bool  #: not in the view layer, or hidden in it (no edit mode)
    has_action: bool  #: it has an active action
    blend_type: str  #: the active action's blending over NLA tracks ('REPLACE', 'ADD', ...)
    influence: float  #: the active action's influence
    tracks_play: bool  #: an unmuted NLA track is evaluated beneath the active action

    def refusal(self) -> str:
        """Why its bones cannot get helper bones or keys ('' when they can)."""
        if self.linked:
            return "linked armature: left as it is"
        if self.overridden:
            return (
                "library override: Blender allows no edit mode on it for the helper bones (glTF is exact): "
                "left as it is"
            )
        if self.data_shared:
            return "armature data linked or shared: left as it is"
        if self.hidden:
            return "armature hidden or not in the view layer: left as it is"
        if self.has_action and self.tracks_play and (self.blend_type != "REPLACE" or self.influence < 1.0):
            return (
                f"its active action is blended ({self.blend_type.title()}, influence {self.influence:g}) "
                "over NLA tracks, so helper keys in it would be blended too: left as it is"
            )
        return ""


class ConstraintFacts(NamedTuple):
    """One constraint of an object or a pose bone."""

    obj: str  #: the object it belongs to (for a bone's: its armature)
    bone: str  #: the bone it belongs to ('' for an object's constraint)
    name: str
    type: str  #: Blender's constraint type ('IK', 'COPY_ROTATION', ...)
    muted: bool
    enabled: bool  #: Blender's ``enabled`` (True where a constraint has none)
    target: str  #: its target object's name ('' for none)
    subtarget: str  #: its target bone or vertex group ('' for none)
    target_space: str  #: the space it reads its target in ('WORLD' where it has none)
    chain: tuple  #: IK and Spline IK on a bone: the bones it poses above it, nearest first

    @property
    def owner(self) -> str:
        """The label of the object or bone it belongs to (:func:`...nodes.node_label`)."""
        return node_label(self.obj, self.bone)

    @property
    def armature(self) -> str:
        """The owner bone's armature ('' for an object's constraint)."""
        return self.obj if self.bone else ""


class SceneFacts(NamedTuple):
    """The scene as the FBX plans see it, per node of a frame series (see the module
    docstring)."""

    keys: list  #: ``(object, bone)`` per node, the series' order
    object_type: list  #: Blender's object type ('' for bones and keys no object is named by: instances)
    exists: np.ndarray  #: bool: an object of the key's name exists (for bones: their armature)
    linked: np.ndarray  #: bool: linked from a library or a library override
    rigid_body: np.ndarray  #: bool: a rigid body (the simulation places it)
    constrained: np.ndarray  #: bool: it has constraints
    parent_name: list  #: its parent object's name ('' for none)
    parent_type: list  #: Blender's parent type ('OBJECT', 'BONE', 'VERTEX', ...; '' without a parent)
    parent_written: (
        np.ndarray
    )  #: bool: Blender's FBX exporter writes it under its parent (by object or bone, a parent it exports)
    deformed: np.ndarray  #: bool: its parent deforms its geometry (armature or lattice parent of a mesh, curve, ...)
    in_linked_collection: (
        np.ndarray
    )  #: bool: in a linked or overridden collection (a helper could not be linked beside it)
    instanced: np.ndarray  #: bool: in a collection an object instances, or under a vertex / face instancer
    tail_length: np.ndarray  #: float: length of the bone it is parented to (BONE parent type), else 0
    parent_frame: np.ndarray  #: (N, 4, 4) Blender's parent matrix (``matrix_world @ inv(matrix_local)``)
    parent_inverse: np.ndarray  #: (N, 4, 4) its ``matrix_parent_inverse``
    armatures: dict  #: armature name -> :class:`ArmatureFacts`, for the armatures with bones among the keys
    constraints: list  #: :class:`ConstraintFacts` of every object of the scene and its pose bones
    skinned: set  #: names of the objects an armature deforms (their vertices follow the joints)
    instances: list  #: ``(name, why)``: collection instances whose objects the check cannot map

    def index(self) -> dict:
        """Label -> node index."""
        return {node_label(*key): i for i, key in enumerate(self.keys)}

    def turns(self) -> dict[int, np.ndarray]:
        """Node -> the turn ``(3, 3)`` Blender's FBX exporter puts after the node's own
        rotation: cameras and lights (their children are written without it)."""
        kinds = {"CAMERA": CAMERA_TURN, "LIGHT": LIGHT_TURN}
        return {i: kinds[kind] for i, kind in enumerate(self.object_type) if kind in kinds}

    def skip(self) -> set[int]:
        """The skinned objects' nodes: engines place their vertices by the joints, not
        by the node (checked by their vertices instead)."""
        return {i for i, (obj, bone) in enumerate(self.keys) if not bone and obj in self.skinned}
