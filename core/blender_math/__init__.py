"""Blender's object and pose-bone transform math as batched numpy models (no bpy).

What Blender computes from raw properties, reproduced to float32 precision (checked
against real Blender 5.0.1 in ``tests/scene/test_blender_math.py``):

- :func:`basis_matrices`: ``matrix_basis`` of objects (with deltas) and pose bones,
  every rotation mode (``BKE_object_to_mat4`` / ``BKE_pchan_to_mat4``).
- :func:`object_world_matrices`: ``matrix_world = P @ matrix_parent_inverse @ basis``
  (``solve_parenting``); :func:`bone_parent_matrix` gives ``P`` for the BONE parent
  type (``ob_parbone``); :func:`object_tree_matrices` folds a whole OBJECT-parented forest.
- :func:`pose_matrices`: armature-space ``pose_bone.matrix`` before constraints and IK,
  all six Inherit Scale modes, hinge (inherit rotation off), local location, connected
  bones (``BKE_pose_where_is_bone`` via ``BKE_bone_parent_transform_calc_from_matrices``).
- :func:`ortho_stable` (``orthogonalize_m4_stable(m, 1, ...)``) and :func:`fixshear_scale`
  (``mat4_to_size_fix_shear``), the two helpers the inherit-scale modes are built from.

Integer codes index :data:`ROTATION_MODES` and :data:`INHERIT_SCALE_MODES` (Blender's
enum identifiers, which are accepted too). ``foreach_get`` hands out Blender's DNA values
instead; :func:`rotation_mode_codes_from_dna` and :func:`inherit_scale_codes_from_dna`
convert them. Matrices are column-vector ``(..., 4, 4)`` (``foreach_get`` of a matrix
property gives the transpose: reshape to ``(N, 4, 4)`` and swap the last two axes).

Everything is float64; Blender works in float32, so compare with a relative tolerance
of about 1e-5. Blender source references are to ``source/blender/blenkernel/intern/
armature.cc`` and ``object.cc`` and ``source/blender/blenlib/intern/math_matrix_c.cc``.

Modules: :mod:`.codes` (enum codes and DNA values), :mod:`.basis` (``matrix_basis``),
:mod:`.objects` (``matrix_world`` and every parent type), :mod:`.bones` (pose bones and
the Inherit Scale helpers); ``_common`` holds the argument checks and small helpers they
share.
"""

from .basis import basis_matrices, rotation_matrices
from .bones import bone_parent_transforms, fixshear_scale, ortho_stable, pose_matrices, pose_matrices_given_parents
from .codes import (
    INHERIT_SCALE_DNA,
    INHERIT_SCALE_MODES,
    ROTATION_MODE_DNA,
    ROTATION_MODES,
    inherit_scale_codes_from_dna,
    rotation_mode_codes_from_dna,
)
from .objects import bone_parent_matrix, object_tree_matrices, object_world_matrices, vertex_parent_matrix

__all__ = [
    "ROTATION_MODES",
    "INHERIT_SCALE_MODES",
    "ROTATION_MODE_DNA",
    "INHERIT_SCALE_DNA",
    "rotation_mode_codes_from_dna",
    "inherit_scale_codes_from_dna",
    "rotation_matrices",
    "basis_matrices",
    "object_world_matrices",
    "object_tree_matrices",
    "bone_parent_matrix",
    "ortho_stable",
    "fixshear_scale",
    "bone_parent_transforms",
    "pose_matrices",
    "pose_matrices_given_parents",
    "vertex_parent_matrix",
]
