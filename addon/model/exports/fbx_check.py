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
import os
import zipfile
from typing import NamedTuple

import numpy as np

from ..errors import GltfError
from ..nodes import node_label
from .reader_process import ReaderProcess, Spares


class FbxError(NamedTuple):
    relative: float  #: largest entry difference over max(1, largest entry of Blender's worlds)
    absolute: float
    per_node: dict  #: label -> largest entry difference over the frames
    checked: int


_READER = r"""
import itertools, json, os, sys
import numpy as np
import ufbx

# ufbx 0.0.5's bindings free a wrapper's data with the wrapper: every object is kept
# bound to a name while its fields are read, and the process ends without collecting.
request = json.loads(sys.stdin.readline() or "null")  # sent once the file is written
if request is None:
    os._exit(0)
path, times, out, skin = request["path"], request["times"], request["out"], request["skinned"]
skin = None if skin is True else set(skin or ())  # mesh names (None: every skinned mesh)
fork_above = request["fork_above"]
scene = ufbx.load_file(path, target_axes=ufbx.axes_right_handed_z_up, target_unit_meters=request["unit_meters"])
nodes = scene.nodes
held = [nodes[k] for k in range(len(nodes))]
keep = [k for k, node in enumerate(held) if not node.is_root]
names = [str(held[k].name) for k in keep]
kept_at = {held[k].element_id: j for j, k in enumerate(keep)}
parents = [kept_at.get(held[k].parent.element_id, -1) if held[k].parent is not None else -1 for k in keep]
owners = []
for k in keep:  # a bone's armature: its nearest ancestor that is not a bone
    node = held[k]
    owner = ""
    if node.bone is not None:
        up = node.parent
        while up is not None and up.bone is not None:
            up = up.parent
        owner = str(up.name) if up is not None and not up.is_root else ""
    owners.append(owner)
stacks = scene.anim_stacks
stack = stacks[0] if len(stacks) else None
anim = stack.anim if stack is not None else None
alive = [stacks, stack, anim]


def scene_worlds(time):  # ufbx's own evaluation of the whole scene: node_to_world of every node
    state = ufbx.evaluate_scene(scene, anim, float(time)) if anim is not None else scene
    state_nodes = state.nodes
    state_held = [state_nodes[k] for k in range(len(state_nodes))]
    alive.append((state, state_nodes, state_held))
    out = np.zeros((len(held), 4, 4))
    out[:, 3, 3] = 1.0
    columns = np.array([(*m.c0, *m.c1, *m.c2, *m.c3) for m in (n.node_to_world for n in state_held)])  # named tuples
    out[:, :3] = columns.reshape(-1, 4, 3).transpose(0, 2, 1)
    return out


def trs_matrices(trs):  # (..., 10) translation, quaternion (x, y, z, w), scale -> (..., 4, 4)
    t, q, sc = trs[..., :3], trs[..., 3:7], trs[..., 7:]
    x, y, z, w = np.moveaxis(q, -1, 0)
    r = np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
    ], axis=-1).reshape(*q.shape[:-1], 3, 3)
    m = np.zeros((*trs.shape[:-1], 4, 4))
    m[..., :3, :3] = r * sc[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def affine(m):  # a ufbx Matrix (columns c0..c3, named tuples) -> (4, 4)
    out = np.eye(4)
    out[:3] = np.array([m.c0, m.c1, m.c2, m.c3], dtype=np.float64).T
    return out


def transform_values(tr):
    t, r, sc = tr.translation, tr.rotation, tr.scale
    return (t.x, t.y, t.z, r.x, r.y, r.z, r.w, sc.x, sc.y, sc.z)


# Fast path: each node's local transform evaluated by ufbx (only those with a curve that
# changes value at every time), composed parent @ local level by level. It is used only when it matches
# ufbx's own evaluate_scene at the first and the last time; otherwise evaluate_scene
# runs at every time.
full = None
fast = anim is not None and all(n.inherit_mode == ufbx.InheritMode.NORMAL for n in held)
if fast:
    layers = anim.layers
    alive.append(layers)
    animated, changing = set(), set()  # nodes with curves; those whose curves change value
    for layer in (layers[i] for i in range(len(layers))):
        props = layer.anim_props
        alive += [layer, props]
        for prop in (props[i] for i in range(len(props))):
            element, value = prop.element, prop.anim_value
            alive += [prop, element, value]
            animated.add(element.element_id)
            curves = value.curves if value is not None else []
            alive.append(curves)
            for c in range(len(curves)):
                curve = curves[c]
                alive.append(curve)
                if curve is not None and curve.min_value != curve.max_value:
                    changing.add(element.element_id)
    position = {n.element_id: k for k, n in enumerate(held)}
    parent = np.array([position[n.parent.element_id] if n.parent is not None else -1 for n in held])
    depth = np.array([n.node_depth for n in held])
    local = np.empty((len(times), len(held), 10))
    moving = [k for k, n in enumerate(held) if not n.is_root and n.element_id in changing]
    moving_set = set(moving)
    for k, node in enumerate(held):  # still (a curve that keeps one value: evaluated once)
        if not node.is_root and k not in moving_set:
            still = ufbx.evaluate_transform(anim, node, float(times[0])) if node.element_id in animated else None
            local[:, k] = transform_values(still if still is not None else node.local_transform)
    # Transform, Vec3 and Quat are named tuples: every (node, time) flattened to its 10
    # floats (translation, quaternion x y z w, scale) in one pass at C speed.
    evaluate, flat, seconds = ufbx.evaluate_transform, itertools.chain.from_iterable, [float(t) for t in times]

    def evaluated(nodes):  # (len(nodes), T, 10)
        values = flat(flat(flat(evaluate(anim, held[k], t) for t in seconds) for k in nodes))
        return np.fromiter(values, np.float64, len(nodes) * len(seconds) * 10).reshape(len(nodes), len(seconds), 10)

    # At least fork_above node-times on Linux: a forked copy of this process evaluates
    # the second half of the nodes at the same time (the loaded file is shared, not read
    # again) and sends its values through a pipe; if short of all of them, they are
    # evaluated here.
    half = len(moving) // 2 if len(moving) * len(seconds) >= fork_above and sys.platform.startswith("linux") else 0
    pid = -1
    if half:
        try:
            read_end, write_end = os.pipe()
            pid = os.fork()
        except OSError:  # no pipe or no fork: every node evaluated here
            pid = -1
    if pid == 0:
        os.close(read_end)
        try:
            data = memoryview(evaluated(moving[half:]).tobytes())
            while len(data):
                data = data[os.write(write_end, data):]
        finally:
            os._exit(0)
    if pid > 0:
        os.close(write_end)
        size = (len(moving) - half) * len(seconds) * 10 * 8
        local[:, moving[:half]] = evaluated(moving[:half]).swapaxes(0, 1)
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read(size)
        os.waitpid(pid, 0)
        rest = moving[half:]
        if len(data) == size:
            local[:, rest] = np.frombuffer(data, np.float64).reshape(len(rest), len(seconds), 10).swapaxes(0, 1)
        else:
            local[:, rest] = evaluated(rest).swapaxes(0, 1)
    else:
        local[:, moving] = evaluated(moving).swapaxes(0, 1)
    local_m = trs_matrices(local)
    root_world = scene_worlds(times[0])
    full = np.empty((len(times), len(held), 4, 4))
    for d in range(int(depth.max()) + 1):
        level = np.flatnonzero(depth == d)
        top = level[parent[level] < 0]
        full[:, top] = root_world[top]
        below = level[parent[level] >= 0]
        full[:, below] = full[:, parent[below]] @ local_m[:, below]
    for t in {0, len(times) - 1}:
        reference = scene_worlds(times[t]) if t else root_world
        if np.abs(full[t] - reference).max() > 1e-9 * max(1.0, np.abs(reference).max()):
            full = None
            break
if full is None:
    full = np.array([scene_worlds(t) for t in times])
worlds = full[:, keep]
skinned = {}
if skin is None or skin:  # linear blend skinning of each mesh by its clusters: sum w * world(bone) @ geometry_to_bone @ v
    index = {held[k].element_id: j for j, k in enumerate(keep)}
    for k in keep:
        node = held[k]
        mesh = node.mesh
        alive.append(mesh)
        if mesh is None or (skin is not None and str(node.name) not in skin):
            continue
        deformers = mesh.skin_deformers
        alive.append(deformers)
        if not len(deformers):
            continue
        verts = mesh.vertices
        alive.append(verts)
        held_verts = [verts[i] for i in range(len(verts))]
        alive.append(held_verts)
        pos = np.array([(v.x, v.y, v.z, 1.0) for v in held_verts]).reshape(-1, 4)
        deformer = deformers[0]
        clusters = deformer.clusters
        alive += [deformer, clusters]
        ids, ws, bones = [], [], []
        for c in range(len(clusters)):
            cluster = clusters[c]
            cluster_vertices, cluster_weights, g, bone_node = (
                cluster.vertices, cluster.weights, cluster.geometry_to_bone, cluster.bone_node
            )
            alive += [cluster, cluster_vertices, cluster_weights, g, bone_node]
            if not len(cluster_vertices):
                continue
            ids.append(np.fromiter(cluster_vertices, np.int64, len(cluster_vertices)))
            ws.append(np.fromiter(cluster_weights, np.float64, len(cluster_weights)))
            bones.append(worlds[:, index[bone_node.element_id]] @ affine(g))  # (T, 4, 4)
        placed = np.zeros((len(times), len(pos), 3))
        total = np.zeros(len(pos))
        if ids:  # every influence at once, a few frames at a time; summed per vertex in order
            cluster = np.repeat(np.arange(len(ids)), [len(i) for i in ids])
            ids, ws = np.concatenate(ids), np.concatenate(ws)
            order = np.argsort(ids, kind="stable")
            ids, ws, cluster = ids[order], ws[order], cluster[order]
            bones = np.stack(bones, axis=1)[:, :, :3]  # (T, C, 3, 4)
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            step = max(1, 4_000_000 // (12 * len(ids)))
            for t0 in range(0, len(times), step):
                part = np.einsum("teij,ej->tei", bones[t0 : t0 + step, cluster], pos[ids]) * ws[None, :, None]
                placed[t0 : t0 + step, ids[starts]] = np.add.reduceat(part, starts, axis=1)
            total[ids[starts]] = np.add.reduceat(ws, starts)
        placed /= np.where(total > 0, total, 1.0)[None, :, None]
        # vertices no cluster weighs follow the mesh's node, as ufbx's own skinning and
        # Blender's armature modifier place them
        alone = np.flatnonzero(total <= 0)
        if len(alone):
            g = node.geometry_to_node
            alive.append(g)
            own = worlds[:, index[node.element_id]] @ affine(g)
            placed[:, alone] = np.einsum("tij,vj->tvi", own[:, :3], pos[alone])
        skinned[str(node.name)] = placed
try:  # whole or not at all (a full temporary folder left a cut zip the caller could not read)
    with open(out + ".part", "wb") as f:
        np.savez(f, worlds=worlds, names=np.array(names, dtype=object), owners=np.array(owners, dtype=object),
                 parents=np.array(parents, dtype=np.int64), skin_names=np.array(list(skinned), dtype=object),
                 **{f"skin{j}": v for j, v in enumerate(skinned.values())})
    os.replace(out + ".part", out)
except OSError as exc:
    sys.stderr.write(f"cannot save its result in {os.path.dirname(out)!r} ($TMPDIR): {exc.strerror}\n")
    sys.stderr.flush()
    os._exit(2)
sys.stdout.flush()
os._exit(0)
"""


