"""Hierarchy.tile: frames as copies of one forest, folded in one pass."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_forest, random_trs_arrays
from hierarchy_inspector import core


@pytest.mark.parametrize("shuffle", [False, True])
def test_tiled_forest_folds_every_copy_like_the_forest_alone(rng, shuffle):
    n, copies = 40, 5
    h = core.Hierarchy(random_forest(rng, n, shuffle=shuffle))
    tiled = h.tile(copies)
    assert len(tiled) == n * copies and tiled.max_depth == h.max_depth
    trs = core.TRS(*random_trs_arrays(rng, n * copies))
    world = tiled.world_matrices(trs.to_matrix()).reshape(copies, n, 4, 4)
    acc = tiled.accumulate(trs)
    for k in range(copies):
        part = core.TRS(*(a.reshape(copies, n, -1)[k] for a in (trs.translation, trs.rotation, trs.scale)))
        np.testing.assert_allclose(world[k], h.world_matrices(part.to_matrix()), atol=1e-12)
        np.testing.assert_allclose(acc.translation.reshape(copies, n, 3)[k], h.accumulate(part).translation, atol=1e-12)
    # The tiled parents are a valid forest on their own (the same as validating it).
    np.testing.assert_array_equal(core.Hierarchy(tiled.parents).depth, tiled.depth)


def test_tile_of_zero_copies_is_empty_and_negative_is_refused(rng):
    h = core.Hierarchy(random_forest(rng, 6))
    assert len(h.tile(0)) == 0
    with pytest.raises(core.InputError, match="count"):
        h.tile(-1)
