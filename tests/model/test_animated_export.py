"""Animated exports, Blender-free: the continuous exact split, the glTF sampler against
SciPy's independent interpolators, and per-frame accumulated TRS against the
single-frame export."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.exports.accumulated import accumulated_locals
from hierarchy_inspector.addon.model.exports.accumulated_frames import (
    accumulated_frame_locals,
    accumulated_frames_csv,
    accumulated_frames_document,
)
from hierarchy_inspector.addon.model.exports.animated_gltf import parent_inverses
from hierarchy_inspector.addon.model.exports.animated_split import (
    continuous_quaternions,
    continuous_split,
    trs_error,
)
from hierarchy_inspector.addon.model.exports.gltf_animation import Track
from hierarchy_inspector.addon.model.inspection import inspect
from hierarchy_inspector.addon.model.nodes import Nodes
from hierarchy_inspector.addon.model.timeline import FrameSeries
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import CubicHermiteSpline
from scipy.spatial.transform import Rotation, Slerp


def _stretch_path(t_count: int, seed: int = 0) -> np.ndarray:
    """Local matrices ``(T, 3, 4, 4)`` moving smoothly: a rotation times a scale that is
    uniform at the first frame and at mid-range (repeated singular values), times a
    rotation; plus two nodes with crossing singular values and a reflection."""
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, t_count)
    axes = rng.normal(size=(3, 3))
    out = np.zeros((t_count, 3, 4, 4))
    for n in range(3):
        r1 = Rotation.from_rotvec(np.outer(2.0 * s + n, axes[n])).as_matrix()
        r2 = Rotation.from_rotvec(np.outer(-1.5 * s, axes[(n + 1) % 3])).as_matrix()
        if n == 0:  # uniform at s=0 and s=0.5
            scale = np.stack([1 + 0.8 * np.sin(2 * np.pi * s), np.ones_like(s), 1 - 0.3 * np.sin(2 * np.pi * s)], -1)
        elif n == 1:  # the first two singular values cross
            scale = np.stack([1 + s, 2 - s, 0.5 + 0 * s], -1)
        else:  # a mirrored node
            scale = np.stack([1 + s, -np.ones_like(s), 0.7 + 0 * s], -1)
        out[:, n, :3, :3] = r1 @ (scale[:, :, None] * r2)
        out[:, n, :3, 3] = np.outer(s, rng.normal(size=3))
        out[:, n, 3, 3] = 1.0
    return out


def _max_step_deg(q: np.ndarray) -> float:
    dots = np.abs(np.einsum("t...i,t...i->t...", q[1:], q[:-1]))
    return float(np.degrees(2 * np.arccos(np.clip(dots, -1, 1))).max())


@pytest.mark.parametrize("t_count", [2, 61, 241])
def test_continuous_split_is_exact_and_continuous(t_count):
    local = _stretch_path(t_count)
    outer, inner = continuous_split(local)
    product = outer.to_matrix() @ inner.to_matrix()
    assert np.abs(product - local).max() < 1e-9  # exact where singular values differ, REPEATED elsewhere
    assert np.allclose(inner.translation, 0.0) and np.allclose(inner.scale, 1.0)
    for q in (outer.rotation, inner.rotation):  # one hemisphere: consecutive keys on the short arc
        assert (np.einsum("t...i,t...i->t...", q[1:], q[:-1]) >= 0).all()
    if t_count > 2:
        # The motion between frames is a few degrees; a jump in the SVD's axis order or
        # signs, or a free rotation inside a repeated value, would be tens of degrees.
        motion = 2.5 * 180 / np.pi / (t_count - 1) * 3
        assert _max_step_deg(outer.rotation) < motion
        assert _max_step_deg(inner.rotation) < motion
        # Scales follow the path: no sudden reordering.
        assert np.abs(np.diff(outer.scale, axis=0)).max() < 0.1


def test_per_frame_svd_without_alignment_would_jump():
    """The reason for the alignment: core.split_to_trs frame by frame jumps somewhere."""
    local = _stretch_path(61)
    per_frame = [core.split_to_trs(local[t]) for t in range(61)]
    q = continuous_quaternions(np.stack([o.rotation for o, _i in per_frame]))
    assert _max_step_deg(q) > 20.0
    outer, _inner = continuous_split(local)
    assert _max_step_deg(outer.rotation) < 10.0


def test_trs_error_flags_only_sheared_nodes():
    local = _stretch_path(5)
    clean = core.TRS([[1, 2, 3]] * 5, Rotation.random(5, random_state=1).as_quat()[:, [3, 0, 1, 2]], [[1, 2, 3]] * 5)
    both = np.concatenate([local, clean.to_matrix()[:, None]], axis=1)
    err = trs_error(both)
    assert (err[:3] > 1e-2).all() and err[3] < 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 12))
def test_linear_and_step_tracks_match_scipy(seed, k):
    rng = np.random.default_rng(seed)
    times = np.sort(rng.uniform(0, 5, k)) + np.arange(k) * 1e-3
    t = np.concatenate([rng.uniform(times[0] - 1, times[-1] + 1, 40), times])
    values = rng.normal(size=(k, 3))
    got = Track(times, values, "LINEAR", "translation").sample(t)
    want = np.stack([np.interp(t, times, values[:, c]) for c in range(3)], -1)
    assert np.allclose(got, want, atol=1e-12)
    step = Track(times, values, "STEP", "scale").sample(t)
    idx = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 1)
    assert np.allclose(step, values[idx])
    quats = Rotation.random(k, random_state=seed % 1000).as_quat()  # x, y, z, w as glTF stores them
    got_q = Track(times, quats, "LINEAR", "rotation").sample(t)
    inside = (t >= times[0]) & (t <= times[-1])
    want_q = Slerp(times, Rotation.from_quat(quats))(t[inside]).as_quat()[:, [3, 0, 1, 2]]
    dots = np.abs(np.einsum("mi,mi->m", got_q[inside], want_q))
    assert np.allclose(dots, 1.0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 10))
def test_cubicspline_track_matches_scipy_hermite(seed, k):
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(0.1, 1.0, k))
    values = rng.normal(size=(k, 3))
    in_tan, out_tan = rng.normal(size=(k, 3)), rng.normal(size=(k, 3))
    stored = np.stack([in_tan, values, out_tan], axis=1).reshape(-1, 3)
    t = rng.uniform(times[0], times[-1], 50)
    got = Track(times, stored, "CUBICSPLINE", "translation").sample(t)
    i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 2)
    want = np.empty_like(got)
    for m, (ti, seg) in enumerate(zip(t, i, strict=True)):  # one Hermite piece per segment, as glTF defines
        piece = CubicHermiteSpline(times[seg : seg + 2], values[seg : seg + 2], [out_tan[seg], in_tan[seg + 1]])
        want[m] = piece(ti)
    assert np.allclose(got, want, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_channels_sampled_together_as_one_by_one(seed):
    """local_matrices_at samples channels that share key times together: the same as
    each channel's own Track, for LINEAR, STEP and CUBICSPLINE, rotations, a node keyed
    twice (the last channel wins), nodes without channels, and two animations."""
    from hierarchy_inspector.addon.model.exports.gltf_animation import append_accessor, local_matrices_at, tracks
    from hierarchy_inspector.addon.model.exports.gltf_file import Gltf

    rng = np.random.default_rng(seed)
    n = 6
    doc = {
        "nodes": [{"name": f"n{j}", "translation": rng.normal(size=3).tolist()} for j in range(n)],
        "animations": [{"channels": [], "samplers": []}, {"channels": [], "samplers": []}],
    }
    gltf = Gltf(doc, None, True)
    shared = append_accessor(gltf, np.sort(rng.uniform(0, 2, 5))[:, None], with_bounds=True)
    other = append_accessor(gltf, np.sort(rng.uniform(0, 2, 3))[:, None], with_bounds=True)
    width = {"translation": 3, "rotation": 4, "scale": 3}
    for _ in range(14):
        a, node = int(rng.integers(2)), int(rng.integers(n - 1))  # the last node stays static
        path = str(rng.choice(list(width)))
        interpolation = str(rng.choice(["LINEAR", "STEP", "CUBICSPLINE"]))
        times = shared if rng.random() < 0.7 else other
        count = doc["accessors"][times]["count"] * (3 if interpolation == "CUBICSPLINE" else 1)
        values = rng.normal(size=(count, width[path]))
        anim = doc["animations"][a]
        anim["samplers"].append(
            {"input": times, "output": append_accessor(gltf, values), "interpolation": interpolation}
        )
        anim["channels"].append({"sampler": len(anim["samplers"]) - 1, "target": {"node": node, "path": path}})
    t = rng.uniform(-0.5, 2.5, 9)
    for animation in (None, 0, 1):
        got = local_matrices_at(gltf, t, animation)
        fields = {
            "translation": np.array([nd["translation"] for nd in doc["nodes"]])[None].repeat(len(t), 0),
            "rotation": np.tile([1.0, 0.0, 0.0, 0.0], (len(t), n, 1)),
            "scale": np.ones((len(t), n, 3)),
        }
        for (j, path), track in tracks(gltf, animation).items():
            fields[path][:, j] = track.sample(t)
        want = core.TRS(fields["translation"], fields["rotation"], fields["scale"]).to_matrix()
        assert np.allclose(got, want, atol=1e-12)


def _series(t_count: int = 7) -> FrameSeries:
    local = _stretch_path(t_count)
    parents = np.array([-1, 0, 1])
    tiled = core.Hierarchy(parents).tile(t_count)
    world = tiled.world_matrices(local.reshape(-1, 4, 4)).reshape(t_count, 3, 4, 4)
    box = np.broadcast_to([1.0, 1.0, 1.0], (t_count, 3, 3))
    keys = [("A", ""), ("B", ""), ("C", "")]
    return FrameSeries(np.arange(1, t_count + 1), keys, parents, world, -box, box.copy(), 24.0)


def test_accumulated_frames_equal_the_single_frame_export_at_every_frame():
    series = _series()
    local, residual = accumulated_frame_locals(series)
    for t in range(len(series)):
        nodes = Nodes(series.keys, series.parents, series.world[t], series.box_min[t], series.box_max[t])
        one, dev = accumulated_locals(inspect(nodes))
        assert np.allclose(local.translation[t], one.translation, atol=1e-9)
        assert np.allclose(np.abs(np.einsum("ni,ni->n", local.rotation[t], one.rotation)), 1.0, atol=1e-9)
        assert np.allclose(local.scale[t], one.scale, atol=1e-9)
        assert np.allclose(residual[t], dev.max_corner, atol=1e-9)
    assert (np.einsum("tni,tni->tn", local.rotation[1:], local.rotation[:-1]) >= 0).all()
    doc = accumulated_frames_document(series)
    assert doc["frames"] == list(range(1, 8)) and len(doc["nodes"][0]["translation"]) == 7
    rows = accumulated_frames_csv(doc).splitlines()
    assert rows[0].startswith("frame,name") and len(rows) == 1 + 7 * 3


def test_small_inner_puts_the_rotation_and_scale_on_the_helper():
    """A node scaled along its own axes (``R @ diag(s)``, no shear): with ``small_inner``
    the node's own key is the identity at every frame and the helper holds R and s; the
    product is exact either way."""
    rng = np.random.default_rng(3)
    t_count = 6
    angles = np.linspace(0.2, 1.4, t_count)
    local = np.tile(np.eye(4), (t_count, 1, 1, 1))
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    for t, a in enumerate(angles):
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        r = np.eye(3) + np.sin(a) * k + (1 - np.cos(a)) * k @ k
        local[t, 0, :3, :3] = r @ np.diag([0.5, 1.7, 3.0 + t * 0.1])
        local[t, 0, :3, 3] = (1.0, 2.0, 3.0)
    for small in (False, True):
        outer, inner = continuous_split(local, small_inner=small)
        assert np.abs(outer.to_matrix() @ inner.to_matrix() - local).max() < 1e-12
    assert np.allclose(np.abs(inner.rotation[..., 0]), 1.0, atol=1e-12)  # the identity, every frame


def _frame_by_frame_only(monkeypatch):
    """continuous_split with every node aligned by the reference frame-by-frame loop."""
    from hierarchy_inspector.addon.model.exports import animated_split

    path = animated_split._aligned_path

    def none_ok(*args):
        u, s, v, ok = path(*args)
        return u, s, v, np.zeros_like(ok)

    monkeypatch.setattr(animated_split, "_aligned_path", none_ok)


def _as_continuous(fast, slow, local) -> None:
    for a, b in zip(fast, slow, strict=True):
        assert _max_step_deg(a.rotation) <= _max_step_deg(b.rotation) + 1e-6
        assert np.abs(np.diff(a.scale, axis=0)).max() <= np.abs(np.diff(b.scale, axis=0)).max() + 1e-9
    assert np.abs(fast[0].to_matrix() @ fast[1].to_matrix() - local).max() < 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("small", [False, True])
def test_all_at_once_alignment_is_as_continuous_as_frame_by_frame(seed, small, monkeypatch):
    """The frames are aligned all at once: exact, and its keys move no more from one to
    the next than the frame-by-frame alignment's (smooth random paths through rotations
    and distinct, crossing scales, sampled coarsely so numpy's SVD reorders and flips
    its axes between keys; per-frame SVDs jump by tens of degrees there)."""
    from hierarchy_inspector.addon.model.exports import animated_split

    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 40)[:, None]
    n = 5
    axes_a, axes_b = rng.normal(size=(2, n, 3))
    angle_a, angle_b = rng.uniform(0.5, 6.0, size=(2, n))
    r1 = Rotation.from_rotvec((angle_a * t)[..., None] * axes_a / np.linalg.norm(axes_a, axis=-1, keepdims=True))
    r2 = Rotation.from_rotvec((angle_b * t)[..., None] * axes_b / np.linalg.norm(axes_b, axis=-1, keepdims=True))
    s0, s1 = rng.uniform(0.3, 3.0, size=(2, n, 3))
    scale = s0 + (s1 - s0) * t[..., None]
    local = np.zeros((40, n, 4, 4))
    local[..., :3, :3] = r1.as_matrix().reshape(40, n, 3, 3) * scale[..., None, :] @ r2.as_matrix().reshape(40, n, 3, 3)
    local[..., :3, 3] = rng.normal(size=(40, n, 3))
    local[..., 3, 3] = 1.0
    s_all = np.linalg.svd(local[..., :3, :3], compute_uv=False)
    keep = ~animated_split._repeated(s_all).any(axis=0)
    local = local[:, keep]
    u, s, v = _svd(local)
    assert animated_split._aligned_path(u, s, v, local[..., :3, :3], small)[3].all()
    fast = continuous_split(local, small_inner=small)
    _frame_by_frame_only(monkeypatch)
    slow = continuous_split(local, small_inner=small)
    _as_continuous(fast, slow, local)
    raw = continuous_quaternions(core.matrix_to_quat(u))
    assert _max_step_deg(raw) > 20.0 > _max_step_deg(fast[0].rotation)  # the alignment did something


@pytest.mark.parametrize("small", [False, True])
def test_repeated_values_aligned_at_once_as_frame_by_frame(small, monkeypatch):
    """Nodes uniform at their first frame and at mid-range (repeated singular values:
    any rotation inside them is an SVD), unscaled rigs at frame 1 (every value
    repeated) and a mirrored node: aligned along the whole path at once, as exact and
    as continuous as frame by frame, and close to it (the same choices, up to the
    rotation picked inside a value repeated at the first frame); the first two values
    of another node cross."""
    from hierarchy_inspector.addon.model.exports import animated_split

    local = _stretch_path(61)
    unscaled = local[:, :1].copy()  # the first node with a rotation only at frame 0: all three values repeat
    unscaled[0, 0, :3, :3] = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    local = np.concatenate([local, unscaled], axis=1)
    u, s, v = _svd(local)
    assert animated_split._repeated(s).any(axis=0).all()  # every node repeats a value at some frame
    assert animated_split._aligned_path(u, s, v, local[..., :3, :3], small)[3].all()
    fast = continuous_split(local, small_inner=small)
    _frame_by_frame_only(monkeypatch)
    slow = continuous_split(local, small_inner=small)
    _as_continuous(fast, slow, local)
    assert np.abs(fast[0].to_matrix() @ fast[1].to_matrix() - local).max() < 1e-9


def _svd(local):
    u, s, vt = np.linalg.svd(local[..., :3, :3])
    return u, s, np.swapaxes(vt, -2, -1)


def test_parent_inverses_match_each_parent_inverted_alone():
    """Each distinct parent inverted once and handed to all its children equals every
    child's parent world inverted on its own (np.linalg.inv), roots get the identity,
    and a parent with zero scale at one frame is named there, not elsewhere."""
    rng = np.random.default_rng(7)
    t_count, p_count = 4, 6
    world = np.zeros((t_count, p_count, 4, 4))
    world[..., :3, :] = rng.normal(size=(t_count, p_count, 3, 4))
    world[..., 3, 3] = 1.0
    world[2, 4, :3, 0] = 0.0  # node 4 has zero scale along X at frame 2
    parents = np.array([-1, 0, 0, 4, 1, 4, 4, -1])  # nodes 3, 5 and 6 share parent 4
    parent_world, inverse, singular = parent_inverses(world, parents)
    for t in range(t_count):
        for m, p in enumerate(parents):
            expected_world = world[t, p] if p >= 0 else np.eye(4)
            np.testing.assert_array_equal(parent_world[t, m], expected_world)
            assert singular[t, m] == (p == 4 and t == 2)
            if not singular[t, m]:
                np.testing.assert_allclose(inverse[t, m], np.linalg.inv(expected_world), atol=1e-9)
