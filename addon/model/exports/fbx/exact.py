"""The exact FBX file's plan, Blender-free: Blender's worlds and the scene's facts in, the
export-ready copy out (:class:`ExactPlan`).

Which nodes get a helper: every object and bone whose local matrix needs two TRS at
some exported frame (:func:`..animated_gltf.needs_split`), except skinned objects and
objects their parent deforms (their node does not place their vertices); left out and
named: linked objects, rigid bodies, bones of armatures that cannot be edited
(:meth:`.facts.ArmatureFacts.refusal`). Both get the continuous exact split
(:func:`..animated_split.continuous_split`) as keys at every exported frame: the helper
the outer TRS, the node the inner one, each helper's frame turned by an axis rotation
away from the Euler pole where the exporter's single-precision Euler angles lose
digits (:func:`..euler_pole.turned`, with the exporter's own turns on objects). A node
given a helper has its constraints and transform drivers muted (its keys hold Blender's
evaluated result); the constraints of other nodes that read it in a local space or run
an IK chain through it would compute something else: they are named
(:mod:`.readers`).

Objects that need no split but whose written rotation comes near the Euler pole, at a
cost over :data:`POLE_BUDGET`, get a still empty turned by an axis rotation ``C``
above them and keep their own animation (their parent inverse turned by ``C.T``: the
same world matrix): :func:`..euler_pole.pole_turns`.

When the file misses the tolerance, :func:`without_worse` makes the plan again without
the helpers that made a node worse than Blender's plain export
(:mod:`..verdicts.plain`).

Shapes: ``(T, N, 4, 4)`` time first, column vectors; quaternions ``(w, x, y, z)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..... import core
from ...nodes import node_label
from ...thresholds import DEFAULT, Thresholds
from ...timeline import FrameSeries
from ..animated_gltf import CHECK_TOLERANCE, check_scale, needs_split, parent_inverses, subtree_extent
from ..animated_split import continuous_split
from ..euler_pole import CAMERA_TURN, FBX_GLOBAL, LIGHT_TURN, pole_turns, turned
from ..verdicts.plain import helpers_to_drop, with_chain_owners, worse_nodes
from .copy_plan import ArmatureEdit, CopyPlan, ObjectEdit
from .facts import EXPORTED_TYPES, SceneFacts
from .readers import bone_readers, ik_chains, object_readers

#: The share of the self-check's tolerance an object's Euler angles may cost before it
#: is given a turned helper (the estimate was 0.96-3.4x the error measured in the file).
POLE_BUDGET = CHECK_TOLERANCE / 2


class ExactInputs(NamedTuple):
    """What a plan is made from (kept for :func:`without_worse`)."""

    facts: SceneFacts
    parents: np.ndarray  #: (N,) -1 for roots
    local: np.ndarray  #: (T, N, 4, 4) Blender's local matrices at the exported frames
    world_now: np.ndarray  #: (N, 4, 4) Blender's worlds at the scene's current frame
    frames: list  #: the exported frames
    not_corrected: list  #: (label, why) of the nodes that need a split and cannot have it
    pole: list  #: the objects given a still, turned helper
    pole_edits: list  #: their :class:`.copy_plan.ObjectEdit`
    global_turn: np.ndarray  #: (3, 3) the file's axes: the turn the exporter applies to objects without a parent
    selected: bool  #: the helpers are selected (an export of the selection writes them)


class ExactPlan(NamedTuple):
    copy: CopyPlan  #: what the scene transaction changes
    split: list  #: the nodes given a helper for their shear (objects and bones), node order
    not_corrected: list  #: (label, why): nodes whose local shear the file drops, and why
    readers: dict  #: split node -> the nodes whose constraints read it in a local space or span it
    chains: dict  #: split bone -> the bones its IK poses (muted in the copy with it)
    inputs: ExactInputs

    @property
    def pole(self) -> list:
        """The objects given a helper only to keep their rotation off the Euler pole."""
        return self.inputs.pole

    def helper_labels(self) -> list[str]:
        return [node_label(*self.inputs.facts.keys[i]) for i in self.split]

    def pole_labels(self) -> list[str]:
        return [node_label(*self.inputs.facts.keys[i]) for i in self.pole]


def plan_exact(
    series: FrameSeries,
    keep: list[int],
    current: int,
    facts: SceneFacts,
    thresholds: Thresholds = DEFAULT,
    pole_helpers: bool = True,
    global_turn: np.ndarray = FBX_GLOBAL,
    bones_in_file: set | None = None,
    *,
    selected: bool = False,
) -> ExactPlan:
    """The copy that makes the file exact at the frames ``keep`` (indices into
    ``series``' frames; ``current``: the index of the scene's current frame, where the
    helpers' parent inverses are taken). ``pole_helpers`` False: objects that need no
    split are written as Blender writes them, also near the Euler pole.
    ``global_turn (3, 3)``: the file's axes (Blender's defaults: :data:`FBX_GLOBAL`);
    ``bones_in_file``: the ``(armature, bone)`` keys the file holds (deform bones only;
    None: every bone), the others get no helper; ``selected``: the helpers are selected
    (the file holds the selected objects)."""
    world = series.world
    parent_world, inverse, _singular = parent_inverses(world, series.parents)
    local = (inverse @ world)[keep]
    shown = world[keep]
    extent = subtree_extent(shown, series.parents)
    needs = needs_split(local, parent_world[keep], thresholds, extent, check_scale(shown))
    split, not_corrected = _split_or_listed(facts, needs, bones_in_file)
    pole, turns = _off_pole(facts, series.parents, shown, local, needs, global_turn) if pole_helpers else ([], [])
    pole_edits = [_pole_edit(facts, i, c) for i, c in zip(pole, turns, strict=True)]
    frames = [int(series.frames[t]) for t in keep]
    inputs = ExactInputs(
        facts, series.parents, local, world[current], frames, not_corrected, pole, pole_edits, global_turn, selected
    )
    return _plan(inputs, split, not_corrected)


def without_worse(plan: ExactPlan, ours: dict, plain: dict, tolerance: float) -> ExactPlan | None:
    """The plan again without the helpers that put a node worse than Blender's plain
    export (``ours``, ``plain``: label -> the read-back's largest error; ``tolerance``
    in scene units) and the helpers of the bones whose IK poses one of those, each
    named with why; None when no helper is to blame."""
    worse = worse_nodes(ours, plain, tolerance)
    index = plan.inputs.facts.index()
    blamed = helpers_to_drop([index[w] for w in worse], plan.split, plan.readers, plan.inputs.parents)
    drop = with_chain_owners(blamed, plan.split, plan.chains)
    if not drop:
        return None
    reason = worse_reason(worse)
    owner = "its IK poses a bone left as Blender writes it (its helper's keys would replace that IK): left so too"
    keys = plan.inputs.facts.keys
    listed = [(node_label(*keys[i]), reason if i in blamed else owner) for i in drop]
    kept = [i for i in plan.split if i not in drop]
    return _plan(plan.inputs, kept, plan.inputs.not_corrected + listed)


def worse_reason(worse: dict) -> str:
    """Why a helper was left out: the node it made worse than Blender's plain export."""
    label, (ours, theirs) = max(worse.items(), key=lambda item: np.nan_to_num(item[1][0], nan=np.inf))
    return (
        f"its helper put '{label}' {ours:.1e} units off where Blender's plain export is {theirs:.1e}: "
        "written as Blender writes it"
    )


