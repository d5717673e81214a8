"""Dynamics from Blender's animation: a puck sliding out along a spinning turntable,
with numbers known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.scene.dynamics import scene_dynamics  # noqa: E402
from hierarchy_inspector.addon.scene.scan import scan_scene  # noqa: E402

FPS = 24
OMEGA = math.pi / 2  # the table turns a quarter turn per second
SLIDE = 0.5  # the puck slides outward at 0.5 units per second, starting at 1


def _fcurves(obj):
    """The object's F-curves (Blender 4.4+ layered actions, or the legacy list)."""
    action = obj.animation_data.action
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    return list(action_get_channelbag_for_slot(action, obj.animation_data.action_slot).fcurves)


@pytest.fixture
def turntable(empty_scene):
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    table = bpy.data.objects.new("Table", None)
    puck = bpy.data.objects.new("Puck", None)
    for obj in (table, puck):
        scene.collection.objects.link(obj)
    puck.parent = table
    table.location = (2.0, 0.0, 0.5)
    for frame, seconds in ((1, 0.0), (1 + 4 * FPS, 4.0)):
        table.rotation_euler = (0.0, 0.0, OMEGA * seconds)
        table.keyframe_insert("rotation_euler", frame=frame)
        puck.location = (1.0 + SLIDE * seconds, 0.0, 0.0)
        puck.keyframe_insert("location", frame=frame)
    for obj in (table, puck):
        for fcurve in _fcurves(obj):
            for key in fcurve.keyframe_points:
                key.interpolation = "LINEAR"
    scene.frame_set(1 + FPS)  # t = 1 s
    return scene


def test_turntable_rates_and_inertial_terms(turntable):
    inspection = scan_scene(turntable)
    dyn = scene_dynamics(turntable, inspection)
    index = inspection.nodes.index()
    table, puck = dyn[index[("Table", "")]], dyn[index[("Puck", "")]]
    assert turntable.frame_current == 1 + FPS  # the frame is restored
    assert np.allclose(table["global"]["angular_velocity"], [0, 0, OMEGA], atol=1e-4)
    assert np.allclose(table["global"]["velocity"], 0, atol=1e-5) and table["inertial"] is None
    # The puck at t = 1 s: r = 1.5 along the table's X, moving outward at 0.5.
    assert np.allclose(puck["local"]["velocity"], [SLIDE, 0, 0], atol=1e-4)
    assert np.allclose(puck["local"]["acceleration"], 0, atol=1e-3)
    r = 1.0 + SLIDE
    inertial = puck["inertial"]
    assert np.allclose(inertial["centrifugal"], [OMEGA**2 * r, 0, 0], atol=1e-3)  # 3.701
    assert np.allclose(inertial["coriolis"], [0, -2 * OMEGA * SLIDE, 0], atol=1e-3)  # -1.571
    assert np.allclose(inertial["euler"], 0, atol=1e-3) and np.allclose(inertial["linear"], 0, atol=1e-3)
    # World: the table has turned 90 degrees, so the puck's outward X is world Y.
    # A central difference of circular motion is low by (omega dt)^2 / 6 = 7e-4 relative.
    speed = np.linalg.norm(puck["global"]["velocity"])
    expected = math.hypot(OMEGA * r, SLIDE)
    assert math.isclose(speed, expected, rel_tol=1.2 * (OMEGA / FPS) ** 2 / 6)
    assert not math.isclose(speed, expected, rel_tol=1e-5)  # the estimate is not exact, as documented
    assert np.allclose(puck["global"]["angular_velocity"], [0, 0, OMEGA], atol=1e-4)
