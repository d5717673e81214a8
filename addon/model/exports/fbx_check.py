"""An FBX file read back as an engine reads it, with ufbx (an independent FBX reader,
the ``ufbx`` package; optional: without it the check says it did not run).

ufbx converts the file to Blender's conventions on load (right-handed, Z up, metres:
``target_axes``, ``target_unit_meters``), so each node's evaluated ``node_to_world`` at a
time compares directly with Blender's world matrix: objects by name, bones (FBX limb
nodes; Blender's exporter keeps their Y axis along the bone by default) by name under
their armature.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import NamedTuple

import numpy as np

from ..errors import GltfError
from ..nodes import node_label


class FbxError(NamedTuple):
    relative: float  #: largest entry difference over max(1, largest entry of Blender's worlds)
    absolute: float
    per_node: dict  #: label -> largest entry difference over the frames
    checked: int


_READER = r"""
import json, os, sys
import numpy as np
import ufbx

# ufbx 0.0.5's bindings free a wrapper's data with the wrapper: every object is kept
# bound to a name while its fields are read, and the process ends without collecting.
path, times_json, out = sys.argv[1:4]
times = json.loads(times_json)
scene = ufbx.load_file(path, target_axes=ufbx.axes_right_handed_z_up, target_unit_meters=1.0)
nodes = scene.nodes
held = [nodes[k] for k in range(len(nodes))]
keep = [k for k, node in enumerate(held) if not node.is_root]
names = [str(held[k].name) for k in keep]
worlds = np.empty((len(times), len(keep), 4, 4))
stacks = scene.anim_stacks
stack = stacks[0] if len(stacks) else None
anim = stack.anim if stack is not None else None
states = []
for t, time in enumerate(times):
    state = ufbx.evaluate_scene(scene, anim, float(time)) if anim is not None else scene
    states.append(state)
    state_nodes = state.nodes
    state_held = [state_nodes[k] for k in range(len(state_nodes))]
    states.append((state_nodes, state_held))
    for j, k in enumerate(keep):
        node = state_held[k]
        m = node.node_to_world
        worlds[t, j] = np.eye(4)
        worlds[t, j, :3, :4] = np.array([[c.x, c.y, c.z] for c in m], dtype=np.float64).T
np.savez(out, worlds=worlds, names=np.array(names, dtype=object))
sys.stdout.flush()
os._exit(0)
"""


def fbx_worlds(path: str, times) -> tuple[list[str], np.ndarray] | None:
    """``(names, worlds (T, nodes, 4, 4))`` of every non-root node of the FBX file at
    ``times`` seconds, read by ufbx; None when ufbx is not installed.

    ufbx runs in a separate Python process: its bindings crash in a process that also
    holds Blender (Blender links its own ufbx), and when their objects are freed in
    some orders; the result is taken from the file it saves before exiting."""
    if importlib.util.find_spec("ufbx") is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "worlds.npz")
        times_json = json.dumps([float(t) for t in times])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the same packages
        python = sys.executable
        if os.path.basename(python).lower().startswith("blender"):  # not a Python interpreter
            python = shutil.which("python3") or python
        run = subprocess.run(
            [python, "-c", _READER, path, times_json, out], capture_output=True, text=True, timeout=600, env=env
        )
        if not os.path.exists(out):
            raise GltfError(f"ufbx could not read {path!r}: {run.stderr.strip().splitlines()[-1:] or run.returncode}")
        data = np.load(out, allow_pickle=True)
        return [str(n) for n in data["names"]], np.array(data["worlds"])


def fbx_error(path: str, keys, world: np.ndarray, times, skip=frozenset()) -> FbxError | None:
    """The file's nodes at ``times (T,)`` seconds against Blender's ``world (T, N, 4,
    4)``; None without ufbx. Scene nodes in ``skip`` and nodes the file lacks are left out."""
    read = fbx_worlds(path, times)
    if read is None:
        return None
    names, got = read
    index = {n: k for k, n in enumerate(names)}
    per_node, worst = {}, 0.0
    checked = [i for i, (obj, bone) in enumerate(keys) if i not in skip and (bone or obj) in index]
    for i in checked:
        obj, bone = keys[i]
        diff = float(np.abs(got[:, index[bone or obj]] - world[:, i]).max())
        per_node[node_label(obj, bone)] = diff
        worst = max(worst, diff)
    scale = max(1.0, float(np.abs(world[:, checked]).max())) if checked else 1.0
    return FbxError(worst / scale, worst, per_node, len(checked))
