"""core.blender_math against real Blender (bpy 5.0.1): random scenes built in Blender,
raw properties read back with ``foreach_get``, the numpy model compared with Blender's
``matrix_world`` and ``pose_bone.matrix``.

Blender works in float32: every comparison is a relative error (max abs difference over
the matrix, divided by max(1, max abs entry of Blender's matrix)) below 1e-5.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hierarchy_inspector.core import Hierarchy
from hierarchy_inspector.core import blender_math as bm

bpy = pytest.importorskip("bpy")
from mathutils import Matrix  # noqa: E402  (after bpy, which provides it)

TOL = 1e-5
MODES = bm.ROTATION_MODES
SCALE_MODES = bm.INHERIT_SCALE_MODES


@pytest.fixture
def scene():
    """An empty factory scene before the test, and again after it (no state leaks)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy.context.scene
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.read_factory_settings(use_empty=True)


# -- reading Blender ------------------------------------------------------------------------


def _get(collection, prop: str, width: int, dtype=np.float32) -> np.ndarray:
    buf = np.empty(len(collection) * width, dtype=dtype)
    collection.foreach_get(prop, buf)
    return buf.reshape(len(collection), width) if width > 1 else buf


def _get_matrices(collection, prop: str) -> np.ndarray:
    """``(N, 4, 4)`` column-vector matrices (``foreach_get`` hands out the transpose)."""
    return np.swapaxes(_get(collection, prop, 16).reshape(-1, 4, 4), 1, 2).astype(np.float64)


def _rel_err(model: np.ndarray, blender: np.ndarray) -> np.ndarray:
    """Per matrix: max |model - blender| / max(1, max |blender|)."""
    diff = np.abs(model - blender).max(axis=(-1, -2))
    return diff / np.maximum(1.0, np.abs(blender).max(axis=(-1, -2)))


def _read_objects(objects) -> dict:
    """Raw transform properties of ``objects`` (a list), via foreach_get on bpy.data.objects."""
    all_objects = bpy.data.objects
    pos = {ob.name: i for i, ob in enumerate(all_objects)}
    sel = np.array([pos[ob.name] for ob in objects], dtype=np.int64)
    index = {ob.name: i for i, ob in enumerate(objects)}
    out = {
        "rotation_mode": bm.rotation_mode_codes_from_dna(_get(all_objects, "rotation_mode", 1, np.int32))[sel],
        # Index of the parent within ``objects`` (-1: no parent, or one outside the list).
        "parents": np.array([index.get(ob.parent.name, -1) if ob.parent else -1 for ob in objects], dtype=np.int64),
        "has_parent": np.array([ob.parent is not None for ob in objects]),
    }
    for prop, width in (
        ("location", 3),
        ("rotation_quaternion", 4),
        ("rotation_euler", 3),
        ("rotation_axis_angle", 4),
        ("scale", 3),
        ("delta_location", 3),
        ("delta_rotation_euler", 3),
        ("delta_rotation_quaternion", 4),
        ("delta_scale", 3),
    ):
        out[prop] = _get(all_objects, prop, width)[sel].astype(np.float64)
    for prop in ("matrix_parent_inverse", "matrix_basis", "matrix_world"):
        out[prop] = _get_matrices(all_objects, prop)[sel]
    return out


def _object_basis(raw: dict) -> np.ndarray:
    return bm.basis_matrices(
        raw["location"],
        raw["rotation_mode"],
        raw["rotation_quaternion"],
        raw["rotation_euler"],
        raw["rotation_axis_angle"],
        raw["scale"],
        delta_location=raw["delta_location"],
        delta_rotation_euler=raw["delta_rotation_euler"],
        delta_rotation_quaternion=raw["delta_rotation_quaternion"],
        delta_scale=raw["delta_scale"],
    )


