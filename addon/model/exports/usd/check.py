"""The exact USD export's usd-core process, and the comparison of what it reads back
with Blender (Blender-free).

:class:`UsdWorker` starts a Python process at once (its start-up, numpy and usd-core's
``pxr``, overlaps the caller's frames read and Blender's export); :meth:`UsdWorker.request`
hands it the written file and Blender's side (an ``.npz``), and it corrects the file in
place and reads it back (:mod:`.stage`). The process imports this package by its
folder under a name of its own (inside Blender the package is
``bl_ext.<repo>.hierarchy_inspector``, which a plain Python cannot import); only the
Blender-free modules load there. usd-core never runs beside Blender: Blender links its
own USD, and bpy from PyPI has no ``pxr``.

The process is the same Python as the caller's (``sys.executable``; inside a Blender
binary, whose ``sys.executable`` is Blender itself, ``python3`` on PATH) with the
caller's ``sys.path``: usd-core comes from the project's environment (pip's
``usd-core``), or from Blender's own ``pxr`` where its build has one.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...errors import ExportError
from ...nodes import node_label
from ..animated_gltf import FrameError
from ..reader_process import ReaderProcess, Spares
from .plan import JOINT_TOLERANCE, OBJECT_TOLERANCE, POINT_TOLERANCE, PointError, matrix_error, point_error

_BOOT = r"""
import importlib, importlib.util, sys
root, name = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(name, root + "/__init__.py", submodule_search_locations=[root])
package = importlib.util.module_from_spec(spec)
sys.modules[name] = package
spec.loader.exec_module(package)
importlib.import_module(name + ".addon.model.exports.usd.stage").serve()
"""

#: The package's folder (the extension root) and the name the process imports it as.
_ROOT = str(Path(__file__).resolve().parents[4])
_NAME = "hierarchy_inspector_usd"
#: Seconds the process may take to correct and read a file.
TIMEOUT = 900


def usd_available() -> bool:
    """Whether this Python can import usd-core's ``pxr`` (checked without importing it)."""
    return importlib.util.find_spec("pxr") is not None


class UsdRead(NamedTuple):
    """A USD file as usd-core composes it at the exported frames."""

    object_names: list  #: Blender object names of the object prims read (skinned prims left out)
    object_world: np.ndarray  #: (T, M, 4, 4)
    joints: dict  #: armature name -> (bone indices (J,), worlds (T, J, 4, 4)), helper joints left out
    skinned: dict  #: mesh object name -> (T, V, 3) skinned points, world
    done: dict  #: what the correction changed: ``matrix_ops`` (object names), ``skeletons`` (per skeleton:
    #: ``armature``, ``helpers`` and ``reparented`` bone names, ``unmatched`` joint paths)


