"""core.frame_fields against core.analyze frame by frame: random forests with mirrored
and sheared locals, the node-frames its closed formulas hand to the general functions
(singular parents, extreme magnitudes, nearly parallel columns, zero columns), subsets
of frames and nodes, and the (T, 4, 4, N) storage the scene layer reads into."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_forest, random_trs_arrays
from hierarchy_inspector import core
from hierarchy_inspector.core import fields
from hypothesis import given
from hypothesis import strategies as st


def frames_of(rng, parents, t_count: int, shear: float = 0.4) -> np.ndarray:
    """Blender-like worlds ``(T, N, 4, 4)``: random locals (some mirrored, some sheared)
    composed as matrices."""
    h = core.Hierarchy(parents)
    n = len(parents)
    worlds = []
    for _ in range(t_count):
        t, q, s = random_trs_arrays(rng, n, negative=True)
        local = core.TRS(t, q, s).to_matrix()
        local[rng.random(n) < 0.3, 0, 1] += shear
        worlds.append(h.world_matrices(local))
    return np.array(worlds)


def boxes_of(rng, shape):
    lo = -rng.uniform(0.1, 2.0, size=shape + (3,))
    return lo, lo + rng.uniform(0.1, 3.0, size=shape + (3,))


def expected(parents, world, lo, hi) -> np.ndarray:
    """``(4, T, N)`` from core.analyze at each frame (the single-frame definitions)."""
    h = core.Hierarchy(parents)
    out = []
    for k in range(len(world)):
        local = np.empty_like(world[k])
        has = parents >= 0
        local[~has] = world[k][~has]
        inv, bad = core.affine_inverse(world[k][parents[has]])
        inv[bad] = np.linalg.pinv(world[k][parents[has]][bad])
        local[has] = inv @ world[k][has]
        a = core.analyze(h, local, world[k], lo[k], hi[k])
        out.append(
            [
                np.abs(a.shear_deg).max(axis=-1),
                np.abs(a.local.shear_deg).max(axis=-1),
                a.matrix_model_deviation.max_corner,
                a.accumulated_deviation.max_corner,
            ]
        )
    return np.array(out).transpose(1, 0, 2)


def numbers(fields: core.FrameFields) -> np.ndarray:
    """The four numbers ``(4, T, N)`` (without the singular-parent flags)."""
    return np.array(fields[:4])


def assert_fields_close(got: core.FrameFields, want: np.ndarray, rtol: float = 1e-9) -> None:
    got = numbers(got)
    scale = np.maximum(1.0, np.abs(want))
    assert np.all(np.abs(got - want) <= rtol * scale), np.abs(got - want).max()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_node_frame_equals_analyze(seed):
    rng = np.random.default_rng(seed)
    parents = random_forest(rng, 60)
    world = frames_of(rng, parents, 5)
    lo, hi = boxes_of(rng, world.shape[:2])
    got = core.frame_fields(core.Hierarchy(parents), world, lo, hi)
    want = expected(parents, world, lo, hi)
    assert_fields_close(got, want)
    assert want[1].max() > 1.0 and want[2].max() > 1e-3  # sheared locals: both models are off


@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 4))
def test_random_forests_equal_analyze(seed, n, t_count):
    rng = np.random.default_rng(seed)
    parents = random_forest(rng, n)
    world = frames_of(rng, parents, t_count)
    lo, hi = boxes_of(rng, world.shape[:2])
    assert_fields_close(core.frame_fields(core.Hierarchy(parents), world, lo, hi), expected(parents, world, lo, hi))


def test_the_general_path_cases_equal_analyze(rng):
    # A chain and a few leaves, each case on its own node (its children see its world),
    # and a root with a zero X column at the origin (singular: its child gets the
    # pseudo-inverse, which keeps the affine bottom row only for a parent at the origin).
    parents = np.array([-1, 0, 1, 2, 3, 4, 5, 6, 0, 2, 4, 6, -1, 12])
    world = frames_of(rng, parents, 3)
    for k in range(3):
        local = np.linalg.solve(world[k][np.maximum(parents, 0)], world[k])
        local[parents < 0] = world[k][parents < 0]
        local[12] = np.diag([0.0, 1.0, 2.0, 1.0])
        local[3, :3, :3] *= 1e-80  # squared lengths below 1e-150
        local[4, :3, :3] *= 1e80  # and above 1e150
        local[5, :3, 1] = local[5, :3, 0] + 1e-9 * local[5, :3, 1]  # X and Y nearly parallel
        local[6, :3, :3] = np.diag([-1.0, 2.0, 0.5])  # mirrored
        world[k] = core.Hierarchy(parents).world_matrices(local)
    lo, hi = boxes_of(rng, world.shape[:2])
    got = numbers(core.frame_fields(core.Hierarchy(parents), world, lo, hi))
    want = expected(parents, world, lo, hi)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    scale = np.maximum(1.0, np.abs(np.where(finite, want, 0.0)))
    assert np.all(np.abs(np.where(finite, got - want, 0.0)) <= 1e-9 * scale)


def test_subsets_and_storage_layout_give_the_same_numbers(rng):
    parents = random_forest(rng, 30)
    world = frames_of(rng, parents, 6)
    lo, hi = boxes_of(rng, world.shape[:2])
    whole = numbers(core.frame_fields(core.Hierarchy(parents), world, lo, hi))
    storage = np.ascontiguousarray(world.transpose(0, 2, 3, 1))
    viewed = numbers(core.frame_fields(core.Hierarchy(parents), storage.transpose(0, 3, 1, 2), lo, hi))
    np.testing.assert_array_equal(viewed, whole)
    # A subtree (a root and everything under it) at some frames.
    root = int(np.flatnonzero(parents < 0)[0])
    chain = [root]
    for _ in range(len(parents)):
        chain += [i for i in range(len(parents)) if parents[i] in chain and i not in chain]
    nodes = np.array(sorted(chain))
    position = {int(v): k for k, v in enumerate(nodes)}
    sub = core.Hierarchy([position[int(parents[i])] if parents[i] >= 0 else -1 for i in nodes])
    picked = numbers(core.frame_fields(sub, world, lo, hi, frames=[1, 4], nodes=nodes))
    np.testing.assert_allclose(picked, whole[:, [1, 4]][:, :, nodes], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block", [1, 31, 95])
def test_blocks_of_frames_give_the_numbers_of_one_pass(rng, monkeypatch, block):
    """A range taken a few frames at a time (one frame; a block that does not divide the
    range) gives bit for bit the numbers of one pass over every frame, the general
    path's node-frames (a collapsed parent at some frames) and a subset included."""
    parents = random_forest(rng, 30)
    world = frames_of(rng, parents, 7)
    world[2:5, parents[parents >= 0][0], :3, 0] = 0.0  # a parent singular at three frames: the general path
    lo, hi = boxes_of(rng, world.shape[:2])
    hierarchy = core.Hierarchy(parents)
    frames = [0, 2, 3, 4, 6]
    whole = core.frame_fields(hierarchy, world, lo, hi, frames=frames)
    monkeypatch.setattr(fields, "BLOCK", block)
    blocked = core.frame_fields(hierarchy, world, lo, hi, frames=frames)
    for got, want in zip(blocked, whole, strict=True):
        np.testing.assert_array_equal(got, want)
    assert whole.singular_parent.any()