def _read_armature(ob) -> dict:
    """Bones in ``ob.pose.bones`` order: rest data, flags, pose channels, Blender's results."""
    bones, pose_bones = ob.data.bones, ob.pose.bones
    names = [pb.name for pb in pose_bones]
    index = {name: i for i, name in enumerate(names)}
    sel = np.array([index[b.name] for b in bones], dtype=np.int64)  # bones order -> pose order
    to_pose = np.empty_like(sel)
    to_pose[sel] = np.arange(len(sel))  # pose order -> bones order

    def bone_prop(prop, width, dtype=np.float32):
        return _get(bones, prop, width, dtype)[to_pose]

    out = {
        "names": names,
        "parents": np.array([index[pb.parent.name] if pb.parent else -1 for pb in pose_bones], dtype=np.int64),
        "matrix_local": _get_matrices(bones, "matrix_local")[to_pose],
        "length": bone_prop("length", 1).astype(np.float64),
        "inherit_scale": bm.inherit_scale_codes_from_dna(bone_prop("inherit_scale", 1, np.int32)),
        "inherit_rotation": bone_prop("use_inherit_rotation", 1, bool),
        "local_location": bone_prop("use_local_location", 1, bool),
        "connected": bone_prop("use_connect", 1, bool),
        "relative_parent": bone_prop("use_relative_parent", 1, bool),
        "rotation_mode": bm.rotation_mode_codes_from_dna(_get(pose_bones, "rotation_mode", 1, np.int32)),
        "armature_world": np.array(ob.matrix_world, dtype=np.float64),
    }
    for prop, width in (
        ("location", 3),
        ("rotation_quaternion", 4),
        ("rotation_euler", 3),
        ("rotation_axis_angle", 4),
        ("scale", 3),
    ):
        out[prop] = _get(pose_bones, prop, width).astype(np.float64)
    for prop in ("matrix_basis", "matrix", "matrix_channel"):
        out[prop] = _get_matrices(pose_bones, prop)
    return out


def _model_pose(raw: dict) -> tuple[np.ndarray, np.ndarray]:
    basis = bm.basis_matrices(
        raw["location"],
        raw["rotation_mode"],
        raw["rotation_quaternion"],
        raw["rotation_euler"],
        raw["rotation_axis_angle"],
        raw["scale"],
    )
    pose = bm.pose_matrices(
        raw["parents"],
        raw["matrix_local"],
        raw["inherit_scale"],
        raw["inherit_rotation"],
        raw["local_location"],
        raw["connected"],
        basis,
    )
    return basis, pose


# -- building random scenes in Blender ------------------------------------------------------


def _random_scale(rng, n: int, zero: float = 0.0) -> np.ndarray:
    """Non-uniform (20% uniform) scales, a quarter of the components negative, a fraction
    ``zero`` of them exactly zero."""
    s = rng.uniform(0.4, 2.0, size=(n, 3)) * rng.choice([-1.0, 1.0], size=(n, 3), p=[0.25, 0.75])
    uniform = rng.random(n) < 0.2
    s[uniform] = s[uniform, :1]
    s[rng.random((n, 3)) < zero] = 0.0
    return s


def _random_quaternions(rng, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4)) * rng.uniform(0.3, 3.0, size=(n, 1))  # not normalised: Blender normalises
    q[rng.random(n) < 0.05] = 0.0  # all zero: Blender uses 180 degrees about X
    return q


def _random_axis_angles(rng, n: int) -> np.ndarray:
    aa = np.concatenate((rng.uniform(-2 * math.pi, 2 * math.pi, size=(n, 1)), rng.normal(size=(n, 3))), axis=1)
    aa[rng.random(n) < 0.05, 1:] = 0.0  # zero axis: identity
    return aa


def _random_affine(rng) -> Matrix:
    """A random invertible affine matrix: rotation, non-uniform (maybe negative) scale, shear."""
    a = rng.normal(size=(3, 3))
    while abs(np.linalg.det(a)) < 0.3:
        a = rng.normal(size=(3, 3))
    m = np.eye(4)
    m[:3, :3] = a
    m[:3, 3] = rng.normal(size=3) * 2.0
    return Matrix(m.tolist())


def _set_channels(rng, targets, modes, zero_scale: float = 0.0) -> None:
    """Random loc / rot (every representation, not only the active one) / scale."""
    n = len(targets)
    loc = rng.normal(size=(n, 3)) * 1.5
    quat = _random_quaternions(rng, n)
    euler = rng.uniform(-1.5 * math.pi, 1.5 * math.pi, size=(n, 3))
    axis_angle = _random_axis_angles(rng, n)
    scale = _random_scale(rng, n, zero_scale)
    for i, t in enumerate(targets):
        t.rotation_mode = MODES[modes[i]]
        t.location = loc[i]
        t.rotation_quaternion = quat[i]
        t.rotation_euler = euler[i]
        t.rotation_axis_angle = axis_angle[i]
        t.scale = scale[i]


