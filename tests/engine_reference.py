"""Independent re-implementations of what engines do with a file's nodes, transcribed
line by line from their sources or specifications (scalar Python, one node at a time, in
the engines' own conventions). The package's models (``core.unreal_math``,
``addon/model/engines``) are vectorised numpy in column-vector, wxyz conventions; this
module imports none of them, so a mistake in one is not repeated in the other.

Unreal Engine 5 (``Engine/Source/Runtime/Core/Public/Math/``):

- ``Quat.h``: ``TQuat(const TMatrix&)``, ``operator*`` (``VectorQuaternionMultiply2``),
  ``RotateVector``, ``Inverse``, ``Normalize``, ``IsNormalized``;
- ``Matrix.inl`` / ``Matrix.h``: ``operator*`` (row vectors: ``v * M``), ``Determinant``,
  ``Inverse``, ``ExtractScaling``, ``RemoveScaling``, ``GetScaledAxis``, ``SetAxis``;
- ``TransformNonVectorized.h``: ``SetFromMatrix``, ``ToMatrixWithScale``, ``Multiply``,
  ``MultiplyUsingMatrixWithScale``, ``ConstructTransformFromMatrixWithDesiredScale``,
  ``GetRelativeTransform``, ``GetRelativeTransformUsingMatrixWithScale``,
  ``GetSafeScaleReciprocal``;
- the classic importer's bone loop (``Editor/UnrealEd/Private/SkeletalMeshEdit.cpp``):
  ``GlobalTransform = Converter.ConvertTransform(Link->EvaluateGlobalTransform(t))``,
  ``LocalTransform = GlobalTransform.GetRelativeTransform(ParentGlobalTransform)``; at
  run time ``ComponentSpace[i] = Local[i] * ComponentSpace[parent]``. The FBX SDK's
  ``EvaluateGlobalTransform`` composes the file's local matrices
  (``Global = ParentGlobal * Local``); its ``FbxAMatrix::GetQ / GetS`` (closed source)
  are modelled as ``SetFromMatrix``.
- Interchange (``ImportBakeTransforms``): ``NodeTransform = ParentTransform.Inverse() *
  NodeTransform`` as FBX matrices, then an ``FTransform``; accumulated at run time.

Ogre (``OgreMain/src/OgreNode.cpp``, ``Node::updateFromParentImpl``): derived orientation
``parent * own``, derived scale ``parent * own`` (per axis), derived position
``parentOrientation * (parentScale * position) + parentPosition``.

glTF 2.0 (section 3.5.3, "Transformations"): a node's matrix is ``T * R * S``; its global
transform is its parent's global times its own.
"""

from __future__ import annotations

import math

import numpy as np

SMALL_NUMBER = 1e-8
KINDA_SMALL_NUMBER = 1e-4
THRESH_QUAT_NORMALIZED = 0.01


# -- FVector and FQuat -----------------------------------------------------------------------


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