#: From how many animated node-times (nodes x times) the reader evaluates them in two
#: processes on Linux (a fork after the file is loaded, about 3 ms): a Rigify rig's 1,008
#: nodes x 60 frames took 0.17 s in one, 0.09 s in two; 301 objects x 60, the whole
#: read 0.19 s in one, 0.15 s in two.
FORK_ABOVE = 10000


class FbxRead(NamedTuple):
    """An FBX file's non-root nodes as ufbx evaluates them."""

    names: list  #: node names
    owners: list  #: for bones, their armature's node name; '' for other nodes
    worlds: np.ndarray  #: (T, nodes, 4, 4) node_to_world at the asked times (Blender's axes, metres)
    skinned: dict  #: mesh name -> (T, V, 3) vertices skinned by the file's clusters (when asked)
    parents: np.ndarray | None = None  #: (nodes,) each node's parent column, -1 under the file's root

    def index(self) -> dict:
        """``(armature or '', name) -> node column``: bones under their armature, others
        by name; a key several nodes of the file share is left out (which one stands for
        the scene's node cannot be told: :meth:`shared`)."""
        out: dict = {}
        for k, key in enumerate(zip(self.owners, self.names, strict=True)):
            out[key] = -1 if key in out else k
        return {key: k for key, k in out.items() if k >= 0}

    def shared(self) -> set:
        """The keys of :meth:`index` that several nodes of the file share."""
        seen: set = set()
        twice: set = set()
        for key in zip(self.owners, self.names, strict=True):
            (twice if key in seen else seen).add(key)
        return twice