def _build_objects(rng, scene, n: int, prefix: str = "ob", zero_scale: float = 0.0) -> list:
    """``n`` empties in a random forest (parents created first), random transforms, deltas
    and ``matrix_parent_inverse``; every rotation mode."""
    objects = []
    modes = rng.integers(0, len(MODES), size=n)
    for i in range(n):
        ob = bpy.data.objects.new(f"{prefix}{i:04d}", None)
        scene.collection.objects.link(ob)
        objects.append(ob)
        if i >= 3 and rng.random() < 0.8:
            ob.parent = objects[int(rng.integers(0, i))]
            ob.matrix_parent_inverse = _random_affine(rng) if rng.random() < 0.8 else Matrix.Identity(4)
        elif rng.random() < 0.5:
            ob.matrix_parent_inverse = _random_affine(rng)  # ignored by Blender without a parent
    _set_channels(rng, objects, modes, zero_scale)
    for ob in objects:
        ob.delta_location = rng.normal(size=3)
        ob.delta_rotation_euler = rng.uniform(-math.pi, math.pi, size=3)
        ob.delta_rotation_quaternion = rng.normal(size=4) if rng.random() < 0.9 else (0.0, 0.0, 0.0, 0.0)
        ob.delta_scale = _random_scale(rng, 1)[0]
    return objects


def _build_armature(
    rng,
    scene,
    name: str,
    n_bones: int,
    max_depth: int = 6,
    inherit_scale=None,
    inherit_rotation=None,
    local_location=None,
    connect_probability: float = 0.3,
    zero_scale: float = 0.0,
) -> bpy.types.Object:
    """An armature with several random chains (depth <= max_depth), random rest frames
    (head / tail / roll), random per-bone flags, and a random pose in every rotation mode."""
    arm = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, arm)
    scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    depth = []
    edit_bones = []
    for i in range(n_bones):
        eb = arm.edit_bones.new(f"{name}_b{i:03d}")
        candidates = [j for j in range(i) if depth[j] < max_depth]
        parent = -1
        if candidates and i >= 3 and rng.random() < 0.9:
            # Mostly extend the latest chain (deep chains), sometimes branch anywhere.
            parent = candidates[-1] if rng.random() < 0.6 else int(rng.choice(candidates))
        head = rng.normal(size=3) * 2.0
        if parent >= 0:
            eb.parent = edit_bones[parent]
            if rng.random() < 0.5:  # start near the parent's tail, as rigs do
                head = np.array(edit_bones[parent].tail) + rng.normal(size=3) * 0.3
        direction = rng.normal(size=3)
        eb.head = head
        eb.tail = head + direction / np.linalg.norm(direction) * rng.uniform(0.3, 2.0)
        eb.roll = rng.uniform(-math.pi, math.pi)
        if parent >= 0 and rng.random() < connect_probability:
            eb.use_connect = True  # moves the head onto the parent's tail
        eb.inherit_scale = SCALE_MODES[int(rng.integers(0, 6))] if inherit_scale is None else inherit_scale
        eb.use_inherit_rotation = bool(rng.random() < 0.7) if inherit_rotation is None else inherit_rotation
        eb.use_local_location = bool(rng.random() < 0.7) if local_location is None else local_location
        eb.use_relative_parent = bool(rng.random() < 0.5)
        edit_bones.append(eb)
        depth.append(depth[parent] + 1 if parent >= 0 else 0)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_bones = list(ob.pose.bones)
    _set_channels(rng, pose_bones, rng.integers(0, len(MODES), size=len(pose_bones)), zero_scale)
    ob.location = rng.normal(size=3)
    ob.rotation_euler = rng.uniform(-math.pi, math.pi, size=3)
    ob.scale = _random_scale(rng, 1)[0]
    return ob


# -- objects --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_objects_match_blender(scene, seed):
    rng = np.random.default_rng(seed)
    objects = _build_objects(rng, scene, 90, zero_scale=0.03 if seed == 3 else 0.0)
    bpy.context.view_layer.update()
    raw = _read_objects(objects)
    basis = _object_basis(raw)
    basis_err = _rel_err(basis, raw["matrix_basis"])
    world = bm.object_tree_matrices(raw["parents"], raw["matrix_parent_inverse"], basis)
    world_err = _rel_err(world, raw["matrix_world"])
    for code, mode in enumerate(MODES):
        sel = raw["rotation_mode"] == code
        assert sel.any(), mode
        assert basis_err[sel].max() < TOL, (mode, basis_err[sel].max())
        assert world_err[sel].max() < TOL, (mode, world_err[sel].max())
    # The same through object_world_matrices, level by level with Blender's parent matrices.
    has_parent = raw["parents"] >= 0
    parent_world = np.where(has_parent[:, None, None], raw["matrix_world"][np.maximum(raw["parents"], 0)], np.eye(4))
    one_step = bm.object_world_matrices(parent_world, raw["matrix_parent_inverse"], basis, has_parent=has_parent)
    assert _rel_err(one_step, raw["matrix_world"]).max() < TOL


