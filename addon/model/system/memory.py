"""How much memory a frame range will take, and how much this process may use: a range
too large is refused before anything is read or exported, in one line naming both.

The estimate is bytes per node-frame (nodes x frames) of each job, measured with peak
resident memory on ranges of 500 to 8,000 frames of a 200-object forest and the demo's
29 nodes (bpy 5.0.1; the slope between two lengths, rounded up by about a fifth):
``report --frames`` 180 B, with ``--dynamics`` 3.0 KB (every rate at every frame, in
the JSON too); ``export --frames``: accumulated 2.0 KB (per-frame TRS as JSON), glTF
1.6 KB and FBX 1.5 KB (Blender's exporters' own sampled keys), USD 0.9 KB in Blender's
process (doubled for usd-core's own process, which reads the stage back).

The limit (:func:`memory_limit`) is the smallest of: the memory available (Linux
``MemAvailable``; elsewhere the free physical pages, when the OS says), what the
process's cgroup still allows (``memory.max``), and what its address-space limit
(``ulimit -v``, ``RLIMIT_AS``) leaves above what it already maps. ``--max-memory``
replaces it.
"""

from __future__ import annotations

import os
import re

from ..errors import UsageError

#: Bytes per node-frame of each job (see the module docstring).
BYTES_PER_NODE_FRAME = {
    "report": 220,
    "report --dynamics": 3600,
    "accumulated": 2400,
    "gltf": 2000,
    "fbx": 1800,
    "usd": 1800,
}

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"8G"``, ``"500M"``, ``"1.5T"``, ``"123456"`` (bytes; K, M, G, T binary, an
    optional ``B`` or ``iB``) -> bytes; :class:`UsageError` otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if match is None or float(match.group(1)) <= 0:
        raise UsageError(f"--max-memory {text!r}: expected a size such as 16G or 500M")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def format_size(count: float) -> str:
    """Bytes as ``2.44 TiB`` (binary units, three significant digits)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(count) < 1024 or unit == "TiB":
            return f"{count:.3g} {unit}" if unit != "B" else f"{int(count)} B"
        count /= 1024
    raise AssertionError("unreachable")


def estimate(job: str, nodes: int, frames: int) -> int:
    """Bytes ``job`` (a key of :data:`BYTES_PER_NODE_FRAME`) needs for ``nodes x frames``."""
    return BYTES_PER_NODE_FRAME[job] * max(nodes, 1) * max(frames, 1)


def _kib(text: str, field: str) -> int | None:
    match = re.search(rf"^{field}:\s*(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _cgroup_room() -> int | None:
    """What the process's cgroup (v2) still allows, or None without a limit."""
    own = _read("/proc/self/cgroup") or ""
    match = re.search(r"^0::(.*)$", own, re.MULTILINE)
    if match is None:
        return None
    folder = "/sys/fs/cgroup" + match.group(1).strip().rstrip("/")
    top, now = _read(folder + "/memory.max"), _read(folder + "/memory.current")
    if top is None or now is None or top.strip() == "max":
        return None
    return max(0, int(top) - int(now))


def memory_limit() -> tuple[int, str] | None:
    """``(bytes, what)``: the most this process can still allocate and what limits it
    (see the module docstring), or None when the OS tells nothing."""
    found: list[tuple[int, str]] = []
    meminfo = _read("/proc/meminfo")
    available = _kib(meminfo, "MemAvailable") if meminfo else None
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = None
    if available is not None:
        found.append((available, "the memory available"))
    room = _cgroup_room()
    if room is not None:
        found.append((room, "what the cgroup's memory.max leaves"))
    try:
        import resource
    except ImportError:  # Windows
        resource = None  # type: ignore[assignment]
    if resource is not None:
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            status = _read("/proc/self/status")
            mapped = (_kib(status, "VmSize") if status else None) or 0
            found.append(
                (max(0, soft - mapped), f"what the address-space limit (ulimit -v, {format_size(soft)}) leaves")
            )
    return min(found) if found else None


def check_memory(job: str, nodes: int, frames: int, what: str, max_memory: int | None = None) -> int:
    """The estimate for ``job`` over ``nodes x frames``; :class:`UsageError` in one line
    naming it and the limit when it does not fit (``what``: the range as the user gave
    it; ``max_memory``: ``--max-memory`` in bytes, replacing :func:`memory_limit`)."""
    need = estimate(job, nodes, frames)
    limit = (max_memory, "--max-memory") if max_memory is not None else memory_limit()
    if limit is not None and need > limit[0]:
        raise UsageError(
            f"{what}: about {format_size(need)} of memory for {nodes} nodes x {frames} frames ({job}), more than "
            f"the {format_size(limit[0])} this process may use ({limit[1]}): give a shorter range or a larger STEP, "
            "or raise the limit with --max-memory SIZE"
        )
    return need
