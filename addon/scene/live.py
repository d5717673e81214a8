"""What the panel and the overlay show right now, recomputed when the scene changes.

Handlers bump a revision counter on every depsgraph update, frame change, undo, redo
and file load; the chain's inspection is cached per (scene, active node, revision,
frame, thresholds), so the panel's several draw calls and the overlay share one
computation, and nothing stale survives an edit. The last scene scan is kept for the
overlay's "flagged" mode; :func:`scan_is_current` says whether objects changed since
(selection changes do not count), and the panel says so when they did.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ..model.inspection import Inspection, inspect
from ..model.nodes import Nodes
from ..model.views import accumulated_export_residual
from . import data_checks, reading, settings, verify
from .reading import active_key, chain_indices, chain_objects
from .scan import annotate


@dataclass
class ChainView:
    """The inspection of the active chain: node indices root to active."""

    inspection: Inspection
    chain: list[int]
    residual: np.ndarray | None = None  #: Export accumulated TRS's corner residual per node

    @property
    def active(self) -> int:
        return self.chain[-1]


_state: dict = {"revision": 0, "scene_revision": 0, "chain_key": None, "chain": None, "scan": None, "scan_revision": -1}


def invalidate(*_args) -> None:
    """Forget cached results (the scene changed)."""
    _state["revision"] += 1
    _state["scene_revision"] += 1


@persistent
def on_depsgraph_update(scene, depsgraph=None) -> None:
    # The chain is recomputed after any update (cheap); the scan is only called out of
    # date by changes to objects (moves, renames, parenting) or to what the scene holds
    # (adding, deleting). Selecting sends a Scene update with no flags: it does not count.
    _state["revision"] += 1
    updates = getattr(depsgraph, "updates", None)
    if updates is None or any(_changes_scene(u) for u in updates):
        _state["scene_revision"] += 1


def _changes_scene(update) -> bool:
    return isinstance(update.id, bpy.types.Object) or update.is_updated_transform or update.is_updated_geometry


@persistent
def on_frame_change(scene, depsgraph=None) -> None:
    invalidate()


@persistent
def on_undo_redo(*_args) -> None:
    invalidate()


@persistent
def on_load(*_args) -> None:
    invalidate()
    _state["chain_key"] = _state["chain"] = _state["scan"] = None


HANDLERS = (
    ("depsgraph_update_post", on_depsgraph_update),
    ("frame_change_post", on_frame_change),
    ("undo_post", on_undo_redo),
    ("redo_post", on_undo_redo),
    ("load_post", on_load),
)


def chain_view(context) -> ChainView | None:
    """The active chain's inspection (cached until the next change), or None."""
    key = active_key(context)
    if key is None or context.scene is None:
        return None
    thresholds = settings.thresholds(context)
    cache_key = (context.scene.name, key, _state["revision"], context.scene.frame_current, thresholds)
    if _state["chain_key"] == cache_key:
        return _state["chain"]
    read = read_chain_nodes(context)
    if read is None:
        return None
    nodes, chain = read
    inspection = inspect(nodes, thresholds)
    view = ChainView(inspection, chain, accumulated_export_residual(inspection))
    _state["chain_key"], _state["chain"] = cache_key, view
    return view


def export_residual(view: ChainView):
    """The accumulated export's residual of the chain (cached with the view)."""
    return view.residual


def _bone_chains(context, key, objects) -> dict[str, list]:
    """Per armature on the chain, the pose bones the chain passes through (the active
    bone's and the parent bones' of objects parented to bones, with their ancestors),
    root first."""
    wanted: dict[str, dict] = {}

    def want(arm, bone_name: str) -> None:
        pose = arm.pose if arm is not None and arm.type == "ARMATURE" else None
        pb = pose.bones.get(bone_name) if pose is not None else None
        if pb is not None:
            for b in (pb, *pb.parent_recursive):
                wanted.setdefault(arm.name, {})[b.name] = b

    if key[1]:
        want(context.active_object, key[1])
    for obj in objects:
        if obj.parent is not None and obj.parent_type == "BONE" and obj.parent_bone:
            want(obj.parent, obj.parent_bone)
    return {arm: sorted(bones.values(), key=lambda b: len(b.parent_recursive)) for arm, bones in wanted.items()}