class UfbxReader(ReaderProcess):
    """ufbx in its own Python process, started at once so that its start-up (Python,
    numpy, ufbx) overlaps the caller's work; :meth:`request` sends it a file to read,
    :meth:`result` waits for the answer (the caller can go on working, e.g. undoing its
    edits, in between); :meth:`close` ends it unused.

    ufbx runs in its own process: its bindings crash in a process that also holds
    Blender (Blender links its own ufbx), and when their objects are freed in some
    orders; the result is taken from the file it saves before exiting."""

    def __init__(self):
        super().__init__("ufbx", ["-c", _READER])

    def request(self, path: str, times, skinned=False, fork_above: int | None = None, unit_meters: float = 1.0) -> None:
        """Read ``path`` at ``times (T,)`` seconds; ``skinned``: also place the vertices
        of every skinned mesh (True) or of the meshes named (an iterable of node names)
        with the file's clusters; ``fork_above``: from how many animated node-times two
        processes evaluate them (Linux; default :data:`FORK_ABOVE`); ``unit_meters``: the
        metres one unit of the result stands for (ufbx converts the file's units to it:
        Blender's exporter writes ``scale_length`` metres per scene unit, see
        :func:`fbx_unit_meters`)."""
        message = {
            "path": path,
            "times": [float(t) for t in times],
            "out": self._out,
            "skinned": True if skinned is True else sorted(skinned or ()),
            "fork_above": FORK_ABOVE if fork_above is None else int(fork_above),
            "unit_meters": float(unit_meters),
        }
        self._send(path, message)

    def result(self) -> FbxRead:
        try:
            stderr = self._finish(timeout=600)
            if not os.path.exists(self._out):
                last = (stderr.strip().splitlines() or [f"exit code {self._proc.returncode}"])[-1]
                if last.startswith("cannot save its result"):  # the file was read: say where it failed
                    raise GltfError(f"the FBX read-back (ufbx, its own process) {last}")
                raise GltfError(f"ufbx could not read {self._path!r}: {last}")
            try:
                data = np.load(self._out, allow_pickle=True)
            except (OSError, ValueError, zipfile.BadZipFile) as exc:
                raise GltfError(f"the read-back of {self._path!r} is damaged ({exc})") from None
            skinned = {str(n): np.array(data[f"skin{j}"]) for j, n in enumerate(data["skin_names"])}
            return FbxRead(
                [str(n) for n in data["names"]],
                [str(n) for n in data["owners"]],
                np.array(data["worlds"]),
                skinned,
                np.array(data["parents"]),
            )
        finally:
            self._folder.cleanup()