def test_hierarchies_deeper_than_the_level_loop_are_refused():
    parents = np.arange(-1, fields.MAX_LEVELS)  # a chain of MAX_LEVELS + 1 nodes
    world = np.tile(np.eye(4), (1, len(parents), 1, 1))
    box = np.zeros((1, len(parents), 3))
    with pytest.raises(core.InputError, match="levels"):
        core.frame_fields(core.Hierarchy(parents), world, box, box)


def collapsing_chain(rng, t_count: int = 9, zero_at: int = 4) -> np.ndarray:
    """Worlds ``(T, 3, 4, 4)`` of a chain root -> parent -> child: the parent, away from
    the origin, has an X scale going linearly from 1 through exactly 0 (at ``zero_at``)
    to negative; every world rounded to float32 as Blender hands them (so the child's
    world is not exactly in reach of the collapsed parent)."""
    parents = np.array([-1, 0, 1])
    t, q, s = random_trs_arrays(rng, 3)
    local = core.TRS(5.0 * t + 4.0, q, s).to_matrix()  # translations far from the origin
    worlds = []
    for k in range(t_count):
        frame = local.copy()
        frame[1, :3, 0] *= 1.0 - k / zero_at  # the parent's own X column
        worlds.append(core.Hierarchy(parents).world_matrices(frame))
    return np.array(worlds).astype(np.float32).astype(np.float64)


