"""The frame-range panel (range row, scans, flagged nodes with their worst frames, markers)
and the dynamics sub-panel of the inspector (rates of the active node at the current
frame, the arrows' toggles and their legend). Layout only: values come from
:mod:`..scene.timeline.live` and :mod:`..model.timeline.views`."""

from __future__ import annotations

import bpy

from ..model.nodes import node_label
from ..model.timeline.arrows import ARROWS
from ..model.timeline.views import dynamics_sections, frame_label
from ..scene.settings import addon_preferences
from ..scene.timeline import live as live_frames
from .panels import SidebarPanel


class HI_UL_range(bpy.types.UIList):
    bl_idname = "HI_UL_range"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(
            text=node_label(item.object_name, item.bone_name), icon="BONE_DATA" if item.bone_name else "OBJECT_DATA"
        )
        op = row.operator("hierarchy_inspector.jump_to_frame", text=str(item.worst_frame), icon="TIME")
        op.frame, op.object_name, op.bone_name = item.worst_frame, item.object_name, item.bone_name
        row.label(text=f"{item.max_corner:.3g}")
        row.label(text=f"{item.shear_deg:.1f} deg")


class HI_PT_frames(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_frames"
    bl_label = "Frame range"
    bl_order = 1

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        fs = scene.hierarchy_inspector_frames
        row = layout.row(align=True)
        row.prop(fs, "use_scene_range", text="Scene range", toggle=True)
        if fs.use_scene_range:
            row.label(text=f"{scene.frame_start} .. {scene.frame_end}")
        else:
            row.prop(fs, "frame_start", text="")
            row.prop(fs, "frame_end", text="")
            row.prop(fs, "frame_step", text="Step")
        row = layout.row(align=True)
        row.operator("hierarchy_inspector.scan_range", text="Scan chain", icon="LINKED").scope = "CHAIN"
        row.operator("hierarchy_inspector.scan_range", text="Scan scene", icon="VIEWZOOM").scope = "SCENE"
        layout.prop(fs, "show_markers", icon="MARKER_HLT")
        if not fs.range_done:
            layout.label(text="No range scanned yet (Esc cancels a scan)")
            return
        layout.label(
            text=f"{len(fs.range_items)} flagged of {fs.range_nodes} nodes ({fs.range_label}, {fs.range_seconds:.2f} s)"
        )
        row = layout.row()
        for text in ("Node", "Worst frame", "Corners", "Shear"):
            row.label(text=text)
        layout.template_list("HI_UL_range", "", fs, "range_items", fs, "range_index", rows=6)


class HI_PT_dynamics(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_dynamics"
    bl_label = "Dynamics"
    bl_parent_id = "HI_PT_inspector"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        fs = context.scene.hierarchy_inspector_frames
        here = live_frames.dynamics_here(context)
        if here is None:
            layout.label(text="No rates at this frame for the active node", icon="INFO")
            layout.operator("hierarchy_inspector.sample_dynamics", icon="ANIM")
        else:
            dynamics, t, i, _parent_world, series = here
            parent = int(series.parents[i])
            layout.label(text=f"{series.label(i)}: {frame_label(series.frames, t, dynamics.dt)}", icon="ANIM")
            for section in dynamics_sections(dynamics, t, i, series.label(parent) if parent >= 0 else None):
                box = layout.box()
                box.label(text=section.title)
                col = box.column(align=True)
                for label, value in section.rows:
                    split = col.split(factor=0.35, align=True)
                    split.label(text=label)
                    split.label(text=value)
            layout.operator("hierarchy_inspector.sample_dynamics", text="Sample again", icon="FILE_REFRESH")
        col = layout.column(heading="Overlay arrows")
        col.prop(fs, "show_motion_arrows")
        col.prop(fs, "show_inertial_arrows")
        prefs = addon_preferences(context)
        if prefs is not None and (fs.show_motion_arrows or fs.show_inertial_arrows):
            legend = layout.box()
            legend.prop(prefs, "arrow_scale")
            grid = legend.grid_flow(columns=2, align=True)
            for kind, label in ARROWS:
                grid.prop(prefs, f"arrow_colour_{kind}", text=label)


CLASSES = (HI_UL_range, HI_PT_frames, HI_PT_dynamics)