class FQuat:
    def __init__(self, x=0.0, y=0.0, z=0.0, w=1.0):
        self.X, self.Y, self.Z, self.W = x, y, z, w

    @staticmethod
    def from_matrix(M: FMatrix) -> FQuat:
        """``TQuat(const TMatrix<T>& M)``."""
        if M.scaled_axis(0).is_nearly_zero() or M.scaled_axis(1).is_nearly_zero() or M.scaled_axis(2).is_nearly_zero():
            return FQuat()
        q = FQuat()
        tr = M.M[0][0] + M.M[1][1] + M.M[2][2]
        if tr > 0.0:
            InvS = 1.0 / math.sqrt(tr + 1.0)
            q.W = 0.5 * (1.0 / InvS)
            s = 0.5 * InvS
            q.X = (M.M[1][2] - M.M[2][1]) * s
            q.Y = (M.M[2][0] - M.M[0][2]) * s
            q.Z = (M.M[0][1] - M.M[1][0]) * s
        else:
            i = 0
            if M.M[1][1] > M.M[0][0]:
                i = 1
            if M.M[2][2] > M.M[i][i]:
                i = 2
            nxt = (1, 2, 0)
            j = nxt[i]
            k = nxt[j]
            s = M.M[i][i] - M.M[j][j] - M.M[k][k] + 1.0
            InvS = 1.0 / math.sqrt(s)
            qt = [0.0] * 4
            qt[i] = 0.5 * (1.0 / InvS)
            s = 0.5 * InvS
            qt[3] = (M.M[j][k] - M.M[k][j]) * s
            qt[j] = (M.M[i][j] + M.M[j][i]) * s
            qt[k] = (M.M[i][k] + M.M[k][i]) * s
            q.X, q.Y, q.Z, q.W = qt
        return q

    def __mul__(self, Q: FQuat) -> FQuat:
        """``operator*`` (``VectorQuaternionMultiply2``): ``this`` applied after ``Q``."""
        return FQuat(
            self.W * Q.X + self.X * Q.W + self.Y * Q.Z - self.Z * Q.Y,
            self.W * Q.Y - self.X * Q.Z + self.Y * Q.W + self.Z * Q.X,
            self.W * Q.Z + self.X * Q.Y - self.Y * Q.X + self.Z * Q.W,
            self.W * Q.W - self.X * Q.X - self.Y * Q.Y - self.Z * Q.Z,
        )

    def rotate_vector(self, V):
        Q = [self.X, self.Y, self.Z]
        TT = [2.0 * c for c in cross(Q, V)]
        QTT = cross(Q, TT)
        return [V[i] + self.W * TT[i] + QTT[i] for i in range(3)]

    def inverse(self) -> FQuat:
        return FQuat(-self.X, -self.Y, -self.Z, self.W)

    def size_squared(self) -> float:
        return self.X * self.X + self.Y * self.Y + self.Z * self.Z + self.W * self.W

    def normalize(self) -> None:
        square_sum = self.size_squared()
        if square_sum >= SMALL_NUMBER:
            scale = 1.0 / math.sqrt(square_sum)
            self.X, self.Y, self.Z, self.W = self.X * scale, self.Y * scale, self.Z * scale, self.W * scale
        else:
            self.X, self.Y, self.Z, self.W = 0.0, 0.0, 0.0, 1.0

    def is_normalized(self) -> bool:
        return abs(1.0 - self.size_squared()) < THRESH_QUAT_NORMALIZED


class _Axis(list):
    def is_nearly_zero(self, tolerance=KINDA_SMALL_NUMBER) -> bool:
        return abs(self[0]) <= tolerance and abs(self[1]) <= tolerance and abs(self[2]) <= tolerance


# -- FMatrix (row vectors: v' = v * M) ----------------------------------------------------


