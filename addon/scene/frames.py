"""Read a scene over a frame range into arrays: frames x nodes.

Per frame: one ``scene.frame_set`` (one depsgraph evaluation) and bulk ``foreach_get``
reads (the objects' world matrices, bounds and identities; each armature's pose
matrices), no per-node Python work. The nodes (keys, parents, kinds) are read once, at
the first frame, by :func:`.reading.read_nodes`; every later frame must hold the same
nodes, or :class:`~..model.errors.SceneDataError` names what changed. The scene is put
back on the frame (and subframe) it was on, whatever happens.

:class:`FrameReader` reads one frame per :meth:`FrameReader.step` (a modal operator
stays responsive and can stop between frames); :func:`read_frames` reads a whole range.
Both return a :class:`~..model.timeline.FrameSeries` (world ``(T, N, 4, 4)``), the input
of :func:`~..model.timeline.analyse_frames`, the frame-range dynamics and exports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..model.errors import SceneDataError
from ..model.frames import FrameRange
from ..model.timeline import FrameSeries
from .reading import _collection_of, _pose_bones, _Sequence, read_nodes


def _read(bulk, prop: str, count: int, width: int, dtype=np.float32) -> np.ndarray:
    buf = np.empty(count * width, dtype=dtype)
    if count:
        bulk.foreach_get(prop, buf)
    return buf


class FrameReader:
    """Reads ``objects`` (default: every object of ``scene``) and their pose bones at
    ``frames``, one frame per :meth:`step`.

    Call :meth:`step` until it returns True, then :meth:`series`; or :meth:`restore`
    at any point to put the scene back on its frame (also done after the last frame).
    """

    def __init__(self, scene, frames: Sequence[int], objects: Iterable | None = None):
        if not len(frames):
            raise ValueError("frames: expected at least one frame")
        self.scene = scene
        self.frames = [int(f) for f in frames]
        self.start = (scene.frame_current, scene.frame_subframe)
        self._objects_arg = objects
        self.done = 0
        self._restored = False

    # -- the bulk sources, fetched again every frame (collections may be rebuilt) ----

    def _bulk_objects(self):
        objects = self.scene.objects if self._objects_arg is None else self._objects_arg
        return _collection_of(objects), objects

    def _begin(self) -> None:
        bulk, objects = self._bulk_objects()
        nodes = read_nodes(objects, verify=False)
        self.objects = list(objects)
        n_obj = len(self.objects)
        self.keys, self.parents = nodes.keys, nodes.parents
        self.is_empty = np.array([o.type == "EMPTY" for o in self.objects], dtype=bool)
        self.armatures = [(k, o) for k, o in enumerate(self.objects) if len(_pose_bones(o))]
        self.bone_counts = [len(_pose_bones(o)) for _k, o in self.armatures]
        self.identity = self._identity(bulk, n_obj)
        t, n_bones = len(self.frames), sum(self.bone_counts)
        self.obj_world = np.empty((t, n_obj * 16), dtype=np.float32)
        self.obj_box = np.empty((t, n_obj * 24), dtype=np.float32)
        self.empty_size = np.empty((t, n_obj), dtype=np.float32)
        self.pose = np.empty((t, n_bones * 16), dtype=np.float32)
        self.bone_min, self.bone_max = nodes.box_min[n_obj:], nodes.box_max[n_obj:]

    def _identity(self, bulk, count: int) -> np.ndarray:
        if isinstance(bulk, _Sequence):  # a short list (the panel's chain)
            return np.array([o.session_uid for o in bulk.items], dtype=np.int64)
        return _read(bulk, "session_uid", count, 1, np.int32).astype(np.int64)

    def _check_same_nodes(self, bulk, frame: int) -> None:
        n_obj = len(self.objects)
        now = self._identity(bulk, len(self._bulk_objects()[1]))
        if len(now) != n_obj or not np.array_equal(now, self.identity):
            if len(now) != n_obj:
                what = f"{n_obj} objects at frame {self.frames[0]}, {len(now)} at frame {frame}"
            else:
                i = int(np.flatnonzero(now != self.identity)[0])
                what = f"'{self.keys[i][0]}' of frame {self.frames[0]} is not there at frame {frame}"
            raise SceneDataError(f"the scene's objects change between frames ({what}): a range needs the same nodes")
        for (k, arm), count in zip(self.armatures, self.bone_counts, strict=True):
            if len(_pose_bones(arm)) != count:
                raise SceneDataError(
                    f"the bones of '{self.keys[k][0]}' change between frames ({count} at frame {self.frames[0]}, "
                    f"{len(_pose_bones(arm))} at frame {frame}): a range needs the same nodes"
                )

    def step(self) -> bool:
        """Read the next frame; True once every frame is read (the scene is then back on
        its frame). :class:`SceneDataError` (scene restored) when the nodes change."""
        if self.done >= len(self.frames):
            return True
        frame = self.frames[self.done]
        try:
            self.scene.frame_set(frame)
            if self.done == 0:
                self._begin()
            bulk, _objects = self._bulk_objects()
            if self.done:
                self._check_same_nodes(bulk, frame)
            k = self.done
            n_obj = len(self.objects)
            if n_obj:
                bulk.foreach_get("matrix_world", self.obj_world[k])
                bulk.foreach_get("bound_box", self.obj_box[k])
                bulk.foreach_get("empty_display_size", self.empty_size[k])
            at = 0
            for (_i, arm), count in zip(self.armatures, self.bone_counts, strict=True):
                arm.pose.bones.foreach_get("matrix", self.pose[k, at * 16 : (at + count) * 16])
                at += count
        except BaseException:
            self.restore()
            raise
        self.done += 1
        if self.done == len(self.frames):
            self.restore()
            return True
        return False

    @property
    def fraction(self) -> float:
        return self.done / len(self.frames)

    def restore(self) -> None:
        """Put the scene back on the frame and subframe it was on (once)."""
        if not self._restored:
            self._restored = True
            frame, subframe = self.start
            self.scene.frame_set(frame, subframe=subframe)

    def series(self) -> FrameSeries:
        """The frames read so far as arrays (all of them after the last :meth:`step`)."""
        if not self.done:
            raise ValueError("no frame read yet: call step() first")
        t, n_obj = self.done, len(self.objects)
        # Blender's flat matrix buffers are column-major: reshape then transpose.
        obj_world = self.obj_world[:t].reshape(t, n_obj, 4, 4).transpose(0, 1, 3, 2).astype(np.float64)
        corners = self.obj_box[:t].reshape(t, n_obj, 8, 3).astype(np.float64)
        lo, hi = corners.min(axis=2), corners.max(axis=2)
        size = self.empty_size[:t, self.is_empty].astype(np.float64)
        lo[:, self.is_empty] = -size[..., None]
        hi[:, self.is_empty] = size[..., None]
        pose = self.pose[:t].reshape(t, -1, 4, 4).transpose(0, 1, 3, 2).astype(np.float64)
        worlds, at = [obj_world], 0
        for (i, _arm), count in zip(self.armatures, self.bone_counts, strict=True):
            worlds.append(obj_world[:, i, None] @ pose[:, at : at + count])
            at += count
        bones = len(self.keys) - n_obj
        return FrameSeries(
            frames=np.array(self.frames[:t], dtype=np.int64),
            keys=list(self.keys),
            parents=self.parents.copy(),
            world=np.concatenate(worlds, axis=1),
            box_min=np.concatenate((lo, np.broadcast_to(self.bone_min, (t, bones, 3))), axis=1),
            box_max=np.concatenate((hi, np.broadcast_to(self.bone_max, (t, bones, 3))), axis=1),
            fps=self.scene.render.fps / self.scene.render.fps_base,
        )


def read_frames(
    scene, frames: Sequence[int], objects: Iterable | None = None, progress: Callable | None = None
) -> FrameSeries:
    """``objects`` (default: all of ``scene``) and their pose bones at every one of
    ``frames``: a :class:`FrameSeries` with world matrices ``(T, N, 4, 4)``, the node
    keys and parents. ``progress(fraction, message)`` is called after every frame. The
    scene ends on the frame it started on."""
    reader = FrameReader(scene, frames, objects)
    try:
        while not reader.step():
            if progress:
                progress(reader.fraction, f"frame {reader.frames[reader.done - 1]}")
    finally:
        reader.restore()
    return reader.series()


@contextlib.contextmanager
def timeline_range(scene, frame_range: FrameRange | None) -> Iterator[None]:
    """The scene's start and end set to ``frame_range`` for the block (None: left as they
    are), as Blender's exporters read them; afterwards the range, the frame and the
    subframe are what they were, also when the block raises."""
    saved = (scene.frame_start, scene.frame_end, scene.frame_current, scene.frame_subframe)
    try:
        if frame_range is not None:
            scene.frame_start, scene.frame_end = frame_range.start, frame_range.end
        yield
    finally:
        scene.frame_start, scene.frame_end = saved[0], saved[1]
        scene.frame_set(saved[2], subframe=saved[3])
