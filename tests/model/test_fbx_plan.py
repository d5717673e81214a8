"""The FBX exports' plans, Blender-free: which nodes get helpers and their keys (the
copy's product is Blender's local at every frame), the Euler-pole turns, what is muted,
what is left out and why (linked, rigid, refused armatures, constraint readers), the
plan again without the helpers that made a node worse, the accumulated plan and its
check, and Blender's pose channels for a bone's local."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.exports.euler_pole import POLE_DEG, middle_sine
from hierarchy_inspector.addon.model.exports.fbx.accumulated import check, plan_accumulated
from hierarchy_inspector.addon.model.exports.fbx.copy_plan import HELD, bone_channels, held_channels
from hierarchy_inspector.addon.model.exports.fbx.exact import plan_exact, without_worse
from hierarchy_inspector.addon.model.exports.fbx.facts import ArmatureFacts, ConstraintFacts, SceneFacts
from hierarchy_inspector.addon.model.exports.fbx.readers import bone_readers, ik_chains, object_readers
from hierarchy_inspector.addon.model.exports.fbx_check import FbxRead
from hierarchy_inspector.addon.model.timeline import FrameSeries

T = 8


def _m(translation=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), angle=0.0, scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    return core.TRS(translation, core.axis_angle_to_quat(axis, angle), scale).to_matrix()


#: The nodes of the scene the tests plan for: name, parent, kind (an object type, or
#: BONE for bones of 'Rig'), and each one's local matrix at frame fraction k (0..1).
NODES = [
    ("Stretch", -1, "EMPTY", lambda k: _m((0, 0, 1), (0, 1, 0), 0.5, (1 + 1.5 * k, 1.0, 0.8))),
    # scaled after it is rotated: sheared, no one TRS holds it
    ("Skewed", 0, "MESH", lambda k: np.diag([1.4, 1.0, 0.7, 1.0]) @ _m((0.5, 1, 0), (0, 0, 1), 0.6 + k)),
    ("Tip", 1, "MESH", lambda k: _m((0, 1, 0))),
    ("Linked", 0, "MESH", lambda k: np.diag([1.0, 1.6, 0.7, 1.0]) @ _m((1, 0, 0), (1, 0, 0), 0.7)),
    ("Rig", -1, "ARMATURE", lambda k: _m()),
    (("Rig", "Root"), 4, "BONE", lambda k: _m((0, 0, 0), (1, 0, 0), 0.3 * k, (1 + k, 0.6, 1.3))),
    (("Rig", "Child"), 5, "BONE", lambda k: np.diag([1.0, 1.3, 0.6, 1.0]) @ _m((0, 1, 0), (0, 0, 1), 0.6)),
    (("Rig", "Hand"), 6, "BONE", lambda k: _m((0, 1, 0))),
    # near the Euler pole: turned 89.9 degrees about Y, far from the origin
    ("Pole", 0, "EMPTY", lambda k: _m((3, 0, 0), (0, 1, 0), np.radians(89.9 + 0.01 * k), (2.0, 2.0, 2.0))),
    ("Far", 8, "MESH", lambda k: _m((0, 0, 9))),
]


def _series() -> tuple[FrameSeries, np.ndarray]:
    """Blender's worlds ``(T, N, 4, 4)`` of :data:`NODES` at frames 1..T and their
    locals, composed as matrices (as Blender does)."""
    keys = [name if isinstance(name, tuple) else (name, "") for name, _p, _k, _f in NODES]
    parents = np.array([p for _n, p, _k, _f in NODES])
    local = np.array([[f(t / (T - 1)) for _n, _p, _k, f in NODES] for t in range(T)])
    world = core.Hierarchy(parents).tile(T).world_matrices(local.reshape(-1, 4, 4)).reshape(local.shape)
    boxes = np.zeros((T, len(keys), 3))
    return FrameSeries(np.arange(1, T + 1), keys, parents, world, boxes - 0.5, boxes + 0.5, 24.0), local


def _armature(**changes) -> ArmatureFacts:
    fields = dict(linked=False, overridden=False, data_shared=False, hidden=False, has_action=True)
    fields.update(blend_type="REPLACE", influence=1.0, tracks_play=False)
    fields.update(changes)
    return ArmatureFacts(**fields)


def _constraint(owner: str, **changes) -> ConstraintFacts:
    obj, _sep, bone = owner.partition(" > ")
    fields = dict(obj=obj, bone=bone, name="C", type="COPY_ROTATION")
    fields.update(muted=False, enabled=True, target="", subtarget="", target_space="WORLD", chain=())
    fields.update(changes)
    return ConstraintFacts(**fields)


def _facts(series: FrameSeries, current: int = 0, constraints=(), rig=None, **flags) -> SceneFacts:
    """The facts of :func:`_series`' scene: objects parented by object, identity parent
    inverses (Blender's parent matrix is the parent's world), nothing linked; ``flags``:
    name -> bool arrays' entries to set (``linked=["Linked"]``)."""
    n = len(series.keys)
    kinds = [kind for _n, _p, kind, _f in NODES]
    names = [key[0] for key in series.keys]
    is_object = np.array([kind != "BONE" for kind in kinds])
    parent_name = [names[p] if p >= 0 and is_object[i] else "" for i, p in enumerate(series.parents)]
    arrays = {}
    for field in ("linked", "rigid_body", "constrained", "deformed", "in_linked_collection", "instanced"):
        arrays[field] = np.array([name in flags.get(field, ()) and is_object[i] for i, name in enumerate(names)])
    parent_frame = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    for i, p in enumerate(series.parents):
        if is_object[i] and p >= 0:
            parent_frame[i] = series.world[current, p]
    return SceneFacts(
        keys=list(series.keys),
        object_type=[kind if kind != "BONE" else "" for kind in kinds],
        exists=np.ones(n, dtype=bool),
        parent_name=parent_name,
        parent_type=["OBJECT" if p else "" for p in parent_name],
        parent_written=np.array([bool(p) for p in parent_name]),
        tail_length=np.zeros(n),
        parent_frame=parent_frame,
        parent_inverse=np.broadcast_to(np.eye(4), (n, 4, 4)).copy(),
        armatures={"Rig": rig or _armature()},
        constraints=list(constraints),
        skinned=set(flags.get("skinned", ())),
        instances=[],
        **arrays,
    )