def test_object_rotation_quirks(scene):
    """Quirks the model encodes: zero quaternions, zero axes, deltas per rotation mode,
    the parent inverse of a root."""
    ob = bpy.data.objects.new("quirk", None)
    scene.collection.objects.link(ob)
    cases = [
        dict(rotation_mode="QUATERNION", rotation_quaternion=(0, 0, 0, 0)),
        dict(rotation_mode="QUATERNION", rotation_quaternion=(1, 0, 0, 0), delta_rotation_quaternion=(0, 0, 0, 0)),
        dict(rotation_mode="QUATERNION", rotation_quaternion=(0.5, 3, 0, 1), delta_rotation_quaternion=(2, 0, 1, 0)),
        dict(rotation_mode="AXIS_ANGLE", rotation_axis_angle=(1.2, 0, 0, 0)),
        dict(rotation_mode="AXIS_ANGLE", rotation_axis_angle=(1.2, 0, 0, 3), delta_rotation_euler=(0.3, 0.5, 0.7)),
        dict(rotation_mode="AXIS_ANGLE", rotation_axis_angle=(0, 0, 1, 0), delta_rotation_quaternion=(1, 2, 3, 4)),
        dict(rotation_mode="ZXY", rotation_euler=(0.1, 0.2, 0.3), delta_rotation_euler=(0.3, -0.5, 0.7)),
        dict(rotation_mode="YZX", delta_rotation_quaternion=(1, 2, 3, 4)),  # ignored by Euler modes
    ]
    for case in cases:
        ob.rotation_quaternion, ob.rotation_euler, ob.rotation_axis_angle = (1, 0, 0, 0), (0, 0, 0), (0, 0, 1, 0)
        ob.delta_rotation_quaternion, ob.delta_rotation_euler = (1, 0, 0, 0), (0, 0, 0)
        for key, value in case.items():
            setattr(ob, key, value)
        bpy.context.view_layer.update()
        raw = _read_objects([ob])
        assert _rel_err(_object_basis(raw), raw["matrix_world"])[0] < TOL, case
    # Axis-angle ignores both Python-visible delta rotations (not documented by the spec).
    ob.rotation_mode = "AXIS_ANGLE"
    ob.rotation_axis_angle = (0, 0, 1, 0)
    ob.delta_rotation_quaternion, ob.delta_rotation_euler = (1, 2, 3, 4), (0.3, 0.5, 0.7)
    bpy.context.view_layer.update()
    assert np.allclose(np.array(ob.matrix_world), np.eye(4), atol=1e-7)
    # A root object's parent inverse is ignored.
    ob.matrix_parent_inverse = Matrix.Diagonal((2.0, 3.0, 4.0, 1.0))
    bpy.context.view_layer.update()
    assert np.allclose(np.array(ob.matrix_world), np.eye(4), atol=1e-7)


# -- pose bones -----------------------------------------------------------------------------


def _check_armature(ob, errors: dict | None = None) -> dict:
    raw = _read_armature(ob)
    basis, pose = _model_pose(raw)
    basis_blender = raw["matrix_basis"]
    # Blender's pose matrix_basis of a connected bone has no translation; the model's keeps
    # the location and pose_matrices drops it.
    conn = raw["connected"]
    assert np.all(basis_blender[conn, :3, 3] == 0.0)
    basis_cmp = basis.copy()
    basis_cmp[conn, :3, 3] = 0.0
    assert _rel_err(basis_cmp, basis_blender).max() < TOL
    err = _rel_err(pose, raw["matrix"])
    if errors is not None:
        for i, e in enumerate(err):
            key = SCALE_MODES[raw["inherit_scale"][i]] + ("" if raw["inherit_rotation"][i] else "+hinge")
            if raw["parents"][i] < 0:
                key = "root"
            errors[key] = max(errors.get(key, 0.0), float(e))
            errors["all"] = max(errors.get("all", 0.0), float(e))
    worst = int(np.argmax(err))
    assert err[worst] < TOL, (
        raw["names"][worst],
        SCALE_MODES[raw["inherit_scale"][worst]],
        bool(raw["inherit_rotation"][worst]),
        bool(raw["local_location"][worst]),
        float(err[worst]),
    )
    return raw


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_pose_bones_match_blender(scene, seed):
    rng = np.random.default_rng(seed)
    armatures = [_build_armature(rng, scene, f"arm{seed}_{k}", 45) for k in range(3)]
    bpy.context.view_layer.update()
    errors: dict = {}
    counts: dict = defaultdict(int)
    for ob in armatures:
        raw = _check_armature(ob, errors)
        for code, inherit in zip(raw["inherit_scale"], raw["inherit_rotation"], strict=True):
            counts[(code, bool(inherit))] += 1
        assert raw["connected"].any() and (raw["parents"] < 0).any()
        # Depth up to 6 below the roots.
        assert Hierarchy(raw["parents"]).max_depth >= 4
    assert len(counts) == 12, counts  # every mode with and without inherited rotation


