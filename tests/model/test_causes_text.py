"""Cause groups, name elision and units: Blender-free."""

from __future__ import annotations

import numpy as np
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.advice.causes import cause_groups, group_label, nearest_sources
from hierarchy_inspector.addon.model.inspection import inspect
from hierarchy_inspector.addon.model.nodes import Nodes
from hierarchy_inspector.addon.model.text import Units, elide_name, elide_start
from hypothesis import given
from hypothesis import strategies as st


def _two_edits() -> Nodes:
    """A root with two branches; one node per branch scaled non-uniformly (the edits),
    rotated children below each, and a clean branch."""
    parents = [-1, 0, 1, 2, 0, 4, 5, 0, 7]
    names = ["rig", "torso", "spine", "chest", "arm", "upper", "fore", "leg", "shin"]
    scale = np.ones((9, 3))
    scale[1] = (1.3, 1.0, 0.7)
    scale[5] = (1.0, 1.4, 0.8)
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (9, 1))
    rot[[2, 3, 6, 8]] = core.axis_angle_to_quat([0.3, 0.5, 0.8], 0.7)
    trans = np.tile([0.0, 0.0, 1.0], (9, 1))
    local = core.TRS(trans, rot, scale)
    h = core.Hierarchy(parents)
    world = h.world_matrices(local.to_matrix())
    keys = [("rig", "")] + [("rig", n) for n in names[1:]]
    lo, hi = np.full((9, 3), -0.1), np.full((9, 3), 0.1)
    channel = scale.copy()
    return Nodes(keys, np.array(parents), world, lo, hi, channel_scale=channel)


def test_two_edits_give_two_cause_groups():
    ins = inspect(_two_edits())
    cause, count = nearest_sources(ins)
    assert list(cause) == [-1, 1, 1, 1, -1, 5, 5, -1, -1]
    assert list(count) == [0, 1, 1, 1, 0, 1, 1, 0, 0]
    groups = cause_groups(ins)
    assert ins.flagged[[2, 3, 6]].all() and not ins.flagged[[0, 7, 8]].any()
    assert sorted(g.cause for g in groups) == [1, 5]
    labels = {group_label(ins, g) for g in groups}
    assert labels == {"torso (1.3, 1, 0.7)", "upper (1, 1.4, 0.8)"}
    for g in groups:  # worst first inside a group
        corners = ins.worst_corner[g.members]
        assert list(corners) == sorted(corners, reverse=True)


def test_without_channels_the_local_scale_is_the_source():
    nodes = _two_edits()
    nodes.channel_scale[:] = np.nan
    cause, _count = nearest_sources(inspect(nodes))
    assert cause[3] == 1 and cause[6] == 5


@given(st.text(min_size=0, max_size=40), st.integers(min_value=1, max_value=50))
def test_elide_start_keeps_the_end_and_fits(text, width):
    out = elide_start(text, width)
    assert len(out) <= max(width, 1) or out == text
    if len(text) <= width:
        assert out == text
    else:
        kept = out[1:] if out.startswith("\N{HORIZONTAL ELLIPSIS}") else out
        assert text.endswith(kept) and len(out) == width


@given(
    st.sampled_from(["DEF-", "ORG-", "MCH-", "", "tweak_", "foot_"]),
    st.text(min_size=0, max_size=30),
    st.integers(1, 40),
)
def test_elide_name_keeps_the_kind_prefix_and_the_end(prefix, rest, width):
    """Before, names were elided from the start ('...pper_arm.L'): Rigify's DEF-, ORG-
    and MCH- were lost. The prefix stays (a lower-case word like 'foot_' is no prefix)."""
    text = prefix + rest
    out = elide_name(text, width)
    if len(text) <= width:
        assert out == text
        return
    assert len(out) <= max(width, 1)
    if prefix in ("DEF-", "ORG-", "MCH-") and rest and width >= len(prefix) + 3:
        assert out.startswith(prefix + "\N{HORIZONTAL ELLIPSIS}") and text.endswith(out[len(prefix) + 1 :])
    else:
        assert out == elide_start(text, width)


def test_elide_name_examples():
    assert elide_name("DEF-upper_arm.L", 10) == "DEF-\N{HORIZONTAL ELLIPSIS}arm.L"
    assert elide_name("tweak_spine.003", 8) == "\N{HORIZONTAL ELLIPSIS}ine.003"


