import numpy as np
import pytest
from hierarchy_inspector import core
from hypothesis import given
from hypothesis import strategies as st


def random_rotation(rng, n, shape=()):
    a = rng.normal(size=shape + (n, n))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    det = np.linalg.det(q)
    q[..., :, 0] *= det[..., None]  # make proper
    return q


def random_transform(rng, n, shape=()):
    return core.Transform(
        rng.normal(size=shape + (n,)), random_rotation(rng, n, shape), rng.uniform(0.3, 3, size=shape)
    )


dims = st.sampled_from([2, 3, 4])
seeds = st.integers(0, 2**32 - 1)


@given(dims, seeds)
def test_group_laws(n, seed):
    rng = np.random.default_rng(seed)
    a, b, c = (random_transform(rng, n) for _ in range(3))
    x = rng.normal(size=n)
    left, right = (a @ b) @ c, a @ (b @ c)
    assert np.allclose(left.to_matrix(), right.to_matrix())
    assert np.allclose((a @ b)(x), a(b(x)))
    ident = core.Transform.identity(n)
    assert np.allclose((a @ ident).to_matrix(), a.to_matrix())
    assert np.allclose((ident @ a).to_matrix(), a.to_matrix())
    assert np.allclose((a @ a.inverse()).to_matrix(), np.eye(n + 1))
    assert np.allclose((a.inverse() @ a).to_matrix(), np.eye(n + 1))
    assert np.allclose(a.to_matrix() @ b.to_matrix(), (a @ b).to_matrix())


@given(dims, seeds)
def test_points_vectors_normals(n, seed):
    rng = np.random.default_rng(seed)
    a = random_transform(rng, n)
    p, v = rng.normal(size=n), rng.normal(size=n)
    m = a.to_matrix()
    assert np.allclose(a.apply_point(p), (m @ np.append(p, 1))[:n])
    assert np.allclose(a.apply_vector(v), a.linear() @ v)
    # A normal stays perpendicular to a tangent after both are transformed.
    tangent = rng.normal(size=n)
    normal = rng.normal(size=n)
    normal -= normal @ tangent / (tangent @ tangent) * tangent
    assert np.isclose(a.apply_normal(normal) @ a.apply_vector(tangent), 0, atol=1e-9)
    assert np.allclose(a.normal_matrix(), np.linalg.inv(a.linear()).T)


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_batch_composition_equals_loop(rng, shape):
    a, b = random_transform(rng, 3, shape), random_transform(rng, 3, shape)
    ab = a @ b
    for idx in np.ndindex(*shape):
        one = core.Transform(a.translation[idx], a.rotation[idx], a.scale[idx]) @ core.Transform(
            b.translation[idx], b.rotation[idx], b.scale[idx]
        )
        assert np.allclose(ab.to_matrix()[idx], one.to_matrix())


def test_rotation_2d_and_known_composition():
    a = core.Transform([1.0, 0.0], core.rotation_2d(np.pi / 2), 2.0)
    assert np.allclose(a([1.0, 0.0]), [1.0, 2.0])
    assert np.allclose(a.inverse()([1.0, 2.0]), [1.0, 0.0])


def test_transform_errors_name_the_problem():
    with pytest.raises(core.InputError, match=r"rotation: not orthonormal"):
        core.Transform([0, 0], [[1, 1], [0, 1]])
    with pytest.raises(core.InputError, match=r"rotation: a reflection"):
        core.Transform([0, 0], [[1, 0], [0, -1]])
    with pytest.raises(core.InputError, match=r"scale\[1\]: zero scale has no inverse"):
        core.Transform(np.zeros((2, 2)), np.eye(2), [1.0, 0.0]).inverse()
    with pytest.raises(core.InputError, match="do not match 3-d translations"):
        core.Transform([0, 0, 0], np.eye(2))
    with pytest.raises(core.InputError, match="cannot combine 2-d and 3-d"):
        core.Transform.identity(2) @ core.Transform.identity(3)
