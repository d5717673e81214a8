"""The sidebar panels (View3D > Sidebar > Hierarchy): layout only. What they show is
built Blender-free by :mod:`..model.views`; the values come from :mod:`..scene.live`."""

from __future__ import annotations

from typing import Any

import bpy

from ..model.advice.actions import advice
from ..model.explain import explain
from ..model.nodes import BONE
from ..model.views import chain_rows, deviation_section, focus_index, node_sections
from ..scene import live, settings
from . import fit, lists

CATEGORY = "Hierarchy"
#: What the last draw put where, per list ("chain", "warnings", "scan"): (text, pixels it
#: needs, pixels it was given). The real-window test checks that nothing was cut.
DRAWN: dict[str, list[tuple[str, float, float]]] = {}


def record(kind: str, context, text: str, allotted: float) -> str:
    DRAWN.setdefault(kind, []).append((text, fit.label_px(context, text), float(allotted)))
    return text


class SidebarPanel:
    """What every panel of the add-on shares: where it lives."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY


def draw_wrapped(layout, context, text: str, icon: str = "ERROR") -> None:
    """``text`` as labels wrapped to the region's real width, the icon on the first."""
    col = layout.column(align=True)
    width = fit.region_px(context) - fit.ICON_PX * fit.ui_scale(context)
    for k, line in enumerate(fit.wrap(context, text, width)):
        col.label(text=record("warnings", context, line, width), icon=icon if k == 0 else "BLANK1")


def draw_section(layout, context, section) -> None:
    """A titled box of label / value rows; the label column as wide as its longest
    label needs (within a third and a half of the width), the values get the rest."""
    box = layout.box()
    box.label(text=section.title)
    col = box.column(align=True)
    total = fit.region_px(context) - 12 * fit.ui_scale(context)  # the box's own margin
    labels = max((fit.label_px(context, label) for label, _v in section.rows), default=0.0)
    factor = max(0.3, min(0.5, labels / total))
    for label, value in section.rows:
        if fit.label_px(context, value) > (1.0 - factor) * total:  # too narrow: the value below its label
            col.label(text=record("sections", context, label, total))
            row = col.row()
            row.separator(factor=2.0)
            row.label(text=record("sections", context, value, total - 20 * fit.ui_scale(context)))
            continue
        split = col.split(factor=factor, align=True)
        split.label(text=record("sections", context, label, factor * total))
        split.label(text=record("sections", context, value, (1.0 - factor) * total))
    if section.note:
        draw_wrapped(box, context, section.note, icon="INFO")


def draw_chain(layout, context, ins, chain, focus: int) -> None:
    """The chain, left-aligned and indented by depth: names elided from the start
    (the distinguishing end kept), the numbers on the right never elided."""
    units = settings.units(context)
    rows = chain_rows(ins, chain, units)
    DRAWN["chain"] = []
    scale = fit.ui_scale(context)
    total = fit.region_px(context)
    numbers = max(fit.label_px(context, r.summary) for r in rows)
    col = layout.column(align=True)
    factor = max(0.2, min(0.85, 1.0 - numbers / total))
    indents = [min(r.depth, 8) * 4 * scale for r in rows]  # enough to show depth, little room taken
    shown = fit.fit_names(context, [r.name for r in rows], [factor * total - d - fit.ICON_PX * scale for d in indents])
    for r, indent, name in zip(rows, indents, shown, strict=True):
        row = col.row(align=True)
        split = row.split(factor=factor, align=True)
        left = split.row(align=True)
        left.alignment = "LEFT"
        if indent:
            left.separator(factor=indent / (10 * scale))
        icon: Any = "ERROR" if r.flagged else ("BONE_DATA" if ins.nodes.kind(r.index) == BONE else "OBJECT_DATA")
        room = factor * total - indent - fit.ICON_PX * scale
        op = left.operator(
            "hierarchy_inspector.show_details",
            text=record("chain", context, name, room),
            icon=icon,
            emboss=r.index == focus,
        )
        op.object_name, op.bone_name = ins.nodes.keys[r.index]
        right = split.row(align=True)
        right.alignment = "RIGHT"
        right.label(text=record("chain", context, r.summary, (1.0 - factor) * total))


