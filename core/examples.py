"""Built-in example hierarchies with known answers (used by the demo and the tests).

- The seed article's piston: Root / A (magenta cylinder) / B (cyan cylinder), with the
  article's values (its ``0.71`` is ``sqrt(1/2)`` rounded: 90 degrees about Y).
  As published the two models agree; move the article's slider (scale the root along
  X) and they part: the matrix model stretches the piston along world X, the
  accumulated model fattens it along A's own X axis.
- A rotated child of a non-uniformly scaled parent: the textbook shear case.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .hierarchy import Hierarchy
from .rotations import axis_angle_to_quat
from .trs import TRS

__all__ = ["Example", "piston", "rotated_child"]

_HALF = np.sqrt(0.5)


class Example(NamedTuple):
    """A small hierarchy: names, parent indices, local TRS and local boxes ``(N, 3)``."""

    title: str
    names: list[str]
    parents: np.ndarray
    local: TRS
    box_min: np.ndarray
    box_max: np.ndarray

    @property
    def hierarchy(self) -> Hierarchy:
        return Hierarchy(self.parents, self.names)


def piston(root_scale=(1.0, 1.0, 1.0)) -> Example:
    """The seed's piston; ``root_scale`` is the article's slider (published: 1, 1, 1).

    Cylinders of radius 1 and height 2 along local Z (box ``[-1, 1]^3``) before scale.
    """
    local = TRS(
        translation=[[2.5, 3.0, 3.0], [0.0, 0.0, 1.5], [0.0, 0.0, 0.5]],
        rotation=[[1.0, 0.0, 0.0, 0.0], [_HALF, 0.0, _HALF, 0.0], [1.0, 0.0, 0.0, 0.0]],
        scale=[list(map(float, root_scale)), [0.25, 0.25, 2.0], [4.0, 4.0, 0.5]],
    )
    title = "Piston (seed article)" + (
        "" if tuple(root_scale) == (1.0, 1.0, 1.0) else f", root scale {tuple(root_scale)}"
    )
    return Example(title, ["Root", "A", "B"], np.array([-1, 0, 1]), local, -np.ones((3, 3)), np.ones((3, 3)))


def rotated_child(parent_scale=(2.0, 1.0, 1.0), child_angle_deg: float = 45.0) -> Example:
    """A cube rotated about Z under a parent scaled non-uniformly: sheared in Blender.

    With the defaults the child's X and Y axes meet at 126.87 degrees in the matrix
    model (shear -36.87), while the accumulated model keeps them square.
    """
    local = TRS(
        translation=[[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]],
        rotation=[[1.0, 0.0, 0.0, 0.0], axis_angle_to_quat([0.0, 0.0, 1.0], np.radians(child_angle_deg))],
        scale=[list(map(float, parent_scale)), [1.0, 1.0, 1.0]],
    )
    title = f"Rotated child ({child_angle_deg:g} deg about Z) of a parent scaled {tuple(parent_scale)}"
    return Example(title, ["Parent", "Child"], np.array([-1, 0]), local, -np.ones((2, 3)), np.ones((2, 3)))
