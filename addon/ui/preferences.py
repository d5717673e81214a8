"""Add-on preferences: thresholds and overlay colours. Their defaults are the model's
(:class:`~..model.thresholds.Thresholds`, :class:`~..model.overlay_geometry.OverlayStyle`);
:mod:`..scene.settings` reads them back as those values."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, FloatVectorProperty, IntProperty

from ..model.engines.paths import DESCRIPTION, LABEL, PATHS
from ..model.overlay_geometry import OverlayStyle
from ..model.thresholds import DEFAULT
from ..model.timeline.arrows import ARROWS, ArrowStyle
from ..scene.settings import ADDON_MODULE

_STYLE = OverlayStyle()
#: The engine preference's items: every path, or one (Blender evaluates the annotations
#: where a comprehension would not see this module's names).
_ENGINE_ITEMS = [("ALL", "Every engine", "Flag what any engine path shows off")] + [
    (p, LABEL[p], DESCRIPTION[p]) for p in PATHS
]
_ARROWS = ArrowStyle()


def _colour(label: str, default):
    """An RGBA colour preference (components 0..1)."""
    return FloatVectorProperty(name=label, subtype="COLOR", size=4, min=0.0, max=1.0, default=default)


def _arrow_colour(kind: str, label: str):
    return _colour(label, _ARROWS.colour(kind))


class HI_AddonPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_MODULE

    shear_threshold_deg: FloatProperty(  # type: ignore[valid-type]
        name="Shear threshold (\N{DEGREE SIGN})",
        description="Flag nodes whose axes are more than this many degrees off 90",
        default=DEFAULT.shear_deg,
        min=0.0,
        soft_max=10.0,
        precision=3,
    )
    corner_threshold: FloatProperty(  # type: ignore[valid-type]
        name="Corner threshold",
        description="Flag nodes whose box corners move more than this (scene units) in an engine model",
        default=DEFAULT.corner,
        min=0.0,
        soft_max=1.0,
        precision=4,
        subtype="DISTANCE",
    )
    engine: EnumProperty(  # type: ignore[valid-type]
        name="Engine",
        description="Which engine's import decides what is flagged, drawn and advised",
        items=_ENGINE_ITEMS,
        default="ALL",
    )
    colour_blender: _colour("Blender box", _STYLE.colour_blender)  # type: ignore[valid-type]
    colour_accumulated: _colour("Accumulated box", _STYLE.colour_accumulated)  # type: ignore[valid-type]
    colour_skew_low: _colour("Slight skew", _STYLE.colour_skew_low)  # type: ignore[valid-type]
    colour_skew_high: _colour("Strong skew", _STYLE.colour_skew_high)  # type: ignore[valid-type]
    skew_full_scale_deg: FloatProperty(  # type: ignore[valid-type]
        name="Strong skew at (\N{DEGREE SIGN})",
        description="Shear (degrees) drawn in the strong skew colour; less is blended toward the slight colour",
        default=_STYLE.skew_full_scale_deg,
        min=0.01,
        soft_max=90.0,
    )
    line_width: FloatProperty(  # type: ignore[valid-type]
        name="Line width (px)", default=_STYLE.line_width, min=1.0, max=10.0, subtype="PIXEL"
    )
    max_nodes: IntProperty(  # type: ignore[valid-type]
        name="Flagged nodes drawn",
        description="The overlay's Flagged mode draws at most this many nodes, the worst first",
        default=_STYLE.max_nodes,
        min=1,
        soft_max=200,
    )
    arrow_scale: FloatProperty(  # type: ignore[valid-type]
        name="Arrow scale",
        description="Drawn length of the motion arrows per unit of rate (seconds for velocities)",
        default=_ARROWS.scale,
        min=0.0,
        soft_max=10.0,
    )
    __annotations__.update({f"arrow_colour_{kind}": _arrow_colour(kind, label) for kind, label in ARROWS})

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        col = layout.column(heading="Thresholds")
        col.prop(self, "engine")
        col.prop(self, "shear_threshold_deg")
        col.prop(self, "corner_threshold")  # in the scene's length unit
        col = layout.column(heading="Overlay")
        col.prop(self, "max_nodes")
        col.prop(self, "skew_full_scale_deg")
        col.prop(self, "line_width")
        for name in ("colour_blender", "colour_skew_low", "colour_skew_high", "colour_accumulated"):
            row = col.row()
            split = row.split(factor=0.7)  # a swatch, not a bar across the window
            split.prop(self, name)
            split.label(text="")
        col = layout.column(heading="Motion arrows")
        col.prop(self, "arrow_scale")
        for kind, _label in ARROWS:
            split = col.row().split(factor=0.7)  # a swatch, like the overlay's colours
            split.prop(self, f"arrow_colour_{kind}")
            split.label(text="")


CLASSES = (HI_AddonPreferences,)
