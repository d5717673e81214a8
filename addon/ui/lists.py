"""UI lists: cause groups (the scene scan's and the range scan's) and flagged nodes
(filtered by name, kind and cause; the scan's sorted by corners, shear or name, the
range's in its own order: visible nodes first, worst first). Names keep their kind
prefix and end (``DEF-…arm.L``); numbers carry the scene's units and are never elided."""

from __future__ import annotations

from typing import Any

import bpy

from ..scene import settings
from . import fit

#: Where each list's filters live on its data: (kind, only this cause, cause index, sort).
SCAN_FILTERS = ("scan_kind", "scan_by_cause", "scan_group_index", "scan_sort")
RANGE_FILTERS = ("range_kind", "range_by_cause", "range_group_index", "")


def visible(item, data, filters=SCAN_FILTERS) -> bool:
    """Whether a list shows ``item`` under ``data``'s kind and cause filters."""
    kind_prop, by_cause_prop, group_prop, _sort = filters
    kind = getattr(data, kind_prop)
    if kind == "OBJECTS" and item.bone_name:
        return False
    if kind == "BONES" and not item.bone_name:
        return False
    if kind == "DEFORM" and not (item.bone_name and item.deform):
        return False
    return not getattr(data, by_cause_prop) or item.group == getattr(data, group_prop)


#: The rows last drawn: (text, pixels it needs, pixels it was given), for the
#: real-window test; cleared by the scan panel's draw (``RANGE_DRAWN`` by the range panel's).
DRAWN: list[tuple[str, float, float]] = []
RANGE_DRAWN: list[tuple[str, float, float]] = []


def _record(context, text: str, allotted: float, into: list | None = None) -> str:
    (DRAWN if into is None else into).append((text, fit.label_px(context, text), float(allotted)))
    return text


class HI_UL_scan_groups(bpy.types.UIList):
    """One row per cause: the scaled node and how many flagged nodes it explains (the
    scene scan's and, with its frame, the range scan's)."""

    bl_idname = "HI_UL_scan_groups"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        units = settings.units(context)
        numbers = f"{item.count}  {units.length(item.worst_corner)}"
        total = fit.region_px(context) - 24 * fit.ui_scale(context)  # the list's own scroll bar
        factor = max(0.3, min(0.8, 1.0 - fit.label_px(context, numbers) / total))
        split = layout.split(factor=factor, align=True)
        room = factor * total - fit.ICON_PX * fit.ui_scale(context)
        into = RANGE_DRAWN if active_propname == "range_group_index" else None
        # The scaled node's name tells the groups apart: its scale goes first when short
        # of room (``torso f20`` of ``torso (1.3, 1, 0.7) f20``).
        label = item.label
        if fit.label_px(context, label) > room and " (" in label:
            label = label.partition(" (")[0] + label.rpartition(")")[2]
        split.label(
            text=_record(context, fit.fit_name(context, label, room), room, into),
            icon="BONE_DATA" if item.bone_name else ("OBJECT_DATA" if item.object_name else "QUESTION"),
        )
        right = split.row(align=True)
        right.alignment = "RIGHT"
        right.label(text=_record(context, numbers, (1.0 - factor) * total, into))


#: What a small button takes beyond its text's label width (its emboss), pixels at UI scale 1.
BUTTON_PX = 6.0


def _icon(item) -> Any:
    if getattr(item, "hidden", False):
        return "HIDE_ON"
    return "BONE_DATA" if item.bone_name else "OUTLINER_OB_GROUP_INSTANCE" if item.instancer else "OBJECT_DATA"


class _FlaggedList:
    """What the flagged-node lists share: their filters (:data:`SCAN_FILTERS` style
    names on the list's data) and names without the armature prefix."""

    filters: tuple[str, str, str, str] = SCAN_FILTERS

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        helper: Any = bpy.types.UI_UL_list
        name_filter: str = self.filter_name  # type: ignore[attr-defined]
        flag: int = self.bitflag_filter_item  # type: ignore[attr-defined]
        flags: list[int] = (
            helper.filter_items_by_name(name_filter, flag, items, "bone_name") if name_filter else [flag] * len(items)
        )
        if name_filter:  # objects have no bone name: match them by their own
            by_object = helper.filter_items_by_name(name_filter, flag, items, "object_name")
            flags = [f if it.bone_name else o for f, o, it in zip(flags, by_object, items, strict=True)]
        flags = [f if f and visible(it, data, self.filters) else 0 for f, it in zip(flags, items, strict=True)]
        order: list[int] = []
        sort = getattr(data, self.filters[3]) if self.filters[3] else ""
        if sort == "NAME":
            order = helper.sort_items_helper(
                [(k, it.bone_name or it.object_name) for k, it in enumerate(items)], key=lambda kv: kv[1].lower()
            )
        elif sort == "SHEAR":
            order = helper.sort_items_helper([(k, -it.shear_deg) for k, it in enumerate(items)], key=lambda kv: kv[1])
        return flags, order  # otherwise as stored: worst corner first (the range: visible nodes first)


class HI_UL_scan(_FlaggedList, bpy.types.UIList):
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
        split.label(text=_record(context, fit.fit_name(context, name, room), room), icon=_icon(item))
        right = split.row(align=True)
        right.alignment = "RIGHT"
        right.label(text=_record(context, numbers, (1.0 - factor) * total))


class HI_UL_range(_FlaggedList, bpy.types.UIList):
    """The nodes flagged at some frame of the range: the name (a hidden bone's eye
    closed: its worst-frame button goes to the frame without selecting it), the worst
    frame (a button: go there and select the node), the largest corner distance over
    the range (and the shear, where the name keeps half the row)."""

    bl_idname = "HI_UL_range"
    filters = RANGE_FILTERS

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        units = settings.units(context)
        scale = fit.ui_scale(context)
        frame = f"f{item.worst_frame}"
        corner = units.length(item.max_corner)
        with_shear = f"{corner}  {item.shear_deg:.1f}\N{DEGREE SIGN}"
        total = fit.region_px(context) - 24 * scale  # the list's own scroll bar
        button = fit.label_px(context, frame) + BUTTON_PX * scale  # a button's emboss is wider than a label
        # The shear where the name keeps half the row, else the corner distance alone.
        numbers = with_shear if fit.label_px(context, with_shear) + button <= 0.5 * total else corner
        right_px = fit.label_px(context, numbers) + button
        factor = max(0.3, min(0.8, 1.0 - right_px / total))
        split = layout.split(factor=factor, align=True)
        room = factor * total - fit.ICON_PX * scale
        name = item.bone_name or item.object_name
        split.label(text=_record(context, fit.fit_name(context, name, room), room, RANGE_DRAWN), icon=_icon(item))
        right = split.row(align=True)
        right.alignment = "RIGHT"
        op = right.operator("hierarchy_inspector.jump_to_frame", text=_record(context, frame, button, RANGE_DRAWN))
        op.frame, op.object_name, op.bone_name = item.worst_frame, item.object_name, item.bone_name
        right.label(text=_record(context, numbers, (1.0 - factor) * total - button, RANGE_DRAWN))


CLASSES = (HI_UL_scan_groups, HI_UL_scan, HI_UL_range)
