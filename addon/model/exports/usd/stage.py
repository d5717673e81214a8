"""The usd-core side of the exact USD export: runs only in a process of its own
(:class:`.check.UsdWorker` starts it), never beside Blender, which links its own
USD (and bpy from PyPI has no ``pxr`` at all).

One request per process (a JSON line on standard input, once Blender's exporter has
written the file): the stage is opened, matched with Blender's scene (object prims by
``userProperties:blender:object_name``; joints by their path, each bone's name made a
valid identifier as the exporter does, ``Tf.MakeValidIdentifier``), corrected in place
with :mod:`.plan` (``fix``), saved, then opened again from the file as a new layer
and read back the way a USD consumer composes it: ``UsdGeom.XformCache`` for prims,
``UsdSkel.Cache`` / ``SkeletonQuery.ComputeJointWorldTransforms`` for joints,
``SkinningQuery.ComputeSkinnedPoints`` placed by the skeleton's world transform for
skinned points (UsdSkel ignores the skinned prim's own transform), at every time
code = frame. The answer is an ``.npz`` (see :func:`serve`).

Matrices: USD stores row vectors (``v M``, translation in the last row); everything
here is converted to the project's column vectors at the boundary (``_to_np``,
``_to_usd``).
"""

from __future__ import annotations

import json
import sys
from time import perf_counter
from typing import Any

import numpy as np
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdSkel, Vt

from ...thresholds import Thresholds
from .plan import depths, helper_tokens, joints_to_split, plan_objects, plan_skeleton, static_rest

NAME_ATTR = "userProperties:blender:object_name"


def _to_np(matrices) -> np.ndarray:
    """USD matrices (row vectors) -> ``(..., 4, 4)`` column-vector float64."""
    return np.swapaxes(np.array(matrices, dtype=np.float64), -1, -2)


def _to_usd(matrices: np.ndarray):
    return Vt.Matrix4dArray.FromNumpy(np.ascontiguousarray(np.swapaxes(matrices, -1, -2)))


def _object_name(prim) -> str:
    attr = prim.GetAttribute(NAME_ATTR)
    return str(attr.Get()) if attr and attr.HasAuthoredValue() else ""


def _owner_name(prim) -> str:
    """The Blender object a prim belongs to: its own name attribute or its nearest
    ancestor's."""
    while prim and not prim.IsPseudoRoot():
        name = _object_name(prim)
        if name:
            return name
        prim = prim.GetParent()
    return ""


def bone_tokens(names: list[str], parents: np.ndarray) -> list[str]:
    """Each bone's joint path as Blender's exporter writes it: the names of the bone and
    its ancestors (all of them, exported or not), each made a valid identifier."""
    safe = [Tf.MakeValidIdentifier(n) for n in names]
    out: list[str] = [""] * len(names)
    for i in range(len(names)):  # parents are listed before their children
        p = int(parents[i])
        out[i] = f"{out[p]}/{safe[i]}" if p >= 0 else safe[i]
    return out


def _bone_order(parents: np.ndarray) -> np.ndarray:
    """An order of the bones with parents first."""
    return np.argsort(depths(parents), kind="stable")


class Scene:
    """Blender's side of the request: objects' worlds, armatures' poses."""

    def __init__(self, data):
        self.frames = np.asarray(data["frames"], dtype=np.int64)
        self.object_names = [str(n) for n in data["object_names"]]
        self.object_world = np.asarray(data["object_world"], dtype=np.float64)
        self.skinned = {str(n) for n in data["skinned"]}
        self.armatures: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = {}
        for a, name in enumerate(data["arm_names"]):
            self.armatures[str(name)] = (
                [str(b) for b in data[f"bones_{a}"]],
                np.asarray(data[f"bone_parents_{a}"], dtype=np.int64),
                np.asarray(data[f"pose_{a}"], dtype=np.float64),
            )

    def tokens(self, armature: str) -> dict[str, int]:
        """Joint path -> bone index for ``armature``."""
        names, parents, _pose = self.armatures[armature]
        order = _bone_order(parents)
        position = np.empty_like(order)
        position[order] = np.arange(len(order))
        ordered_parents = np.where(parents[order] >= 0, position[np.maximum(parents[order], 0)], -1)
        tokens = bone_tokens([names[i] for i in order], ordered_parents)
        return {tok: int(order[k]) for k, tok in enumerate(tokens)}


