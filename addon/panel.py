"""The sidebar panels (View3D > Sidebar > Hierarchy).

The values shown are built by :func:`node_sections` and :func:`chain_rows` (plain data,
tested on known scenes); the ``draw`` methods only lay them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np
from mathutils import Quaternion

from . import live
from .inspection import BONE, Inspection, explain
from .text import fmt_num, fmt_vec

CATEGORY = "Hierarchy"


@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)


def euler_deg(q) -> np.ndarray:
    """XYZ Euler angles in degrees of a wxyz quaternion (as Blender's fields show)."""
    return np.degrees(np.array(Quaternion([float(v) for v in q]).to_euler("XYZ")))


def _deviation_row(label: str, dev, i: int) -> tuple[str, str]:
    return (
        label,
        f"{fmt_num(dev.position[i])} moved, {fmt_num(dev.rotation_deg[i], 2)} deg, corners {fmt_num(dev.max_corner[i])}",
    )


def node_sections(inspection: Inspection, i: int) -> list[Section]:
    """The detail sections for node ``i``, as (label, value) rows."""
    a = inspection.analysis
    w = inspection.world
    local = Section(
        "Local (what exporters write)",
        [
            ("Location", fmt_vec(a.local.translation[i])),
            ("Rotation", fmt_vec(euler_deg(a.local.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(a.local.scale[i])),
            ("Shear lost", fmt_vec(inspection.local_shear_deg[i], 2) + " deg"),
        ],
    )
    world = Section(
        "Blender world",
        [
            ("Location", fmt_vec(w.translation[i])),
            ("Rotation", fmt_vec(euler_deg(w.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(w.scale[i])),
            ("Shear XY/YZ/ZX", fmt_vec(a.shear_deg[i], 2) + " deg"),
        ],
    )
    accumulated = Section(
        "Accumulated world (Unreal, Ogre)",
        [
            ("Location", fmt_vec(a.accumulated.translation[i])),
            ("Rotation", fmt_vec(euler_deg(a.accumulated.rotation[i]), 2) + " deg"),
            ("Scale", fmt_vec(a.accumulated.scale[i])),
        ],
    )
    getters = Section(
        "World getters",
        [
            ("Global rotation", fmt_vec(euler_deg(a.global_rotation[i]), 2) + " deg"),
            ("Lossy scale", fmt_vec(a.lossy_scale[i])),
        ],
    )
    deviation = Section(
        "Deviation from Blender",
        [
            _deviation_row("Exported (glTF, Unity)", a.matrix_model, i),
            _deviation_row("Accumulated (Unreal)", a.accumulated_deviation, i),
        ],
    )
    return [local, world, accumulated, getters, deviation]


def chain_rows(inspection: Inspection, chain: list[int]) -> list[tuple[int, str, str, bool]]:
    """One row per chain node: (index, label, summary, flagged)."""
    flagged = inspection.flagged
    rows = []
    for depth, i in enumerate(chain):
        label = ("  " * depth) + inspection.nodes.name(i)
        summary = f"shear {fmt_num(inspection.shear_max[i], 1)} deg, corners {fmt_num(inspection.worst_corner[i])}"
        rows.append((i, label, summary, bool(flagged[i])))
    return rows


def comparison_text(inspection: Inspection, i: int) -> str:
    """The panel's content for node ``i`` as plain text (Copy comparison)."""
    nodes = inspection.nodes
    lines = [f"{nodes.label(i)} ({nodes.kind(i)})"]
    for section in node_sections(inspection, i):
        lines.append(f"{section.title}:")
        lines += [f"  {label}: {value}" for label, value in section.rows]
    warnings = explain(inspection, i)
    if warnings:
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in warnings]
    return "\n".join(lines)


def focus_index(view: live.ChainView, settings) -> int:
    """The chain node whose details are shown: the chosen node while it is on the
    active chain, else the active node itself."""
    chosen = (settings.detail_object, settings.detail_bone)
    keys = view.inspection.nodes.keys
    return next((i for i in view.chain if keys[i] == chosen), view.active)


def _wrap(layout, text: str, width: int = 48, icon: str = "ERROR") -> None:
    words, line, first = text.split(), "", True
    col = layout.column(align=True)
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            col.label(text=line, icon=icon if first else "BLANK1")
            line, first = word, False
        else:
            line = f"{line} {word}".strip()
    if line:
        col.label(text=line, icon=icon if first else "BLANK1")


class HI_PT_inspector(bpy.types.Panel):
    bl_idname = "HI_PT_inspector"
    bl_label = "Hierarchy Inspector"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY

    def draw_header(self, context):
        self.layout.prop(context.scene.hierarchy_inspector, "overlay", text="", icon="OVERLAY")

    def draw(self, context):
        layout = self.layout
        settings = context.scene.hierarchy_inspector
        try:
            view = live.chain_view(context)
        except Exception as exc:  # never break the sidebar: say what failed instead
            layout.label(text=f"Cannot inspect: {exc}", icon="ERROR")
            return
        if view is None:
            layout.label(text="Select an object or a pose bone", icon="INFO")
            return
        ins = view.inspection
        box = layout.box()
        box.label(text="Chain (root to active)", icon="OUTLINER")
        col = box.column(align=True)
        focus = focus_index(view, settings)
        for i, label, summary, flagged in chain_rows(ins, view.chain):
            row = col.row(align=True)
            icon: Any = "ERROR" if flagged else ("BONE_DATA" if ins.nodes.kind(i) == BONE else "OBJECT_DATA")
            op = row.operator("hierarchy_inspector.show_details", text=label, icon=icon, emboss=i == focus)
            op.object_name, op.bone_name = ins.nodes.keys[i]
            row.label(text=summary)
        layout.label(text=ins.nodes.label(focus), icon="PINNED")
        for warning in explain(ins, focus):
            _wrap(layout, warning)
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


class HI_PT_overlay(bpy.types.Panel):
    bl_idname = "HI_PT_overlay"
    bl_label = "Overlay"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY
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


class HI_UL_scan(bpy.types.UIList):
    bl_idname = "HI_UL_scan"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        icon = "BONE_DATA" if item.bone_name else "OBJECT_DATA"
        label = f"{item.object_name} > {item.bone_name}" if item.bone_name else item.object_name
        row.label(text=label, icon=icon)
        row.label(text=f"{item.max_corner:.3g}")
        row.label(text=f"{item.shear_deg:.1f} deg")


class HI_PT_scan(bpy.types.Panel):
    bl_idname = "HI_PT_scan"
    bl_label = "Scene scan"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY

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


CLASSES = (HI_PT_inspector, HI_PT_overlay, HI_UL_scan, HI_PT_scan)
