"""The shortcuts that make the panel's small chains cheap give the numbers of the plain
steps, exactly: analysis steps batched together for small inputs, the world-matrix and
accumulated folds folded as one, the quaternion row picked by one gather, and bone rest
offsets kept between calls with the same rest matrices."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import random_forest
from hierarchy_inspector import core
from hierarchy_inspector.core import blender_math as bm
from hierarchy_inspector.core.fold import FoldSchedule
from scipy.spatial.transform import Rotation

analysis_module = importlib.import_module("hierarchy_inspector.core.analysis")
bones_module = importlib.import_module("hierarchy_inspector.core.blender_math.bones")


def _fields(value, prefix=""):
    """Every array of an Analysis (nested NamedTuples and TRS), by dotted name."""
    if isinstance(value, core.TRS):
        return {f"{prefix}.{k}": getattr(value, k) for k in ("translation", "rotation", "scale")}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        out = {}
        for name in value._fields:
            out.update(_fields(getattr(value, name), f"{prefix}.{name}"))
        return out
    return {prefix: np.asarray(value)}


def _case(rng, n, kind):
    parents = random_forest(rng, n)
    local = np.tile(np.eye(4), (n, 1, 1))
    local[:, :3, :3] = rng.normal(size=(n, 3, 3))  # sheared, some mirrored
    local[:, :3, 3] = rng.normal(size=(n, 3))
    if kind == "near parallel":
        local[:, :3, 1] = 2.0 * local[:, :3, 0] + 1e-9 * rng.normal(size=(n, 3))
    elif kind == "extreme":  # columns scaled by powers of two before squaring; roots, so nothing overflows
        parents = np.full(n, -1)
        local[:, :3, :3] *= 10.0 ** rng.integers(-160, 160, size=(n, 1, 1))
    elif kind == "zero column":
        local[: max(1, n // 3), :3, 2] = 0.0
    hierarchy = core.Hierarchy(parents)
    world = hierarchy.world_matrices(local)
    world[:, :3, :] += 1e-3 * rng.normal(size=(n, 3, 4))  # a reference that is not the composition
    lo = -rng.uniform(0.1, 2.0, size=(n, 3))
    return hierarchy, local, world, lo, lo + rng.uniform(0.0, 3.0, size=(n, 3))


@pytest.mark.parametrize("kind", ["plain", "near parallel", "extreme", "zero column"])
@pytest.mark.parametrize("n", [1, 2, 14, 60])
def test_small_batches_joined_equal_the_separate_steps(rng, monkeypatch, kind, n):
    hierarchy, local, world, lo, hi = _case(rng, n, kind)
    for boxes in ((lo, hi), (None, None), (lo[0], hi[0])):
        monkeypatch.setattr(analysis_module, "JOIN_MAX", 10**9)
        joined = _fields(core.analyze(hierarchy, local, world, *boxes))
        monkeypatch.setattr(analysis_module, "JOIN_MAX", 0)
        apart = _fields(core.analyze(hierarchy, local, world, *boxes))
        assert joined.keys() == apart.keys()
        for name, value in joined.items():
            np.testing.assert_array_equal(value, apart[name], err_msg=name)


def test_joined_batches_name_the_same_index_in_errors(monkeypatch):
    local = np.tile(np.eye(4), (3, 1, 1))
    world = local.copy()
    world[1, 3, 0] = 0.5  # projective: the reference's own index 1, not 4 of the joined pair
    for join in (10**9, 0):
        monkeypatch.setattr(analysis_module, "JOIN_MAX", join)
        with pytest.raises(core.InputError, match=r"matrices\[1\]: bottom row"):
            core.analyze(core.Hierarchy([-1, 0, 1]), local, world)


@pytest.mark.parametrize("n, block", [(40, None), (200, 0), (300, 5), (300, 400)])
def test_world_matrices_and_accumulate_in_one_fold_equal_two(rng, n, block):
    parents = random_forest(rng, n, max_roots=2)
    hierarchy = core.Hierarchy(parents)
    hierarchy._schedule = FoldSchedule(hierarchy.parents, hierarchy.depth, block)  # jump, blocked, levels
    local = np.tile(np.eye(4), (n, 1, 1))
    local[:, :3, :3] = rng.normal(size=(n, 3, 3))
    trs = core.TRS(rng.normal(size=(n, 3)), rng.normal(size=(n, 4)), rng.uniform(-2.0, 2.0, size=(n, 3)))
    world, accumulated = hierarchy._world_matrices_and_accumulate(local, trs)
    np.testing.assert_array_equal(world, hierarchy.world_matrices(local))
    expected = hierarchy.accumulate(trs)
    for part in ("translation", "rotation", "scale"):
        np.testing.assert_array_equal(getattr(accumulated, part), getattr(expected, part))


def test_matrix_to_quat_takes_the_best_conditioned_row_for_every_case(rng):
    # Near 180 degrees about X, Y and Z the largest of 4 q_c^2 is x, y, z: all four rows used.
    turns = [Rotation.from_rotvec(np.pi * 0.999 * axis).as_matrix() for axis in np.eye(3)]
    matrices = np.concatenate([np.stack(turns), Rotation.random(50, random_state=7).as_matrix()])
    q = core.matrix_to_quat(matrices)
    diagonal = np.stack(
        [1 + np.trace(matrices, axis1=1, axis2=2)]
        + [1 + 2 * matrices[:, c, c] - np.trace(matrices, axis1=1, axis2=2) for c in range(3)],
        axis=-1,
    )
    assert set(np.argmax(diagonal, axis=-1).tolist()) == {0, 1, 2, 3}
    assert (q[:, 0] >= 0).all()
    expected = Rotation.from_matrix(matrices).as_quat()[:, [3, 0, 1, 2]]  # scipy is xyzw
    expected *= np.where(expected[:, :1] < 0, -1.0, 1.0)
    np.testing.assert_allclose(q, expected, atol=1e-14)
    np.testing.assert_array_equal(core.matrix_to_quat(matrices[5]), q[5])  # one matrix, no batch
    assert core.matrix_to_quat(np.zeros((0, 3, 3))).shape == (0, 4)


def _bones(rng, n, seed):
    parents = random_forest(rng, n, max_roots=1, shuffle=False)
    rest = np.tile(np.eye(4), (n, 1, 1))
    rest[:, :3, :3] = Rotation.random(n, random_state=seed).as_matrix()
    rest[:, :3, 3] = rng.normal(size=(n, 3))
    modes = [bm.INHERIT_SCALE_MODES[k % len(bm.INHERIT_SCALE_MODES)] for k in range(n)]
    flags = [rng.random(n) < 0.7 for _ in range(3)]
    basis = np.tile(np.eye(4), (n, 1, 1))
    basis[:, :3, :3] = Rotation.random(n, random_state=seed + 1).as_matrix() * rng.uniform(0.5, 1.5, size=(n, 1, 3))
    basis[:, :3, 3] = rng.normal(size=(n, 3))
    return parents, rest, modes, flags, basis


def test_rest_offsets_are_kept_by_value_and_never_stale(rng):
    parents, rest, modes, flags, basis = _bones(rng, 12, 3)
    poses = bm.pose_matrices(parents, rest, modes, *flags, basis)  # level by level, offsets computed each time
    bones_module._rest_offsets.cache_clear()
    first = bm.pose_matrices_given_parents(parents, rest, modes, *flags, basis, poses[np.maximum(parents, 0)])
    again = bm.pose_matrices_given_parents(parents, rest, modes, *flags, basis, poses[np.maximum(parents, 0)])
    info = bones_module._rest_offsets.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first, poses, atol=1e-12)  # each bone from its parent's pose: the same poses
    # Other rest matrices (Edit mode) with the same parents: computed anew, not the kept ones.
    moved = rest.copy()
    moved[1:, :3, 3] += 0.25
    expected = bm.pose_matrices(parents, moved, modes, *flags, basis)
    got = bm.pose_matrices_given_parents(parents, moved, modes, *flags, basis, expected[np.maximum(parents, 0)])
    assert bones_module._rest_offsets.cache_info().misses == 2
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.abs(got - first).max() > 0.1
    # A rest matrix that is not rigid raises every time (errors are not kept).
    bad = rest.copy()
    bad[2, :3, :3] *= 2.0
    for _ in range(2):
        with pytest.raises(core.InputError, match=r"bone_matrix_local\[2\]: not a rigid transform"):
            bm.pose_matrices_given_parents(parents, bad, modes, *flags, basis, poses[np.maximum(parents, 0)])


def test_kept_rest_offsets_cannot_be_changed_by_callers(rng):
    parents, rest, modes, flags, basis = _bones(rng, 5, 11)
    offsets = bones_module._rest_offsets(rest.tobytes(), np.asarray(parents, dtype=np.int64).tobytes())
    with pytest.raises(ValueError):
        offsets[0, 0, 0] = 2.0
