import numpy as np
import pytest
import reference_models as ref
from conftest import random_forest, random_trs_arrays
from hierarchy_inspector import core
from hierarchy_inspector.core.fold import FoldSchedule
from hypothesis import given
from hypothesis import strategies as st


def _local(rng, n, **kw):
    return core.TRS(*random_trs_arrays(rng, n, **kw))


def _tuples(trs):
    return [(trs.translation[i], trs.rotation[i], trs.scale[i]) for i in range(len(trs))]


# -- validation -------------------------------------------------------------------------


def test_out_of_range_parent_is_named():
    with pytest.raises(core.HierarchyError, match=r"parents\[2\] = 7 is out of range for 3 nodes \(node 2 \('c'\)"):
        core.Hierarchy([-1, 0, 7], names=["a", "b", "c"])
    with pytest.raises(core.HierarchyError, match=r"parents\[0\] = -2"):
        core.Hierarchy([-2])


def test_self_parent_and_cycle_are_named():
    with pytest.raises(core.HierarchyError, match=r"node 1 \('arm'\) is its own parent"):
        core.Hierarchy([-1, 1], names=["root", "arm"])
    with pytest.raises(core.HierarchyError, match=r"cycle node \d -> node \d -> node \d -> node \d"):
        core.Hierarchy([-1, 2, 3, 1, 0])


def test_long_cycle_is_reported_without_hanging():
    n = 100_000
    parents = np.roll(np.arange(n), 1)  # one big cycle
    with pytest.raises(core.HierarchyError, match=r"cycle .* -> \.\.\."):
        core.Hierarchy(parents)


def test_bad_parent_arrays():
    with pytest.raises(core.HierarchyError, match=r"expected shape \(N,\)"):
        core.Hierarchy([[-1, 0]])
    with pytest.raises(core.HierarchyError, match=r"parents\[1\] = 0\.5 is not an integer"):
        core.Hierarchy([-1, 0.5])
    with pytest.raises(core.HierarchyError, match="2 names for 3 nodes"):
        core.Hierarchy([-1, 0, 1], names=["a", "b"])


def test_depth_and_empty_hierarchy():
    h = core.Hierarchy([3, -1, 1, 2])
    assert h.depth.tolist() == [3, 0, 1, 2]
    assert h.roots.tolist() == [1]
    empty = core.Hierarchy(np.zeros(0, dtype=int))
    assert empty.world_matrices(np.zeros((0, 4, 4))).shape == (0, 4, 4)
    assert empty.max_depth == -1


def test_wrong_node_count_is_named(rng):
    h = core.Hierarchy([-1, 0])
    with pytest.raises(core.InputError, match=r"local_matrices: expected 2 nodes on the first axis"):
        h.world_matrices(np.zeros((3, 4, 4)))
    with pytest.raises(core.InputError, match=r"local_trs: expected shape \(2,\)"):
        h.accumulate(_local(rng, 3))
    with pytest.raises(core.InputError, match=r"local_matrices\[1\]: contains NaN"):
        h.world_matrices(np.stack([np.eye(4), np.full((4, 4), np.nan)]))


# -- both models against the seed's per-node algorithms --------------------------------


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("negative", [False, True])
def test_models_equal_seed_algorithms_on_random_forests(rng, shuffle, negative):
    n = 300
    parents = random_forest(rng, n, shuffle=shuffle)
    local = _local(rng, n, negative=negative)
    h = core.Hierarchy(parents)
    world = h.world_matrices(local.to_matrix())
    acc = h.accumulate(local)
    grot = h.global_rotation(local)
    gpos = h.global_position(local)
    lossy = h.lossy_scale(local)
    tuples = _tuples(local)
    mats = local.to_matrix()
    for i in rng.choice(n, 60, replace=False):
        assert np.allclose(world[i], ref.world_matrix(parents, mats, i), atol=1e-9)
        t, q, s = ref.world_transform(parents, tuples, i)
        assert np.allclose(acc.translation[i], t, atol=1e-9)
        assert np.allclose(acc.rotation[i], q, atol=1e-12)  # same sign: same product
        assert np.allclose(acc.scale[i], s)
        assert np.allclose(grot[i], ref.global_rotation(parents, tuples, i), atol=1e-12)
        assert np.allclose(gpos[i], ref.global_position(parents, tuples, i), atol=1e-9)
        assert np.allclose(lossy[i], ref.lossy_scale(parents, tuples, i), atol=1e-9)
    assert np.allclose(gpos, world[:, :3, 3], atol=1e-9)


