"""``demo``: the examples of *Accumulating Transforms* in both models as text (no Blender needed), then, where
Blender's module is available, the demo scene through every job (:mod:`.demo_run`)."""

from __future__ import annotations

import os

from ..model.demo_text import demo_text
from ..model.errors import UsageError
from .process import require_bpy


def cmd_demo(args) -> int:
    print(demo_text())
    try:
        require_bpy()
    except UsageError as exc:
        print(f"\n(Blender part skipped: {exc})")
        return 0
    from .demo_run import run_demo  # imports bpy, hence only now

    return run_demo(args.out or os.path.join("build", "demo"))
