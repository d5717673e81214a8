"""What the panel, the overlay, the scan and the reports show, computed from arrays.

No bpy here: the scene layer turns Blender data into :class:`~.nodes.Nodes`, this module
runs the core analysis on them, and :mod:`.explain` says in an artist's words why a node
is off. Which nodes count as flagged is decided here, by one :class:`~.thresholds.Thresholds`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from ... import core
from .engines.files import ExportedFile, plain_file
from .engines.paths import ACCUMULATED, MATRIX, PATHS, UNREAL_FBX, UNREAL_INTERCHANGE
from .engines.predict import engine_worlds
from .errors import SceneDataError
from .nodes import Nodes, node_label
from .thresholds import DEFAULT, LOCAL_NOISE_FACTOR, LOCAL_SHEAR_FLOOR_DEG, Thresholds

_EPS32 = float(np.finfo(np.float32).eps)


def worst_first(corner: np.ndarray, shear: np.ndarray, indices=None) -> np.ndarray:
    """``indices`` (default: all) ordered as an artist would look at them: largest
    corner distance first, then largest shear, then reading order."""
    idx = np.arange(len(corner)) if indices is None else np.asarray(indices, dtype=np.int64)
    return idx[np.lexsort((idx, -np.asarray(shear)[idx], -np.asarray(corner)[idx]))]


@dataclass
class Inspection:
    """The analysis of :class:`Nodes`; arrays have N on the first axis."""

    nodes: Nodes
    hierarchy: core.Hierarchy
    local_matrices: np.ndarray  #: (N, 4, 4) ``inverse(parent world) @ world``
    analysis: core.Analysis
    world: core.Decomposition  #: Blender's world matrices decomposed
    singular_parent: np.ndarray  #: (N,) bool, parent world not invertible
    thresholds: Thresholds = DEFAULT
    #: Results derived from the whole inspection by the modules above it (explanations,
    #: advice), kept so that asking per node costs nothing after the first time.
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    # Derived per-node arrays: computed once (``explain`` and the report read them per node).

    @cached_property
    def local_shear_deg(self) -> np.ndarray:
        """Shear angles ``(N, 3)`` of the local matrices (what an exporter drops)."""
        return self.analysis.local.shear_deg

    @cached_property
    def shear_max(self) -> np.ndarray:
        """Largest |shear angle| of Blender's world matrix, degrees ``(N,)``."""
        return np.abs(self.analysis.shear_deg).max(axis=-1) if len(self.nodes) else np.zeros(0)

    @cached_property
    def local_shear_max(self) -> np.ndarray:
        """Largest |shear angle| of the local matrix (what an exporter drops) ``(N,)``."""
        return np.abs(self.local_shear_deg).max(axis=-1) if len(self.nodes) else np.zeros(0)

    @cached_property
    def local_shear_noise_deg(self) -> np.ndarray:
        """Float32 noise of the local shear ``(N,)``, degrees: Blender's matrices are
        float32, and inverting the parent's world amplifies their round-off by its
        condition number (a parent scaled (50, 0.02, 1) makes a clean child look
        sheared by a few thousandths of a degree)."""
        n = len(self.nodes)
        noise = np.zeros(n)
        has = self.nodes.parents >= 0
        if has.any():
            sv = np.linalg.svd(self.nodes.world[self.nodes.parents[has], :3, :3], compute_uv=False)
            cond = sv[:, 0] / np.maximum(sv[:, 2], 1e-300)
            noise[has] = np.degrees(LOCAL_NOISE_FACTOR * _EPS32 * np.minimum(cond, 1e12))
        return noise

    @cached_property
    def local_shear_real(self) -> np.ndarray:
        """Local shear that is really there (above the floor and the float32 noise) ``(N,)``."""
        return self.local_shear_max > np.maximum(LOCAL_SHEAR_FLOOR_DEG, self.local_shear_noise_deg)

    @cached_property
    def lossy_local(self) -> np.ndarray:
        """``(N,)`` bool: the local matrix holds shear over the threshold that exporters
        drop. The nodes that get helpers (objects) or helper joints (bones)."""
        return self.local_shear_real & (self.local_shear_max > self.thresholds.shear_deg)

    @cached_property
    def worst_shear(self) -> np.ndarray:
        """``(N,)`` degrees: the node's world shear, or the local shear an exporter would
        drop where that is lossy (real and over the threshold, :attr:`lossy_local`),
        whichever is larger. The one measure of a file's worst shear: the report's summary
        and ``--fail-on-shear``, the audit's records and its gate."""
        return np.maximum(self.shear_max, np.where(self.lossy_local, self.local_shear_max, 0.0))

    @cached_property
    def plain_file(self) -> ExportedFile:
        """What Blender's plain glTF or FBX export writes: one node per node, each local
        matrix as ``Matrix.decompose()`` gives it (the analysis' local TRS)."""
        return plain_file(self.nodes.parents, core.TRS.from_decomposition(self.analysis.local))

    @cached_property
    def engine_worlds(self) -> dict[str, np.ndarray]:
        """Per engine path, the world matrices ``(N, 4, 4)`` that engine shows when it
        reads Blender's plain export."""
        a = self.analysis
        out = {MATRIX: a.world_matrix_model, ACCUMULATED: a.accumulated_matrix}
        out.update(engine_worlds(self.plain_file, (UNREAL_FBX, UNREAL_INTERCHANGE), globals_=a.world_matrix_model))
        return {p: out[p] for p in PATHS}

    @cached_property
    def deviations(self) -> dict[str, core.Deviation]:
        """Per engine path (:data:`.engines.paths.PATHS`), how far that engine puts each
        node when it reads Blender's plain export: origin distance, axes' turn and the
        largest box-corner distance ``(N,)`` each (scene units, degrees)."""
        a, nodes = self.analysis, self.nodes
        out = {MATRIX: a.matrix_model_deviation, ACCUMULATED: a.accumulated_deviation}
        for path in (UNREAL_FBX, UNREAL_INTERCHANGE):
            out[path] = core.deviation(nodes.world, self.engine_worlds[path], nodes.box_min, nodes.box_max)
        return {p: out[p] for p in PATHS}

    def worst_path(self) -> list[str]:
        """Per node, the engine path that counts and puts it furthest off."""
        paths = self.thresholds.engines
        if not len(self.nodes):
            return []
        pick = np.argmax([self.corner(p) for p in paths], axis=0)
        return [paths[k] for k in pick.tolist()]

    def corner(self, path: str) -> np.ndarray:
        """``(N,)`` largest corner distance of one engine path from Blender."""
        return self.deviations[path].max_corner

    @cached_property
    def worst_corner(self) -> np.ndarray:
        """Largest corner distance of the engine paths that count (``thresholds.engines``) ``(N,)``."""
        return self.worst_corner_of(self.thresholds.engines)

    def worst_corner_of(self, paths) -> np.ndarray:
        """Largest corner distance of ``paths`` ``(N,)``."""
        if not len(self.nodes):
            return np.zeros(0)
        return np.max([self.corner(p) for p in paths], axis=0)

    @cached_property
    def sheared(self) -> np.ndarray:
        """``(N,)`` bool: Blender's world matrix is sheared over the threshold (the
        nodes the bake fix changes)."""
        return self.shear_max > self.thresholds.shear_deg

    @cached_property
    def flagged(self) -> np.ndarray:
        """Nodes an artist should look at: sheared, a lossy local (when glTF / Unity
        counts), or an engine path that counts puts it off."""
        return self.flagged_for(self.thresholds.engines)

    def flagged_for(self, paths) -> np.ndarray:
        """``(N,)`` bool: :attr:`flagged` as if only ``paths`` counted."""
        lossy = self.lossy_local if MATRIX in paths else np.zeros(len(self.nodes), dtype=bool)
        return self.sheared | lossy | (self.worst_corner_of(paths) > self.thresholds.corner)

    def flagged_by_engine(self) -> dict[str, int]:
        """Per engine path, how many nodes are flagged when only it counts."""
        return {p: int(self.flagged_for((p,)).sum()) for p in PATHS}

    def worst_first(self, indices=None) -> np.ndarray:
        """``indices`` (default: the flagged nodes), largest corner distance first."""
        if indices is None:
            indices = np.flatnonzero(self.flagged)
        return worst_first(self.worst_corner, self.shear_max, indices)

    def root_first(self) -> np.ndarray:
        """Every node index by depth (roots first), ties in reading order."""
        return np.argsort(self.hierarchy.depth, kind="stable")

    def subtree(self, top: int) -> list[int]:
        """``top``'s chain from its root, and every node below ``top``, root first."""
        keep = set(self.nodes.chain(top))
        below = {top}
        for i in self.root_first():
            if int(self.nodes.parents[i]) in below:
                below.add(int(i))
        return [int(i) for i in self.root_first() if int(i) in keep | below]

    def summary(self) -> dict:
        n = len(self.nodes)
        return {
            "nodes": n,
            "sheared": int(self.sheared.sum()),
            "flagged": int(self.flagged.sum()),
            "max_shear_deg": float(self.shear_max.max()) if n else 0.0,
            "max_deviation": float(self.worst_corner.max()) if n else 0.0,
        }