def ufbx_available() -> bool:
    """Whether this Python can import ufbx (checked without importing it)."""
    return importlib.util.find_spec("ufbx") is not None


_SPARES = Spares(UfbxReader, ufbx_available)  #: a reader started after an export, for the next one


def start_reader() -> UfbxReader | None:
    """A :class:`UfbxReader` starting up (the one :func:`prepare_next` left waiting,
    if it is still there); None when ufbx is not installed."""
    return _SPARES.take() if ufbx_available() else None


def prepare_next() -> None:
    """Start a reader for the next export now, so that its start-up is not part of that
    export (a Blender session exporting again); it ends by itself with this process."""
    _SPARES.prepare()


def read_fbx(
    path: str, times, skinned=False, fork_above: int | None = None, unit_meters: float = 1.0
) -> FbxRead | None:
    """The FBX file's nodes at ``times`` seconds as ufbx evaluates them (a
    :class:`UfbxReader`, waited for; the arguments as :meth:`UfbxReader.request`);
    None when ufbx is not installed."""
    if not ufbx_available():
        return None
    reader = UfbxReader()
    try:
        reader.request(path, times, skinned, fork_above, unit_meters)
        return reader.result()
    finally:
        reader.close()


def fbx_worlds(path: str, times) -> tuple[list[str], np.ndarray] | None:
    """``(names, worlds (T, nodes, 4, 4))`` of every non-root node of the FBX file at
    ``times`` seconds, read by ufbx; None when ufbx is not installed."""
    read = read_fbx(path, times)
    return None if read is None else (read.names, read.worlds)


