"""The exact USD plan, Blender-free and pxr-free: helper joints where a joint's local
holds shear, the new joint order and paths, the animation as UsdSkel stores it (half
scales) composed back against the target, the only-deform-bones reparenting, and the
point check's B-Bone split."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.exports.usd.plan import (
    helper_tokens,
    plan_skeleton,
    point_error,
    static_rest,
    stored_trs,
    trs_matrix,
)


def _trs(t, axis_angle, s):
    q = np.concatenate([[np.cos(axis_angle[1] / 2)], np.sin(axis_angle[1] / 2) * np.asarray(axis_angle[0])])
    return core.TRS(t, q, s).to_matrix()


def _rig(frames: int = 12):
    """Three joints: a root scaling non-uniformly over time, a child whose local scales
    along the root's axes and then rotates (sheared: no one TRS holds it), and its
    child; targets in skeleton space."""
    targets = np.empty((frames, 3, 4, 4))
    for t in range(frames):
        k = t / max(frames - 1, 1)
        root = _trs((0, 0, 0), ((1, 0, 0), 0.3 * k), (1 + k, 0.6 + 0.2 * k, 1.3))
        child = root @ np.diag([1.0 + 0.5 * k, 1.0, 0.8, 1.0]) @ _trs((0.2, 1, 0), ((0, 0, 1), 0.6), (1, 1, 1))
        tip = child @ _trs((0, 1, 0), ((1, 0, 0), -0.4 * k), (1, 1, 1))
        targets[t] = root, child, tip
    return targets


def test_loops_agree_with_the_matrix_product():
    m = trs_matrix([1.0, 2.0, 3.0], [np.cos(0.3), 0.0, np.sin(0.3), 0.0], [2.0, 0.5, 1.0])
    r = core.quat_to_matrix(np.array([np.cos(0.3), 0.0, np.sin(0.3), 0.0]))
    expected = np.eye(4)
    expected[:3, :3] = r @ np.diag([2.0, 0.5, 1.0])
    expected[:3, 3] = [1, 2, 3]
    assert np.allclose(m, expected, atol=1e-15)


def test_sheared_child_gets_a_helper_and_the_file_holds_the_targets():
    target = _rig()
    parents = np.array([-1, 0, 1])
    bind = target[0]
    rest = np.stack([bind[0], np.linalg.inv(bind[0]) @ bind[1], np.linalg.inv(bind[1]) @ bind[2]])
    plan = plan_skeleton(parents, np.zeros(3, bool), target, bind, rest)
    assert plan.split.tolist() == [False, True, False]
    assert plan.old.tolist() == [0, 1, 1, 2] and plan.helper.tolist() == [False, True, False, False]
    assert plan.parents.tolist() == [-1, 0, 1, 2] and plan.remap.tolist() == [0, 2, 3]
    assert (plan.parents < np.arange(4)).all()  # parents before children, as UsdSkel requires
    assert plan.scales.dtype == np.float16 and plan.rotations.dtype == np.float32
    # Composed the way a consumer does, from the stored values alone, level by level:
    local = trs_matrix(plan.translations, plan.rotations, plan.scales)
    world = np.empty_like(local)
    for j, p in enumerate(plan.parents):
        world[:, j] = local[:, j] if p < 0 else world[:, p] @ local[:, j]
    assert np.allclose(world, plan.file_world, atol=1e-12)
    got = world[:, plan.remap]
    err = np.abs(got - target).max() / max(1.0, np.abs(target).max())
    assert err < 1e-3  # half-precision scales: the floor
    # the joint under its helper is a rotation only; the helper rests where the joint rests
    assert np.allclose(plan.translations[:, 2], 0.0) and np.all(plan.scales[:, 2] == 1.0)
    assert np.allclose(plan.rest[1], rest[1]) and np.allclose(plan.rest[2], np.eye(4))
    assert np.allclose(plan.bind[1], bind[1]) and np.allclose(plan.bind[2], bind[1])


def test_without_the_helper_the_shear_is_lost():
    """The same rig's child as one TRS per frame (what Blender's SkelAnimation holds):
    far off, so the helper is what makes it exact."""
    target = _rig()
    local = np.linalg.inv(target[:, 0]) @ target[:, 1]
    d = core.decompose(local)
    one_trs = target[:, 0] @ core.TRS(d.translation, d.rotation, d.scale).to_matrix()
    assert np.abs(one_trs - target[:, 1]).max() > 0.05


def test_half_scales_are_not_passed_down_the_chain():
    """A chain of 12 joints each scaled by 1.37 (not a half-precision number): every
    joint's error stays its own scale's rounding, positions exact to float32."""
    n, frames = 12, 3
    target = np.empty((frames, n, 4, 4))
    for t in range(frames):
        w = np.eye(4)
        for j in range(n):
            w = w @ _trs((0, 0.5, 0), ((0, 0, 1), 0.1 * (t + 1)), (1.37, 1.37, 1.37))
            target[t, j] = w
    parents = np.arange(n) - 1
    plan = plan_skeleton(parents, np.zeros(n, bool), target, target[0], target[0])
    assert not plan.split.any()
    rel = np.abs(plan.file_world - target).max(axis=(-2, -1)) / np.abs(target).max(axis=(-2, -1))
    assert rel.max() < 5e-4
    origins = np.abs(plan.file_world[..., :3, 3] - target[..., :3, 3]).max() / np.abs(target).max()
    assert origins < 1e-6
    # Blender's own values (each local from the exact parent) compose to more:
    exact_local = np.linalg.inv(target[:, :-1]) @ target[:, 1:]
    d = core.decompose(exact_local)
    t32, q32, s16 = stored_trs(d.translation, d.rotation, d.scale)
    local = trs_matrix(t32, q32, s16)
    world = target[:, 0].copy()
    worst = 0.0
    for j in range(1, n):
        world = world @ local[:, j - 1]
        worst = max(worst, float(np.abs(world[..., :3, 3] - target[:, j, :3, 3]).max()))
    assert worst > 10 * origins * np.abs(target).max()


def test_reparented_joints_rest_relative_to_their_file_parent():
    target = _rig(2)
    bind = target[0]
    rest_blender = np.stack([bind[0], np.linalg.inv(bind[0]) @ bind[1], np.linalg.inv(bind[1]) @ bind[2]])
    # the middle joint is not exported: the tip's file parent is the root
    parents = np.array([-1, 0])
    plan = plan_skeleton(parents, np.array([False, True]), target[:, [0, 2]], bind[[0, 2]], rest_blender[[0, 2]])
    rest_world = np.empty_like(plan.rest)
    for j, p in enumerate(plan.parents):  # the rest pose composed along the file's joints
        rest_world[j] = plan.rest[j] if p < 0 else rest_world[p] @ plan.rest[j]
    assert np.allclose(rest_world[plan.remap], bind[[0, 2]], atol=1e-12)
    assert not np.allclose(bind[0] @ rest_blender[2], bind[2], atol=1e-3)  # what Blender wrote
    err = np.abs(plan.file_world[:, plan.remap] - target[:, [0, 2]]).max()
    assert err < 1e-3 * max(1.0, np.abs(target).max())
    still = static_rest(parents, np.array([False, True]), target[0, [0, 2]], rest_blender[[0, 2]])
    assert np.allclose(target[0, 0] @ still[1], target[0, 2], atol=1e-12)


def test_helper_paths_keep_the_joint_names():
    tokens = ["Root", "Root/Arm", "Root/Arm/Hand", "Root/Arm_shear_helper", "Root/Leg"]
    old = np.array([0, 1, 1, 2, 3, 4, 4])
    helper = np.array([False, True, False, False, False, True, False])
    new = helper_tokens(tokens, old, helper)
    assert new == [
        "Root",
        "Root/Arm_shear_helper2",  # a sibling already had the plain name
        "Root/Arm_shear_helper2/Arm",
        "Root/Arm_shear_helper2/Arm/Hand",
        "Root/Arm_shear_helper",
        "Root/Leg_shear_helper",
        "Root/Leg_shear_helper/Leg",
    ]
    assert len(set(new)) == len(new)
    assert [t.rpartition("/")[2] for t, h in zip(new, helper, strict=True) if not h] == [
        t.rpartition("/")[2] for t in tokens
    ]


@pytest.mark.parametrize("on_bbone", [False, True])
def test_points_on_bbones_are_apart(on_bbone):
    expected = np.zeros((2, 4, 3))
    expected[:, :, 0] = [0.0, 1.0, 2.0, 3.0]
    read = expected.copy()
    read[1, 2, 1] = 0.3  # 0.1 of the diagonal (3)
    read[0, 1, 2] = 0.003
    mask = np.array([False, False, on_bbone, False])
    e = point_error(read, expected, mask)
    if on_bbone:
        assert e.vertex == 1 and e.relative == pytest.approx(0.001)
        assert e.bbone_vertex == 2 and e.bbone_frame == 1 and e.bbone_relative == pytest.approx(0.1)
    else:
        assert e.vertex == 2 and e.frame == 1 and e.relative == pytest.approx(0.1) and e.bbone_vertex == -1


def test_objects_chosen_level_by_level_against_the_file_parent():
    """A prim whose ops land off gets a matrix op; its child, whose ops are exact under
    the exact parent, then needs none; a sheared local always gets one; every chosen
    local puts the prim on Blender's world under its parent as the file has it."""
    from hierarchy_inspector.addon.model.exports.usd.plan import plan_objects

    t_count = 3
    root = np.stack([_trs((0, 0, 0), ((0, 0, 1), 0.2 * t), (2.0, 1.0, 0.5)) for t in range(t_count)])
    child_local = _trs((1, 0, 0), ((1, 0, 0), 0.4), (1, 1, 1))
    sheared_local = np.diag([1.5, 1.0, 1.0, 1.0]) @ _trs((0, 1, 0), ((0, 0, 1), 0.7), (1, 1, 1))
    world = np.stack([root, root @ child_local, root @ child_local @ sheared_local], axis=1)
    written = np.stack([root, np.broadcast_to(child_local, root.shape), np.broadcast_to(sheared_local, root.shape)], 1)
    written = written.copy()
    written[:, 0, 0, 3] += 3e-5  # the root's ops 3e-5 off (Euler angles near their pole, say)
    outside = np.broadcast_to(np.eye(4), world.shape).copy()
    chosen, local = plan_objects(np.array([-1, 0, 1]), world, outside, written)
    assert chosen.tolist() == [True, False, True]
    assert np.allclose(local[:, 0], root, atol=1e-12)
    file_root = local[:, 0]
    file_child = file_root @ written[:, 1]
    assert np.allclose(file_child @ local[:, 2], world[:, 2], atol=1e-12)
    unchosen, _ = plan_objects(np.array([-1, 0]), world[:, :2], outside[:, :2], np.stack([root, written[:, 1]], 1))
    assert not unchosen.any()


