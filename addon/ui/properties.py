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

from ..scene.selection import select_node


def _select_scan_item(self, context) -> None:
    if 0 <= self.scan_index < len(self.scan_items):
        item = self.scan_items[self.scan_index]
        if item.instancer:  # an instance: select what carries it
            select_node(context, item.instancer)
        else:
            select_node(context, item.object_name, item.bone_name)


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
    scan_index: IntProperty(name="Flagged node", default=-1, update=_select_scan_item)  # type: ignore[valid-type]
    scan_nodes: IntProperty(name="Nodes scanned", default=0)  # type: ignore[valid-type]
    scan_seconds: FloatProperty(name="Scan time", default=0.0)  # type: ignore[valid-type]
    scan_done: BoolProperty(default=False)  # type: ignore[valid-type]


CLASSES = (HI_ScanItem, HI_SceneSettings)
SCENE_PROPERTY = "hierarchy_inspector"


def register_properties() -> None:
    setattr(bpy.types.Scene, SCENE_PROPERTY, PointerProperty(type=HI_SceneSettings))


def unregister_properties() -> None:
    delattr(bpy.types.Scene, SCENE_PROPERTY)
