"""Hierarchy Inspector core: transform hierarchies in numpy, no Blender needed.

Two models of world transforms:

- **matrix** (Blender, Unity, Godot, glTF viewers): local matrices multiplied,
  ``world = parent_world @ local``; a rotated child of a non-uniformly scaled parent is
  sheared.
- **accumulated** (Unreal, Ogre, the seed article): translation, rotation and scale
  combined separately (:func:`accumulate`); never sheared, but scale acts along the
  child's own axes.

Conventions: column vectors (``M @ v``), batch dimensions first, quaternions
``(w, x, y, z)``, float64. Bad input raises :class:`InputError` (a ``ValueError``)
that names the argument and the offending index.
"""

from . import examples
from .analysis import Analysis, analyze
from .decompose import (
    Decomposition,
    affine_inverse,
    affine_pseudo_inverse,
    decompose,
    determinant3,
    linear_part,
    shear_angles,
    translation_part,
)
from .dynamics import (
    Delta,
    DynamicTransform,
    InertialAccelerations,
    PointMotion,
    SampledDynamics,
    counteract_inherited,
    dynamics_from_samples,
    global_delta_to_local,
    global_to_local,
    inertial_accelerations,
    linear_impulse,
    local_delta_to_global,
    local_to_global,
    parent_delta_to_child,
    point_to_global,
    point_to_local,
)
from .errors import HierarchyError, InputError, ShearError
from .fields import FrameFields, frame_fields
from .group import Transform, rotation_2d
from .hierarchy import Hierarchy
from .metrics import Deviation, box_corner_distance, box_corners, corner_distance, deviation
from .rotations import (
    EULER_ORDERS,
    axis_angle_to_matrix,
    axis_angle_to_quat,
    euler_to_matrix,
    euler_to_quat,
    hat,
    matrix_to_quat,
    quat_angle_deg,
    quat_conjugate,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    quat_to_matrix,
    vee,
)
from .split import is_trs, split_to_trs
from .trs import TRS, accumulate

__all__ = [
    "TRS",
    "accumulate",
    "Hierarchy",
    "decompose",
    "affine_inverse",
    "affine_pseudo_inverse",
    "determinant3",
    "Decomposition",
    "shear_angles",
    "linear_part",
    "translation_part",
    "split_to_trs",
    "analyze",
    "frame_fields",
    "FrameFields",
    "Analysis",
    "examples",
    "is_trs",
    "deviation",
    "Deviation",
    "box_corners",
    "corner_distance",
    "box_corner_distance",
    "Transform",
    "rotation_2d",
    "InputError",
    "HierarchyError",
    "ShearError",
    "EULER_ORDERS",
    "quat_multiply",
    "quat_conjugate",
    "quat_normalize",
    "quat_rotate",
    "quat_to_matrix",
    "matrix_to_quat",
    "quat_angle_deg",
    "euler_to_matrix",
    "euler_to_quat",
    "axis_angle_to_matrix",
    "axis_angle_to_quat",
    "hat",
    "vee",
    "DynamicTransform",
    "Delta",
    "InertialAccelerations",
    "PointMotion",
    "SampledDynamics",
    "local_to_global",
    "global_to_local",
    "local_delta_to_global",
    "global_delta_to_local",
    "parent_delta_to_child",
    "counteract_inherited",
    "linear_impulse",
    "inertial_accelerations",
    "point_to_global",
    "point_to_local",
    "dynamics_from_samples",
]