@pytest.mark.parametrize("kind", ["chain", "shuffled chain", "broom", "forest"])
@pytest.mark.parametrize("block", [None, 0, 1, 3, 17, 10_000])  # 0: pointer jumping
def test_every_fold_schedule_equals_the_sequential_definition(rng, kind, block):
    n = 2000
    if kind == "forest":
        parents = random_forest(rng, n)
    elif kind == "broom":  # a long handle, then a bushy head
        parents = np.concatenate([np.arange(-1, 1499), rng.integers(1000, 1500, size=500)])
    else:
        parents = np.arange(-1, n - 1)
        if kind == "shuffled chain":
            perm = rng.permutation(n)
            inv = np.argsort(perm)
            parents = np.where(parents[perm] >= 0, inv[np.maximum(parents[perm], 0)], -1)
    h = core.Hierarchy(parents)
    local = core.TRS(rng.normal(size=(n, 3)) * 0.1, rng.normal(size=(n, 4)), np.exp(rng.normal(size=(n, 3)) * 0.01))
    schedule = FoldSchedule(h.parents, h.depth, block)
    # Sequential definition: parents before children, one node at a time.
    order = np.argsort(h.depth, kind="stable")
    seq_t = np.zeros((n, 3))
    seq_q = np.zeros((n, 4))
    seq_s = np.zeros((n, 3))
    mats = local.to_matrix()
    seq_m = np.zeros((n, 4, 4))
    for i in order:
        p = parents[i]
        if p < 0:
            seq_t[i], seq_q[i], seq_s[i], seq_m[i] = local.translation[i], local.rotation[i], local.scale[i], mats[i]
        else:
            seq_t[i], seq_q[i], seq_s[i] = ref.combine((seq_t[p], seq_q[p], seq_s[p]), _tuples(local[i : i + 1])[0])
            seq_m[i] = seq_m[p] @ mats[i]
    h._schedule = schedule
    acc = h.accumulate(local)
    assert np.allclose(h.world_matrices(mats), seq_m, atol=1e-9)
    assert np.allclose(acc.translation, seq_t, atol=1e-9)
    assert np.allclose(acc.rotation, seq_q, atol=1e-9)
    assert np.allclose(acc.scale, seq_s, rtol=1e-12)


@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.integers(0, 12))
def test_fold_on_random_small_forests(n, seed, block):
    rng = np.random.default_rng(seed)
    parents = random_forest(rng, n, max_roots=rng.integers(1, 4))
    h = core.Hierarchy(parents)
    local = _local(rng, n, negative=True)
    h._schedule = FoldSchedule(h.parents, h.depth, block)
    tuples = _tuples(local)
    acc = h.accumulate(local)
    world = h.world_matrices(local.to_matrix())
    for i in range(n):
        t, q, s = ref.world_transform(parents, tuples, i)
        assert np.allclose(acc.translation[i], t, atol=1e-9)
        assert np.allclose(world[i], ref.world_matrix(parents, local.to_matrix(), i), atol=1e-9)


def test_schedule_choice_follows_the_cost_model():
    from hierarchy_inspector.core.fold import choose_schedule

    assert choose_schedule(50, 50)[0] == "jump"  # the panel's chain: 6 steps, not 50
    assert choose_schedule(1_000_000, 100)[0] == "levels"  # a big shallow forest
    assert choose_schedule(1_000_000, 1_000_000)[0] == "blocked"  # a deep chain
    assert FoldSchedule(np.arange(-1, 49), np.arange(50)).kind == "jump"


