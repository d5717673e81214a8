"""The frame-range panel (range row, scans, flagged nodes with their worst frames, markers)
and the dynamics sub-panel of the inspector (rates of the active node at the current
frame, the arrows' toggles and their legend). Layout only: values come from
:mod:`..scene.timeline.live` and :mod:`..model.timeline.views`."""

from __future__ import annotations

import bpy

from ..model.timeline.arrows import ARROWS
from ..model.timeline.views import dynamics_sections, frame_label
from ..scene import settings
from ..scene.settings import addon_preferences
from ..scene.timeline import live as live_frames
from . import fit, lists
from .panels import SidebarPanel, draw_section, draw_wrapped


class HI_PT_frames(SidebarPanel, bpy.types.Panel):
    bl_idname = "HI_PT_frames"
    bl_label = "Frame range"
    bl_order = 1

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        fs = scene.hierarchy_inspector_frames
        units = settings.units(context)
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
        reading = live_frames.progress()
        if reading is not None:
            fraction, frame, total = reading
            layout.progress(
                factor=fraction, type="BAR", text=f"Frame {frame}, {round(fraction * total)} of {total} (Esc)"
            )
        if fs.range_chain:
            draw_wrapped(layout, context, fs.range_chain, icon="LINKED")
        if not fs.range_done:
            if reading is None:
                layout.label(text="No scene range scanned yet", icon="INFO")
            return
        lists.RANGE_DRAWN.clear()
        col = layout.column(align=True)
        col.label(text=f"{len(fs.range_items):,} flagged of {fs.range_nodes:,} nodes")
        col.label(text=f"{fs.range_label}, {fs.range_seconds:.2f} s")
        layout.prop(fs, "show_markers", icon="MARKER_HLT")
        layout.label(text="Causes: scaled node, flagged, worst")
        layout.template_list("HI_UL_scan_groups", "range", fs, "range_groups", fs, "range_group_index", rows=3)
        row = layout.row(align=True)
        row.prop(fs, "range_by_cause")
        row.prop(fs, "range_kind", text="")
        layout.label(text="Flagged: worst frame, corners")
        layout.template_list("HI_UL_range", "", fs, "range_items", fs, "range_index", rows=6)
        if units.system == "NONE":
            layout.label(text="Lengths in Blender units (Scene > Units: none)", icon="INFO")


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
            name = series.keys[i][1] or series.keys[i][0]
            layout.label(text=fit.fit_name(context, name, fit.region_px(context) - fit.ICON_PX), icon="ANIM")
            layout.label(text=frame_label(series.frames, t, dynamics.dt))
            parent_name = (series.keys[parent][1] or series.keys[parent][0]) if parent >= 0 else None
            for section in dynamics_sections(dynamics, t, i, parent_name, settings.units(context)):
                draw_section(layout, context, section)
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


CLASSES = (HI_PT_frames, HI_PT_dynamics)
