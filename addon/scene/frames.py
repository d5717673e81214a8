"""Read a scene over a frame range into arrays: frames x nodes.

Per frame: one ``scene.frame_set`` (one depsgraph evaluation) and bulk ``foreach_get``
reads (the objects' world matrices and identities; each armature's pose matrices; the
boxes that can change), no per-node Python work. The nodes (keys, parents, kinds) are
read once, at the first frame, by :func:`.reading.read_nodes`; every later frame must
hold the same nodes, or :class:`~..model.errors.SceneDataError` names what changed. The
scene is put back on the frame (and subframe) it was on, whatever happens.

What cannot change is not read again: :func:`read_frames` reads the box of a plain mesh
(no modifiers, shape keys or animated mesh data: :func:`box_may_change`) at the first
frame only, every other box (armatures, curves, meshes with modifiers) one getter call
per object and frame, and all boxes once more at the last frame to check the rule (a
frame-change script may edit a mesh: the range is then read again, every box at every
frame). Bones' boxes come from their rest lengths.

:class:`FrameReader` reads one frame per :meth:`FrameReader.step` (a modal operator
stays responsive and can stop between frames); :func:`read_frames` reads a whole range.
Both return a :class:`~..model.timeline.FrameSeries` (world ``(T, N, 4, 4)``, a view of
``(T, 4, 4, N)`` storage), the input of :func:`~..model.timeline.analyse_frames`, the
frame-range dynamics and exports.
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


def box_may_change(obj) -> bool:
    """Whether ``obj``'s local box can differ between frames: anything but a mesh, and a
    mesh with modifiers, shape keys or animated mesh data (a plain mesh's evaluated
    geometry is its data, which nothing animates). Empties' display size is read every
    frame anyway."""
    if obj.type == "EMPTY":
        return False
    if obj.type != "MESH":
        return True
    data = obj.data
    return bool(len(obj.modifiers) or data.shape_keys is not None or data.animation_data is not None)


#: Up to this many objects whose box can change are read one by one (cheaper than a
#: bulk read of every object's ``bound_box``, about 1.3 us per object).
_FEW = 64


class FrameReader:
    """Reads ``objects`` (default: every object of ``scene``) and their pose bones at
    ``frames``, one frame per :meth:`step`.

    Call :meth:`step` until it returns True, then :meth:`series`; or :meth:`restore`
    at any point to put the scene back on its frame (also done after the last frame).

    With ``static_boxes`` the boxes of objects that cannot change them (:func:`box_may_change`)
    are read at the first frame only, and all boxes again at the last frame to check:
    :attr:`boxes_checked` is False when one of them changed anyway (e.g. a frame-change
    script edited a mesh); :func:`read_frames` then reads the range again, every box at
    every frame.
    """

    def __init__(self, scene, frames: Sequence[int], objects: Iterable | None = None, static_boxes: bool = False):
        if not len(frames):
            raise ValueError("frames: expected at least one frame")
        self.scene = scene
        self.frames = [int(f) for f in frames]
        self.start = (scene.frame_current, scene.frame_subframe)
        self._objects_arg = objects
        self.static_boxes = static_boxes
        self.boxes_checked = True
        self.done = 0
        self._restored = False

    # -- the bulk sources, fetched again every frame (collections may be rebuilt) ----

    def _bulk_objects(self):
        objects = self.scene.objects if self._objects_arg is None else self._objects_arg
        return _collection_of(objects), objects

    def _begin(self, bulk) -> None:
        objects = self._bulk_objects()[1]
        nodes = read_nodes(objects, verify=False)
        self.objects = list(objects)
        n_obj = len(self.objects)
        self.keys, self.parents = nodes.keys, nodes.parents
        self.is_empty = np.array([o.type == "EMPTY" for o in self.objects], dtype=bool)
        self.armatures = [(k, o) for k, o in enumerate(self.objects) if len(_pose_bones(o))]
        self.bone_counts = [len(_pose_bones(o)) for _k, o in self.armatures]
        self.identity = self._identity(bulk, n_obj)
        self._uid_buffer = np.empty(n_obj, dtype=np.int32)
        t, n_bones = len(self.frames), sum(self.bone_counts)
        self.obj_world = np.empty((t, n_obj * 16), dtype=np.float32)
        self.obj_box = np.empty((t, n_obj, 24), dtype=np.float32)
        self.empty_size = np.zeros((t, n_obj), dtype=np.float32)
        self.pose = np.empty((t, n_bones * 16), dtype=np.float32)
        self.bone_min, self.bone_max = nodes.box_min[n_obj:], nodes.box_max[n_obj:]
        may = np.array([box_may_change(o) for o in self.objects], dtype=bool) if self.static_boxes else None
        # Which boxes are read each frame: all in bulk, a few one by one, or none.
        self.box_rows = np.flatnonzero(may) if may is not None and may.sum() <= _FEW else None
        self.empty_rows = np.flatnonzero(self.is_empty) if self.is_empty.sum() <= _FEW else None
        if self.box_rows is not None and n_obj:
            bulk.foreach_get("bound_box", self.obj_box[0].reshape(-1))
            self.obj_box[1:] = self.obj_box[0]

    def _identity(self, bulk, count: int) -> np.ndarray:
        if isinstance(bulk, _Sequence):  # a short list (the panel's chain)
            return np.array([o.session_uid for o in bulk.items], dtype=np.int32)
        return _read(bulk, "session_uid", count, 1, np.int32)

    def _check_same_nodes(self, bulk, frame: int) -> None:
        """The objects of the first frame, in the same order (their count and one bulk read
        of their ids), and the same number of bones; :meth:`_changed_nodes` names what changed."""
        n_obj = len(self.objects)
        if isinstance(bulk, _Sequence):
            now = self._identity(bulk, n_obj)
        else:
            now = self._uid_buffer
            # Counted first: Blender 4.x fills a buffer longer than the collection's part
            # without a word (5.x raises).
            if len(bulk) != n_obj:
                self._changed_nodes(bulk, frame)
            bulk.foreach_get("session_uid", now)
        if not np.array_equal(now, self.identity):
            self._changed_nodes(bulk, frame)
        for (_k, arm), count in zip(self.armatures, self.bone_counts, strict=True):
            if len(_pose_bones(arm)) != count:
                self._changed_nodes(bulk, frame)

    def _changed_nodes(self, bulk, frame: int) -> None:
        """:class:`SceneDataError` saying which objects or bones changed since the first frame."""
        n_obj = len(self.objects)
        now = self._identity(bulk, len(self._bulk_objects()[1]))
        if len(now) != n_obj:
            what = f"{n_obj} objects at frame {self.frames[0]}, {len(now)} at frame {frame}"
        elif not np.array_equal(now, self.identity):
            i = int(np.flatnonzero(now != self.identity)[0])
            what = f"'{self.keys[i][0]}' of frame {self.frames[0]} is not there at frame {frame}"
        else:
            for (k, arm), count in zip(self.armatures, self.bone_counts, strict=True):
                if len(_pose_bones(arm)) != count:
                    raise SceneDataError(
                        f"the bones of '{self.keys[k][0]}' change between frames ({count} at frame "
                        f"{self.frames[0]}, {len(_pose_bones(arm))} at frame {frame}): a range needs the same nodes"
                    )
            return
        raise SceneDataError(f"the scene's objects change between frames ({what}): a range needs the same nodes")

    def _read_boxes(self, bulk, k: int) -> None:
        if not len(self.objects):
            return
        if self.box_rows is None:
            bulk.foreach_get("bound_box", self.obj_box[k].reshape(-1))
        else:
            for i in self.box_rows:  # one getter call (iterating the corners calls it per corner)
                self.objects[i].bound_box.foreach_get(self.obj_box[k, i])
        if self.empty_rows is None:
            bulk.foreach_get("empty_display_size", self.empty_size[k])
        else:
            for i in self.empty_rows:
                self.empty_size[k, i] = self.objects[i].empty_display_size
        if self.box_rows is not None and k == len(self.frames) - 1 and k:
            every = _read(bulk, "bound_box", len(self.objects), 24).reshape(-1, 24)
            self.boxes_checked = bool(np.array_equal(every, self.obj_box[k]))

    def step(self) -> bool:
        """Read the next frame; True once every frame is read (the scene is then back on
        its frame). :class:`SceneDataError` (scene restored) when the nodes change."""
        if self.done >= len(self.frames):
            return True
        frame = self.frames[self.done]
        try:
            self.scene.frame_set(frame)
            bulk, _objects = self._bulk_objects()
            if self.done == 0:
                self._begin(bulk)
            else:
                self._check_same_nodes(bulk, frame)
            k = self.done
            if len(self.objects):
                bulk.foreach_get("matrix_world", self.obj_world[k])
            self._read_boxes(bulk, k)
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

    def _object_boxes(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Corner minima and maxima ``(t, n_obj, 3)``: of the first frame for the boxes read
        once, of every frame for the others."""

        def bounds(corners):  # (..., 24) float32 -> min, max (..., 3) float64
            c = corners.reshape(corners.shape[:-1] + (8, 3))
            return c.min(axis=-2).astype(np.float64), c.max(axis=-2).astype(np.float64)

        if self.box_rows is None:
            return bounds(self.obj_box[:t])
        first_lo, first_hi = bounds(self.obj_box[0])
        lo, hi = np.repeat(first_lo[None], t, axis=0), np.repeat(first_hi[None], t, axis=0)
        lo[:, self.box_rows], hi[:, self.box_rows] = bounds(self.obj_box[:t, self.box_rows])
        return lo, hi

    def series(self) -> FrameSeries:
        """The frames read so far as arrays (all of them after the last :meth:`step`).

        ``world`` is a ``(T, N, 4, 4)`` view of ``(T, 4, 4, N)`` storage (each matrix entry
        of all nodes contiguous, the layout :func:`core.frame_fields` reads fastest);
        bones' worlds are their armature's world times their pose matrix, one batched
        product per armature."""
        if not self.done:
            raise ValueError("no frame read yet: call step() first")
        t, n_obj, n = self.done, len(self.objects), len(self.keys)
        storage = np.empty((t, 4, 4, n))
        # Blender's flat matrix buffers are column-major: (T, n, column, row).
        storage[..., :n_obj] = self.obj_world[:t].reshape(t, n_obj, 4, 4).transpose(0, 3, 2, 1)
        at = n_obj
        for (i, _arm), count in zip(self.armatures, self.bone_counts, strict=True):
            first = (at - n_obj) * 16
            pose = self.pose[:t, first : first + count * 16].astype(np.float64).reshape(t, count * 4, 4)
            # world[r, c, b] = sum_k arm[r, k] pose_b[k, c]: (T, 4, 4) @ (T, 4, count * 4).
            product = storage[..., i] @ pose.transpose(0, 2, 1)
            storage[..., at : at + count] = product.reshape(t, 4, count, 4).transpose(0, 1, 3, 2)
            at += count
        storage[:, 3] = np.array([0.0, 0.0, 0.0, 1.0])[:, None]  # affine (w of constraint-driven bones: 0.99999994)
        lo, hi = self._object_boxes(t)
        size = self.empty_size[:t, self.is_empty].astype(np.float64)
        lo[:, self.is_empty] = -size[..., None]
        hi[:, self.is_empty] = size[..., None]
        bones = n - n_obj
        return FrameSeries(
            frames=np.array(self.frames[:t], dtype=np.int64),
            keys=list(self.keys),
            parents=self.parents.copy(),
            world=storage.transpose(0, 3, 1, 2),
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
    scene ends on the frame it started on. Boxes that cannot change are read once
    (:class:`FrameReader` ``static_boxes``); if one changed anyway, the range is read
    again with every box at every frame."""
    for static_boxes in (True, False):
        reader = FrameReader(scene, frames, objects, static_boxes=static_boxes)
        try:
            while not reader.step():
                if progress:
                    progress(reader.fraction, f"frame {reader.frames[reader.done - 1]}")
        finally:
            reader.restore()
        if reader.boxes_checked:
            break
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
