"""Shared fixtures and hypothesis strategies."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

settings.register_profile("default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")

pytest_plugins = ["gltf_validation"]


def pytest_unconfigure(config):
    """bpy 4.2 from PyPI crashes (SIGSEGV) while Python shuts down after a glTF export
    (Blender's exporter alone does it), and 4.5 prints its leak detector's lines then:
    under bpy 4.x from PyPI, end the test process before that, with pytest's own exit
    status, once everything is reported."""
    bpy = sys.modules.get("bpy")
    if bpy is not None and bpy.app.version[0] == 4 and not bpy.app.binary_path:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(getattr(config, "_hi_exitstatus", 1)))


@pytest.hookimpl(trylast=True)  # after gltf_validation's, which may turn a pass into a failure
def pytest_sessionfinish(session, exitstatus):
    session.config._hi_exitstatus = session.exitstatus


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def random_forest(rng, n: int, max_roots: int = 3, shuffle: bool = True) -> np.ndarray:
    """Random parent array: node i picks a parent among earlier nodes, then optionally
    the node order is shuffled so parents do not precede children."""
    parents = np.full(n, -1)
    roots = max(1, min(max_roots, n))
    for i in range(roots, n):
        parents[i] = rng.integers(0, i)
    if shuffle and n > 1:
        perm = rng.permutation(n)
        inv = np.argsort(perm)
        parents = np.where(parents[perm] >= 0, inv[np.maximum(parents[perm], 0)], -1)
    return parents


def random_trs_arrays(rng, n: int, uniform_scale: bool = False, negative: bool = False):
    t = rng.normal(size=(n, 3))
    q = rng.normal(size=(n, 4))
    if uniform_scale:
        s = np.repeat(rng.uniform(0.5, 2.0, size=(n, 1)), 3, axis=1)
    else:
        s = rng.uniform(0.5, 2.0, size=(n, 3))
    if negative:
        s *= rng.choice([-1.0, 1.0], size=s.shape)
    return t, q, s


finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vec3 = hnp.arrays(np.float64, 3, elements=finite)
quat = hnp.arrays(np.float64, 4, elements=st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 0.1)
scale3 = hnp.arrays(np.float64, 3, elements=st.floats(0.2, 5)) | hnp.arrays(
    np.float64, 3, elements=st.sampled_from([-2.0, -0.5, 0.5, 1.0, 3.0])
)
affine = hnp.arrays(np.float64, (3, 4), elements=st.floats(-5, 5)).map(lambda a: np.vstack([a, [0.0, 0.0, 0.0, 1.0]]))