def _save(path: str, arrays: dict) -> str:
    """``np.savez(path, **arrays)``; the OS's reason when it fails ("" when it does
    not). A failed save's zip file complains once more when it is collected: silenced."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    failed = ""
    try:
        np.savez(path, **arrays)
    except OSError as exc:
        failed = exc.strerror or type(exc).__name__
    finally:
        gc.collect()  # the zip file, held by the exception's frames, goes now
        sys.unraisablehook = hook
    return failed


class UsdWorker(ReaderProcess):
    """The usd-core process of one export (see the module docstring)."""

    def __init__(self):
        super().__init__("usd", ["-c", _BOOT, _ROOT, _NAME])
        self._data = os.path.join(self._folder.name, "scene.npz")

    def request(self, path: str, scene: dict, *, fix: bool = True, shear_deg: float = 0.1) -> None:
        """Correct (``fix``) and read back the USD file ``path`` against ``scene``: the
        arrays of :class:`.stage.Scene` (``frames``, ``object_names``,
        ``object_world``, ``skinned``, ``arm_names``, ``bones_<a>``, ``bone_parents_<a>``,
        ``pose_<a>``)."""
        failed = _save(self._data, scene)
        if failed:  # not the output's fault: the temporary folder's
            raise ExportError(
                f"the USD read-back cannot save Blender's side in {self._folder.name!r} ($TMPDIR): {failed}"
            )
        message = {"path": path, "data": self._data, "out": self._out, "fix": bool(fix), "shear_deg": shear_deg}
        self._send(path, message)

    def result(self) -> UsdRead:
        try:
            stderr = self._finish(timeout=TIMEOUT)
            if self._proc.returncode != 0 or not os.path.exists(self._out):
                last = stderr.strip().splitlines()[-1:] or [f"exit code {self._proc.returncode}"]
                raise ExportError(f"usd-core could not correct and read {self._path!r}: {last[0]}")
            try:
                data = np.load(self._out, allow_pickle=True)
            except (OSError, ValueError, zipfile.BadZipFile) as exc:
                raise ExportError(f"the read-back of {self._path!r} is damaged ({exc})") from None
            joints = {
                str(name): (np.array(data[f"joint_bones_{s}"]), np.array(data[f"joint_world_{s}"]))
                for s, name in enumerate(data["skeletons"])
            }
            skinned = {str(n): np.array(data[f"skin_{k}"]) for k, n in enumerate(data["skin_names"])}
            return UsdRead(
                [str(n) for n in data["object_names"]],
                np.array(data["object_world"]),
                joints,
                skinned,
                json.loads(str(data["done"])),
            )
        finally:
            self._folder.cleanup()


_SPARES = Spares(UsdWorker, usd_available)  #: a worker started after an export, for the next one


def start_worker() -> UsdWorker:
    """A :class:`UsdWorker` starting up (the one :func:`prepare_next` left waiting, if it
    is still there)."""
    return _SPARES.take()


def prepare_next() -> None:
    """Start a worker for the next export now, so that its start-up (Python, numpy,
    pxr: about 0.4 s) is not part of that export (a Blender session exporting again);
    it ends by itself with this process."""
    _SPARES.prepare()


def read_usd(path: str, scene: dict, *, fix: bool = False, shear_deg: float = 0.1) -> UsdRead:
    """:class:`UsdWorker` waited for: ``path`` read back (and corrected in place with ``fix``)."""
    worker = UsdWorker()
    try:
        worker.request(path, scene, fix=fix, shear_deg=shear_deg)
        return worker.result()
    finally:
        worker.close()


def scene_request(series, skinned: set) -> dict:
    """Blender's side for the usd-core process (:class:`.stage.Scene`), from a
    :class:`..timeline.FrameSeries` (``skinned``: the names of the meshes an armature deforms):
    objects' worlds, and per armature its bones (in the order of ``series.keys``), their
    parents and their pose matrices in armature space ``inv(armature world) @ world``."""
    keys = series.keys
    world = series.world
    objects = [i for i, (_o, b) in enumerate(keys) if not b]
    data: dict = {
        "frames": np.asarray(series.frames, dtype=np.int64),
        "object_names": np.array([keys[i][0] for i in objects], dtype=object),
        "object_world": np.ascontiguousarray(world[:, objects]),
        "skinned": np.array(sorted(skinned), dtype=object),
    }
    index = {k: i for i, k in enumerate(keys)}
    armatures = [name for name, _b in (keys[i] for i in objects) if any(k[0] == name and k[1] for k in keys)]
    data["arm_names"] = np.array(armatures, dtype=object)
    for a, name in enumerate(armatures):
        rows = [i for i, k in enumerate(keys) if k[0] == name and k[1]]
        position = {i: k for k, i in enumerate(rows)}
        parents = np.array([position.get(int(series.parents[i]), -1) for i in rows], dtype=np.int64)
        arm_inverse = np.linalg.inv(world[:, index[(name, "")]])
        data[f"bones_{a}"] = np.array([keys[i][1] for i in rows], dtype=object)
        data[f"bone_parents_{a}"] = parents
        data[f"pose_{a}"] = arm_inverse[:, None] @ world[:, rows]
    return data


class UsdErrors(NamedTuple):
    """A read-back against Blender, per kind of node."""

    objects: FrameError  #: object prims (relative to max(1, largest world entry))
    joints: FrameError  #: joints, labelled ``Armature > Bone``
    points: dict  #: mesh name -> :class:`.plan.PointError`
    missing: list  #: labels of scene nodes the file does not have (not compared)

    def over(self) -> list[str]:
        """What is over its tolerance, one phrase each (empty: the file is exact)."""
        out = []
        if self.objects.relative > OBJECT_TOLERANCE:
            out.append(f"objects {self.objects.relative:.2e} relative (limit {OBJECT_TOLERANCE:g})")
        if self.joints.relative > JOINT_TOLERANCE:
            out.append(f"joints {self.joints.relative:.2e} relative (limit {JOINT_TOLERANCE:g})")
        for name, p in self.points.items():
            if p.relative > POINT_TOLERANCE:
                out.append(f"'{name}' points {p.relative:.2e} of its diagonal (limit {POINT_TOLERANCE:g})")
            if p.bbone_relative > POINT_TOLERANCE:
                out.append(f"'{name}' points on B-Bones {p.bbone_relative:.2e} of its diagonal (USD has no B-Bones)")
        return out


def compare(
    read: UsdRead,
    keys: list[tuple[str, str]],
    world: np.ndarray,
    points: dict | None = None,
    bbone: dict | None = None,
) -> UsdErrors:
    """``read`` against Blender's ``world (T, N, 4, 4)`` of the nodes ``keys`` (objects
    by name, bones by armature and bone) and ``points`` (mesh name -> Blender's
    evaluated world points ``(T, V, 3)``; ``bbone`` mesh name -> ``(V,)`` bool, the
    vertices weighted to B-Bones). Skinned meshes are compared by their points only."""
    index = {k: i for i, k in enumerate(keys)}
    obj_cols = [k for k, n in enumerate(read.object_names) if (n, "") in index]
    obj_rows = [index[(read.object_names[k], "")] for k in obj_cols]
    objects = matrix_error(read.object_world[:, obj_cols], world[:, obj_rows], [read.object_names[k] for k in obj_cols])
    got, want, labels = [], [], []
    for armature, (bones, worlds) in read.joints.items():
        bone_names = [k[1] for k in keys if k[0] == armature and k[1]]
        for c, b in enumerate(bones):
            key = (armature, bone_names[int(b)]) if 0 <= int(b) < len(bone_names) else None
            if key in index:
                got.append(worlds[:, c])
                want.append(world[:, index[key]])
                labels.append(node_label(*key))
    t_count = len(world)
    joints = (
        matrix_error(np.stack(got, axis=1), np.stack(want, axis=1), labels)
        if labels
        else FrameError(0.0, 0.0, {}, np.zeros(t_count), 0)
    )
    point_errors: dict[str, PointError] = {}
    for name, expected in (points or {}).items():
        placed = read.skinned.get(name)
        if placed is not None and placed.shape == np.shape(expected):
            mask = (bbone or {}).get(name, np.zeros(placed.shape[1], dtype=bool))
            point_errors[name] = point_error(placed, expected, mask)
    seen = set(read.object_names) | set(labels) | set(points or {})
    missing = [node_label(*k) for k in keys if (node_label(*k) if k[1] else k[0]) not in seen]
    return UsdErrors(objects, joints, point_errors, missing)