def _plan(**kwargs):
    series, local = _series()
    facts = _facts(series, **kwargs)
    return plan_exact(series, list(range(T)), 0, facts), series, local


def test_sheared_nodes_get_keyed_helpers_whose_product_is_the_local_at_every_frame():
    plan, series, local = _plan(linked=["Linked"])
    assert plan.helper_labels() == ["Skewed", "Rig > Child"]
    assert plan.not_corrected == [("Linked", "linked data: left as it is")]
    skewed = plan.copy.objects[0]
    assert (skewed.name, skewed.helper, skewed.mute) == ("Skewed", "Skewed (shear helper)", True)
    # Blender in the copy: parent's world @ helper's parent inverse @ helper keys @ object keys
    helper_world = series.world[:, 0] @ skewed.helper_parent_inverse @ skewed.helper_keys.to_matrix()
    assert np.abs(helper_world @ skewed.parent_inverse @ skewed.keys.to_matrix() - series.world[:, 1]).max() < 1e-12
    # each factor one TRS and off the Euler pole as the exporter writes it (no parent in the file: its axes)
    for factor in (skewed.helper_keys, skewed.keys):
        assert (middle_sine(core.quat_to_matrix(factor.rotation)[:, None]) < np.sin(np.radians(60.0)) + 1e-9).all()
    (rig,) = plan.copy.armatures
    assert (rig.name, rig.bones, rig.helpers, rig.every, rig.replace) == ("Rig", ["Child"], True, False, False)
    assert rig.keyed() == [("Child", True), ("Child", False)]
    composed = rig.local[:, 0].to_matrix() @ rig.local[:, 1].to_matrix()
    assert np.abs(composed - local[:, 6]).max() < 1e-12
    assert plan.copy.muted() == [("Skewed", ""), ("Rig", "Child")]
    assert plan.copy.frames == list(range(1, T + 1))


def test_what_cannot_be_split_is_named_and_skinned_objects_are_left_alone():
    blended = _armature(tracks_play=True, blend_type="ADD", influence=0.5)
    plan, _series_, _local = _plan(rig=blended, rigid_body=["Skewed"], skinned=["Linked"])
    listed = dict(plan.not_corrected)
    assert plan.split == [] and plan.copy.armatures == [] and "Linked" not in listed
    assert listed["Skewed"] == "rigid body (the simulation places it): left as it is"
    assert listed["Rig > Child"].startswith("its active action is blended (Add, influence 0.5) over NLA tracks")
    assert _armature(linked=True).refusal() == "linked armature: left as it is"
    assert "edit mode" in _armature(overridden=True).refusal() and _armature().refusal() == ""
    plan, _series_, _local = _plan(deformed=["Skewed"])
    assert "Skewed" not in dict(plan.not_corrected) and plan.helper_labels() == ["Linked", "Rig > Child"]


def test_nla_tracks_beneath_key_every_channel_and_replace_without_an_action():
    plan, _series_, _local = _plan(rig=_armature(tracks_play=True, has_action=False))
    (rig,) = plan.copy.armatures
    assert rig.every and rig.replace