def test_units_follow_the_scene_and_never_drop_digits():
    assert Units("METRIC").length(1.2731) == "1.27 m"
    assert Units("METRIC").length(0.0389) == "3.89 cm"
    assert Units("METRIC", scale_length=0.01).length(100.0) == "1.00 m"
    assert Units("IMPERIAL").length(0.3048 * 3) == "3.00 ft"
    assert Units().length(0.389) == "0.389 units"
    assert Units("METRIC").length(0.0) == "0 m"
    assert Units("METRIC").vector([1.0, -2.0, 0.0]) == "(1.000, -2.000, 0.000)"


def _shear_cause_by_walking(ins, i: int):
    """The per-node walk up the chain that ``shear_cause`` computes for all nodes at once."""
    a, parents = ins.analysis, ins.nodes.parents
    rot_i = core.quat_to_matrix(a.global_rotation[i])
    node = int(parents[i])
    while node >= 0:
        mags = np.abs(a.local.scale[node])
        if mags.max() - mags.min() > 1e-4 * max(mags.max(), 1e-12):
            rel = core.quat_to_matrix(a.global_rotation[node]).T @ rot_i
            if not np.all(np.abs(np.abs(rel) - np.round(np.abs(rel))) < 1e-5):
                q = core.matrix_to_quat(rel)
                return node, float(np.degrees(2.0 * np.arctan2(np.linalg.norm(q[1:]), abs(q[0]))))
        node = int(parents[node])
    return None


@given(st.integers(0, 2**32 - 1))
def test_shear_causes_of_all_nodes_equal_walking_up_each_chain(seed):
    from hierarchy_inspector.addon.model.explain import shear_cause
    from hierarchy_inspector.addon.model.thresholds import NON_UNIFORM_RATIO

    assert NON_UNIFORM_RATIO == 1e-4  # the walk above spells the policy out
    rng = np.random.default_rng(seed)
    n = 40
    parents = np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)])
    scale = np.where(rng.random((n, 1)) < 0.3, rng.uniform(0.5, 2.0, (n, 3)), 1.0)
    turn = np.where(rng.random((n, 1)) < 0.3, 0.0, 1.0)  # some children not rotated: axis-aligned
    trs = core.TRS(rng.normal(size=(n, 3)), core.euler_to_quat(turn * rng.uniform(-3, 3, (n, 3)), "XYZ"), scale)
    world = core.Hierarchy(parents).world_matrices(trs.to_matrix())
    ins = inspect(Nodes([(f"n{i}", "") for i in range(n)], parents, world, -np.ones((n, 3)), np.ones((n, 3))))
    for i in range(n):
        got, want = shear_cause(ins, i), _shear_cause_by_walking(ins, i)
        assert (got is None) == (want is None)
        if got is not None:
            assert got[0] == want[0] and abs(got[1] - want[1]) < 1e-9


def test_cause_groups_equal_grouping_one_cause_at_a_time():
    from hierarchy_inspector.addon.model.advice.causes import cause_groups, nearest_sources

    rng = np.random.default_rng(11)
    n = 300
    parents = np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)])
    scale = np.where(rng.random((n, 1)) < 0.2, rng.uniform(0.5, 2.0, (n, 3)), 1.0)
    trs = core.TRS(rng.normal(size=(n, 3)), core.euler_to_quat(rng.uniform(-3, 3, (n, 3)), "XYZ"), scale)
    world = core.Hierarchy(parents).world_matrices(trs.to_matrix())
    ins = inspect(Nodes([(f"n{i}", "") for i in range(n)], parents, world, -np.ones((n, 3)), np.ones((n, 3))))
    flagged = np.flatnonzero(ins.flagged)
    assert len(flagged) > 50
    cause = nearest_sources(ins)[0]
    expected = sorted(
        (
            (
                -float(ins.worst_corner[flagged[cause[flagged] == c]].max()),
                int(c),
                ins.worst_first(flagged[cause[flagged] == c]).tolist(),
            )
            for c in np.unique(cause[flagged])
        ),
    )
    got = [(-g.worst_corner, g.cause, g.members.tolist()) for g in cause_groups(ins)]
    assert got == expected
    assert cause_groups(ins, []) == []