def test_the_affine_pseudo_inverse_of_a_collapsed_matrix_keeps_the_bottom_row(rng):
    parent = collapsing_chain(rng)[4, 1]  # zero X scale, away from the origin
    assert np.abs(np.linalg.pinv(parent)[3] - (0, 0, 0, 1)).max() > 1e-3  # the 4x4 pseudo-inverse is not affine
    inverse, singular = fields.affine_pseudo_inverse(parent[None])
    assert singular.tolist() == [True]
    assert inverse[0, 3].tolist() == [0.0, 0.0, 0.0, 1.0]  # exactly
    np.testing.assert_allclose(parent @ inverse[0] @ parent, parent, atol=1e-12)  # Moore-Penrose, both ways
    np.testing.assert_allclose(inverse[0] @ parent @ inverse[0], inverse[0], atol=1e-12)
    regular = collapsing_chain(rng)[:, 1][[0, 2, 7]]
    got, flags = fields.affine_pseudo_inverse(regular)
    want, _ = core.affine_inverse(regular)
    assert not flags.any() and np.array_equal(got, want)


@given(st.integers(0, 10_000), st.integers(0, 2))
def test_a_collapsed_axis_anywhere_gives_an_affine_least_squares_inverse(seed, axis):
    rng = np.random.default_rng(seed)
    t, q, s = random_trs_arrays(rng, 1, negative=True)
    s[0, axis] = 0.0
    m = core.TRS(10.0 * t, q, s).to_matrix()
    inverse, singular = fields.affine_pseudo_inverse(m)
    assert singular.all() and inverse[0, 3].tolist() == [0.0, 0.0, 0.0, 1.0]
    np.testing.assert_allclose(m @ inverse @ m, m, atol=1e-9 * max(1.0, np.abs(m).max()))
    # The least-squares local of a child world: the parent times it is the child's world
    # with the part out of the parent's reach dropped (projected onto its range).
    child = m @ core.TRS(t, q, np.ones((1, 3))).to_matrix()
    child[0, :3] += 1e-3 * rng.normal(size=(3, 4))  # out of reach
    local = inverse @ child
    projected = m @ local
    residual = child - projected
    np.testing.assert_allclose(m[0, :3, :3].T @ residual[0, :3], 0.0, atol=1e-9)  # orthogonal to the range
    assert np.abs(residual).max() > 1e-5  # and something was out of reach


def test_a_parent_collapsing_away_from_the_origin_is_flagged_not_raised(rng):
    # The bug: the 4x4 pseudo-inverse mixed the parent's translation into the local's
    # bottom row and decompose raised; now the frame is flagged and the numbers defined.
    world = collapsing_chain(rng)
    parents = np.array([-1, 0, 1])
    with pytest.raises(core.InputError, match="bottom row"):
        core.decompose(np.linalg.pinv(world[4, 1]) @ world[4, 2])
    lo, hi = boxes_of(rng, world.shape[:2])
    got = core.frame_fields(core.Hierarchy(parents), world, lo, hi)
    flags = np.zeros((len(world), 3), dtype=bool)
    flags[4, 2] = True
    np.testing.assert_array_equal(got.singular_parent, flags)
    regular = [k for k in range(len(world)) if k != 4]
    assert_fields_close(
        core.FrameFields(*(f[regular] for f in got)), expected(parents, world[regular], lo[regular], hi[regular])
    )
    # The collapsed frame: core.analyze of the least-squares local.
    inverse, _ = fields.affine_pseudo_inverse(world[4, 1][None])
    local = world[4].copy()
    local[1] = np.linalg.solve(world[4, 0], world[4, 1])
    local[2] = inverse[0] @ world[4, 2]
    a = core.analyze(core.Hierarchy(parents), local, world[4], lo[4], hi[4])
    want = [np.abs(a.local.shear_deg).max(axis=-1), a.matrix_model_deviation.max_corner]
    np.testing.assert_allclose([got.local_shear_deg[4], got.corner_matrix[4]], want, rtol=1e-9, atol=1e-9)
    assert np.isfinite(np.array(got[:4])).all()


