"""Inspection and the one threshold policy, on hierarchies with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.errors import UsageError
from hierarchy_inspector.addon.model.exports.fix_plans import bake_plan, helper_plan
from hierarchy_inspector.addon.model.inspection import inspect, local_matrices, worst_first
from hierarchy_inspector.addon.model.nodes import Nodes, node_label
from hierarchy_inspector.addon.model.thresholds import Thresholds, parse_threshold
from hypothesis import given, settings
from hypothesis import strategies as st
from model_fixtures import nodes_of


def test_rotated_child_is_sheared_by_the_textbook_angle(rotated_child):
    ins = inspect(rotated_child)
    # 45 deg under (2, 1, 1): the axes meet at 180 - 2 atan(2) ... = 126.87 deg, 36.87 off 90.
    assert ins.shear_max[1] == pytest.approx(math.degrees(math.atan(0.75)), abs=1e-9)
    assert ins.sheared.tolist() == [False, True]
    assert ins.flagged.tolist() == [False, True]
    assert not ins.lossy_local.any()  # the local matrix itself is clean TRS
    assert ins.summary()["sheared"] == 1


def test_thresholds_decide_flagged_sheared_and_the_fix_plans_alike(rotated_child):
    lenient = inspect(rotated_child, Thresholds(shear_deg=40.0, corner=10.0))
    assert not lenient.flagged.any() and not lenient.sheared.any()
    assert bake_plan(lenient) == ([], [])
    strict = inspect(rotated_child, Thresholds(shear_deg=0.1, corner=1e-3))
    assert bake_plan(strict) == (["Child"], [])


def test_lossy_local_is_what_helpers_change_and_what_the_report_flags():
    # A child parented while its parent was rotated and scaled: its local matrix holds
    # shear (world = parent @ local with a sheared local).
    parent = core.TRS([0, 0, 0], core.axis_angle_to_quat([0, 0, 1], 0.5), [3.0, 1.0, 1.0]).to_matrix()
    sheared_local = np.linalg.inv(parent) @ core.TRS([1, 0, 0], [1, 0, 0, 0], [1, 1, 1]).to_matrix()
    world = np.stack([parent, parent @ sheared_local])
    nodes = Nodes([("P", ""), ("C", "")], np.array([-1, 0]), world, -np.ones((2, 3)), np.ones((2, 3)))
    ins = inspect(nodes)
    assert ins.local_shear_max[1] > 10
    assert ins.lossy_local.tolist() == [False, True]
    assert helper_plan(ins) == [1]
    # Over a threshold larger than the shear, neither the report nor helpers act.
    above = inspect(nodes, Thresholds(shear_deg=float(ins.local_shear_max[1]) + 1.0, corner=1e9))
    assert helper_plan(above) == [] and not above.flagged.any()


def test_float32_noise_is_not_local_shear():
    # A parent scaled (50, 0.02, 1): float32 round-off of Blender's matrices looks like
    # a few thousandths of a degree of local shear; it must not count.
    parent = core.TRS([0, 0, 0], core.axis_angle_to_quat([0, 0, 1], 0.3), [50.0, 0.02, 1.0]).to_matrix()
    child = parent @ core.TRS([0.1, 0.2, 0], core.axis_angle_to_quat([1, 0, 0], 0.7), [1, 1, 1]).to_matrix()
    world = np.stack([parent, child]).astype(np.float32).astype(np.float64)
    nodes = Nodes([("P", ""), ("C", "")], np.array([-1, 0]), world, -np.ones((2, 3)), np.ones((2, 3)))
    ins = inspect(nodes, Thresholds(shear_deg=0.0, corner=1e9))
    assert not ins.local_shear_real[1] and not ins.lossy_local.any()


def test_zero_scale_parent_gets_the_pseudo_inverse_and_is_marked(rotated_child):
    rotated_child.world[0, :3, 0] = 0.0
    local, singular = local_matrices(rotated_child)
    assert singular.tolist() == [False, True]
    assert np.isfinite(local).all()


@given(st.lists(st.floats(0, 10), min_size=1, max_size=30), st.data())
def test_worst_first_matches_sorting_by_hand(corners, data):
    shear = data.draw(st.lists(st.floats(0, 90), min_size=len(corners), max_size=len(corners)))
    subset = data.draw(st.lists(st.integers(0, len(corners) - 1), unique=True))
    got = worst_first(np.array(corners), np.array(shear), subset).tolist()
    assert got == sorted(subset, key=lambda i: (-corners[i], -shear[i], i))


def test_root_first_and_subtree_on_a_shuffled_forest():
    parents = np.array([3, -1, 3, 1, 2, -1])  # 1 > 3 > {0, 2 > 4}; 5 alone
    world = np.broadcast_to(np.eye(4), (6, 4, 4)).copy()
    nodes = Nodes([(f"n{i}", "") for i in range(6)], parents, world, -np.ones((6, 3)), np.ones((6, 3)))
    ins = inspect(nodes)
    order = ins.root_first().tolist()
    assert all(order.index(int(p)) < order.index(i) for i, p in enumerate(parents) if p >= 0)
    assert ins.subtree(2) == [1, 3, 2, 4]  # its chain from the root, then what hangs below


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.1, "1"])
def test_thresholds_refuse_values_that_switch_a_gate_off(bad):
    with pytest.raises(ValueError, match="finite number >= 0"):
        Thresholds(shear_deg=bad)
    with pytest.raises(ValueError, match="corner"):
        Thresholds(corner=bad)


def test_node_label_is_the_one_naming_rule():
    assert node_label("Rig", "spine.003") == "Rig > spine.003"
    assert node_label("Cube") == "Cube"
    nodes = nodes_of(core.examples.piston(), bones={2: "B"})
    assert nodes.label(2) == "Root > B" and nodes.kind(2) == "bone" and nodes.armature(2) == "Root"
    assert nodes.is_bone().tolist() == [False, False, True]


@settings(max_examples=200)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_thresholds_from_text_accept_exactly_the_finite_non_negative_numbers(value):
    if math.isfinite(value) and value >= 0:
        assert parse_threshold(repr(value)) == value
    else:
        with pytest.raises(UsageError, match="expected a finite number >= 0"):
            parse_threshold(repr(value))
