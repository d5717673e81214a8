"""Issue 24, item 20: the newer core functions check their arguments as the rest of the
core does: an :class:`~hierarchy_inspector.core.InputError` naming the argument and,
where there is one, the first offending index; never a bare numpy error, a silent
wrap-around or a NaN result."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.core import fields


def _still(t_count: int, n: int):
    world = np.tile(np.eye(4), (t_count, n, 1, 1))
    return world, -np.ones((t_count, n, 3)), np.ones((t_count, n, 3))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"box_min": np.zeros((3, 2, 2))}, r"box_min: expected shape \(3, 2, 3\), got \(3, 2, 2\)"),
        ({"box_max": np.zeros((2, 3))}, r"box_max: expected shape \(3, 2, 3\), got \(2, 3\)"),
        ({"frames": [0, -1]}, r"frames\[1\] = -1 is out of range for 3"),
        ({"frames": [3]}, r"frames\[0\] = 3 is out of range for 3"),
        ({"frames": [0.5]}, r"frames: expected whole-number indices"),
        ({"frames": [[0]]}, r"frames: expected shape \(K,\)"),
        ({"nodes": [0, 2]}, r"nodes\[1\] = 2 is out of range for 2"),
        ({"nodes": [-1, 0]}, r"nodes\[0\] = -1 is out of range for 2"),
        ({"nodes": [0]}, r"nodes: 1 nodes for a hierarchy of 2"),
        ({"world": np.eye(4)}, r"world: expected shape \(T, N, 4, 4\), got \(4, 4\)"),
        ({"hierarchy": [-1, 0]}, r"hierarchy: expected a Hierarchy, got list"),
    ],
)
def test_frame_fields_names_the_argument_and_the_index(kwargs, match):
    world, lo, hi = _still(3, 2)
    args = {"hierarchy": core.Hierarchy([-1, 0]), "world": world, "box_min": lo, "box_max": hi} | kwargs
    with pytest.raises(core.InputError, match=match):
        fields.frame_fields(args.pop("hierarchy"), args.pop("world"), args.pop("box_min"), args.pop("box_max"), **args)


def test_frame_fields_takes_frames_as_given_not_from_the_end():
    """The frames asked for are the frames computed (a negative index used to wrap)."""
    world, lo, hi = _still(3, 1)
    world[2, 0, :3, :3] = np.diag([1.0, 2.0, 3.0]) @ np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])
    got = fields.frame_fields(core.Hierarchy([-1]), world, lo, hi, frames=[2, 0])
    assert got.shear_deg[0, 0] > 1.0 and got.shear_deg[1, 0] == 0.0


def test_analyze_needs_a_hierarchy():
    with pytest.raises(core.InputError, match="hierarchy: expected a Hierarchy, got ndarray"):
        core.analyze(np.array([-1]), np.eye(4)[None])


@pytest.mark.parametrize("shape", [(4, 4), (3,), (2, 3, 2)])
def test_determinant3_checks_the_shape(shape):
    with pytest.raises(core.InputError, match=r"m3: expected shape \(\.\.\., 3, 3\)"):
        core.determinant3(np.ones(shape))


def test_determinant3_of_batches_equals_numpy(rng):
    m = rng.normal(size=(2, 5, 3, 3))
    np.testing.assert_allclose(core.determinant3(m), np.linalg.det(m), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int64])
def test_unsigned_parents_beyond_the_range_are_not_roots(dtype):
    top = np.iinfo(dtype).max
    parents = np.array([0, top], dtype=np.uint64).astype(dtype)
    parents[0] = 1  # a valid parent, then the largest value of the type
    with pytest.raises(core.HierarchyError, match=rf"parents\[1\] = {top} is out of range for 2 nodes") as err:
        core.Hierarchy(parents)
    assert err.value.what == "parents" and err.value.index == (1,)


def test_python_integers_beyond_int64_are_out_of_range():
    with pytest.raises(core.HierarchyError, match=r"parents\[1\] = 1180591620717411303424 is out of range"):
        core.Hierarchy(np.array([-1, 2**70], dtype=object))


def test_the_self_parent_error_names_parents():
    with pytest.raises(core.HierarchyError, match=r"parents\[1\] = 1: node 1 \('arm'\) is its own parent") as err:
        core.Hierarchy([-1, 1], names=["root", "arm"])
    assert err.value.what == "parents" and err.value.index == (1,)


@pytest.mark.parametrize("count", [2.5, 2.0, "2", None, True])
def test_tile_takes_a_whole_number_of_copies(count):
    with pytest.raises(core.InputError, match="count: expected a whole number of copies"):
        core.Hierarchy([-1, 0]).tile(count)


def test_tile_with_numpy_integers():
    assert len(core.Hierarchy([-1, 0]).tile(np.int32(3))) == 6


def test_matrix_to_quat_of_nan_names_the_index():
    m = np.tile(np.eye(3), (2, 3, 1, 1))
    m[1, 2, 0, 1] = np.nan
    with pytest.raises(core.InputError, match=r"matrix\[1, 2\]: contains NaN or infinity") as err:
        core.matrix_to_quat(m)
    assert err.value.index == (1, 2)
    with pytest.raises(core.InputError, match=r"matrix: expected shape \(\.\.\., 3, 3\), got \(4,\)"):
        core.matrix_to_quat(np.ones(4))
