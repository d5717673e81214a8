"""Helpers for the model layer's tests: numpy and the core only, no Blender (they run without bpy
installed). Nodes are built from the core's example hierarchies with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.nodes import Nodes


def nodes_of(example: core.examples.Example, bones: dict[int, str] | None = None) -> Nodes:
    """:class:`Nodes` whose worlds are the example's locals composed as matrices (what
    Blender shows). ``bones`` turns node i into bone ``bones[i]`` of armature node 0."""
    world = example.hierarchy.world_matrices(example.local.to_matrix())
    keys = [(name, "") for name in example.names]
    for i, bone in (bones or {}).items():
        keys[i] = (example.names[0], bone)
    return Nodes(keys, np.asarray(example.parents), world, example.box_min.copy(), example.box_max.copy())


@pytest.fixture
def rotated_child() -> Nodes:
    return nodes_of(core.examples.rotated_child())


@pytest.fixture
def piston_moved() -> Nodes:
    return nodes_of(core.examples.piston(root_scale=(2.0, 1.0, 1.0)))