def _object_prims(stage) -> list[tuple[Any, str]]:
    return [(prim, name) for prim in stage.Traverse() if (name := _object_name(prim)) and prim.IsA(UsdGeom.Xformable)]


def _skel_roots(stage) -> list:
    return [prim for prim in stage.Traverse() if prim.IsA(UsdSkel.Root)]


def _skeletons(stage) -> list:
    return [prim for prim in stage.Traverse() if prim.IsA(UsdSkel.Skeleton)]


def _skinned_paths(stage) -> dict[str, list]:
    """Skeleton path -> the skinning targets' prims bound to it (every SkelRoot)."""
    cache = UsdSkel.Cache()
    out: dict[str, list] = {}
    for root_prim in _skel_roots(stage):
        root = UsdSkel.Root(root_prim)
        cache.Populate(root, Usd.PrimDefaultPredicate)
        for binding in cache.ComputeSkelBindings(root, Usd.PrimDefaultPredicate):
            key = str(binding.GetSkeleton().GetPrim().GetPath())
            out.setdefault(key, []).extend(q.GetPrim() for q in binding.GetSkinningTargets())
    return out


# -- correcting the stage -------------------------------------------------------------------


def _keep_frames(stage, frames: np.ndarray) -> None:
    """Drop time samples off the exported frames (Blender's exporter writes every frame
    of the range, whatever the step)."""
    wanted = {float(f) for f in frames}
    for prim in stage.Traverse():
        for attr in prim.GetAttributes():
            extra = [t for t in attr.GetTimeSamples() if t not in wanted]
            for t in extra:
                attr.ClearAtTime(t)


def _fix_objects(stage, scene: Scene, times, thresholds: Thresholds, skinned: set) -> list[str]:
    """Give the object prims :func:`.plan.plan_objects` chooses a matrix op; returns
    their names."""
    index = {name: k for k, name in enumerate(scene.object_names)}
    prims = [
        (p, n) for p, n in _object_prims(stage) if n in index and n not in scene.skinned and p.GetPath() not in skinned
    ]
    if not prims:
        return []
    cache = UsdGeom.XformCache()
    t_count = len(times)
    world = scene.object_world[:, [index[n] for _p, n in prims]]
    parent_world = np.zeros_like(world)  # the file's world of parents that are no object of the scene
    written = np.empty_like(world)  # each prim's local as Blender's ops compose it
    by_path = {p.GetPath(): k for k, (p, _n) in enumerate(prims)}
    inside = [by_path.get(p.GetParent().GetPath(), -1) for p, _n in prims]
    for t, time in enumerate(times):
        cache.SetTime(Usd.TimeCode(time))
        for k, (prim, _name) in enumerate(prims):
            written[t, k] = _to_np(cache.GetLocalTransformation(prim)[0])
            if inside[k] < 0:  # a parent that is no object of the scene (the root prim): as the file places it
                parent_world[t, k] = _to_np(cache.GetLocalToWorldTransform(prim.GetParent()))
    pick, local = plan_objects(np.array(inside), world, parent_world, written, thresholds)
    chosen = np.flatnonzero(pick)
    animated = t_count > 1
    for k in chosen:
        prim = prims[k][0]
        xf = UsdGeom.Xformable(prim)
        for op in xf.GetOrderedXformOps():
            prim.RemoveProperty(op.GetAttr().GetName())
        xf.ClearXformOpOrder()
        op = xf.AddTransformOp(UsdGeom.XformOp.PrecisionDouble)
        rows = np.swapaxes(local[:, k], -1, -2)
        still = np.abs(rows - rows[0]).max() <= 1e-12 * max(1.0, float(np.abs(rows).max()))
        if not animated or still:
            op.Set(Gf.Matrix4d(rows[0].tolist()))
        else:
            for t, time in enumerate(times):
                op.Set(Gf.Matrix4d(rows[t].tolist()), Usd.TimeCode(time))
    return [prims[k][1] for k in chosen]


