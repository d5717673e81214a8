"""Read a scene over a frame range into arrays: frames x nodes.

Per frame: one ``scene.frame_set`` (one depsgraph evaluation) and bulk ``foreach_get``
reads (the objects' world matrices and identities; each armature's pose matrices; the
boxes that can change), no per-node Python work. The nodes (keys, parents, kinds) are
read once, at the first frame, by :func:`.reading.read_nodes`; every later frame must
hold the same nodes, or :class:`~..model.errors.SceneDataError` names what changed. The
scene is put back on the frame (and subframe) it was on, whatever happens.

Between two frames only Blender's bulk reads run, into raw float32 buffers for a chunk
of frames (Python work between two evaluations makes Blender's next one slower: its
worker threads fall asleep); a chunk at a time then goes into the range's
``(T, 4, 4, N)`` float64 storage (buffers reused, no copy of the range afterwards).

What cannot change is not read again: :func:`read_frames` reads the box of a plain mesh
(no shape keys, animated mesh data or modifiers other than self-contained ones nothing
animates: :func:`box_may_change`) at the first frame only, and so the box of an
armature with no parent and no constraints (:func:`box_is_round_off`: it changes with
the pose, and Blender recomputes it on every read, but it cannot change the results
beyond round-off); every other box (curves, meshes with other modifiers, parented or
constrained armatures) one getter call per object and frame, and all boxes once more
at the last frame to check the first rule (a frame-change script may edit a mesh: the
range is then read again, every box at every frame). Bones' boxes come from their rest
lengths. Poses nothing animates and objects nothing moves are read once too (the rules:
:mod:`.timeline.still`).

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
from ..model.timeline.series import check_finite
from .reading import _collection_of, _pose_bones, _Sequence, read_nodes
from .timeline.still import box_is_round_off, box_may_change, objects_that_stay, pose_is_static, scripts_may_edit


def _read(bulk, prop: str, count: int, width: int, dtype=np.float32) -> np.ndarray:
    buf = np.empty(count * width, dtype=dtype)
    if count:
        bulk.foreach_get(prop, buf)
    return buf


#: Up to this many objects whose box can change are read one by one (cheaper than a
#: bulk read of every object's ``bound_box``, about 1.3 us per object).
_FEW = 64

_AFFINE_ROW = np.array([0.0, 0.0, 0.0, 1.0])

#: Frames read into raw buffers before they are stored (:meth:`FrameReader._convert`).
_CHUNK = 32


def _bounds(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corner minima and maxima ``(..., 3)`` float64 of boxes ``(..., 24)`` (8 corners)."""
    c = corners.reshape(corners.shape[:-1] + (8, 3))
    return c.min(axis=-2).astype(np.float64), c.max(axis=-2).astype(np.float64)


