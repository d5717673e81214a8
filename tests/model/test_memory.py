"""The memory estimate of a frame range and the limit it is held to (issue 24 item 13)."""

from __future__ import annotations

import pytest
from hierarchy_inspector.addon.model.errors import UsageError
from hierarchy_inspector.addon.model.system import memory


@pytest.mark.parametrize(
    "text, count",
    [("16G", 16 << 30), ("500M", 500 << 20), ("1.5T", 3 << 39), ("123", 123), ("2GiB", 2 << 30), ("4kb", 4096)],
)
def test_sizes(text, count):
    assert memory.parse_size(text) == count


@pytest.mark.parametrize("text", ["", "G", "-1G", "0", "1Q", "1e9"])
def test_bad_sizes_are_usage_errors(text):
    with pytest.raises(UsageError, match="--max-memory"):
        memory.parse_size(text)


def test_format_size():
    assert memory.format_size(2.44 * (1 << 40)) == "2.44 TiB"
    assert memory.format_size(512) == "512 B" and memory.format_size(100 << 20) == "100 MiB"


def test_the_estimate_grows_with_nodes_times_frames():
    one = memory.estimate("report", 29, 1000)
    assert memory.estimate("report", 29, 2000) == 2 * one == memory.estimate("report", 58, 1000)
    assert memory.estimate("report --dynamics", 29, 1000) > 10 * one


def test_check_memory_names_estimate_and_limit():
    with pytest.raises(
        UsageError,
        match=r"--frames 1:9: about 55.3 MiB of memory for 29 nodes x 1000 frames \(gltf\), "
        r"more than the 1 MiB this process may use \(--max-memory\)",
    ):
        memory.check_memory("gltf", 29, 1000, "--frames 1:9", max_memory=1 << 20)
    assert memory.check_memory("gltf", 29, 10, "--frames 1:9", max_memory=1 << 30) == 29 * 10 * 2000


def test_the_limit_of_this_process_is_positive():
    limit = memory.memory_limit()
    assert limit is None or (limit[0] >= 0 and limit[1])
