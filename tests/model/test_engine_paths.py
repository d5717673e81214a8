"""Each engine path of ``addon/model/engines`` against the independent transcription of
that engine's source or specification (``engine_reference``), on random forests with
positive, mirrored, tiny and zero scales, and on textbook cases with known numbers."""

from __future__ import annotations

import engine_reference as ref
import numpy as np
import pytest
from conftest import random_forest, random_trs_arrays
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.engines import files, paths, predict
from hierarchy_inspector.core import unreal_math as ue


def _file(parents, t, q, s):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    return files.plain_file(parents, core.TRS(t, q, s)), q


def _compare(parents, t, q, s, tolerance=1e-9, keep=None):
    f, q = _file(parents, t, q, s)
    model = predict.engine_worlds(f)
    keep = np.ones(len(parents), dtype=bool) if keep is None else keep
    for path in paths.PATHS:
        expected = ref.PATHS[path](parents, t, q, s)
        size = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(model[path][keep], expected[keep], rtol=0, atol=tolerance * size, err_msg=path)


def _below(parents, pick) -> np.ndarray:
    """``(N,)`` bool: nodes with an ancestor in ``pick``."""
    out = np.zeros(len(parents), dtype=bool)
    for i in range(len(parents)):
        p = parents[i]
        while p >= 0 and not out[i]:
            out[i] = bool(pick[p])
            p = parents[p]
    return out


def _one_per_chain(parents, pick) -> np.ndarray:
    """``pick`` without the nodes that have a picked ancestor."""
    keep = pick.copy()
    for i in np.flatnonzero(pick):
        p = parents[i]
        while p >= 0:
            if pick[p]:
                keep[i] = False
                break
            p = parents[p]
    return keep


@pytest.mark.parametrize("case", ["positive", "mirrored", "blender-mirrored", "tiny", "zero"])
def test_every_path_matches_its_engine_source(rng, case):
    for _ in range(8):
        n = int(rng.integers(1, 40))
        parents = random_forest(rng, n)
        t, q, s = random_trs_arrays(rng, n, negative=case == "mirrored")
        pick = rng.random(n) < 0.3
        if case == "blender-mirrored":  # what Blender's decompose writes for a mirror: all three negative
            s[pick] *= -1.0
        elif case == "tiny":  # one per chain: two stacked make Unreal's own inverse meaningless (cond 1e18)
            s[_one_per_chain(parents, pick), 1] = 1e-9
        elif case == "zero":
            s[pick, 2] = 0.0
        # Below a zero scale every global is singular and the sign of its determinant's
        # round-off (Unreal's mirror test) is noise: those nodes are not compared.
        keep = ~_below(parents, pick) if case == "zero" else None
        # Interchange inverts each parent's global: below a parent scaled 1e-9 that inverse
        # has condition 1e9, and a global's last bit (the model and the transcription
        # compose them in different orders) comes out as 1e-7 in Unreal's own local.
        _compare(parents, t, q, s, tolerance=1e-6 if case == "tiny" else 1e-9, keep=keep)


def test_a_deep_chain_runs_without_recursion(rng):
    n = 3000
    parents = np.arange(-1, n - 1)
    t, q, s = random_trs_arrays(rng, n)
    s = s ** (1 / 500)
    s[::50, 0] *= -1.0  # the level-by-level paths
    f, q = _file(parents, t * 1e-3, q, s)
    worlds = predict.engine_worlds(f)
    assert all(np.isfinite(w).all() for w in worlds.values())


def _rotated_child():
    """A parent scaled (2, 1, 1), its child turned 45 degrees about Z, one unit along X."""
    c = np.cos(np.pi / 8)
    t = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    q = np.array([[1.0, 0.0, 0.0, 0.0], [c, 0.0, 0.0, np.sin(np.pi / 8)]])
    s = np.array([[2.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    return np.array([-1, 0]), t, q, s


def test_textbook_rotated_child_under_a_squashed_parent():
    parents, t, q, s = _rotated_child()
    f, _ = _file(parents, t, q, s)
    world = core.Hierarchy(parents).world_matrices(f.local.to_matrix())  # what Blender shows
    worlds = predict.engine_worlds(f)
    # glTF composes matrices: exact, shear and all.
    np.testing.assert_allclose(worlds[paths.MATRIX], world, atol=1e-15)
    # Ogre and Interchange: the parent's (2, 1, 1) along the child's own axes, at (2, 0, 0).
    expected = np.eye(4)
    expected[:3, :3] = core.quat_to_matrix(q[1]) * (2.0, 1.0, 1.0)
    expected[:3, 3] = (2.0, 0.0, 0.0)
    for path in (paths.ACCUMULATED, paths.UNREAL_INTERCHANGE):
        np.testing.assert_allclose(worlds[path][1], expected, atol=1e-12)
    # The classic importer: the sheared global's columns (sqrt(2), 1/sqrt(2), 0) and
    # (-sqrt(2), 1/sqrt(2), 0) keep their lengths sqrt(2.5); the trace method reads the
    # rotation from the normalised columns.
    g = world[1]
    t_ue, q_ue, s_ue = ue.from_matrix(g[None])
    np.testing.assert_allclose(s_ue[0], [np.sqrt(2.5), np.sqrt(2.5), 1.0], atol=1e-12)
    np.testing.assert_allclose(worlds[paths.UNREAL_FBX][1][:3, 3], (2.0, 0.0, 0.0), atol=1e-12)
    # The normalised columns (2, 1)/sqrt(5) and (-2, 1)/sqrt(5): trace 3/sqrt(5) + 1 > 0,
    # w = sqrt(trace + 1) / 2, z = (m10 - m01) / (4 w) = (1/sqrt(5) + 2/sqrt(5)) / (4 w).
    tr = 3.0 / np.sqrt(5.0) + 1.0
    w = 0.5 * np.sqrt(tr + 1.0)
    z = (3.0 / np.sqrt(5.0)) / (4.0 * w)
    np.testing.assert_allclose(q_ue[0], np.array([w, 0.0, 0.0, z]) / np.hypot(w, z), atol=1e-12)


def test_the_classic_importer_drops_only_the_world_shear(rng):
    """Positive scales: each world is its file global as an FTransform, whatever the chain."""
    for _ in range(5):
        n = 25
        parents = random_forest(rng, n)
        t, q, s = random_trs_arrays(rng, n)
        f, _ = _file(parents, t, q, s)
        g = predict.file_matrices(f)
        np.testing.assert_allclose(
            predict.engine_worlds(f)[paths.UNREAL_FBX], ue.to_matrix(*ue.from_matrix(g)), atol=1e-12
        )


def test_engine_names_map_to_paths():
    assert paths.paths_of(["unity", "gltf"]) == (paths.MATRIX,)
    assert paths.paths_of(["ogre", "unreal"]) == (paths.UNREAL_FBX, paths.ACCUMULATED)
    assert paths.paths_of([]) == paths.PATHS
    with pytest.raises(ValueError, match="unknown engine 'cryengine'"):
        paths.paths_of(["cryengine"])