class FMatrix:
    def __init__(self, rows=None):
        self.M = [list(r) for r in rows] if rows is not None else [[float(i == j) for j in range(4)] for i in range(4)]

    def __mul__(self, other: FMatrix) -> FMatrix:
        return FMatrix([[sum(self.M[i][k] * other.M[k][j] for k in range(4)) for j in range(4)] for i in range(4)])

    def scaled_axis(self, a: int) -> _Axis:
        return _Axis(self.M[a][:3])

    def set_axis(self, a: int, v) -> None:
        self.M[a][0], self.M[a][1], self.M[a][2] = v

    def origin(self):
        return list(self.M[3][:3])

    def determinant(self) -> float:
        M = self.M
        return (
            M[0][0]
            * (
                M[1][1] * (M[2][2] * M[3][3] - M[2][3] * M[3][2])
                - M[2][1] * (M[1][2] * M[3][3] - M[1][3] * M[3][2])
                + M[3][1] * (M[1][2] * M[2][3] - M[1][3] * M[2][2])
            )
            - M[1][0]
            * (
                M[0][1] * (M[2][2] * M[3][3] - M[2][3] * M[3][2])
                - M[2][1] * (M[0][2] * M[3][3] - M[0][3] * M[3][2])
                + M[3][1] * (M[0][2] * M[2][3] - M[0][3] * M[2][2])
            )
            + M[2][0]
            * (
                M[0][1] * (M[1][2] * M[3][3] - M[1][3] * M[3][2])
                - M[1][1] * (M[0][2] * M[3][3] - M[0][3] * M[3][2])
                + M[3][1] * (M[0][2] * M[1][3] - M[0][3] * M[1][2])
            )
            - M[3][0]
            * (
                M[0][1] * (M[1][2] * M[2][3] - M[1][3] * M[2][2])
                - M[1][1] * (M[0][2] * M[2][3] - M[0][3] * M[2][2])
                + M[2][1] * (M[0][2] * M[1][3] - M[0][3] * M[1][2])
            )
        )

    def inverse(self) -> FMatrix:
        """``FMatrix::Inverse``: the identity for a zero-scale matrix or a zero determinant."""
        if all(self.scaled_axis(a).is_nearly_zero(SMALL_NUMBER) for a in range(3)):
            return FMatrix()
        det = self.determinant()
        if det == 0.0:
            return FMatrix()
        # Affine (last column 0, 0, 0, 1): the 3x3 cofactors over the determinant, then
        # the origin moved back.
        M = self.M
        out = FMatrix()
        for i in range(3):
            for j in range(3):
                rows = [k for k in range(3) if k != j]
                cols = [k for k in range(3) if k != i]
                minor = M[rows[0]][cols[0]] * M[rows[1]][cols[1]] - M[rows[0]][cols[1]] * M[rows[1]][cols[0]]
                out.M[i][j] = (minor if (i + j) % 2 == 0 else -minor) / det
        for j in range(3):
            out.M[3][j] = -sum(M[3][k] * out.M[k][j] for k in range(3))
        return out

    def extract_scaling(self, tolerance=SMALL_NUMBER):
        scale = [0.0, 0.0, 0.0]
        for a in range(3):
            square_sum = sum(self.M[a][c] * self.M[a][c] for c in range(3))
            if square_sum > tolerance:
                s = math.sqrt(square_sum)
                scale[a] = s
                inv = 1.0 / s
                for c in range(3):
                    self.M[a][c] *= inv
        return scale

    def remove_scaling(self, tolerance=SMALL_NUMBER) -> None:
        for a in range(3):
            square_sum = sum(self.M[a][c] * self.M[a][c] for c in range(3))
            scale = 1.0 / math.sqrt(square_sum) if square_sum - tolerance >= 0.0 else 1.0
            for c in range(3):
                self.M[a][c] *= scale


# -- FTransform ---------------------------------------------------------------------------


