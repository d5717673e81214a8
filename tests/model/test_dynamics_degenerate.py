"""A node whose scale nearly collapses (1e-13 on one axis, not exactly zero) has no
rates in the report (None), rather than making the core raise."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.dynamics import FrameSamples, dynamics_entries


def _samples(x_scales) -> FrameSamples:
    world = np.tile(np.eye(4), (3, 2, 1, 1))
    world[:, 0, :3, 3] = (5.0, 3.0, 2.0)
    for k, sx in enumerate(x_scales):
        world[k, 1, 0, 0] = sx
        world[k, 1, :3, 3] = (1.0 + 0.1 * k, 0.0, 0.0)
    parents = np.array([-1, 0])
    local = world.copy()
    local[:, 1] = np.linalg.inv(world[:, 0]) @ world[:, 1]
    return FrameSamples(world, local, np.zeros((3, 2), dtype=bool), parents, 1.0 / 24.0)


def test_a_nearly_collapsed_axis_has_no_rates_and_does_not_raise():
    tiny = (2e-13, 1e-13, 0.5e-13)
    samples = _samples(tiny)
    with pytest.raises(core.InputError):  # what the report's check keeps away from the core
        core.dynamics_from_samples(*samples.world[:, 1:], samples.dt)
    entries = dynamics_entries(samples)
    assert entries[0]["global"] is not None  # the parent is fine
    assert entries[1]["global"] is None and entries[1]["local"] is None


def test_a_small_but_regular_scale_keeps_its_rates():
    entries = dynamics_entries(_samples((1e-3, 1.1e-3, 1.2e-3)))
    velocity = entries[1]["global"]["velocity"]
    np.testing.assert_allclose(velocity, (0.1 * 24.0, 0.0, 0.0), atol=1e-9)