@pytest.mark.parametrize("mode", SCALE_MODES)
@pytest.mark.parametrize("inherit_rotation", [True, False])
def test_pose_bones_single_mode_chains(scene, mode, inherit_rotation):
    """Whole armatures in one mode: errors would compound down the chains."""
    rng = np.random.default_rng(100 + SCALE_MODES.index(mode) + 10 * inherit_rotation)
    ob = _build_armature(rng, scene, "arm", 24, inherit_scale=mode, inherit_rotation=inherit_rotation)
    bpy.context.view_layer.update()
    _check_armature(ob)


def test_pose_bones_shuffled_order_and_local_location(scene):
    """Bones given in any order (children before parents) and both local-location settings."""
    rng = np.random.default_rng(7)
    ob = _build_armature(rng, scene, "arm", 30, local_location=False)
    bpy.context.view_layer.update()
    raw = _check_armature(ob)
    perm = rng.permutation(len(raw["parents"]))
    inv = np.argsort(perm)
    parents = np.where(raw["parents"][perm] >= 0, inv[np.maximum(raw["parents"][perm], 0)], -1)
    shuffled = {
        k: (v[perm] if isinstance(v, np.ndarray) and v.ndim and len(v) == len(perm) else v) for k, v in raw.items()
    }
    shuffled["parents"] = parents
    _, pose = _model_pose(shuffled)
    assert _rel_err(pose, raw["matrix"][perm]).max() < TOL


def test_pose_bones_with_zero_scales(scene):
    """Zero scale is legal. Blender matches the model exactly where the zero reaches a bone
    through plain products (its own basis, FULL children); where a mode normalises or takes
    the cube root of a singular parent matrix (a zero scale further up the chain), Blender's
    float32 result is decided by rounding noise: the model stays finite there, no more."""
    rng = np.random.default_rng(31)
    armatures = [_build_armature(rng, scene, f"zero{k}", 40, zero_scale=0.12) for k in range(3)]
    full = _build_armature(rng, scene, "zero_full", 30, inherit_scale="FULL", inherit_rotation=True, zero_scale=0.12)
    bpy.context.view_layer.update()
    checked = 0
    for ob in armatures:
        raw = _read_armature(ob)
        _, pose = _model_pose(raw)
        assert np.isfinite(pose).all()
        zero = (raw["scale"] == 0.0).any(axis=1)
        parents = raw["parents"]
        # Bones with no zero-scaled strict ancestor.
        clean = np.ones(len(parents), dtype=bool)
        up = parents.copy()
        while (up >= 0).any():
            live = up >= 0
            clean[live] &= ~zero[up[live]]
            up[live] = parents[up[live]]
        assert zero[clean].any() and (~clean).any()
        assert _rel_err(pose[clean], raw["matrix"][clean]).max() < TOL
        checked += clean.sum()
    raw = _check_armature(full)  # all FULL: plain matrix products, exact despite zeros
    assert (raw["scale"] == 0.0).any()
    assert checked > 40


# -- objects parented to bones --------------------------------------------------------------


