"""What the panel and the overlay show right now, recomputed when the scene changes.

Handlers bump a revision counter on every depsgraph update, frame change, undo, redo
and file load; the chain's inspection is cached per (scene, active node, revision,
frame, thresholds), so the panel's several draw calls and the overlay share one
computation, and nothing stale survives an edit. The last scene scan is kept for the
overlay's "flagged" mode; :func:`scan_is_current` says whether objects changed since
(selection changes do not count), and the panel says so when they did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ..model.inspection import Inspection, inspect
from ..model.views import accumulated_export_residual
from . import settings
from .reading import active_key
from .scan import read_chain


@dataclass
class ChainView:
    """The inspection of the active chain: node indices root to active."""

    inspection: Inspection
    chain: list[int]
    residual: np.ndarray | None = None  #: Export accumulated TRS's corner residual per node
    #: The chain of the bone the active bone's constraints copy (its mechanism), root
    #: first; empty when it copies none.
    mechanism: list[int] = field(default_factory=list)

    @property
    def active(self) -> int:
        return self.chain[-1]


_state: dict = {
    "revision": 0,
    "scene_revision": 0,
    "chain_key": None,
    "chain": None,
    "scan": None,
    "scan_revision": -1,
    "modes": {},  # object name -> mode when last seen: a mode switch is not a scene change
}


def invalidate(*_args) -> None:
    """Forget cached results (the scene changed)."""
    _state["revision"] += 1
    _state["scene_revision"] += 1


@persistent
def on_depsgraph_update(scene, depsgraph=None) -> None:
    # The chain is recomputed after any update (cheap); the scan is only called out of
    # date by what changes its results (see :func:`changes_scene`).
    _state["revision"] += 1
    updates = getattr(depsgraph, "updates", None)
    if updates is None or changes_scene(updates, _state["modes"]):
        _state["scene_revision"] += 1


def changes_scene(updates, modes: dict[str, str]) -> bool:
    """Whether depsgraph ``updates`` change what a scan shows.

    They do: a moved object or bone (a transform flag on an object or on armature data),
    new geometry (which moves boxes), renamed, added or deleted objects. They do not:
    selecting (a Scene update with no flags; in Pose mode, an armature object's
    geometry flag with no transform on its armature), writing the scene's own
    properties (a Scene update, with flags: clicking a row of the scan list sets its
    index), and switching an object's mode (an object update with no flags whose mode
    differs from the one in ``modes``, a record of object name -> mode that this call
    keeps up to date).
    """
    armature_moved = any(isinstance(u.id, bpy.types.Armature) and u.is_updated_transform for u in updates)
    changed = False
    for u in updates:
        if isinstance(u.id, bpy.types.Object):
            obj = u.id.original
            before = modes.get(obj.name)
            modes[obj.name] = obj.mode
            if u.is_updated_transform:
                changed = True
            elif u.is_updated_geometry:
                changed |= obj.type != "ARMATURE" or armature_moved
            elif before is None or before == obj.mode:  # renamed, new, or re-linked
                changed = True
        elif isinstance(u.id, bpy.types.Scene):
            continue  # the scene's own properties (a click in the scan list writes one): no object changed
        elif u.is_updated_transform or u.is_updated_geometry:
            changed = True
    return changed


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
    _state["modes"] = {}


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
    read = read_chain(context)
    if read is None:
        return None
    nodes, chain = read
    inspection = inspect(nodes, thresholds)
    followed = int(nodes.follows[chain[-1]])
    mechanism = nodes.chain(followed) if followed >= 0 else []
    view = ChainView(inspection, chain, accumulated_export_residual(inspection), mechanism)
    _state["chain_key"], _state["chain"] = cache_key, view
    return view


def export_residual(view: ChainView):
    """The accumulated export's residual of the chain (cached with the view)."""
    return view.residual


def remember_scan(inspection: Inspection, objects=()) -> None:
    """Keep the scan; ``objects``: the scene's objects, whose modes are recorded (so
    that switching one's mode later does not call the scan out of date)."""
    _state["scan"] = inspection
    _state["scan_revision"] = _state["scene_revision"]
    _state["modes"] = {o.name: o.mode for o in objects}


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
