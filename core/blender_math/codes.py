"""Blender's enum identifiers as integer codes, and the DNA values ``foreach_get`` returns.

An integer code indexes :data:`ROTATION_MODES` or :data:`INHERIT_SCALE_MODES`;
:func:`rotation_mode_codes_from_dna` and :func:`inherit_scale_codes_from_dna` convert
Blender's stored (DNA) values to codes.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = [
    "ROTATION_MODES",
    "INHERIT_SCALE_MODES",
    "ROTATION_MODE_DNA",
    "INHERIT_SCALE_DNA",
    "rotation_mode_codes_from_dna",
    "inherit_scale_codes_from_dna",
]

#: Blender's ``rotation_mode`` identifiers; an integer code is an index into this tuple.
ROTATION_MODES = ("QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE")
#: Blender's ``Bone.inherit_scale`` identifiers; an integer code is an index into this tuple.
INHERIT_SCALE_MODES = ("FULL", "FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")
#: DNA value (what ``foreach_get`` returns) of each entry of :data:`ROTATION_MODES`.
ROTATION_MODE_DNA = (0, 1, 2, 3, 4, 5, 6, -1)
#: DNA value (what ``foreach_get`` returns) of each entry of :data:`INHERIT_SCALE_MODES`.
INHERIT_SCALE_DNA = (0, 1, 5, 2, 3, 4)

_QUATERNION, _AXIS_ANGLE = 0, 7
_FULL, _FIX_SHEAR, _ALIGNED, _AVERAGE, _NONE, _NONE_LEGACY = range(6)


def rotation_mode_codes_from_dna(values) -> np.ndarray:
    """Codes into :data:`ROTATION_MODES` from Blender's DNA values ``(N,)`` (``foreach_get``).

    DNA: 0 quaternion, 1..6 the Euler orders, -1 axis-angle.
    """
    raw = np.asarray(values).astype(np.int64)
    table = np.full(8, -1, dtype=np.int64)
    for code, dna in enumerate(ROTATION_MODE_DNA):
        table[dna + 1] = code
    bad = (raw < -1) | (raw > 6)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InputError(f"values[{i}] = {raw.reshape(-1)[i]} is not a rotation mode DNA value", "values", (i,))
    return table[raw + 1]


def inherit_scale_codes_from_dna(values) -> np.ndarray:
    """Codes into :data:`INHERIT_SCALE_MODES` from Blender's DNA values ``(N,)`` (``foreach_get``).

    DNA: 0 FULL, 1 FIX_SHEAR, 2 AVERAGE, 3 NONE, 4 NONE_LEGACY, 5 ALIGNED.
    """
    raw = np.asarray(values).astype(np.int64)
    table = np.empty(6, dtype=np.int64)
    table[list(INHERIT_SCALE_DNA)] = np.arange(6)
    bad = (raw < 0) | (raw > 5)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InputError(f"values[{i}] = {raw.reshape(-1)[i]} is not an inherit scale DNA value", "values", (i,))
    return table[raw]