def _split_or_listed(
    facts: SceneFacts, needs: np.ndarray, bones_in_file: set | None = None
) -> tuple[list[int], list[tuple[str, str]]]:
    """The nodes of ``needs`` that get a helper, and ``(label, why)`` of those that
    cannot; skinned objects, objects their parent deforms and bones the file leaves out
    (not in ``bones_in_file`` when given) are neither."""
    split: list[int] = []
    listed: list[tuple[str, str]] = []
    for i in np.flatnonzero(needs).tolist():
        obj, bone = facts.keys[i]
        label = node_label(obj, bone)
        if bone and bones_in_file is not None and (obj, bone) not in bones_in_file:
            continue  # not in the file (deform bones only)
        if bone:
            arm = facts.armatures.get(obj)
            why = arm.refusal() if arm is not None else "missing"
        elif obj in facts.skinned or facts.deformed[i]:
            continue  # its node matrix does not place its vertices
        elif not facts.exists[i] or facts.linked[i]:
            why = "linked data: left as it is"
        elif facts.rigid_body[i]:
            why = "rigid body (the simulation places it): left as it is"
        else:
            why = ""
        if why:
            listed.append((label, why))
        else:
            split.append(i)
    return split, listed


def written_turns(
    facts: SceneFacts, objects: list[int], global_turn: np.ndarray = FBX_GLOBAL
) -> tuple[np.ndarray, np.ndarray]:
    """The constant rotations ``(K, 3, 3)`` Blender's FBX exporter applies before and
    after the local rotation of each of the object nodes ``objects`` and of a helper
    put above it: the file's axes ``global_turn`` on objects without a parent (identity
    for those whose parent the file lacks: :func:`_off_pole` leaves them out), the light
    and camera turns."""
    before = np.empty((len(objects), 3, 3))
    after = np.empty((len(objects), 3, 3))
    kinds = {"LIGHT": LIGHT_TURN, "CAMERA": CAMERA_TURN}
    for k, i in enumerate(objects):
        before[k] = np.eye(3) if facts.parent_name[i] else global_turn
        after[k] = kinds.get(facts.object_type[i], np.eye(3))
    return before, after


