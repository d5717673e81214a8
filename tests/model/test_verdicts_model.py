"""The read-back verdicts' numbers, Blender-free: non-finite errors never pass, the FBX
comparison with the exporter's camera and light turns, file vertices matched to
Blender's, the bound on what a dropped shear moves (against the hierarchy composed
again by loops), unused glTF parts removed without changing what the file holds, and
which helpers to leave out where a file is worse than Blender's plain export."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.exports.animated_gltf import (
    shear_moves,
    subtree_extent,
    within_tolerance,
    worst_label,
)
from hierarchy_inspector.addon.model.exports.euler_pole import CAMERA_TURN, LIGHT_TURN
from hierarchy_inspector.addon.model.exports.fbx_check import FbxRead, compare, fbx_unit_meters
from hierarchy_inspector.addon.model.exports.gltf_animation import append_accessor, read_accessor
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf
from hierarchy_inspector.addon.model.exports.verdicts.plain import helpers_to_drop, worse_nodes
from hierarchy_inspector.addon.model.exports.verdicts.prune import remove_unused
from hierarchy_inspector.addon.model.exports.verdicts.skinned import match_vertices, mesh_error
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation


def test_non_finite_errors_never_pass():
    assert within_tolerance(0.0) and within_tolerance(1e-5) and not within_tolerance(1.1e-5)
    assert not within_tolerance(np.nan) and not within_tolerance(np.inf)
    assert worst_label({"a": 1.0, "b": np.nan, "c": 2.0}) == "b" and worst_label({"a": 1.0, "c": 2.0}) == "c"


def _read(worlds, names):
    return FbxRead(list(names), [""] * len(names), np.asarray(worlds), {})


def test_fbx_compare_turns_cameras_and_lights_and_keeps_nan():
    rng = np.random.default_rng(3)
    q = Rotation.random(3, random_state=4).as_quat()[:, [3, 0, 1, 2]]
    world = core.TRS(rng.normal(size=(1, 3, 3)), q[None], np.ones((1, 3, 3))).to_matrix()
    keys = [("Camera", ""), ("Sun", ""), ("Cube", "")]
    turn4 = {0: np.eye(4), 1: np.eye(4)}
    turn4[0][:3, :3], turn4[1][:3, :3] = CAMERA_TURN, LIGHT_TURN
    in_file = world.copy()
    in_file[:, 0] = world[:, 0] @ turn4[0]
    in_file[:, 1] = world[:, 1] @ turn4[1]
    read = _read(in_file, ["Camera", "Sun", "Cube"])
    assert compare(read, keys, world).relative > 0.1  # the false alarm
    turned = compare(read, keys, world, turns={0: CAMERA_TURN, 1: LIGHT_TURN})
    assert turned.relative < 1e-12 and turned.checked == 3
    broken = world.copy()
    broken[:, 2, 0, 0] = np.inf
    error = compare(_read(broken, ["Camera", "Sun", "Cube"]), keys, world, turns={0: CAMERA_TURN, 1: LIGHT_TURN})
    assert np.isnan(error.relative) or np.isinf(error.relative)
    assert not within_tolerance(error.relative) and worst_label(error.per_node) == "Cube"


def test_fbx_keys_several_nodes_share_are_left_out():
    read = FbxRead(["A", "A", "B"], ["", "", ""], np.tile(np.eye(4), (1, 3, 1, 1)), {})
    assert read.index() == {("", "B"): 2} and read.shared() == {("", "A")}


def test_fbx_unit_meters():
    assert fbx_unit_meters(0.01, "METRIC", True, 1.0) == pytest.approx(0.01)
    assert fbx_unit_meters(0.01, "METRIC", False, 2.0) == pytest.approx(2.0)
    assert fbx_unit_meters(0.01, "NONE", True, 1.0) == pytest.approx(1.0)


def test_vertices_match_whatever_their_order_coincident_ones_are_all_candidates():
    rng = np.random.default_rng(5)
    blender = rng.normal(size=(200, 3)).astype(np.float32).astype(np.float64)
    blender[7] = blender[3]  # two vertices in one place
    order = rng.permutation(200)
    in_file = (blender[order] + rng.normal(scale=1e-8, size=(200, 3))).astype(np.float32)  # round-off
    in_file[0] = 50.0  # a vertex Blender has not
    got = match_vertices(in_file, blender)
    assert (got[0] < 0).all()
    for k in range(1, 200):
        assert order[k] in got[k]
        expected = {3, 7} if order[k] in (3, 7) else {order[k]}
        assert set(got[k][got[k] >= 0]) == expected


def test_mesh_error_names_the_worst_vertex_and_frame_and_never_passes_nan():
    rng = np.random.default_rng(6)
    blender = rng.normal(size=(4, 30, 3))
    placed = blender.copy()
    placed[2, 17] += (0.0, 0.03, 0.0)
    error = mesh_error("Body", placed, blender, [10, 11, 12, 13])
    assert (error.vertex, error.frame) == (17, 12) and error.distance == pytest.approx(0.03)
    size = max(np.linalg.norm(b.max(axis=0) - b.min(axis=0)) for b in blender)
    assert error.relative == pytest.approx(0.03 / size) and not error.exact
    placed[1, 4, 0] = np.nan
    bad = mesh_error("Body", placed, blender, [10, 11, 12, 13])
    assert np.isnan(bad.relative) and not bad.exact and (bad.vertex, bad.frame) == (4, 11)


def _random_hierarchy(rng, n: int, t: int):
    parents = np.array([-1] + [int(rng.integers(0, k)) for k in range(1, n)])
    q = Rotation.random(t * n, random_state=int(rng.integers(1 << 30))).as_quat()[:, [3, 0, 1, 2]].reshape(t, n, 4)
    local = core.TRS(rng.normal(size=(t, n, 3)), q, np.exp(rng.normal(scale=0.4, size=(t, n, 3)))).to_matrix()
    shear = np.broadcast_to(np.eye(4), (t, n, 4, 4)).copy()
    shear[..., 0, 1] = rng.normal(scale=1e-3, size=(t, n))
    return parents, local @ shear


def _worlds(parents, local):
    world = np.empty_like(local)
    for i in range(len(parents)):  # parents come first here
        world[:, i] = local[:, i] if parents[i] < 0 else world[:, parents[i]] @ local[:, i]
    return world


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_the_dropped_shear_bound_holds_on_every_node_below(seed):
    """Drop one node's shear, compose the hierarchy again by loops: no world matrix below
    moves by more than :func:`shear_moves` says (and it is not loose by orders)."""
    rng = np.random.default_rng(seed)
    parents, local = _random_hierarchy(rng, 12, 3)
    world = _worlds(parents, local)
    extent = subtree_extent(world, parents)
    node = int(rng.integers(0, 12))
    parent_world = world[:, parents[node]] if parents[node] >= 0 else np.broadcast_to(np.eye(4), (3, 4, 4))
    bound = shear_moves(local[:, [node]], parent_world[:, None], extent[:, [node]])[0]
    d = core.decompose(local[:, node])
    dropped = local.copy()
    dropped[:, node] = core.TRS(d.translation, d.rotation, d.scale).to_matrix()
    moved = np.abs(_worlds(parents, dropped) - world).max()
    assert moved <= bound * (1 + 1e-9) + 1e-12
    assert bound < 100 * moved + 1e-9


def test_subtree_extent_is_the_largest_entry_below():
    parents = np.array([-1, 0, 1, 0, -1])
    world = np.zeros((1, 5, 4, 4))
    for i, v in enumerate([1.0, 2.0, 7.0, 3.0, 5.0]):
        world[0, i, 0, 0] = v
    world[0, :, 1, 3] = [0.5, 0.0, 0.0, 4.0, 0.0]  # translations
    np.testing.assert_array_equal(subtree_extent(world, parents)[0, :, 0], [7.0, 7.0, 7.0, 3.0, 5.0])
    np.testing.assert_array_equal(subtree_extent(world, parents)[0, :, 1], [4.0, 0.0, 0.0, 4.0, 0.0])


def _animated_gltf() -> Gltf:
    gltf = Gltf({"asset": {"version": "2.0"}, "nodes": [{"name": "A"}, {"name": "B"}], "buffers": [{}]}, b"", True)
    times = append_accessor(gltf, np.arange(4.0)[:, None], with_bounds=True)
    samplers, channels = [], []
    for node in (0, 1):
        out = append_accessor(gltf, np.full((4, 3), node + 1.0))
        samplers.append({"input": times, "output": out})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "translation"}})
    gltf.doc["animations"] = [{"samplers": samplers, "channels": channels}]
    return gltf


def test_unused_samplers_accessors_and_views_go_and_the_rest_reads_the_same():
    gltf = _animated_gltf()
    gltf.doc["animations"][0]["channels"] = gltf.doc["animations"][0]["channels"][1:]  # node 0's channel dropped
    removed = remove_unused(gltf)
    assert removed == {"samplers": 1, "accessors": 1, "bufferViews": 1}
    anim = gltf.doc["animations"][0]
    assert anim["channels"][0]["sampler"] == 0 and len(anim["samplers"]) == 1
    np.testing.assert_array_equal(read_accessor(gltf, anim["samplers"][0]["output"]), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(read_accessor(gltf, anim["samplers"][0]["input"]).ravel(), np.arange(4.0))
    assert len(gltf.binary) == gltf.doc["buffers"][0]["byteLength"] == 16 + 48


def test_a_file_with_an_unknown_extension_keeps_its_accessors():
    gltf = _animated_gltf()
    gltf.doc["extensionsUsed"] = ["VENDOR_points_to_accessors"]
    gltf.doc["animations"][0]["channels"] = gltf.doc["animations"][0]["channels"][1:]
    assert remove_unused(gltf) == {"samplers": 1, "accessors": 0, "bufferViews": 0}
    assert len(gltf.doc["accessors"]) == 3


def test_helpers_blamed_through_their_readers_first():
    parents = np.array([-1, 0, 1, 2, 0, 4])  # 0 hips; 1 thigh, 2 shin, 3 foot; 4 spine, 5 head
    worse = worse_nodes({"foot": 1.0, "head": 1e-7}, {"foot": 1e-4, "head": 1e-7}, 1e-5)
    assert worse == {"foot": (1.0, 1e-4)}
    # the shin's IK runs through the thigh (helper 1); the spine (helper 4) is not above the foot
    assert helpers_to_drop([3], [1, 4], {1: [2]}, parents) == [1]
    assert helpers_to_drop([3], [1, 4], {}, parents) == [1]  # no reader: the helper above
    assert helpers_to_drop([5], [1], {1: [2]}, parents) == []


def test_a_dropped_bone_takes_the_helpers_whose_ik_posed_it():
    from hierarchy_inspector.addon.model.exports.verdicts.plain import with_chain_owners

    # 2 (hand) has an IK posing 1 and 0; 1 (lower) an IK posing 0 (upper); 3 has none
    chains = {1: [0], 2: [1, 0]}
    assert sorted(with_chain_owners([0], [0, 1, 2, 3], chains)) == [0, 1, 2]
    assert with_chain_owners([3], [0, 1, 2, 3], chains) == [3]


def test_batches_of_frames_give_the_error_of_the_whole_range():
    from hierarchy_inspector.addon.model.exports.verdicts.skinned import combine, frame_batches

    rng = np.random.default_rng(8)
    blender = rng.normal(size=(9, 40, 3)) * np.linspace(1, 3, 9)[:, None, None]  # the size grows with time
    placed = blender + rng.normal(scale=1e-3, size=blender.shape)
    frames = np.arange(9) + 100
    whole = mesh_error("Body", placed, blender, frames)
    parts = combine([mesh_error("Body", placed[b], blender[b], frames[b]) for b in (slice(0, 4), slice(4, 9))])
    assert parts == whole
    assert [(b.start, b.stop) for b in frame_batches(5, 10**7)] == [(t, t + 1) for t in range(5)]
    assert frame_batches(5, 10) == [slice(0, 5)]