def _match_skeleton(skel_prim, scene: Scene):
    """``(armature, tokens, bones (J,), file_parents (J,), reparented (J,))`` for a
    Skeleton prim, or None when its owner is not an armature of the request or a joint
    is not a bone of it (``bones`` -1 there)."""
    armature = _owner_name(skel_prim)
    if armature not in scene.armatures:
        return None
    skel = UsdSkel.Skeleton(skel_prim)
    tokens = [str(t) for t in (skel.GetJointsAttr().Get() or [])]
    by_token = scene.tokens(armature)
    bones = np.array([by_token.get(t, -1) for t in tokens], dtype=np.int64)
    topology = UsdSkel.Topology(Vt.TokenArray(tokens))
    file_parents = np.array(topology.GetParentIndices(), dtype=np.int64)
    names, bone_parents, _pose = scene.armatures[armature]
    blender_parent = np.where(bones >= 0, bone_parents[np.maximum(bones, 0)], -1)
    parent_bone = np.where(file_parents >= 0, bones[np.maximum(file_parents, 0)], -1)
    reparented = (bones >= 0) & (blender_parent != parent_bone)
    return armature, tokens, bones, file_parents, reparented


def _remap_primvars(prim, old: np.ndarray, joint_count: int) -> None:
    """Per-joint array attributes of the Skeleton prim (Blender's bone lengths) follow
    the new order: a helper takes its joint's value."""
    for attr in prim.GetAttributes():
        name = attr.GetName()
        if not name.startswith("primvars:") or attr.GetNumTimeSamples():
            continue
        value = attr.Get()
        if value is None or not hasattr(value, "__len__") or isinstance(value, str) or len(value) != joint_count:
            continue
        attr.Set(type(value)([value[int(o)] for o in old]))


def _fix_skeleton(stage, skel_prim, scene: Scene, times, thresholds: Thresholds, targets: list) -> dict:
    """Helper joints and a recomputed animation for one skeleton; returns what was done."""
    matched = _match_skeleton(skel_prim, scene)
    if matched is None:
        return {}
    armature, tokens, bones, file_parents, reparented = matched
    if (bones < 0).any():
        return {"unmatched": [tokens[j] for j in np.flatnonzero(bones < 0)]}
    names, _bone_parents, pose = scene.armatures[armature]
    target = pose[:, bones]
    skel = UsdSkel.Skeleton(skel_prim)
    rest = _to_np(skel.GetRestTransformsAttr().Get())
    bind = _to_np(skel.GetBindTransformsAttr().Get())
    binding = UsdSkel.BindingAPI(skel_prim)
    sources = binding.GetAnimationSourceRel().GetTargets() if binding.GetAnimationSourceRel() else []
    anim_prim = stage.GetPrimAtPath(sources[0]) if sources else None
    moved = [names[bones[j]] for j in np.flatnonzero(reparented)]
    if anim_prim is None:  # a still pose: Blender wrote it into restTransforms (full matrices, shear kept)
        if reparented.any():
            skel.GetRestTransformsAttr().Set(_to_usd(static_rest(file_parents, reparented, target[0], rest)))
        return {"armature": armature, "path": str(skel_prim.GetPath()), "helpers": [], "reparented": moved}
    split = joints_to_split(file_parents, target, thresholds)
    if not reparented.any() and not split.any():  # Blender's animation kept as it is
        return {"armature": armature, "path": str(skel_prim.GetPath()), "helpers": [], "reparented": []}
    plan = plan_skeleton(file_parents, reparented, target, bind, rest, thresholds, split)
    new_tokens = helper_tokens(tokens, plan.old, plan.helper) if plan.helper.any() else tokens
    token_array = Vt.TokenArray(new_tokens)
    skel.GetJointsAttr().Set(token_array)
    skel.GetBindTransformsAttr().Set(_to_usd(plan.bind))
    skel.GetRestTransformsAttr().Set(_to_usd(plan.rest))
    if plan.helper.any():
        _remap_primvars(skel_prim, plan.old, len(tokens))
    anim = UsdSkel.Animation(anim_prim)
    anim.CreateJointsAttr().Set(token_array)
    quat_xyzw = plan.rotations[..., [1, 2, 3, 0]]
    for attr, values, kind in (
        (anim.CreateTranslationsAttr(), plan.translations, Vt.Vec3fArray),
        (anim.CreateRotationsAttr(), quat_xyzw, Vt.QuatfArray),
        (anim.CreateScalesAttr(), plan.scales, Vt.Vec3hArray),
    ):
        attr.Clear()
        attr.Set(kind.FromNumpy(np.ascontiguousarray(values[0])))
        if len(times) > 1:
            for t, time in enumerate(times):
                attr.Set(kind.FromNumpy(np.ascontiguousarray(values[t])), Usd.TimeCode(time))
    if plan.helper.any():
        _remap_skin(targets, tokens, new_tokens, plan)
    joints = {new_tokens[k]: int(bones[o]) for k, (o, h) in enumerate(zip(plan.old, plan.helper, strict=True)) if not h}
    return {
        "armature": armature,
        "path": str(skel_prim.GetPath()),
        "helpers": [names[bones[j]] for j in np.flatnonzero(plan.split)],
        "reparented": moved,
        "joints": joints,
    }


