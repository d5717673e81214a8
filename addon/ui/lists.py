"""UI lists: the scene scan's cause groups and its flagged nodes (filtered by name, kind
and cause, sorted by corners, shear or name)."""

from __future__ import annotations

from typing import Any

import bpy

from ..scene import settings
from . import fit


def visible(item, scene_settings) -> bool:
    """Whether the scan list shows ``item`` under the kind and cause filters."""
    kind = scene_settings.scan_kind
    if kind == "OBJECTS" and item.bone_name:
        return False
    if kind == "BONES" and not item.bone_name:
        return False
    if kind == "DEFORM" and not (item.bone_name and item.deform):
        return False
    return not scene_settings.scan_by_cause or item.group == scene_settings.scan_group_index


#: The scan rows last drawn: (text, pixels it needs, pixels it was given), for the
#: real-window test; cleared by the scan panel's draw.
DRAWN: list[tuple[str, float, float]] = []


def _record(context, text: str, allotted: float) -> str:
    DRAWN.append((text, fit.label_px(context, text), float(allotted)))
    return text


class HI_UL_scan_groups(bpy.types.UIList):
    """One row per cause: the scaled node and how many flagged nodes it explains."""

    bl_idname = "HI_UL_scan_groups"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        units = settings.units(context)
        numbers = f"{item.count}  {units.length(item.worst_corner)}"
        total = fit.region_px(context) - 24 * fit.ui_scale(context)  # the list's own scroll bar
        factor = max(0.3, min(0.8, 1.0 - fit.label_px(context, numbers) / total))
        split = layout.split(factor=factor, align=True)
        room = factor * total - fit.ICON_PX * fit.ui_scale(context)
        # The scaled node's name tells the groups apart: its scale goes first when short of room.
        label = item.label if fit.label_px(context, item.label) <= room else item.label.split(" (")[0]
        split.label(
            text=_record(context, fit.fit_start(context, label, room), room),
            icon="BONE_DATA" if item.bone_name else ("OBJECT_DATA" if item.object_name else "QUESTION"),
        )
        right = split.row(align=True)
        right.alignment = "RIGHT"
        right.label(text=_record(context, numbers, (1.0 - factor) * total))


class HI_UL_scan(bpy.types.UIList):
    """The flagged nodes: bones by their own name (the armature is in the cause row and
    the tooltip of the kind filter), the numbers never elided."""

    bl_idname = "HI_UL_scan"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        units = settings.units(context)
        numbers = f"{units.length(item.max_corner)}  {item.shear_deg:.1f}\N{DEGREE SIGN}"
        total = fit.region_px(context) - 24 * fit.ui_scale(context)  # the list's own scroll bar
        width = fit.label_px(context, numbers)
        factor = max(0.3, min(0.8, 1.0 - width / total))
        split = layout.split(factor=factor, align=True)
        name = item.bone_name or item.object_name
        room = factor * total - fit.ICON_PX * fit.ui_scale(context)
        split.label(
            text=_record(context, fit.fit_start(context, name, room), room),
            icon="BONE_DATA" if item.bone_name else "OUTLINER_OB_GROUP_INSTANCE" if item.instancer else "OBJECT_DATA",
        )
        right = split.row(align=True)
        right.alignment = "RIGHT"
        right.label(text=_record(context, numbers, (1.0 - factor) * total))

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        scene_settings = data
        helper: Any = bpy.types.UI_UL_list
        flags: list[int] = (
            helper.filter_items_by_name(self.filter_name, self.bitflag_filter_item, items, "bone_name")
            if self.filter_name
            else [self.bitflag_filter_item] * len(items)
        )
        if self.filter_name:  # objects have no bone name: match them by their own
            by_object = helper.filter_items_by_name(self.filter_name, self.bitflag_filter_item, items, "object_name")
            flags = [f if it.bone_name else o for f, o, it in zip(flags, by_object, items, strict=True)]
        flags = [f if f and visible(it, scene_settings) else 0 for f, it in zip(flags, items, strict=True)]
        order: list[int]
        sort = scene_settings.scan_sort
        if sort == "NAME":
            order = helper.sort_items_helper(
                [(k, it.bone_name or it.object_name) for k, it in enumerate(items)], key=lambda kv: kv[1].lower()
            )
        elif sort == "SHEAR":
            order = helper.sort_items_helper([(k, -it.shear_deg) for k, it in enumerate(items)], key=lambda kv: kv[1])
        else:
            order = []  # the scan stores them worst corner first
        return flags, order


CLASSES = (HI_UL_scan_groups, HI_UL_scan)