def local_matrices(nodes: Nodes) -> tuple[np.ndarray, np.ndarray]:
    """``inverse(parent world) @ world`` per node ``(N, 4, 4)``, and which parents are
    singular ``(N,)`` bool.

    A parent with zero scale has no inverse: its children get the pseudo-inverse (the
    best local an exporter could write) and are marked.
    """
    return local_matrices_of(nodes.world, nodes.parents)


def local_matrices_of(world: np.ndarray, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`local_matrices` of world matrices ``(M, 4, 4)`` and parent indices ``(M,)``
    (any forest, e.g. a tiled one with frames as copies). Below a singular parent the
    local is the least-squares one (:func:`core.affine_pseudo_inverse`: affine, bottom
    row exactly (0, 0, 0, 1)) and ``singular`` is True."""
    local = world.copy()
    has_parent = parents >= 0
    singular = np.zeros(len(parents), dtype=bool)
    if has_parent.any():
        inv, bad = core.affine_pseudo_inverse(world[parents[has_parent]])
        local[has_parent] = inv @ world[has_parent]
        local[has_parent, 3] = (0.0, 0.0, 0.0, 1.0)
        singular[np.flatnonzero(has_parent)[bad]] = True
    return local, singular


def non_finite(nodes: Nodes) -> np.ndarray:
    """``(N,)`` bool: nodes whose world matrix or box holds NaN or infinity, and every
    node below one (their local transforms are undefined too)."""
    bad = ~np.isfinite(nodes.world).all(axis=(1, 2))
    bad |= ~(np.isfinite(nodes.box_min).all(axis=1) & np.isfinite(nodes.box_max).all(axis=1))
    if not bad.any():
        return bad
    for i in np.argsort(core.Hierarchy(nodes.parents).depth, kind="stable"):  # parents before children
        p = nodes.parents[i]
        if p >= 0 and bad[p]:
            bad[i] = True
    return bad


def non_finite_messages(nodes: Nodes, bad: np.ndarray) -> list[str]:
    """One message per node where the bad values start (its parent is fine): what and
    why, e.g. ``object 'Cube': location holds NaN or infinity (and 3 nodes below it)``."""
    out = []
    for i in np.flatnonzero(bad):
        p = int(nodes.parents[i])
        if p >= 0 and bad[p]:
            continue
        below = int(sum(1 for k in np.flatnonzero(bad) if k != i and i in nodes.chain(int(k))))
        why = nodes.problems.get(int(i)) or (
            "its world matrix holds NaN or infinity although its own values are finite "
            "(a scale too large for Blender's float32 matrices, a constraint or a driver)"
        )
        more = f" (and {below} node{'s' if below != 1 else ''} below it)" if below else ""
        out.append(f"{nodes.kind(int(i))} '{nodes.label(int(i))}': {why}{more}")
    return out


def check_finite(nodes: Nodes) -> None:
    """:class:`SceneDataError` naming the node, and the property, where a world matrix
    or box holds NaN or infinity (the core would only name an index)."""
    bad = non_finite(nodes)
    if bad.any():
        messages = non_finite_messages(nodes, bad)
        more = f"; {len(messages) - 1} more like it" if len(messages) > 1 else ""
        raise SceneDataError(messages[0] + more)


@lru_cache(maxsize=8)
def _hierarchy(keys: tuple[tuple[str, str], ...], parents: bytes) -> core.Hierarchy:
    """The hierarchy of ``parents`` (int64 bytes) named by the nodes' labels, kept for the
    next call with the same nodes (``keys``): the panel inspects the same chain on every
    change, and a hierarchy (immutable: its parents are read-only) plans its folds once."""
    return core.Hierarchy(np.frombuffer(parents, dtype=np.int64), [node_label(*key) for key in keys])


def inspect(nodes: Nodes, thresholds: Thresholds = DEFAULT) -> Inspection:
    """Run the core analysis on ``nodes`` (Blender's world matrices as the reference).

    Raises :class:`SceneDataError` naming the node when a matrix is not finite.
    """
    check_finite(nodes)
    hierarchy = _hierarchy(tuple(map(tuple, nodes.keys)), np.asarray(nodes.parents, dtype=np.int64).tobytes())
    local, singular = local_matrices(nodes)
    analysis = core.analyze(hierarchy, local, nodes.world, nodes.box_min, nodes.box_max)
    return Inspection(
        nodes=nodes,
        hierarchy=hierarchy,
        local_matrices=local,
        analysis=analysis,
        world=analysis.reference,
        singular_parent=singular,
        thresholds=thresholds,
    )


def inspect_valid(nodes: Nodes, thresholds: Thresholds = DEFAULT) -> tuple[Inspection, list[str]]:
    """:func:`inspect` of every node with finite values, and one message per place
    where the rest starts (see :func:`non_finite_messages`): the scan and the panel go on
    showing the scene when one object is bad."""
    bad = non_finite(nodes)
    if not bad.any():
        return inspect(nodes, thresholds), []
    return inspect(nodes.subset(np.flatnonzero(~bad)), thresholds), non_finite_messages(nodes, bad)