def _remap_skin(targets: list, tokens: list[str], new_tokens: list[str], plan) -> None:
    """The skinned prims' joint indices (or their own ``skel:joints`` order) follow the
    new joint order."""
    renamed = {
        tokens[int(o)]: new_tokens[k] for k, (o, h) in enumerate(zip(plan.old, plan.helper, strict=True)) if not h
    }
    for prim in targets:
        binding = UsdSkel.BindingAPI(prim)
        own = binding.GetJointsAttr()
        if own and own.HasAuthoredValue():
            own.Set(Vt.TokenArray([renamed.get(str(t), str(t)) for t in own.Get()]))
            continue
        primvar = binding.GetJointIndicesPrimvar()
        if not primvar or not primvar.GetAttr().HasAuthoredValue():
            continue
        attr = primvar.GetAttr()
        samples = attr.GetTimeSamples()
        for time in [Usd.TimeCode.Default(), *(Usd.TimeCode(t) for t in samples)]:
            value = attr.Get(time)
            if value is None:
                continue
            indices = np.array(value, dtype=np.int64)
            attr.Set(Vt.IntArray.FromNumpy(plan.remap[indices].astype(np.int32)), time)


# -- reading back ---------------------------------------------------------------------------


def read_back(path: str, scene: Scene, times, joint_bones: dict | None = None) -> dict:
    """The file at ``path`` opened anew (a new layer read from disk) and composed as a
    consumer does at ``times``: object worlds, joint worlds, skinned points.
    ``joint_bones``: skeleton path -> {joint path: bone index} where the correction
    renamed joints (else each bone's path as Blender's exporter writes it)."""
    joint_bones = joint_bones or {}
    stage = Usd.Stage.Open(Sdf.Layer.OpenAsAnonymous(path))
    out: dict = {}
    t_count = len(times)
    cache = UsdGeom.XformCache()
    skin = _skinned_paths(stage)
    skinned_prims = {p.GetPath() for prims in skin.values() for p in prims}
    prims = [(p, n) for p, n in _object_prims(stage) if p.GetPath() not in skinned_prims and n not in scene.skinned]
    worlds = np.empty((t_count, len(prims), 4, 4))
    skel_cache = UsdSkel.Cache()
    for root_prim in _skel_roots(stage):
        skel_cache.Populate(UsdSkel.Root(root_prim), Usd.PrimDefaultPredicate)
    skeletons = []
    for skel_prim in _skeletons(stage):
        query = skel_cache.GetSkelQuery(UsdSkel.Skeleton(skel_prim))
        armature = _owner_name(skel_prim)
        if not query or armature not in scene.armatures:
            continue
        tokens = [str(t) for t in query.GetJointOrder()]
        by_token = joint_bones.get(str(skel_prim.GetPath())) or scene.tokens(armature)
        cols = [k for k, t in enumerate(tokens) if t in by_token]
        skeletons.append((skel_prim, query, armature, cols, [by_token[tokens[k]] for k in cols]))
    joint_worlds = [np.empty((t_count, len(s[3]), 4, 4)) for s in skeletons]
    points: dict[str, list] = {}
    targets = []
    for skel_prim, query, _armature, _cols, _bones in skeletons:
        for prim in skin.get(str(skel_prim.GetPath()), []):
            name = _owner_name(prim)
            if name and prim.IsA(UsdGeom.PointBased):
                targets.append((skel_prim, query, name, prim, skel_cache.GetSkinningQuery(prim)))
                points[name] = []
    for t, time in enumerate(times):
        code = Usd.TimeCode(time)
        cache.SetTime(code)
        for k, (prim, _name) in enumerate(prims):
            worlds[t, k] = _to_np(cache.GetLocalToWorldTransform(prim))
        for s, (_skel_prim, query, _armature, cols, _bones) in enumerate(skeletons):
            all_joints = _to_np(query.ComputeJointWorldTransforms(cache))
            joint_worlds[s][t] = all_joints[cols]
        for skel_prim, query, name, prim, skinning in targets:
            xforms = query.ComputeSkinningTransforms(code)
            pts = UsdGeom.PointBased(prim).GetPointsAttr().Get(code)
            if xforms is None or pts is None or not skinning.ComputeSkinnedPoints(xforms, pts, code):
                points.pop(name, None)
                continue
            if name in points:
                skel_world = _to_np(cache.GetLocalToWorldTransform(skel_prim))
                p = np.array(pts, dtype=np.float64)
                points[name].append(p @ skel_world[:3, :3].T + skel_world[:3, 3])
    out["object_names"] = np.array([n for _p, n in prims], dtype=object)
    out["object_world"] = worlds
    out["skeletons"] = np.array([s[2] for s in skeletons], dtype=object)
    for s, (_p, _q, _a, _cols, bones) in enumerate(skeletons):
        out[f"joint_bones_{s}"] = np.array(bones, dtype=np.int64)
        out[f"joint_world_{s}"] = joint_worlds[s]
    names = [n for n, v in points.items() if len(v) == t_count]
    out["skin_names"] = np.array(names, dtype=object)
    for k, n in enumerate(names):
        out[f"skin_{k}"] = np.array(points[n])
    return out