def compare(read: FbxRead, keys, world: np.ndarray, skip=frozenset(), turns: dict | None = None) -> FbxError:
    """The file's nodes as read against Blender's ``world (T, N, 4, 4)`` at the same
    times: objects by name, bones by name under their armature. Scene nodes in ``skip``
    and nodes the file lacks are left out. ``turns``: scene node index -> the constant
    rotation ``(3, 3)`` Blender's exporter puts after that node's own (cameras:
    :data:`.euler_pole.CAMERA_TURN`, lights: :data:`.euler_pole.LIGHT_TURN`; their
    children are written without it), so the file's node is ``world @ turn`` there.
    A non-finite difference (NaN, infinity) stays non-finite in every field."""
    index = read.index()
    column = {i: index.get((obj, bone) if bone else ("", obj)) for i, (obj, bone) in enumerate(keys) if i not in skip}
    checked = np.array([i for i, k in column.items() if k is not None], dtype=np.int64)
    if not len(checked):
        return FbxError(0.0, 0.0, {}, 0)
    cols = np.array([column[int(i)] for i in checked], dtype=np.int64)
    expected = np.array(world[:, checked], dtype=np.float64)
    if turns:
        turn = np.broadcast_to(np.eye(3), (len(checked), 3, 3)).copy()
        for m, i in enumerate(checked.tolist()):
            if i in turns:
                turn[m] = turns[i]
        expected[..., :3] = np.einsum("tmij,mjk->tmik", expected[..., :3], turn)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, reported as such
        diff = np.abs(read.worlds[:, cols] - expected).max(axis=(-2, -1))  # (T, M)
    diff = np.where(np.isnan(diff).any(axis=0), np.nan, diff.max(axis=0))  # (M,): NaN wins over numbers
    per_node = {node_label(*keys[int(i)]): float(d) for i, d in zip(checked, diff, strict=True)}
    worst = float(np.nan if np.isnan(diff).any() else diff.max())
    scale = float(np.abs(expected).max())
    relative = worst / max(1.0, scale) if np.isfinite(scale) else np.nan
    return FbxError(relative, worst, per_node, len(checked))


def fbx_unit_meters(scale_length: float, unit_system: str, apply_unit_scale: bool, global_scale: float) -> float:
    """Metres per scene unit in a file Blender's FBX exporter wrote: the scene's
    ``unit_settings.scale_length`` (unless its unit system is 'NONE' or the exporter's
    Apply Unit is off) times the exporter's Scale, for every Apply Scalings choice (they
    move the factor between the nodes and the file's UnitScaleFactor, never change it)."""
    unit = scale_length if apply_unit_scale and unit_system != "NONE" else 1.0
    return float(unit * global_scale)


def fbx_error(path: str, keys, world: np.ndarray, times, skip=frozenset()) -> FbxError | None:
    """The file's nodes at ``times (T,)`` seconds against Blender's ``world (T, N, 4,
    4)`` (:func:`compare`); None without ufbx."""
    read = read_fbx(path, times)
    return None if read is None else compare(read, keys, world, skip)
