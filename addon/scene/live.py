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
from bpy.app.handlers import persistent

from ..model.inspection import Inspection, inspect
from . import settings
from .reading import active_key, read_chain


@dataclass
class ChainView:
    """The inspection of the active chain: node indices root to active."""

    inspection: Inspection
    chain: list[int]

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
    read = read_chain(context)
    if read is None:
        return None
    nodes, chain = read
    view = ChainView(inspect(nodes, thresholds), chain)
    _state["chain_key"], _state["chain"] = cache_key, view
    return view


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