def test_an_object_near_the_euler_pole_gets_a_still_turned_helper():
    plan, series, local = _plan()
    assert plan.pole_labels() == ["Pole"]
    (edit,) = [e for e in plan.copy.objects if e.name == "Pole"]
    assert edit.helper == "Pole (Euler pole helper)" and edit.keys is None and not edit.mute
    c = core.quat_to_matrix(edit.helper_rotation)
    # the same world: helper C above, parent inverse C.T @ it
    assert np.abs(c @ edit.parent_inverse[:3, :3] - np.eye(3)).max() < 1e-12
    written = c.T @ local[:, 8, :3, :3] / 2.0  # (its scale is 2)
    assert middle_sine(local[:, None, 8, :3, :3] / 2.0).max() > np.cos(np.radians(POLE_DEG))
    assert middle_sine(written[:, None]).max() < 0.5
    series_, local_ = _series()
    quiet = plan_exact(series_, list(range(T)), 0, _facts(series_), pole_helpers=False)
    assert quiet.pole == [] and all(e.name != "Pole" for e in quiet.copy.objects)
    constrained = plan_exact(series_, list(range(T)), 0, _facts(series_, constrained=["Pole"]))
    assert constrained.pole == []


def test_constraint_readers_are_named_and_ik_chains_noted():
    constraints = [
        _constraint("Rig > Hand", target="Rig", subtarget="Child", target_space="LOCAL"),
        _constraint("Rig > Hand", name="IK", type="IK", chain=("Child", "Root")),
        _constraint("Tip", target="Skewed", target_space="LOCAL_WITH_PARENT"),
        _constraint("Far", target="Skewed", target_space="WORLD"),
        _constraint("Rig > Child", name="IK", type="IK", chain=("Root",)),
    ]
    assert bone_readers(constraints, "Rig", {"Child"}) == [
        ("Hand", "Child", "constraint 'C' reads 'Child' in local space, which gets a helper bone")
    ]
    assert bone_readers(constraints[1:], "Rig", {"Root"}) == [
        ("Hand", "Root", "IK constraint 'IK' spans 'Root', which gets a helper bone"),
        ("Child", "Root", "IK constraint 'IK' spans 'Root', which gets a helper bone"),
    ]
    assert bone_readers([constraints[0]._replace(muted=True)], "Rig", {"Child"}) == []
    assert object_readers(constraints, {"Skewed"}) == [
        ("Tip", "Skewed", "constraint 'C' reads 'Skewed' in local space, which gets a helper")
    ]
    assert ik_chains(constraints, "Rig", ["Child", "Hand"]) == {"Hand": ["Child", "Root"], "Child": ["Root"]}
    plan, series, _local = _plan(constraints=constraints)
    index = {series.label(i): i for i in range(len(series.keys))}
    assert [label for label, _why in plan.not_corrected] == ["Rig > Hand", "Tip"]
    assert plan.readers == {index["Rig > Child"]: [index["Rig > Hand"]], index["Skewed"]: [index["Tip"]]}
    assert plan.chains == {index["Rig > Child"]: [index["Rig > Root"]]}


def test_without_worse_leaves_out_the_helpers_a_worse_node_reads():
    constraints = [_constraint("Rig > Hand", target="Rig", subtarget="Child", target_space="LOCAL")]
    plan, _series_, _local = _plan(constraints=constraints)
    ours = {"Rig > Hand": 1.7, "Skewed": 1e-7, "Rig > Child": 1e-7}
    plain = {"Rig > Hand": 1.2, "Skewed": 0.3, "Rig > Child": 0.2}
    again = without_worse(plan, ours, plain, 1e-5)
    assert again.helper_labels() == ["Skewed", "Linked"] and again.copy.armatures == []
    listed = dict(again.not_corrected)
    assert listed["Rig > Child"].startswith("its helper put 'Rig > Hand' 1.7e+00 units off where Blender's plain")
    assert without_worse(plan, {"Rig > Hand": 1.0}, {"Rig > Hand": 1.2}, 1e-5) is None  # better than plain


def _accumulated_worlds(local: core.TRS, parents) -> np.ndarray:
    t, n = local.translation.shape[:2]
    flat = core.TRS(local.translation.reshape(-1, 3), local.rotation.reshape(-1, 4), local.scale.reshape(-1, 3))
    return core.Hierarchy(parents).tile(t).accumulate(flat).to_matrix().reshape(t, n, 4, 4)