class FTransform:
    def __init__(self, rotation=None, translation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)):
        self.Rotation = rotation or FQuat()
        self.Translation = list(translation)
        self.Scale3D = list(scale)

    @staticmethod
    def from_matrix(InMatrix: FMatrix) -> FTransform:
        """``SetFromMatrix``."""
        M = FMatrix(InMatrix.M)
        out = FTransform()
        out.Scale3D = M.extract_scaling()
        if InMatrix.determinant() < 0.0:
            out.Scale3D[0] *= -1.0
            M.set_axis(0, [-c for c in M.scaled_axis(0)])
        out.Rotation = FQuat.from_matrix(M)
        out.Translation = InMatrix.origin()
        out.Rotation.normalize()
        return out

    def to_matrix_with_scale(self) -> FMatrix:
        R, S, T = self.Rotation, self.Scale3D, self.Translation
        out = FMatrix()
        out.M[3][0], out.M[3][1], out.M[3][2] = T
        x2, y2, z2 = R.X + R.X, R.Y + R.Y, R.Z + R.Z
        xx2, yy2, zz2 = R.X * x2, R.Y * y2, R.Z * z2
        out.M[0][0] = (1.0 - (yy2 + zz2)) * S[0]
        out.M[1][1] = (1.0 - (xx2 + zz2)) * S[1]
        out.M[2][2] = (1.0 - (xx2 + yy2)) * S[2]
        yz2, wx2 = R.Y * z2, R.W * x2
        out.M[2][1] = (yz2 - wx2) * S[2]
        out.M[1][2] = (yz2 + wx2) * S[1]
        xy2, wz2 = R.X * y2, R.W * z2
        out.M[1][0] = (xy2 - wz2) * S[1]
        out.M[0][1] = (xy2 + wz2) * S[0]
        xz2, wy2 = R.X * z2, R.W * y2
        out.M[2][0] = (xz2 + wy2) * S[2]
        out.M[0][2] = (xz2 - wy2) * S[0]
        out.M[0][3] = out.M[1][3] = out.M[2][3] = 0.0
        out.M[3][3] = 1.0
        return out

    def __mul__(self, other: FTransform) -> FTransform:
        """``Multiply(&Out, this, &Other)``: ``this`` in ``other``'s space."""
        A, B = self, other
        if any_has_negative_scale(A.Scale3D, B.Scale3D):
            desired = [A.Scale3D[i] * B.Scale3D[i] for i in range(3)]
            return construct_from_matrix_with_desired_scale(A.to_matrix_with_scale(), B.to_matrix_with_scale(), desired)
        out = FTransform()
        out.Rotation = B.Rotation * A.Rotation
        out.Scale3D = [A.Scale3D[i] * B.Scale3D[i] for i in range(3)]
        moved = B.Rotation.rotate_vector([B.Scale3D[i] * A.Translation[i] for i in range(3)])
        out.Translation = [moved[i] + B.Translation[i] for i in range(3)]
        return out

    def get_relative_transform(self, Other: FTransform) -> FTransform:
        if any_has_negative_scale(self.Scale3D, Other.Scale3D):
            AM = self.to_matrix_with_scale()
            BM = Other.to_matrix_with_scale()
            recip = get_safe_scale_reciprocal(Other.Scale3D)
            desired = [self.Scale3D[i] * recip[i] for i in range(3)]
            return construct_from_matrix_with_desired_scale(AM, BM.inverse(), desired)
        recip = get_safe_scale_reciprocal(Other.Scale3D)
        out = FTransform()
        out.Scale3D = [self.Scale3D[i] * recip[i] for i in range(3)]
        if not Other.Rotation.is_normalized():
            return FTransform()
        inverse = Other.Rotation.inverse()
        out.Rotation = inverse * self.Rotation
        moved = inverse.rotate_vector([self.Translation[i] - Other.Translation[i] for i in range(3)])
        out.Translation = [moved[i] * recip[i] for i in range(3)]
        return out


def any_has_negative_scale(a, b) -> bool:
    return min(a[0], b[0]) < 0.0 or min(a[1], b[1]) < 0.0 or min(a[2], b[2]) < 0.0


def get_safe_scale_reciprocal(s, tolerance=SMALL_NUMBER):
    return [0.0 if abs(c) <= tolerance else 1.0 / c for c in s]


def construct_from_matrix_with_desired_scale(AMatrix: FMatrix, BMatrix: FMatrix, desired) -> FTransform:
    M = AMatrix * BMatrix
    M.remove_scaling()
    sign = [1.0 if c >= 0.0 else -1.0 for c in desired]
    for a in range(3):
        M.set_axis(a, [sign[a] * c for c in M.scaled_axis(a)])
    rotation = FQuat.from_matrix(M)
    rotation.normalize()
    out = FTransform()
    out.Scale3D = list(desired)
    out.Rotation = rotation
    out.Translation = M.origin()
    return out


# -- conversions at the boundary (column-vector 4x4 <-> row-vector FMatrix) -----------------


def fmatrix(m) -> FMatrix:
    return FMatrix(np.asarray(m, dtype=np.float64).T.tolist())


def column_matrix(fm: FMatrix) -> np.ndarray:
    return np.array(fm.M).T


def trs_matrix(t, q_wxyz, s) -> np.ndarray:
    """glTF 2.0: ``T * R * S`` (column vectors), the rotation matrix written out."""
    w, x, y, z = q_wxyz
    r = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    out = np.eye(4)
    out[:3, :3] = r * np.asarray(s)
    out[:3, 3] = t
    return out


