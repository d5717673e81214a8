"""Per-animation correction of a glTF file, Blender-free: two animations, each played
alone, a sheared child, and worlds built here from explicit local matrices."""

from __future__ import annotations

import numpy as np
from hierarchy_inspector.addon.model.exports.gltf_animation import animated_nodes, append_accessor
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf
from hierarchy_inspector.addon.model.exports.gltf_takes import Take, add_take_helpers, take_errors, worst

KEYS = [("Parent", ""), ("Child", "")]


def _rz(angle: float) -> np.ndarray:
    m = np.eye(4)
    c, s = np.cos(angle), np.sin(angle)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def _scale(x: float, y: float, z: float) -> np.ndarray:
    return np.diag([x, y, z, 1.0])


SHEAR = np.array([[1.0, 0.4, 0.0, 0.5], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def _child_local(angle: float) -> np.ndarray:
    return _rz(angle) @ SHEAR  # a sheared local matrix: no single TRS holds it


def _file(static_parent: np.ndarray, static_child: np.ndarray, times_a, times_b) -> Gltf:
    """'Parent' > 'Child' with the exporter's one-TRS approximations: animation 'A'
    turns the child (rotation channel), 'B' scales the parent (scale channel)."""
    doc = {
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "Parent", "children": [1], "scale": np.diag(static_parent)[:3].tolist()},
            {"name": "Child", "translation": static_child[:3, 3].tolist()},
        ],
        "animations": [{"name": "A", "channels": [], "samplers": []}, {"name": "B", "channels": [], "samplers": []}],
    }
    gltf = Gltf(doc, None, True)
    for a, (times, node, path, values) in enumerate(
        (
            (times_a, 1, "rotation", [[0.0, 0.0, np.sin(t), np.cos(t)] for t in times_a]),  # x, y, z, w: about Z by 2t
            (times_b, 0, "scale", [[1.0 + t, 1.0, 0.5] for t in times_b]),
        )
    ):
        anim = doc["animations"][a]
        t_acc = append_accessor(gltf, np.asarray(times)[:, None], with_bounds=True)
        v_acc = append_accessor(gltf, np.asarray(values))
        anim["samplers"].append({"input": t_acc, "output": v_acc, "interpolation": "LINEAR"})
        anim["channels"].append({"sampler": 0, "target": {"node": node, "path": path}})
    return gltf


def _setup():
    static_parent = _scale(1.0, 1.0, 0.5)
    static_child = _child_local(0.0)
    times_a = np.linspace(0.0, 1.0, 7)
    times_b = np.linspace(0.0, 0.5, 4)
    gltf = _file(static_parent, static_child, times_a, times_b)
    static = np.stack([static_parent, static_parent @ static_child])
    # 'A' alone: the parent held, the child turning (2t about Z) with its shear.
    world_a = np.stack([np.stack([static_parent, static_parent @ _child_local(2 * t)]) for t in times_a])
    # 'B' alone: the parent scaling, the child held (its local matrix is its own).
    world_b = np.stack([np.stack([_scale(1 + t, 1, 0.5), _scale(1 + t, 1, 0.5) @ static_child]) for t in times_b])
    takes = [
        Take(0, "A", times_a, world_a, frozenset({"Child"})),
        Take(1, "B", times_b, world_b, frozenset({"Parent"})),
    ]
    return gltf, static, takes


def test_each_animation_is_exact_alone_with_one_shared_helper():
    gltf, static, takes = _setup()
    before = take_errors(gltf, KEYS, takes, np.eye(4))
    assert before["A"].relative > 1e-2 and before["B"].relative > 1e-2  # the exporter's file drops the shear
    labels = add_take_helpers(gltf, KEYS, static, takes, np.eye(4))
    assert labels == ["Child"] and len(gltf.nodes) == 3 and gltf.nodes[2]["name"] == "Child (shear helper)"
    errors = take_errors(gltf, KEYS, takes, np.eye(4))
    assert errors["A"].relative < 1e-6 and errors["B"].relative < 1e-6  # float32 keys
    assert worst({"A": errors["A"], "B": before["B"]}) is before["B"]  # over 1e-2 against under 1e-6
    assert worst({"A": before["A"], "B": errors["B"]}) is before["A"]
    # 'A' animates the helper and the child; 'B' leaves both on their static split.
    assert animated_nodes(gltf, 0) == {1, 2} and animated_nodes(gltf, 1) == {0}
    static_world = gltf.world_matrices()
    assert np.abs(static_world[1] - static[1]).max() < 1e-6


def test_held_nodes_are_left_out_of_a_takes_check():
    gltf, static, takes = _setup()
    add_take_helpers(gltf, KEYS, static, takes, np.eye(4))
    wrong = takes[1]._replace(world=takes[1].world.copy())
    wrong.world[:, 1] += 1.0  # Blender's child elsewhere: the check sees it ...
    assert take_errors(gltf, KEYS, [wrong], np.eye(4))["B"].relative > 0.1
    held = wrong._replace(held=frozenset({1}))  # ... unless the take does not compare it
    assert take_errors(gltf, KEYS, [held], np.eye(4))["B"].relative < 1e-6