def correct(path: str, scene: Scene, thresholds: Thresholds) -> dict:
    """Correct the stage at ``path`` in place (saved); returns what was done."""
    stage = Usd.Stage.Open(path)
    times = [float(f) for f in scene.frames]
    done: dict = {"matrix_ops": [], "skeletons": []}
    skin = _skinned_paths(stage)
    skinned_prims = {p.GetPath() for prims in skin.values() for p in prims}
    with Sdf.ChangeBlock():
        if len(times) > 1:
            _keep_frames(stage, scene.frames)
    with Sdf.ChangeBlock():
        done["matrix_ops"] = _fix_objects(stage, scene, times, thresholds, skinned_prims)
    for skel_prim in _skeletons(stage):
        with Sdf.ChangeBlock():
            result = _fix_skeleton(stage, skel_prim, scene, times, thresholds, skin.get(str(skel_prim.GetPath()), []))
        if result:
            done["skeletons"].append(result)
    stage.GetRootLayer().Save()
    return done


def serve() -> None:
    """Answer one request from standard input: ``{"path", "data", "out", "fix",
    "shear_deg"}``; ``data`` an ``.npz`` of Blender's side (:class:`Scene`), ``out``
    where the answer goes (:func:`read_back`'s arrays, and ``done``: what was changed,
    as JSON)."""
    line = sys.stdin.readline()
    if not line.strip():
        return
    request = json.loads(line)
    t0 = perf_counter()
    scene = Scene(np.load(request["data"], allow_pickle=True))
    t1 = perf_counter()
    done: dict = {}
    if request.get("fix", True):
        done = correct(request["path"], scene, Thresholds(shear_deg=float(request.get("shear_deg", 0.1))))
    t2 = perf_counter()
    renamed = {d["path"]: d["joints"] for d in done.get("skeletons", []) if "joints" in d}
    out = read_back(request["path"], scene, [float(f) for f in scene.frames], renamed)
    t3 = perf_counter()
    done["seconds"] = {"load": t1 - t0, "correct": t2 - t1, "read_back": t3 - t2}
    out["done"] = np.array(json.dumps(done), dtype=object)
    np.savez(request["out"], **out)
