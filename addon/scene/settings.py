"""The add-on preferences as plain values: one :class:`~..model.thresholds.Thresholds`
and one :class:`~..model.overlay_geometry.OverlayStyle` (their defaults when the add-on
is not registered as an add-on, e.g. registered by hand in a script)."""

from __future__ import annotations

import dataclasses

import bpy

from ..model.engines.paths import PATHS
from ..model.overlay_geometry import OverlayStyle
from ..model.text import Units
from ..model.thresholds import Thresholds
from ..model.timeline.arrows import ArrowStyle

#: The add-on's module name (``hierarchy_inspector`` or ``bl_ext.<repo>.hierarchy_inspector``).
ADDON_MODULE = __name__.rpartition(".addon.")[0]


def addon_preferences(context=None):
    """The add-on's preferences (None when it is not registered as an add-on)."""
    return _preferences(context)


def _preferences(context):
    context = context or bpy.context
    addon = context.preferences.addons.get(ADDON_MODULE)
    return getattr(addon, "preferences", None) if addon is not None else None


def _plain(value):
    return tuple(value) if hasattr(value, "__len__") else value


def thresholds(context=None) -> Thresholds:
    """The thresholds the user set in the preferences."""
    prefs = _preferences(context)
    if prefs is None:
        return Thresholds()
    engine = getattr(prefs, "engine", "ALL")
    return Thresholds(
        shear_deg=float(prefs.shear_threshold_deg),
        corner=float(prefs.corner_threshold),
        engines=PATHS if engine == "ALL" else (engine,),
    )


def overlay_style(context=None) -> OverlayStyle:
    """The overlay's colours and line settings from the preferences."""
    prefs = _preferences(context)
    if prefs is None:
        return OverlayStyle()
    return OverlayStyle(**{f.name: _plain(getattr(prefs, f.name)) for f in dataclasses.fields(OverlayStyle)})


def arrow_style(context=None) -> ArrowStyle:
    """The motion arrows' scale and colours from the preferences (``arrow_`` + field)."""
    prefs = _preferences(context)
    if prefs is None:
        return ArrowStyle()
    return ArrowStyle(**{f.name: _plain(getattr(prefs, f"arrow_{f.name}")) for f in dataclasses.fields(ArrowStyle)})


def units(context=None) -> Units:
    """The scene's unit system and scale, for writing lengths (``1.27 m``, ``4.17 ft``)."""
    context = context or bpy.context
    scene = getattr(context, "scene", None)
    if scene is None:
        return Units()
    unit = scene.unit_settings
    return Units(system=unit.system, scale_length=float(unit.scale_length) or 1.0)