def test_errors_over_their_limits_are_named():
    """What sends ``export --target usd`` to exit 1: each kind over its own limit, and
    B-Bone vertices (USD has none) named apart."""
    from hierarchy_inspector.addon.model.exports.animated_gltf import FrameError
    from hierarchy_inspector.addon.model.exports.usd.check import UsdErrors
    from hierarchy_inspector.addon.model.exports.usd.plan import PointError

    def frame(rel):
        return FrameError(rel, rel, {}, np.zeros(1), 1)

    exact = UsdErrors(frame(1e-7), frame(9e-4), {"Body": PointError(9e-4, 0.0, 0, 0, 0.0, 0.0, -1, -1)}, [])
    assert exact.over() == []
    off = UsdErrors(frame(2e-5), frame(2e-3), {"Body": PointError(1e-4, 0.0, 0, 0, 7e-3, 0.02, 5, 3)}, [])
    over = off.over()
    assert len(over) == 3 and over[0].startswith("objects 2.00e-05") and over[1].startswith("joints 2.00e-03")
    assert "'Body' points on B-Bones 7.00e-03" in over[2] and "no B-Bones" in over[2]


def test_the_usd_process_gets_objects_and_each_armatures_bones_in_armature_space():
    from hierarchy_inspector.addon.model.exports.usd.check import scene_request
    from hierarchy_inspector.addon.model.timeline import FrameSeries

    target = _rig(frames=4)
    arm_world = np.broadcast_to(_trs((1, 2, 3), ((0, 0, 1), 0.4), (2, 2, 2)), (4, 4, 4))
    keys = [("Rig", ""), ("Box", ""), ("Rig", "Root"), ("Rig", "Child"), ("Rig", "Tip")]
    world = np.concatenate([arm_world[:, None], arm_world[:, None] @ target[:, :1], arm_world[:, None] @ target], 1)
    boxes = np.zeros((4, 5, 3))
    series = FrameSeries(np.arange(1, 5), keys, np.array([-1, 0, 0, 2, 3]), world, boxes, boxes, 24.0)
    data = scene_request(series, {"Box"})
    assert data["object_names"].tolist() == ["Rig", "Box"] and data["skinned"].tolist() == ["Box"]
    assert data["arm_names"].tolist() == ["Rig"] and data["bones_0"].tolist() == ["Root", "Child", "Tip"]
    assert data["bone_parents_0"].tolist() == [-1, 0, 1]
    assert np.allclose(data["pose_0"], target, atol=1e-12)