def _root_first(parents) -> list[int]:
    """Node order where every parent comes before its children (a loop, no recursion)."""
    order, seen = [], set()
    for start in range(len(parents)):
        chain = []
        i = start
        while i >= 0 and i not in seen:
            chain.append(i)
            i = int(parents[i])
        for node in reversed(chain):
            seen.add(node)
            order.append(node)
    return order


# -- the engine paths ---------------------------------------------------------------------


def gltf_globals(parents, t, q, s) -> np.ndarray:
    """glTF 2.0: each node's global = parent's global * ``T * R * S``."""
    out = np.zeros((len(parents), 4, 4))
    for i in _root_first(parents):
        local = trs_matrix(t[i], q[i], s[i])
        out[i] = local if parents[i] < 0 else out[parents[i]] @ local
    return out


def unreal_classic(parents, t, q, s) -> np.ndarray:
    """Unreal's classic FBX importer, then its run time: world per node ``(N, 4, 4)``."""
    globals_ = gltf_globals(parents, t, q, s)  # EvaluateGlobalTransform
    own = [FTransform.from_matrix(fmatrix(g)) for g in globals_]
    world: list[FTransform | None] = [None] * len(parents)
    for i in _root_first(parents):
        p = int(parents[i])
        if p < 0:
            world[i] = own[i]
        else:
            local = own[i].get_relative_transform(own[p])
            world[i] = local * world[p]
    return np.array([column_matrix(w.to_matrix_with_scale()) for w in world])


def unreal_interchange(parents, t, q, s) -> np.ndarray:
    """Interchange: ``FTransform(ParentGlobal.Inverse() * Global)`` per node, accumulated."""
    globals_ = gltf_globals(parents, t, q, s)
    world: list[FTransform | None] = [None] * len(parents)
    for i in _root_first(parents):
        p = int(parents[i])
        # ParentTransform.Inverse() * NodeTransform (FBX order; the SDK's FbxAMatrix
        # inverse, closed source, modelled as FMatrix::Inverse): row vectors G_i * G_p^-1.
        node = fmatrix(globals_[i]) if p < 0 else fmatrix(globals_[i]) * fmatrix(globals_[p]).inverse()
        local = FTransform.from_matrix(node)
        world[i] = local if p < 0 else local * world[p]
    return np.array([column_matrix(w.to_matrix_with_scale()) for w in world])


def _qmul(a, b):
    """Ogre's ``Quaternion::operator*`` (w, x, y, z)."""
    return [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3],
        a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1],
    ]


def _qrotate(qq, v):
    """Ogre's ``Quaternion * Vector3`` (nVidia SDK form: ``v + 2w (u x v) + 2 u x (u x v)``)."""
    u = qq[1:]
    uv = cross(u, v)
    uuv = cross(u, uv)
    return [v[i] + 2.0 * (qq[0] * uv[i] + uuv[i]) for i in range(3)]


def ogre(parents, t, q, s) -> np.ndarray:
    """Ogre's ``Node::updateFromParentImpl`` (inherit orientation and scale on), then
    ``makeTransform(position, scale, orientation)``."""
    n = len(parents)
    pos, ori, sca = [None] * n, [None] * n, [None] * n
    for i in _root_first(parents):
        p = int(parents[i])
        if p < 0:
            pos[i], ori[i], sca[i] = list(t[i]), list(q[i]), list(s[i])
            continue
        ori[i] = _qmul(ori[p], list(q[i]))
        sca[i] = [sca[p][k] * s[i][k] for k in range(3)]
        moved = _qrotate(ori[p], [sca[p][k] * t[i][k] for k in range(3)])
        pos[i] = [moved[k] + pos[p][k] for k in range(3)]
    return np.array([trs_matrix(pos[i], ori[i], sca[i]) for i in range(n)])


PATHS = {
    "matrix_model": gltf_globals,
    "unreal_fbx": unreal_classic,
    "unreal_interchange": unreal_interchange,
    "accumulated": ogre,
}
