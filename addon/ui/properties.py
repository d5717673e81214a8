"""Per-scene settings and the scene scan's results (one PointerProperty on Scene)."""

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

from ..scene.selection import frame_selected, select_node


def _select_scan_item(self, context) -> None:
    if 0 <= self.scan_index < len(self.scan_items):
        item = self.scan_items[self.scan_index]
        if item.instancer:  # an instance: select what carries it
            selected = select_node(context, item.instancer)
        else:
            selected = select_node(context, item.object_name, item.bone_name)
        if selected:
            frame_selected(context)


KIND_FILTERS = (
    ("ALL", "All", "Objects and bones"),
    ("OBJECTS", "Objects", "Objects only"),
    ("DEFORM", "Deform bones", "Bones with Deform on (what a skinned mesh follows)"),
    ("BONES", "Bones", "Every bone"),
)
SORTS = (
    ("CORNER", "Corners", "Largest corner distance first"),
    ("SHEAR", "Shear", "Largest shear first"),
    ("NAME", "Name", "Alphabetical"),
)


class HI_ScanGroup(bpy.types.PropertyGroup):
    """The flagged nodes that share one cause (the scaled node nearest above them)."""

    label: StringProperty(name="Cause")  # type: ignore[valid-type]
    object_name: StringProperty(name="Object")  # type: ignore[valid-type]
    bone_name: StringProperty(name="Bone")  # type: ignore[valid-type]
    count: IntProperty(name="Flagged nodes")  # type: ignore[valid-type]
    worst_corner: FloatProperty(name="Largest corner distance", subtype="DISTANCE")  # type: ignore[valid-type]


class HI_ScanItem(bpy.types.PropertyGroup):
    """One flagged object or bone of the last scene scan."""

    object_name: StringProperty(name="Object")  # type: ignore[valid-type]
    bone_name: StringProperty(name="Bone")  # type: ignore[valid-type]
    kind: StringProperty(name="Kind")  # type: ignore[valid-type]
    instancer: StringProperty(name="Instancer")  # type: ignore[valid-type]
    max_corner: FloatProperty(name="Corner deviation", subtype="DISTANCE")  # type: ignore[valid-type]
    matrix_corner: FloatProperty(name="Exported (matrix engines)", subtype="DISTANCE")  # type: ignore[valid-type]
    accumulated_corner: FloatProperty(name="Accumulated engines", subtype="DISTANCE")  # type: ignore[valid-type]
    shear_deg: FloatProperty(name="Shear")  # type: ignore[valid-type]
    local_shear_deg: FloatProperty(name="Local shear")  # type: ignore[valid-type]
    deform: BoolProperty(name="Deform bone")  # type: ignore[valid-type]
    group: IntProperty(name="Cause group", default=-1)  # type: ignore[valid-type]


class HI_SceneSettings(bpy.types.PropertyGroup):
    overlay: BoolProperty(  # type: ignore[valid-type]
        name="Overlay",
        description="Draw each node's box as Blender places it and as accumulating engines place it",
        default=False,
    )
    overlay_scope: EnumProperty(  # type: ignore[valid-type]
        name="Show",
        items=(
            ("CHAIN", "Active chain", "The chain from the root to the active object or bone"),
            ("FLAGGED", "Flagged nodes", "Every node the last scene scan flagged"),
        ),
        default="CHAIN",
    )
    overlay_per_cause: BoolProperty(  # type: ignore[valid-type]
        name="One per cause",
        description="Draw the worst node of each cause group instead of the worst N (N: the add-on preferences)",
        default=False,
    )
    show_accumulated_axes: BoolProperty(  # type: ignore[valid-type]
        name="Accumulated scale axes",
        description="Draw the local axes along which accumulating engines apply scale",
        default=True,
    )
    detail_object: StringProperty(  # type: ignore[valid-type]
        name="Details for", description="Object whose details the panel shows (empty: the active node)"
    )
    detail_bone: StringProperty(name="Details for bone")  # type: ignore[valid-type]
    scan_items: CollectionProperty(type=HI_ScanItem)  # type: ignore[valid-type]
    scan_groups: CollectionProperty(type=HI_ScanGroup)  # type: ignore[valid-type]
    scan_group_index: IntProperty(name="Cause", default=0)  # type: ignore[valid-type]
    scan_by_cause: BoolProperty(  # type: ignore[valid-type]
        name="Only this cause", description="List only the nodes of the cause selected above", default=False
    )
    scan_kind: EnumProperty(name="Show", items=KIND_FILTERS, default="ALL")  # type: ignore[valid-type]
    scan_sort: EnumProperty(name="Sort by", items=SORTS, default="CORNER")  # type: ignore[valid-type]
    scan_index: IntProperty(name="Flagged node", default=-1, update=_select_scan_item)  # type: ignore[valid-type]
    scan_nodes: IntProperty(name="Nodes scanned", default=0)  # type: ignore[valid-type]
    scan_seconds: FloatProperty(name="Scan time", default=0.0)  # type: ignore[valid-type]
    scan_done: BoolProperty(default=False)  # type: ignore[valid-type]


CLASSES = (HI_ScanItem, HI_ScanGroup, HI_SceneSettings)
SCENE_PROPERTY = "hierarchy_inspector"


def register_properties() -> None:
    setattr(bpy.types.Scene, SCENE_PROPERTY, PointerProperty(type=HI_SceneSettings))


def unregister_properties() -> None:
    delattr(bpy.types.Scene, SCENE_PROPERTY)