def pole_candidates(facts: SceneFacts, needs: np.ndarray) -> np.ndarray:
    """``(N,)`` the objects that may get a turned helper: not split; left out are bones
    (a bone near the pole would need a helper bone), objects the exporter does not
    write or writes in world space under a parent (a parent it does not write, a vertex
    parent), objects deformed by their parent, skinned, constrained, rigid-body, linked
    or overridden ones, objects in a linked collection (the helper could not be linked
    beside them), and instanced ones (the helper would be instanced too)."""
    n = len(facts.keys)
    is_object = np.array([not bone for _obj, bone in facts.keys], dtype=bool)
    exported = np.array([kind in EXPORTED_TYPES for kind in facts.object_type], dtype=bool)
    skinned = np.zeros(n, dtype=bool)
    skinned[list(facts.skip())] = True
    has_parent = np.array([bool(p) for p in facts.parent_name], dtype=bool)
    return (
        ~needs
        & is_object
        & facts.exists
        & exported
        & ~skinned
        & ~facts.constrained
        & ~facts.rigid_body
        & ~facts.linked
        & (~has_parent | facts.parent_written)
        & ~facts.deformed
        & ~facts.in_linked_collection
        & ~facts.instanced
    )


def _off_pole(
    facts: SceneFacts, parents, world, local: np.ndarray, needs: np.ndarray, global_turn: np.ndarray = FBX_GLOBAL
) -> tuple[list[int], list]:
    """The objects that need no split but whose written rotation comes near the Euler
    pole (:func:`pole_candidates`), and the turn ``C (3, 3)`` of each one's helper
    (:func:`..euler_pole.pole_turns`)."""
    candidates = np.flatnonzero(pole_candidates(facts, needs))
    before, after = written_turns(facts, candidates.tolist(), global_turn)
    budget = POLE_BUDGET * max(1.0, float(np.abs(world).max()))  # the check's own scale
    columns, turns = pole_turns(
        local[:, candidates], before, after, world=world, parents=parents, nodes=candidates, budget=budget
    )
    return candidates[columns].tolist(), list(turns)


def _pole_edit(facts: SceneFacts, i: int, c: np.ndarray) -> ObjectEdit:
    """A still empty turned by ``c`` above the object node ``i``, whose parent inverse
    becomes ``C.T @`` it: the same world matrix, its own channels and animation kept."""
    name = facts.keys[i][0]
    inverse = np.eye(4)
    inverse[:3, :3] = c.T
    return ObjectEdit(
        name,
        helper=f"{name} (Euler pole helper)",
        helper_rotation=core.matrix_to_quat(c),
        parent_inverse=inverse @ facts.parent_inverse[i],
    )


