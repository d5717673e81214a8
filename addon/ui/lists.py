"""UI lists: the scene scan's flagged nodes."""

from __future__ import annotations

import bpy

from ..model.nodes import node_label


class HI_UL_scan(bpy.types.UIList):
    bl_idname = "HI_UL_scan"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        icon = "BONE_DATA" if item.bone_name else "OUTLINER_OB_GROUP_INSTANCE" if item.instancer else "OBJECT_DATA"
        row.label(text=node_label(item.object_name, item.bone_name), icon=icon)
        row.label(text=f"{item.max_corner:.3g}")
        row.label(text=f"{item.shear_deg:.1f} deg")


CLASSES = (HI_UL_scan,)