def test_accumulated_plan_keys_every_node_it_can_and_its_check_reads_a_file_back():
    series, _local = _series()
    facts = _facts(series, linked=["Linked"])
    facts = facts._replace(tail_length=np.where(np.array([k == ("Tip", "") for k in series.keys]), 0.5, 0.0))
    plan = plan_accumulated(series, facts)
    assert plan.not_corrected == [("Linked", "linked data: left as it is")]
    names = [e.name for e in plan.copy.objects]
    assert names == ["Stretch", "Skewed", "Tip", "Rig", "Pole", "Far"]
    assert all(e.mute and e.helper == "" and np.array_equal(e.parent_inverse, np.eye(4)) for e in plan.copy.objects)
    tip = plan.copy.objects[2]
    assert np.allclose(tip.keys.translation - plan.local.translation[:, 2], [0.0, -0.5, 0.0])  # from the tail
    (rig,) = plan.copy.armatures
    assert (rig.bones, rig.helpers) == (["Root", "Child", "Hand"], False)
    assert len(plan.corrected) == len(series.keys) - 1
    # position and rotation exact in the accumulation, wherever Blender's world holds no skew
    accumulated = _accumulated_worlds(plan.local, series.parents)
    assert np.abs(accumulated[..., :3, 3] - series.world[..., :3, 3]).max() < 1e-9
    # a file that holds those locals (ufbx composes them as matrices) checks clean; one node off by 0.01 is seen
    keys = series.keys
    file_worlds = core.Hierarchy(series.parents).tile(T).world_matrices(plan.local.to_matrix().reshape(-1, 4, 4))
    read = FbxRead(
        names=[bone or obj for obj, bone in keys],
        owners=[obj if bone else "" for obj, bone in keys],
        worlds=file_worlds.reshape(accumulated.shape),
        skinned={},
        parents=series.parents.copy(),
    )
    error, skew = check(read, series, plan.local, plan.corrected)
    assert error.relative < 1e-12 and error.checked == len(plan.corrected)
    assert skew["Stretch"] < 1e-9 and skew["Tip"] > 1e-3  # below a sheared parent: the skew no TRS holds
    read.worlds[:, 2, 0, 3] += 0.01
    assert check(read, series, plan.local, plan.corrected)[0].per_node["Tip"] == pytest.approx(0.01, rel=1e-6)


def test_bone_channels_give_the_local_through_the_rest_pose():
    rng = np.random.default_rng(3)
    rest_parent = np.stack([_m((0, 1, 0), (1, 0, 0), 0.4), np.eye(4)])
    rest = np.stack([_m((0.2, 1.5, 0), (0, 0, 1), 0.3), _m((0, 0, 1), (0, 1, 0), -0.2)])
    q = core.quat_normalize(rng.normal(size=(T, 2, 4)))
    local = core.TRS(rng.normal(size=(T, 2, 3)), q, 1.0 + rng.random((T, 2, 3)))
    local = core.TRS(local.translation, local.rotation, local.scale.copy())
    local.scale[:, 1] = 1.0  # the second bone's scale stays put: held
    channels = bone_channels(rest_parent, rest, local, every=[False, False])
    basis = core.TRS(
        channels.values["location"].astype(float),
        channels.values["rotation_quaternion"].astype(float),
        channels.values["scale"].astype(float),
    )
    rest_rel = np.linalg.inv(rest_parent) @ rest
    assert np.abs(rest_rel[None] @ basis.to_matrix() - local.to_matrix()).max() < 1e-5  # float32 curves
    assert channels.held["scale"][1].all() and not channels.held["location"].any()
    every = bone_channels(rest_parent, rest, local, every=[False, True])
    assert not every.held["scale"][1].any()
    dots = np.einsum("tki,tki->tk", basis.rotation[1:], basis.rotation[:-1])
    assert (dots > 0).all()  # quaternions continuous in time


def test_held_channels_stay_within_single_precision():
    """A channel held (no curve) spans at most two float32 epsilons of max(1, the
    bone's largest value) over the frames; its pose value is the span's middle, so no
    frame moves by more than one epsilon; anything wider keeps its curve."""
    eps = float(np.finfo(np.float32).eps)
    rng = np.random.default_rng(7)
    base = rng.normal(size=(1, 4, 3)) * np.array([1.0, 1e-3, 50.0, 1.0])[None, :, None]
    value = np.repeat(base, 30, axis=0)
    value[:, 0, 0] += np.linspace(0, 0.9 * HELD, 30)  # jitter under the bound: held
    value[:, 1, 1] += np.linspace(0, 1e-7, 30)  # under 2 eps of 1.0 although the values are tiny: held
    value[:, 2, 2] += np.linspace(0, 60 * eps, 30)  # under 2 eps of 50: held
    value[:, 3, 0] += np.linspace(0, 3 * eps, 30)  # over 2 eps of 1: keyed
    held, pose = held_channels(value)
    assert held[:3].all() and not held[3, 0] and held[3, 1:].all()
    scale = np.maximum(1.0, np.abs(value).max(axis=(0, 2)))[:, None]
    assert (np.abs(value - pose[None]).max(axis=0)[held] <= (1.01 * HELD / 2 * scale + 1e-7 * np.abs(pose))[held]).all()
    assert np.array_equal(pose[~held], value[0][~held].astype(np.float32))
