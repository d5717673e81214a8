"""Pictures for people who would rather look than read: PNG files drawn with numpy and
zlib alone (:mod:`.canvas`, :mod:`.png`, a bitmap font in :mod:`.font`), so they come out
of a stock Blender, whose bundled Python has no plotting library.

- :func:`worst_nodes_png`: the worst nodes' boxes as Blender, a glTF viewer and an
  accumulating engine place them;
- :func:`deviation_chart_png`: corner deviation and shear per flagged node.
"""

from .charts import MODEL_STYLES, deviation_chart_png, worst_nodes_png

__all__ = ["MODEL_STYLES", "deviation_chart_png", "worst_nodes_png"]