@pytest.mark.parametrize("seed", [21, 22])
def test_bone_parented_objects(scene, seed):
    rng = np.random.default_rng(seed)
    arm_ob = _build_armature(rng, scene, "rig", 30)
    parent_ob = bpy.data.objects.new("rig_parent", None)
    scene.collection.objects.link(parent_ob)
    parent_ob.location, parent_ob.scale = (1.0, -2.0, 0.5), (1.5, -0.7, 2.0)
    arm_ob.parent = parent_ob
    arm_ob.matrix_parent_inverse = _random_affine(rng)
    bone_names = [b.name for b in arm_ob.data.bones]
    children = _build_objects(rng, scene, 40, prefix="child")
    targets = []
    for ob in children:
        ob.parent = arm_ob
        ob.parent_type = "BONE"
        ob.parent_bone = bone_names[int(rng.integers(0, len(bone_names)))]
        ob.matrix_parent_inverse = _random_affine(rng)
        targets.append(ob.parent_bone)
    bpy.context.view_layer.update()

    arm = _read_armature(arm_ob)
    relative = arm["relative_parent"]
    assert relative.any() and (~relative).any()
    raw = _read_objects(children)
    basis = _object_basis(raw)
    index = {name: i for i, name in enumerate(arm["names"])}
    b = np.array([index[name] for name in targets])
    _, model_pose = _model_pose(arm)

    # The relative-parent matrix is the pose channel's deformation matrix (chan_mat).
    deform = arm["matrix"] @ np.linalg.inv(arm["matrix_local"])
    assert _rel_err(deform, arm["matrix_channel"]).max() < TOL

    for pose, what in ((arm["matrix"], "Blender's pose"), (model_pose, "model pose")):
        p = bm.bone_parent_matrix(arm["armature_world"], pose[b], arm["length"][b], arm["matrix_local"][b], relative[b])
        world = bm.object_world_matrices(p, raw["matrix_parent_inverse"], basis)
        err = _rel_err(world, raw["matrix_world"])
        assert err[relative[b]].max() < TOL, (what, "relative", err[relative[b]].max())
        assert err[~relative[b]].max() < TOL, (what, "tail", err[~relative[b]].max())
    # The armature itself: object parent with a parent inverse.
    arm_world = bm.object_world_matrices(
        np.array(parent_ob.matrix_world),
        np.array(arm_ob.matrix_parent_inverse),
        np.array(arm_ob.matrix_basis),
    )
    assert _rel_err(arm_world, arm["armature_world"]) < TOL


def test_bone_parent_without_relative_needs_no_rest(scene):
    rng = np.random.default_rng(5)
    arm_ob = _build_armature(rng, scene, "rig", 5)
    child = bpy.data.objects.new("child", None)
    scene.collection.objects.link(child)
    child.parent, child.parent_type = arm_ob, "BONE"
    child.parent_bone = arm_ob.data.bones[3].name
    arm_ob.data.bones[3].use_relative_parent = False
    bpy.context.view_layer.update()
    pb = arm_ob.pose.bones[child.parent_bone]
    p = bm.bone_parent_matrix(np.array(arm_ob.matrix_world), np.array(pb.matrix)[None], pb.bone.length)
    world = bm.object_world_matrices(p, np.array(child.matrix_parent_inverse), np.array(child.matrix_basis))
    assert _rel_err(world[0], np.array(child.matrix_world)) < TOL


def test_matrix_decompose_is_blenders_for_sheared_matrices():
    """``core.decompose(..., rotation="blender")`` against ``mathutils.Matrix.decompose()``
    on sheared, mirrored and nearly singular matrices: Blender computes in float32, so
    within a few of its epsilons; every branch of its quaternion formula is hit."""
    from hierarchy_inspector import core

    rng = np.random.default_rng(7)
    m = np.tile(np.eye(4), (4000, 1, 1))
    m[:, :3, :3] = rng.normal(size=(4000, 3, 3)) * rng.uniform(0.2, 3.0, size=(4000, 1, 3))
    m[::4, :3, :3] = np.linalg.qr(rng.normal(size=(1000, 3, 3)))[0] + 0.05 * rng.normal(size=(1000, 3, 3))
    m[:, :3, 3] = rng.normal(size=(4000, 3))
    mine = core.decompose(m, rotation="blender")
    worst = 0.0
    branches = set()
    for k in range(len(m)):
        loc, rot, scale = Matrix(m[k].tolist()).decompose()
        q = np.array(rot)
        q /= np.linalg.norm(q)  # what the exporters write (glTF normalises, FBX's to_euler does)
        worst = max(
            worst, float(np.abs(q - mine.rotation[k]).max()), float(np.abs(np.array(scale) - mine.scale[k]).max())
        )
        n = m[k, :3, :3] / mine.scale[k]
        branches.add((n[2, 2] < 0, n[0, 0] > n[1, 1] if n[2, 2] < 0 else n[0, 0] < -n[1, 1]))
    assert worst < 2e-6, worst
    assert len(branches) == 4
    # The X-keeping rotation is another one wherever the columns lean.
    assert np.abs(core.decompose(m).rotation - mine.rotation).max() > 0.1