def test_deep_chain_needs_no_recursion_and_few_steps():
    n = 200_000
    h = core.Hierarchy(np.arange(-1, n - 1))
    assert h.max_depth == n - 1
    assert h.schedule.blocked and h.schedule.steps < 1000
    local = core.TRS(np.tile([0.0, 0.0, 1.0], (n, 1)), np.tile([1.0, 0, 0, 0], (n, 1)), np.ones((n, 3)))
    acc = h.accumulate(local)
    assert np.allclose(acc.translation[:, 2], np.arange(1, n + 1))
    world = h.world_matrices(local.to_matrix())
    assert world[-1, 2, 3] == n


# -- the two models: where they agree and where they part -------------------------------


def test_models_agree_when_scales_are_uniform(rng):
    n = 200
    h = core.Hierarchy(random_forest(rng, n))
    local = _local(rng, n, uniform_scale=True)
    world = h.world_matrices(local.to_matrix())
    assert np.allclose(h.accumulate(local).to_matrix(), world, atol=1e-9)
    assert np.allclose(core.shear_angles(world), 0, atol=1e-6)


def test_models_differ_with_nonuniform_scale_as_the_seed_says():
    ex = core.examples.rotated_child()
    h = ex.hierarchy
    world = h.world_matrices(ex.local.to_matrix())
    acc = h.accumulate(ex.local)
    # Matrix model: the child's axes are sheared (126.87 degrees apart).
    assert np.allclose(core.shear_angles(world[1]), [-36.869897645844, 0, 0])
    # Accumulated: no shear, the parent's X scale is applied along the child's own X.
    assert np.allclose(core.shear_angles(acc.to_matrix()[1]), 0, atol=1e-9)
    assert np.allclose(acc.scale[1], [2, 1, 1])
    # Same position: a node's origin is placed identically by both models.
    assert np.allclose(acc.translation[1], world[1, :3, 3])


def test_lossy_scale_is_true_scale_without_shear(rng):
    n = 100
    h = core.Hierarchy(random_forest(rng, n))
    # Rotations that keep every axis aligned with its parent's (multiples of 90 degrees):
    # world matrices have no shear, so lossy scale is the exact world scale.
    q = core.euler_to_quat(rng.integers(0, 4, size=(n, 3)) * np.pi / 2)
    local = core.TRS(rng.normal(size=(n, 3)), q, rng.uniform(0.5, 2, size=(n, 3)))
    world = h.world_matrices(local.to_matrix())
    assert np.allclose(core.shear_angles(world), 0, atol=1e-9)
    assert np.allclose(h.lossy_scale(local), np.abs(core.decompose(world).scale), atol=1e-9)


# -- the seed's piston ------------------------------------------------------------------


def test_piston_as_published():
    ex = core.examples.piston()
    world = ex.hierarchy.world_matrices(ex.local.to_matrix())
    assert np.allclose(world[:, :3, 3], [[2.5, 3, 3], [2.5, 3, 4.5], [3.5, 3, 4.5]])
    acc = ex.hierarchy.accumulate(ex.local)
    assert np.allclose(acc.to_matrix(), world)
    assert np.allclose(acc.scale[2], [1, 1, 1])  # (0.25, 0.25, 2) * (4, 4, 0.5)


def test_piston_with_the_slider_moved():
    ex = core.examples.piston(root_scale=(2.0, 1.0, 1.0))
    h = ex.hierarchy
    world = h.world_matrices(ex.local.to_matrix())
    acc = h.accumulate(ex.local)
    # Matrix model: A's long axis (local Z, now world X) is stretched: B moves out to 4.5.
    assert np.allclose(world[2, :3, 3], [4.5, 3, 4.5])
    assert np.allclose(np.linalg.norm(world[1, :3, :3], axis=0), [0.25, 0.25, 4.0])
    # Accumulated: scale along A's own X axis (world -Z) instead; B stays at 3.5.
    assert np.allclose(acc.translation[2], [3.5, 3, 4.5])
    assert np.allclose(acc.scale[1], [0.5, 0.25, 2.0])
    assert np.allclose(h.lossy_scale(ex.local)[1], [0.25, 0.25, 4.0])
    dev = core.deviation(world, acc.to_matrix(), ex.box_min, ex.box_max)
    assert np.allclose(dev.position, [0, 0, 1.0])
    assert np.allclose(dev.max_corner, [0, np.sqrt(4.0625), np.sqrt(5.0)])
