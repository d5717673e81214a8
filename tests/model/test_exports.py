"""What the exports write, Blender-free: accumulated TRS and glTF files read back."""

from __future__ import annotations

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.errors import ExportError, GltfError, InspectorError
from hierarchy_inspector.addon.model.exports.accumulated import (
    accumulated_csv,
    accumulated_document,
    accumulated_locals,
)
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf, node_matrix
from hierarchy_inspector.addon.model.inspection import inspect


def _accumulate_by_hand(parents, local: core.TRS, i: int) -> np.ndarray:
    """The seed's CombineTransforms folded from the root down, one node at a time."""
    chain = [i]
    while parents[chain[-1]] >= 0:
        chain.append(int(parents[chain[-1]]))
    world = None
    for k in reversed(chain):
        node = core.TRS(local.translation[k], local.rotation[k], local.scale[k])
        world = node if world is None else core.accumulate(world, node)
    return world.to_matrix()


def test_accumulated_locals_land_unsheared_nodes_exactly(piston_moved):
    ins = inspect(piston_moved)
    local, residual = accumulated_locals(ins)
    for i in range(3):
        rebuilt = _accumulate_by_hand(piston_moved.parents, local, i)
        assert np.allclose(rebuilt[:3, 3], piston_moved.world[i, :3, 3], atol=1e-9)
    # Only sheared Blender worlds keep a residual.
    assert np.allclose(residual.max_corner[~ins.sheared], 0.0, atol=1e-9)
    assert (residual.max_corner[ins.sheared] > 1e-3).all()


def test_accumulated_document_and_csv(rotated_child):
    doc = accumulated_document(inspect(rotated_child))
    assert [e["name"] for e in doc["nodes"]] == ["Parent", "Child"]
    assert doc["nodes"][1]["parent"] == "Parent"
    assert accumulated_csv(doc).splitlines()[0].startswith("name,kind,armature,parent,tx")


def test_accumulated_refuses_a_zero_scaled_parent_by_name(rotated_child):
    rotated_child.world[0, :3, 1] = 0.0
    with pytest.raises(ExportError, match="'Parent' has zero scale.*'Child'"):
        accumulated_locals(inspect(rotated_child))
    assert issubclass(ExportError, InspectorError)


def test_gltf_helper_split_reads_back_exactly(tmp_path):
    """A sheared local written as two TRS nodes composes back to the same matrix."""
    parent = core.TRS([1, 2, 3], core.axis_angle_to_quat([0, 0, 1], 0.4), [2.0, 1.0, 0.5]).to_matrix()
    sheared = np.linalg.inv(parent) @ core.TRS([0, 1, 0], [1, 0, 0, 0], [1, 1, 1]).to_matrix()
    doc = {
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "P", "matrix": parent.T.reshape(-1).tolist(), "children": [1]}, {"name": "C"}],
    }
    gltf = Gltf(doc, None, is_glb=False)
    outer, inner = core.split_to_trs(sheared)
    gltf.insert_parent(1, outer, inner, "C (shear helper)")
    path = tmp_path / "t.gltf"
    gltf.save(str(path))
    again = Gltf.load(str(path))
    worlds = again.world_matrices()
    c = next(k for k, n in enumerate(again.nodes) if n["name"] == "C")
    assert np.allclose(worlds[c], parent @ sheared, atol=1e-12)
    assert np.allclose(node_matrix(again.nodes[0]), parent)


@pytest.mark.writes_invalid_gltf
def test_gltf_reader_names_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.glb"
    bad.write_bytes(b"glTF\x01\x00\x00\x00\x0c\x00\x00\x00")
    with pytest.raises(GltfError):
        Gltf.load(str(bad))