class HI_PT_inspector(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_inspector"
    bl_label = "Hierarchy Inspector"
    bl_order = 0

    def draw_header(self, context):
        self.layout.prop(context.scene.hierarchy_inspector, "overlay", text="", icon="OVERLAY")

    def draw(self, context):
        layout = self.layout
        chosen = context.scene.hierarchy_inspector
        try:
            view = live.chain_view(context)
        except Exception as exc:  # never break the sidebar: say what failed instead
            draw_wrapped(layout, context, f"Cannot inspect: {exc}")
            return
        if view is None:
            layout.label(text="Select an object or a pose bone", icon="INFO")
            return
        ins = view.inspection
        units = settings.units(context)
        DRAWN["warnings"] = []
        DRAWN["sections"] = []
        focus = focus_index(ins, view.chain, (chosen.detail_object, chosen.detail_bone))
        box = layout.box()
        box.label(text="Chain (root to active): shear, corners", icon="OUTLINER")
        draw_chain(box, context, ins, view.chain, focus)
        prefs = settings.addon_preferences(context)
        if prefs is not None:
            layout.prop(prefs, "engine", text="")
        layout.label(text=fit.fit_start(context, ins.nodes.label(focus), fit.region_px(context)), icon="PINNED")
        draw_section(layout, context, deviation_section(ins, focus, units, live.export_residual(view)))
        for warning in explain(ins, focus, units):
            draw_wrapped(layout, context, warning)
        todo = advice(ins, focus)
        if todo:
            col = layout.column(align=True)
            col.label(text="What to do", icon="LIGHT")
            for item in todo:
                draw_wrapped(col, context, item.text, icon="DOT")
        layout.operator("hierarchy_inspector.copy_comparison", icon="COPYDOWN")


class HI_PT_details(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_details"
    bl_label = "Transforms"
    bl_parent_id = "HI_PT_inspector"

    @classmethod
    def poll(cls, context):
        return context.active_object is not None

    def draw(self, context):
        try:
            view = live.chain_view(context)
        except Exception:  # the parent panel says what failed
            return
        if view is None:
            return
        chosen = context.scene.hierarchy_inspector
        focus = focus_index(view.inspection, view.chain, (chosen.detail_object, chosen.detail_bone))
        sections = node_sections(view.inspection, focus, settings.units(context), live.export_residual(view))
        for section in sections[1:]:  # the deviation is drawn first, in the parent panel
            draw_section(self.layout, context, section)


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
        if settings.overlay_scope == "FLAGGED":
            col.prop(settings, "overlay_per_cause")
        col.prop(settings, "show_accumulated_axes")
        col.label(text="Blender: blue, skewed peach to pink; engines: green", icon="INFO")
        if settings.overlay_scope == "FLAGGED" and not live.scan_is_current():
            col.label(text="Scene changed since the last scan", icon="INFO")


class HI_PT_scan(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_scan"
    bl_label = "Scene scan"
    bl_order = 1

    def draw(self, context):
        layout = self.layout
        scene_settings = context.scene.hierarchy_inspector
        layout.operator("hierarchy_inspector.scan", icon="VIEWZOOM")
        if not scene_settings.scan_done:
            layout.label(text="Not scanned yet")
            return
        layout.label(
            text=f"{len(scene_settings.scan_items):,} flagged of {scene_settings.scan_nodes:,} nodes "
            f"({scene_settings.scan_seconds:.2f} s)"
        )
        if not live.scan_is_current():
            layout.label(text="Scene changed since the scan", icon="INFO")
        layout.label(text="Causes: scaled node, flagged, worst")
        layout.template_list(
            "HI_UL_scan_groups", "", scene_settings, "scan_groups", scene_settings, "scan_group_index", rows=3
        )
        layout.prop(scene_settings, "scan_by_cause")
        row = layout.row(align=True)
        row.prop(scene_settings, "scan_kind", text="")
        row.prop(scene_settings, "scan_sort", text="")
        layout.label(text="Flagged: corners, shear")
        lists.DRAWN.clear()
        layout.template_list("HI_UL_scan", "", scene_settings, "scan_items", scene_settings, "scan_index", rows=8)
        layout.operator("hierarchy_inspector.select_flagged", icon="RESTRICT_SELECT_OFF")


class HI_PT_fix(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_fix"
    bl_label = "Fix & export"
    bl_order = 2
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        col = layout.column(align=True)
        col.label(text="glTF, Unity, Godot; Unreal FBX")
        col.operator("hierarchy_inspector.insert_helpers", icon="EMPTY_AXIS")
        col.operator("hierarchy_inspector.export_gltf", icon="EXPORT")
        col.operator("hierarchy_inspector.export_fbx", icon="EXPORT")
        col.operator("hierarchy_inspector.export_usd", icon="EXPORT")
        col = layout.column(align=True)
        col.label(text="Unreal locals, Ogre")
        col.operator("hierarchy_inspector.export_fbx_accumulated", icon="EXPORT")
        col.operator("hierarchy_inspector.export_accumulated", icon="EXPORT")
        col = layout.column(align=True)
        col.label(text="Skew no engine shows")
        col.operator("hierarchy_inspector.bake_residual", icon="MOD_MESHDEFORM")


CLASSES = (HI_PT_inspector, HI_PT_details, HI_PT_overlay, HI_PT_scan, HI_PT_fix)