class FrameReader:
    """Reads ``objects`` (default: every object of ``scene``) and their pose bones at
    ``frames``, one frame per :meth:`step`.

    Call :meth:`step` until it returns True, then :meth:`series` (also at any point: it
    holds the frames read so far); or :meth:`restore` at any point to put the scene back
    on its frame (also done after the last frame). Each frame's bulk reads go into raw
    buffers (``_CHUNK`` frames), stored a chunk at a time into the ``(T, 4, 4, N)``
    float64 storage of :meth:`series` (objects: one strided copy of one bulk read;
    bones: their armature's world times their pose matrices, one product per armature
    and frame).

    With ``read_once`` what cannot change is read at the first frame only (the rules:
    :mod:`.timeline.still`): the boxes of objects that cannot change them (:func:`box_may_change`)
    and of armatures whose box cannot change the results beyond round-off
    (:func:`box_is_round_off`) are read at the first frame only, and the first kind again
    at the last frame to check: :attr:`boxes_checked` is False when one of them changed
    anyway (e.g. a frame-change script edited a mesh); :func:`read_frames` then reads the
    range again, every box at every frame. Likewise the poses of armatures nothing
    animates (:func:`pose_is_static`) and, when at most a few objects move, the world
    matrices of the objects nothing moves (:func:`objects_that_stay`: the few are read
    one by one) are read at the first and the last frame only (:attr:`still_checked`).

    ``unattended``: nothing but Blender's evaluation runs between two steps (the loop of
    :func:`read_frames`; not a modal operator, where the user may edit the scene between
    frames): the objects are then checked to be the first frame's at every frame only
    while a handler script could change them (:func:`scripts_may_edit`), and at the
    last frame always.
    """

    def __init__(
        self,
        scene,
        frames: Sequence[int],
        objects: Iterable | None = None,
        read_once: bool = False,
        unattended: bool = False,
        each_frame: Callable[[int], None] | None = None,
    ):
        if not len(frames):
            raise ValueError("frames: expected at least one frame")
        self.scene = scene
        self.frames = [int(f) for f in frames]
        self.start = (scene.frame_current, scene.frame_subframe)
        self._objects_arg = objects
        self.read_once = read_once
        self.unattended = unattended
        self.boxes_checked = True
        self.still_checked = True
        self._each_frame = each_frame
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
        self._handlers = scripts_may_edit()
        self._check_every_frame = not self.unattended or self._handlers
        self._first_parents = self._object_parents()
        self.bone_counts = [len(_pose_bones(o)) for _k, o in self.armatures]
        self.identity = self._identity(bulk, n_obj)
        self._identity_bytes = self.identity.tobytes()  # compared as bytes: np.array_equal costs 10x more
        self._uid_buffer = np.empty(n_obj, dtype=np.int32)
        t, n = len(self.frames), len(self.keys)
        self.storage = np.empty((t, 4, 4, n))
        chunk = min(_CHUNK, t)
        self._world_buffers = np.empty((chunk, n_obj * 16), dtype=np.float32)
        self._pose_buffers = [np.empty((chunk, count * 16), dtype=np.float32) for count in self.bone_counts]
        # Poses nothing animates: read at the first frame (kept here) and checked at the last.
        static = [self.read_once and pose_is_static(arm) for _k, arm in self.armatures]
        self._first_pose: list[np.ndarray | None] = [
            np.empty(count * 16, np.float32) if keep else None
            for keep, count in zip(static, self.bone_counts, strict=True)
        ]
        # Objects nothing moves, when only a few others do: the others are read one by one
        # (a bulk read walks every object, and slows Blender's next evaluation).
        stays = objects_that_stay(self.objects) if self.read_once else np.zeros(n_obj, dtype=bool)
        movers = np.flatnonzero(~stays)
        self._stays = stays if stays.any() and len(movers) <= _FEW else None
        self._mover_matrices = (
            [(int(i), self.objects[i].path_resolve("matrix_world", False)) for i in movers]
            if self._stays is not None
            else []
        )
        self.converted = 0
        self._products = [
            (np.empty((chunk, 4, 4 * count)), np.empty((chunk, 3, 4 * count))) for count in self.bone_counts
        ]
        self.bone_min, self.bone_max = nodes.box_min[n_obj:], nodes.box_max[n_obj:]
        # Which boxes are read each frame: all in bulk (``box_rows`` None), a few one by
        # one, or none; the others are the first frame's.
        if self.read_once:
            may = np.array([box_may_change(o) for o in self.objects], dtype=bool)
            self.round_off = np.array([box_is_round_off(o) for o in self.objects], dtype=bool)
            rows = np.flatnonzero(may & ~self.round_off)
            self.box_rows = rows if len(rows) <= _FEW else None
        else:
            self.round_off = np.zeros(n_obj, dtype=bool)
            self.box_rows = None
        self.first_box = np.empty((n_obj, 24), dtype=np.float32)
        if n_obj:
            bulk.foreach_get("bound_box", self.first_box.reshape(-1))
        width = n_obj if self.box_rows is None else len(self.box_rows)
        self.boxes = np.empty((t, width, 24), dtype=np.float32)
        self.empty_rows = np.flatnonzero(self.is_empty)
        self._size_buffer = np.empty(n_obj, dtype=np.float32) if len(self.empty_rows) > _FEW else None
        self.empty_size = np.empty((t, len(self.empty_rows)), dtype=np.float32)

    def _identity(self, bulk, count: int) -> np.ndarray:
        if isinstance(bulk, _Sequence):  # a short list (the panel's chain)
            return np.array([o.session_uid for o in bulk.items], dtype=np.int32)
        return _read(bulk, "session_uid", count, 1, np.int32)

    def _check_same_nodes(self, bulk, frame: int) -> None:
        """The objects of the first frame, in the same order (one bulk read of their ids);
        :meth:`_changed_nodes` names what changed.

        Not counted first (each count walks the scene's collections again): a buffer
        longer than the collection keeps its tail (Blender 4.2 to 5.0), so the last id is
        reset first and a shorter collection cannot match; a longer one makes the matrix
        reads raise (:meth:`_read_matrices`), as a changed bone count does."""
        if isinstance(bulk, _Sequence):
            now = self._identity(bulk, len(self.objects))
        else:
            now = self._uid_buffer
            if len(now):
                now[-1] = 0  # no ID has session uid 0
                bulk.foreach_get("session_uid", now)
        if now.tobytes() != self._identity_bytes:
            self._changed_nodes(bulk, frame)

    def _object_parents(self) -> list[tuple]:
        """Each object's parent as ``(parent's session uid or 0, parent type, parent
        bone)`` (no bulk read exists for pointers: one attribute walk)."""
        return [
            (o.parent.session_uid if o.parent is not None else 0, o.parent_type, o.parent_bone) for o in self.objects
        ]

    def _check_same_parents(self, frame: int) -> None:
        """:class:`SceneDataError` naming the first object whose parent is not the first
        frame's: a range is read and analysed with one hierarchy (a frame handler that
        reparents an object in the middle of the range would make every later frame's
        locals wrong, silently)."""
        now = self._object_parents()
        if now == self._first_parents:
            return
        i = next(k for k, (a, b) in enumerate(zip(now, self._first_parents, strict=True)) if a != b)
        obj = self.objects[i]

        def named(parent_uid: int, kind: str, bone: str) -> str:
            parent = next((o for o in self.objects if o.session_uid == parent_uid), None) if parent_uid else None
            if parent is None:
                return "no parent" if not parent_uid else "an object outside the range's objects"
            return f"'{parent.name}'" + (f" (bone '{bone}')" if kind == "BONE" and bone else "")

        raise SceneDataError(
            f"'{obj.name}' changes parent during the range: {named(*self._first_parents[i])} at frame "
            f"{self.frames[0]}, {named(*now[i])} at frame {frame} (a frame handler script?); a range is "
            "analysed with one hierarchy: inspect the frames before and after the change apart"
        )

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
        n_obj = len(self.objects)
        if not n_obj:
            return
        if self.box_rows is None:
            bulk.foreach_get("bound_box", self.boxes[k].reshape(-1))
        else:
            objects, boxes = self.objects, self.boxes[k]
            for j, i in enumerate(self.box_rows):  # one getter call (iterating the corners calls it per corner)
                objects[i].bound_box.foreach_get(boxes[j])
        if self._size_buffer is not None:
            bulk.foreach_get("empty_display_size", self._size_buffer)
            self.empty_size[k] = self._size_buffer[self.empty_rows]
        else:
            for j, i in enumerate(self.empty_rows):
                self.empty_size[k, j] = self.objects[i].empty_display_size
        if self.box_rows is not None and k == len(self.frames) - 1 and k:
            every = _read(bulk, "bound_box", n_obj, 24).reshape(-1, 24)
            expected = self.first_box.copy()
            expected[self.box_rows] = self.boxes[k]
            keep = ~self.round_off  # those may change: they are not the rule's
            self.boxes_checked = bool(np.array_equal(every[keep], expected[keep]))

    def _read_worlds(self, bulk, k: int, slot: int, last: bool) -> None:
        """The objects' world matrices at frame ``k`` into the buffers' row ``slot``: all in
        one bulk read, or (objects nothing moves, see :attr:`_stays`) only the few others
        one by one, every other entry holding the first frame's; all at the last frame,
        to check that they did stay."""
        buffers = self._world_buffers
        if self._stays is None or k == 0 or last:
            bulk.foreach_get("matrix_world", buffers[slot])
            if self._stays is not None and k == 0:
                buffers[:] = buffers[0]  # every row starts as the first frame
                self._first_world = buffers[0].copy()
            elif self._stays is not None and k:
                still = self._stays.repeat(16)
                self.still_checked &= bool(np.array_equal(buffers[slot][still], self._first_world[still]))
            return
        row = buffers[slot].reshape(-1, 16)
        for i, matrix in self._mover_matrices:
            matrix.foreach_get(row[i])

    def _read_matrices(self, bulk, k: int, frame: int) -> None:
        """Frame ``k``'s Blender matrices into the chunk's raw float32 buffers (row
        ``k % _CHUNK``): only Blender's bulk reads run between two frames (Python work
        there makes Blender's next evaluation slower: its worker threads fall asleep),
        :meth:`_convert` fills the storage once per chunk.

        A collection longer than at the first frame makes Blender's read raise, a shorter
        one leaves the buffer's tail as it was (a NaN put there first): either way
        :meth:`_changed_nodes` names what changed."""
        slot, last = k % len(self._world_buffers), len(self.frames) - 1
        try:
            if len(self.objects):
                self._read_worlds(bulk, k, slot, k == last)
            for (_i, arm), buffers, first in zip(self.armatures, self._pose_buffers, self._first_pose, strict=True):
                if first is not None and 0 < k < last:
                    continue  # a pose nothing animates: the first frame's
                buffer = buffers[slot]
                buffer[-1] = np.nan
                arm.pose.bones.foreach_get("matrix", buffer)
                if buffer[-1] != buffer[-1]:  # not written, or NaN in Blender's matrix
                    self._changed_nodes(bulk, frame)
                if first is not None and k == 0:
                    first[:] = buffer
                elif first is not None:  # the last frame: the check
                    self.still_checked &= bool(np.array_equal(buffer, first))
        except (RuntimeError, TypeError, ValueError, ReferenceError):  # ReferenceError: an object removed
            self._changed_nodes(bulk, frame)
            raise

    def _convert(self) -> None:
        """The frames read but not yet stored into ``storage[k]`` ``(4, 4, N)``, affine
        (the bottom row set to (0, 0, 0, 1) as :func:`.reading.read_nodes` does:
        constraints leave w = 0.99999994 in float32), all of them in one step per
        armature. Bones: their armature's world (Blender's, as read) times their pose
        matrices, the same product as the single-frame reader."""
        a, b = self.converted, self.done
        if a == b:
            return
        n_obj, t = len(self.objects), b - a
        chunk = len(self._world_buffers)
        slots = slice(a % chunk, a % chunk + t)  # a chunk is converted whole, or up to the frames read
        out = self.storage[a:b]
        if n_obj:
            # Blender's flat matrix buffers are column-major: (t, n, column, row) -> (t, row, column, n).
            out[:, :, :, :n_obj] = self._world_buffers[slots].reshape(t, n_obj, 4, 4).transpose(0, 3, 2, 1)
        at = n_obj
        for (i, _arm), count, buffers, first, (pose, product) in zip(
            self.armatures, self.bone_counts, self._pose_buffers, self._first_pose, self._products, strict=True
        ):
            # pose[f, j, c, b] = pose_b[j, c] at frame f, each matrix's bottom row (0, 0, 0, 1).
            pose = pose[:t]
            raw = buffers[slots] if first is None else np.broadcast_to(first, (t, count * 16))
            np.copyto(pose.reshape(t, 4, 4, count), raw.reshape(t, count, 4, 4).transpose(0, 3, 2, 1))
            pose[:, 3] = np.repeat(_AFFINE_ROW, count)
            # world[f, r, c, b] = sum_j arm_f[r, j] pose_b[j, c]: per frame one (3, 4) @
            # (4, 4 * count) product into the storage's layout (the bottom row is set below).
            np.matmul(out[:, :3, :, i], pose, out=product[:t])
            out[:, :3, :, at : at + count] = product[:t].reshape(t, 3, 4, count)
            at += count
        out[:, 3] = _AFFINE_ROW[:, None]
        self.converted = b

    def step(self) -> bool:
        """Read the next frame; True once every frame is read (the scene is then back on
        its frame). :class:`SceneDataError` (scene restored) when the nodes change."""
        if self.done >= len(self.frames):
            return True
        frame = self.frames[self.done]
        try:
            self.scene.frame_set(frame)
            bulk = self._bulk_objects()[0]
            if self.done == 0:
                self._begin(bulk)
            self._read_matrices(bulk, self.done, frame)
            last = self.done == len(self.frames) - 1
            if self.done and (self._check_every_frame or last):
                self._check_same_nodes(bulk, frame)
            if self.done and (self._handlers or last):
                self._check_same_parents(frame)
            self._read_boxes(bulk, self.done)
            if self._each_frame is not None:
                self._each_frame(self.done)
        except BaseException:
            self.restore()
            raise
        self.done += 1
        if self.done % len(self._world_buffers) == 0 or self.done == len(self.frames):
            self._convert()
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

    def _boxes(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Local boxes ``(t, N, 3)`` float64 (minima, maxima) of the first t frames: the
        first frame's for the boxes read once, each frame's for the others, the display
        cube for empties, the rest lengths for bones."""
        n_obj, n = len(self.objects), len(self.keys)
        lo, hi = np.empty((t, n, 3)), np.empty((t, n, 3))
        if self.box_rows is None:
            lo[:, :n_obj], hi[:, :n_obj] = _bounds(self.boxes[:t])
        else:
            lo[:, :n_obj], hi[:, :n_obj] = _bounds(self.first_box)
            lo[:, self.box_rows], hi[:, self.box_rows] = _bounds(self.boxes[:t])
        size = self.empty_size[:t].astype(np.float64)[..., None]
        lo[:, self.empty_rows], hi[:, self.empty_rows] = -size, size
        lo[:, n_obj:], hi[:, n_obj:] = self.bone_min, self.bone_max
        return lo, hi

    def series(self) -> FrameSeries:
        """The frames read so far as arrays (all of them after the last :meth:`step`).

        ``world`` is a ``(T, N, 4, 4)`` view of the ``(T, 4, 4, N)`` storage (each matrix
        entry of all nodes contiguous, the layout :func:`core.frame_fields` reads fastest)."""
        if not self.done:
            raise ValueError("no frame read yet: call step() first")
        t = self.done
        self._convert()
        lo, hi = self._boxes(t)
        return FrameSeries(
            frames=np.array(self.frames[:t], dtype=np.int64),
            keys=list(self.keys),
            parents=self.parents.copy(),
            world=self.storage[:t].transpose(0, 3, 1, 2),
            box_min=lo,
            box_max=hi,
            fps=self.scene.render.fps / self.scene.render.fps_base,
            boxes_vary=None if self.box_rows is None else np.union1d(self.box_rows, self.empty_rows),
        )


def read_frames(
    scene,
    frames: Sequence[int],
    objects: Iterable | None = None,
    progress: Callable | None = None,
    each_frame: Callable[[int], None] | None = None,
) -> FrameSeries:
    """``objects`` (default: all of ``scene``) and their pose bones at every one of
    ``frames``: a :class:`FrameSeries` with world matrices ``(T, N, 4, 4)``, the node
    keys and parents. ``progress(fraction, message)`` is called after every frame;
    ``each_frame(k)`` after the reads of ``frames[k]``, on that frame (more reads of the
    same evaluation, e.g. deformed meshes: no frame change of their own). The
    scene ends on the frame it started on. Boxes that cannot change, poses nothing
    animates and objects nothing moves are read once (:class:`FrameReader`
    ``read_once``); if one changed anyway, the range is read again with everything at
    every frame. :class:`SceneDataError` names the first node and frame whose world
    matrix or box holds NaN or infinity (what reads a range, the exports too, would
    otherwise fail on it unnamed)."""
    for read_once in (True, False):
        reader = FrameReader(scene, frames, objects, read_once=read_once, unattended=True, each_frame=each_frame)
        try:
            while not reader.step():
                if progress:
                    progress(reader.fraction, f"frame {reader.frames[reader.done - 1]}")
        finally:
            reader.restore()
        if reader.boxes_checked and reader.still_checked:
            break
    series = reader.series()
    check_finite(series)
    return series


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