def test_parent_condition_is_the_frobenius_estimate_of_the_parent_world(rng):
    """Against affine_inverse per node-frame (and the SVD's bounds cond <= it <= 3 cond):
    random forests, a singular parent (inf), a parent the closed form hands to the general
    path (ill-conditioned), roots (1)."""
    parents = random_forest(rng, 25)
    world = frames_of(rng, parents, 5)
    child = int(np.flatnonzero(parents >= 0)[0])
    world[1, parents[child], :3, 0] = 0.0  # singular at frame 1
    p3 = world[3, parents[child], :3]
    p3[:, 1] = p3[:, 0] + 1e-8 * p3[:, 1]  # ill-conditioned at frame 3
    lo, hi = boxes_of(rng, world.shape[:2])
    got = core.frame_fields(core.Hierarchy(parents), world, lo, hi).parent_condition
    has = parents >= 0
    m3 = world[:, parents[has], :3, :3]
    inverse, singular = core.affine_inverse(m3)
    inverse = inverse[..., :3, :3]  # (it returns 4x4)
    want = np.sqrt((m3 * m3).sum(axis=(-2, -1)) * (inverse * inverse).sum(axis=(-2, -1)))
    want[singular] = np.inf
    np.testing.assert_allclose(got[:, has], want, rtol=1e-12)
    np.testing.assert_array_equal(got[:, ~has], 1.0)
    assert np.isinf(got[1, child]) and 1e6 < got[3, child] < np.inf
    sv = np.linalg.svd(m3[~singular], compute_uv=False)
    cond = sv[:, 0] / sv[:, 2]
    regular = got[:, has][~singular]
    assert np.all((cond <= regular * (1 + 1e-9)) & (regular <= 3 * cond * (1 + 1e-9)))


@pytest.mark.parametrize("what", ["world", "box_min", "box_max"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_node_frame_read_that_is_not_finite_is_named(rng, what, bad):
    parents = random_forest(rng, 12)
    world = frames_of(rng, parents, 4)
    lo, hi = boxes_of(rng, world.shape[:2])
    values = {"world": world, "box_min": lo, "box_max": hi}[what]
    values[2, 7, 1] = bad
    values[3, 4, 0] = bad
    with pytest.raises(core.InputError, match=r"\[2, 7\]: contains NaN or infinity") as caught:
        core.frame_fields(core.Hierarchy(parents), world, lo, hi)
    assert caught.value.index == (2, 7)
    # Node-frames it does not read are not its concern.
    fine = core.frame_fields(core.Hierarchy(parents), world, lo, hi, frames=[0, 1])
    assert np.isfinite(np.array(fine[:4])).all()


@pytest.mark.parametrize("block", [7, 60, 1 << 20])
def test_a_mask_computes_its_node_frames_bit_for_bit_and_leaves_the_rest_nan(rng, monkeypatch, block):
    """Masked node-frames (the first frame whole, then a subtree with its ancestors, a
    frame with none) equal the unmasked pass bit for bit, in blocks too (a collapsed
    parent inside: the general path); the rest are NaN and not flagged."""
    parents = random_forest(rng, 30)
    world = frames_of(rng, parents, 6)
    collapsed = int(parents[parents >= 0][0])  # a node with a child
    world[3, collapsed, :3, 1] = 0.0
    lo, hi = boxes_of(rng, world.shape[:2])
    hierarchy = core.Hierarchy(parents)
    whole = core.frame_fields(hierarchy, world, lo, hi)
    mask = np.zeros(world.shape[:2], dtype=bool)
    mask[0] = True  # the first frame whole; frame 2 none
    mask[[1, 3, 4], int(np.argmax(hierarchy.depth))] = True  # the deepest node
    mask[3:6, parents == collapsed] = True  # the collapsed node's children
    mask = _ancestors_of(parents, mask)
    monkeypatch.setattr(fields, "BLOCK", block)
    got = core.frame_fields(hierarchy, world, lo, hi, mask=mask)
    for g, w in zip(got, whole, strict=True):
        np.testing.assert_array_equal(g[mask], w[mask])
    assert np.isnan(np.array(got[:4])[:, ~mask]).all() and not got.singular_parent[~mask].any()
    assert whole.singular_parent[mask].any()


def _ancestors_of(parents: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``mask`` with every marked node-frame's ancestors at the same frame."""
    out = mask.copy()
    for i in np.argsort(-core.Hierarchy(parents).depth, kind="stable"):  # children before parents
        if parents[i] >= 0:
            out[:, parents[i]] |= out[:, i]
    return out


def test_a_mask_without_a_parent_is_refused(rng):
    parents = np.array([-1, 0, 1])
    world = frames_of(rng, parents, 2)
    lo, hi = boxes_of(rng, world.shape[:2])
    mask = np.array([[True, True, True], [False, True, True]])
    with pytest.raises(core.InputError, match=r"mask\[1, 1\]: a node-frame without its parent"):
        core.frame_fields(core.Hierarchy(parents), world, lo, hi, mask=mask)
    with pytest.raises(core.InputError, match="mask: expected bool"):
        core.frame_fields(core.Hierarchy(parents), world, lo, hi, mask=np.ones((3, 3), dtype=bool))