def _plan(inputs: ExactInputs, split: list[int], not_corrected: list) -> ExactPlan:
    """The copy's edits for the nodes ``split``: helpers with the split's factors, the
    constraint readers named, the IK chains noted; the pole helpers as they are."""
    facts, local = inputs.facts, inputs.local
    keys = facts.keys
    index = facts.index()
    bones: dict[str, list[tuple[str, int]]] = {}  # armature -> [(bone, column of the split)]
    for k, i in enumerate(split):
        if keys[i][1]:
            bones.setdefault(keys[i][0], []).append((keys[i][1], k))
    listed = list(not_corrected)
    readers: dict[int, list[int]] = {}
    for rig, rig_bones in bones.items():  # constraints that would read the copy's rebuilt bones
        for reader, bone, why in bone_readers(facts.constraints, rig, {b for b, _k in rig_bones}):
            listed.append((node_label(rig, reader), why))
            readers.setdefault(index[node_label(rig, bone)], []).append(index[node_label(rig, reader)])
    chains: dict[int, list[int]] = {}
    for rig, rig_bones in bones.items():
        for bone, chain in ik_chains(facts.constraints, rig, [b for b, _k in rig_bones]).items():
            chains[index[node_label(rig, bone)]] = [index[node_label(rig, b)] for b in chain]
    for label, target, why in object_readers(facts.constraints, {keys[i][0] for i in split if not keys[i][1]}):
        listed.append((label, why))
        if label in index:
            readers.setdefault(index[target], []).append(index[label])
    outer, inner = continuous_split(local[:, split], small_inner=True)  # away from Euler gimbal lock
    columns = [k for k, i in enumerate(split) if not keys[i][1]]
    objects = [split[k] for k in columns]
    before, after = written_turns(facts, objects, inputs.global_turn)
    outer_objects, inner_objects = turned(outer[:, columns], inner[:, columns], before, after)
    edits = [_shear_edit(inputs, i, outer_objects[:, m], inner_objects[:, m]) for m, i in enumerate(objects)]
    armatures = []
    for rig, rig_bones in bones.items():
        cols = [k for _b, k in rig_bones]
        helper_local, bone_local = turned(outer[:, cols], inner[:, cols])
        arm = facts.armatures[rig]
        armatures.append(
            ArmatureEdit(
                rig,
                [b for b, _k in rig_bones],
                True,
                _side_by_side(helper_local, bone_local),
                every=arm.tracks_play,
                replace=arm.tracks_play and not arm.has_action,
            )
        )
    copy = CopyPlan(inputs.frames, edits + inputs.pole_edits, armatures, selected=inputs.selected)
    return ExactPlan(copy, list(split), listed, readers, chains, inputs)


def _shear_edit(inputs: ExactInputs, i: int, outer: core.TRS, inner: core.TRS) -> ObjectEdit:
    """A helper empty keyed with ``outer (T,)`` above the object node ``i``, keyed with
    ``inner (T,)`` under it (parent inverse the identity). The helper takes the object's
    parenting; its parent inverse puts it in the node's parent's world:
    ``inv(Blender's parent matrix) @ parent world``."""
    facts = inputs.facts
    name = facts.keys[i][0]
    p = int(inputs.parents[i])
    parent_world = inputs.world_now[p] if p >= 0 else np.eye(4)
    helper_inverse = np.linalg.inv(facts.parent_frame[i]) @ parent_world if facts.parent_name[i] else None
    return ObjectEdit(
        name,
        helper=f"{name} (shear helper)",
        helper_parent_inverse=helper_inverse,
        helper_keys=outer,
        parent_inverse=np.eye(4),
        keys=inner,
        mute=True,
    )


def _side_by_side(a: core.TRS, b: core.TRS) -> core.TRS:
    """``(T, K)`` and ``(T, M)`` as one ``(T, K + M)``."""
    return core.TRS(
        np.concatenate([a.translation, b.translation], axis=1),
        np.concatenate([a.rotation, b.rotation], axis=1),
        np.concatenate([a.scale, b.scale], axis=1),
    )
