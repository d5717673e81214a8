"""The sidebar panels (View3D > Sidebar > Hierarchy): layout only. What they show is
built Blender-free by :mod:`..model.views`; the values come from :mod:`..scene.live`."""

from __future__ import annotations

import textwrap
from typing import Any

import bpy

from ..model.explain import explain
from ..model.nodes import BONE
from ..model.views import chain_rows, focus_index, node_sections
from ..scene import live

CATEGORY = "Hierarchy"
#: Average width of a character of the UI font at UI scale 1, in pixels (for wrapping).
_CHAR_PX = 6.5
#: Room taken by the panel's margins and a label's icon, in pixels at UI scale 1.
_MARGIN_PX = 50


class SidebarPanel:
    """What every panel of the add-on shares: where it lives."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY


def wrap_width(context) -> int:
    """How many characters fit on one label line of the current region (its real
    width and the UI scale; at least 20)."""
    region = getattr(context, "region", None)
    scale = context.preferences.system.ui_scale if context.preferences else 1.0
    width = region.width if region is not None else 300
    return max(20, int((width / scale - _MARGIN_PX) / _CHAR_PX))


def draw_wrapped(layout, text: str, width: int, icon: str = "ERROR") -> None:
    """``text`` as labels of at most ``width`` characters, the icon on the first."""
    col = layout.column(align=True)
    for k, line in enumerate(textwrap.wrap(text, width) or [""]):
        col.label(text=line, icon=icon if k == 0 else "BLANK1")


class HI_PT_inspector(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_inspector"
    bl_label = "Hierarchy Inspector"
    bl_order = 0

    def draw_header(self, context):
        self.layout.prop(context.scene.hierarchy_inspector, "overlay", text="", icon="OVERLAY")

    def draw(self, context):
        layout = self.layout
        settings = context.scene.hierarchy_inspector
        try:
            view = live.chain_view(context)
        except Exception as exc:  # never break the sidebar: say what failed instead
            draw_wrapped(layout, f"Cannot inspect: {exc}", wrap_width(context))
            return
        if view is None:
            layout.label(text="Select an object or a pose bone", icon="INFO")
            return
        ins = view.inspection
        box = layout.box()
        box.label(text="Chain (root to active)", icon="OUTLINER")
        col = box.column(align=True)
        focus = focus_index(ins, view.chain, (settings.detail_object, settings.detail_bone))
        for i, label, summary, flagged in chain_rows(ins, view.chain):
            row = col.row(align=True)
            icon: Any = "ERROR" if flagged else ("BONE_DATA" if ins.nodes.kind(i) == BONE else "OBJECT_DATA")
            op = row.operator("hierarchy_inspector.show_details", text=label, icon=icon, emboss=i == focus)
            op.object_name, op.bone_name = ins.nodes.keys[i]
            row.label(text=summary)
        layout.label(text=ins.nodes.label(focus), icon="PINNED")
        width = wrap_width(context)
        for warning in explain(ins, focus):
            draw_wrapped(layout, warning, width)
        for section in node_sections(ins, focus):
            sbox = layout.box()
            sbox.label(text=section.title)
            col = sbox.column(align=True)
            for label, value in section.rows:
                split = col.split(factor=0.3, align=True)  # label and value on one row
                split.label(text=label)
                split.label(text=value)
        row = layout.row(align=True)
        row.operator("hierarchy_inspector.copy_comparison", icon="COPYDOWN")
        row.operator("hierarchy_inspector.select_flagged", icon="RESTRICT_SELECT_OFF")


class HI_PT_overlay(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_overlay"
    bl_label = "Overlay"
    bl_parent_id = "HI_PT_inspector"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        settings = context.scene.hierarchy_inspector
        layout = self.layout
        layout.prop(settings, "overlay")
        col = layout.column()
        col.active = settings.overlay
        col.prop(settings, "overlay_scope", expand=True)
        col.prop(settings, "show_accumulated_axes")
        if settings.overlay_scope == "FLAGGED" and not live.scan_is_current():
            col.label(text="Scene changed since the last scan", icon="INFO")


class HI_PT_scan(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_scan"
    bl_label = "Scene scan"
    bl_order = 1

    def draw(self, context):
        layout = self.layout
        settings = context.scene.hierarchy_inspector
        layout.operator("hierarchy_inspector.scan", icon="VIEWZOOM")
        if not settings.scan_done:
            layout.label(text="Not scanned yet")
            return
        layout.label(
            text=f"{len(settings.scan_items)} flagged of {settings.scan_nodes} nodes ({settings.scan_seconds:.2f} s)"
        )
        row = layout.row()
        row.label(text="Node")
        row.label(text="Corners")
        row.label(text="Shear")
        layout.template_list("HI_UL_scan", "", settings, "scan_items", settings, "scan_index", rows=6)


class HI_PT_fix(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_fix"
    bl_label = "Fix & export"
    bl_order = 2
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        col = layout.column(align=True)
        col.label(text="Matrix engines (glTF, Unity, Godot)")
        col.operator("hierarchy_inspector.insert_helpers", icon="EMPTY_AXIS")
        col.operator("hierarchy_inspector.export_gltf", icon="EXPORT")
        col = layout.column(align=True)
        col.label(text="Accumulating engines (Unreal, Ogre)")
        col.operator("hierarchy_inspector.bake_residual", icon="MOD_MESHDEFORM")
        col.operator("hierarchy_inspector.export_accumulated", icon="EXPORT")


CLASSES = (HI_PT_inspector, HI_PT_overlay, HI_PT_scan, HI_PT_fix)