def _object_boxes(objects) -> tuple[np.ndarray, np.ndarray]:
    """Local boxes ``(K, 3)`` twice, as :func:`.reading.read_nodes` reads them (the
    display cube for empties, ``bound_box`` otherwise), from two corners: Blender
    recomputes the whole box on every corner read (0.14 ms each for a 700-bone
    armature), and corners 0 and 6 are its minimum and maximum."""
    lo = np.empty((len(objects), 3))
    hi = np.empty((len(objects), 3))
    for k, obj in enumerate(objects):
        if obj.type == "EMPTY":
            lo[k], hi[k] = -obj.empty_display_size, obj.empty_display_size
        else:
            box = obj.bound_box
            a, b = np.array(box[0], dtype=np.float64), np.array(box[6], dtype=np.float64)
            lo[k], hi[k] = np.minimum(a, b), np.maximum(a, b)
    return lo, hi


def read_chain_nodes(context) -> tuple[Nodes, list[int]] | None:
    """Nodes of the chain from the root to the active object or pose bone, and the
    chain's indices root to active (None when nothing is active).

    Only the chain's objects and the bones on it are read, so the cost follows the
    chain, not the rig (a 13-bone chain of a 700-bone Rigify rig: about 1 ms; see
    ``benchmarks/bench_addon.py``). Same matrices, parents, boxes, notes and
    annotations as the scan's :func:`.reading.read_nodes` gives those nodes.
    """
    key = active_key(context)
    if key is None:
        return None
    objects = chain_objects(context.active_object)
    bone_chains = _bone_chains(context, key, objects)
    keys = [(o.name, "") for o in objects]
    worlds = [np.array([np.asarray(o.matrix_world, dtype=np.float64) for o in objects])]
    lo, hi = _object_boxes(objects)
    mins, maxs = [lo], [hi]
    poses = []
    for arm_name, bones in bone_chains.items():
        arm = bpy.data.objects[arm_name]
        pose = np.array([np.asarray(pb.matrix, dtype=np.float64) for pb in bones])
        worlds.append(np.asarray(arm.matrix_world, dtype=np.float64) @ pose)
        b_lo, b_hi = reading.bone_boxes(np.array([pb.bone.length for pb in bones], dtype=np.float64))
        mins.append(b_lo)
        maxs.append(b_hi)
        local = {pb.name: k for k, pb in enumerate(bones)}
        parents = np.array([local.get(pb.parent.name, -1) if pb.parent else -1 for pb in bones], dtype=np.int64)
        poses.append((arm, bones, parents, pose))
        keys += [(arm_name, pb.name) for pb in bones]
    index = {k: i for i, k in enumerate(keys)}
    parents_all = np.full(len(keys), -1, dtype=np.int64)
    parent_object = np.full(len(objects), -1, dtype=np.int64)
    parent_types = [""] * len(objects)
    for i, o in enumerate(objects):
        if o.parent is None:
            continue
        parent_types[i] = o.parent_type
        parent_object[i] = index.get((o.parent.name, ""), -1)
        bone = o.parent_bone if o.parent_type == "BONE" else ""
        parents_all[i] = index.get((o.parent.name, bone), parent_object[i]) if bone else parent_object[i]
    start = len(objects)
    for arm, bones, parents, _pose in poses:
        for k in range(len(bones)):
            parents_all[start + k] = start + parents[k] if parents[k] >= 0 else index.get((arm.name, ""), -1)
        start += len(bones)
    nodes = Nodes(keys, parents_all, np.concatenate(worlds), np.concatenate(mins), np.concatenate(maxs))
    if not np.isfinite(nodes.world).all():
        data_checks.describe(nodes)
    modes = [o.rotation_mode for o in objects]
    notes = verify.check_objects(reading._Sequence(objects), objects, modes, parent_object, parent_types, nodes.world)
    for arm, bones, parents, pose in poses:
        notes += verify.check_bones(arm, parents, pose, bones=bones)
    nodes.notes = notes
    annotate(nodes)
    return nodes, chain_indices(nodes, key)


def remember_scan(inspection: Inspection) -> None:
    _state["scan"] = inspection
    _state["scan_revision"] = _state["scene_revision"]


def last_scan() -> Inspection | None:
    """The last scan's inspection (possibly older than the scene: the overlay says so)."""
    return _state["scan"]


def scan_is_current() -> bool:
    return _state["scan"] is not None and _state["scan_revision"] == _state["scene_revision"]


def register_handlers() -> None:
    for name, fn in HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if fn not in handlers:
            handlers.append(fn)


def unregister_handlers() -> None:
    for name, fn in reversed(HANDLERS):
        handlers = getattr(bpy.app.handlers, name)
        while fn in handlers:
            handlers.remove(fn)
    _state["chain_key"] = _state["chain"] = _state["scan"] = None
