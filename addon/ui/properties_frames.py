"""Per-scene settings of the frame-range scan and the dynamics display, and the range
scan's results (one PointerProperty on Scene: ``Scene.hierarchy_inspector_frames``)."""

from __future__ import annotations

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..model.frames import FRAME_MAX, FRAME_MIN
from ..scene.selection import select_node
from ..scene.timeline import live as live_frames
from .properties import KIND_FILTERS, HI_ScanGroup


def _select_item(self, context) -> None:
    """A row clicked: select its node, unless the viewport hides it (a hidden bone
    cannot be seen selected; its worst-frame button still goes to the frame)."""
    if 0 <= self.range_index < len(self.range_items):
        item = self.range_items[self.range_index]
        if not item.hidden:
            select_node(context, item.object_name, item.bone_name)


def _toggle_markers(self, context) -> None:
    live_frames.set_markers(context.scene, live_frames.last_range(), self.show_markers)


class HI_RangeItem(bpy.types.PropertyGroup):
    """One node flagged at some frame of the last range scan."""

    object_name: StringProperty(name="Object")  # type: ignore[valid-type]
    bone_name: StringProperty(name="Bone")  # type: ignore[valid-type]
    worst_frame: IntProperty(name="Worst frame")  # type: ignore[valid-type]
    flagged_frames: IntProperty(name="Frames flagged")  # type: ignore[valid-type]
    max_corner: FloatProperty(name="Largest corner deviation", subtype="DISTANCE")  # type: ignore[valid-type]
    shear_deg: FloatProperty(name="Largest shear")  # type: ignore[valid-type]
    local_shear_deg: FloatProperty(name="Largest local shear")  # type: ignore[valid-type]
    deform: BoolProperty(name="Deform bone")  # type: ignore[valid-type]
    hidden: BoolProperty(name="Hidden", description="The viewport does not show it")  # type: ignore[valid-type]
    instancer: StringProperty(name="Instancer")  # type: ignore[valid-type]
    group: IntProperty(name="Cause group", default=-1)  # type: ignore[valid-type]


class HI_FrameSettings(bpy.types.PropertyGroup):
    use_scene_range: BoolProperty(  # type: ignore[valid-type]
        name="Scene range", description="Scan the scene's frame range (else the start, end and step here)", default=True
    )
    frame_start: IntProperty(name="Start", default=1, min=FRAME_MIN, max=FRAME_MAX)  # type: ignore[valid-type]
    frame_end: IntProperty(name="End", default=250, min=FRAME_MIN, max=FRAME_MAX)  # type: ignore[valid-type]
    frame_step: IntProperty(name="Step", default=1, min=1, max=FRAME_MAX)  # type: ignore[valid-type]
    show_markers: BoolProperty(  # type: ignore[valid-type]
        name="Timeline markers",
        description="One timeline marker per cause at its worst frame (torso squash f20)",
        default=False,
        update=_toggle_markers,
    )
    show_motion_arrows: BoolProperty(  # type: ignore[valid-type]
        name="Motion arrows",
        description="Draw the active node's velocity and acceleration, global and relative to its parent",
        default=False,
    )
    show_inertial_arrows: BoolProperty(  # type: ignore[valid-type]
        name="Inertial arrows",
        description="Draw the inertial terms of the parent's motion acting on the active node",
        default=False,
    )
    range_scope: EnumProperty(  # type: ignore[valid-type]
        items=(("CHAIN", "Active chain", ""), ("SCENE", "Scene", "")), default="SCENE"
    )
    range_items: CollectionProperty(type=HI_RangeItem)  # type: ignore[valid-type]
    range_index: IntProperty(name="Flagged node", default=-1, update=_select_item)  # type: ignore[valid-type]
    range_groups: CollectionProperty(type=HI_ScanGroup)  # type: ignore[valid-type]
    range_group_index: IntProperty(name="Cause", default=0)  # type: ignore[valid-type]
    range_by_cause: BoolProperty(  # type: ignore[valid-type]
        name="Only this cause", description="List only the nodes of the cause selected above", default=False
    )
    range_kind: EnumProperty(name="Show", items=KIND_FILTERS, default="ALL")  # type: ignore[valid-type]
    range_chain: StringProperty(default="")  # type: ignore[valid-type]  # the last chain scan, in a line
    range_done: BoolProperty(default=False)  # type: ignore[valid-type]
    range_nodes: IntProperty(default=0)  # type: ignore[valid-type]
    range_label: StringProperty(default="")  # type: ignore[valid-type]
    range_seconds: FloatProperty(default=0.0)  # type: ignore[valid-type]


CLASSES = (HI_RangeItem, HI_FrameSettings)
SCENE_PROPERTY = "hierarchy_inspector_frames"


def register_properties() -> None:
    setattr(bpy.types.Scene, SCENE_PROPERTY, PointerProperty(type=HI_FrameSettings))


def unregister_properties() -> None:
    delattr(bpy.types.Scene, SCENE_PROPERTY)
