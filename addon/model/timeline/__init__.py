"""Time as a leading batch axis: a hierarchy over a frame range (Blender-free).

- :mod:`.frame_series`: :class:`FrameSeries` (world matrices ``(T, N, 4, 4)``); :mod:`.series`:
  :func:`analyse_frames` (all node-frames in one pass: :class:`OverFrames`, maxima and
  worst frames); :mod:`.repeats`: the frames that repeat an earlier one exactly;
- :mod:`.dynamics`: rates at every frame of a range and the inertial terms;
- :mod:`.report`: the report's ``frames`` and ``over_frames`` parts, CSV and table;
- :mod:`.views`: the dynamics section's rows; :mod:`.arrows`: the overlay's arrows.
"""

from .series import FrameSeries, OverFrames, analyse_frames

__all__ = ["FrameSeries", "OverFrames", "analyse_frames"]
