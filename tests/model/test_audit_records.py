"""Audit records without Blender: shards are a stable partition, JSON Lines survive a
cut-short last line, later lines win, resume skips only final statuses, the summary and
the page name every file."""

from __future__ import annotations

import hashlib
import json

from hierarchy_inspector.addon.model.audit import records as rec
from hierarchy_inspector.addon.model.audit.page import audit_html
from hypothesis import given
from hypothesis import strategies as st

paths = st.text(alphabet="abcxyz/._- é", min_size=1, max_size=30)


@given(paths, st.integers(1, 64))
def test_each_file_is_in_exactly_one_shard(path, n):
    shards = [k for k in range(1, n + 1) if rec.shard_of(path, n) == k]
    assert len(shards) == 1
    # Independent: the first 8 bytes of SHA-256, big-endian, modulo N.
    digest = hashlib.sha256(path.encode()).digest()
    assert shards[0] == int(digest[:8].hex(), 16) % n + 1


def test_shards_do_not_depend_on_the_process_or_separators(monkeypatch):
    # Python's hash() of a str changes from process to process (PYTHONHASHSEED): never used.
    expected = rec.shard_of("lib/a b/c.blend", 7)

    def no_hash(_value):
        raise AssertionError("hash() used")

    monkeypatch.setattr(rec, "hash", no_hash, raising=False)  # found before the builtin
    assert rec.shard_of("lib/a b/c.blend", 7) == expected
    assert rec.shard_of("lib\\a b\\c.blend", 7) == expected


def test_shards_are_balanced():
    n, files = 8, [f"props/set_{i:04d}/asset.blend" for i in range(4000)]
    sizes = [sum(1 for f in files if rec.shard_of(f, n) == k) for k in range(1, n + 1)]
    assert min(sizes) > 0.8 * len(files) / n and max(sizes) < 1.2 * len(files) / n


def test_parse_shard():
    assert rec.parse_shard("2/8") == (2, 8)
    for bad in ("0/8", "9/8", "2", "a/b", "1/2/3"):
        try:
            rec.parse_shard(bad)
        except ValueError as exc:
            assert repr(bad) in str(exc)
        else:
            raise AssertionError(bad)


def _r(path, status="ok", **extra):
    return {"path": "/lib/" + path, "relative": path, "status": status, "mtime_ns": 5, **extra}


def test_lines_later_win_and_cut_lines_are_skipped():
    text = rec.line(_r("a", "timeout")) + rec.line(_r("b")) + rec.line(_r("a", worst_corner=1.0))
    text += rec.line(_r("c"))[:-10]  # a run stopped mid-write
    got = rec.latest(rec.read_lines(text))
    assert [r["relative"] for r in got] == ["a", "b"] and got[0]["status"] == "ok"
    assert all(json.loads(rec.line(r)) == r for r in got)


def test_resume_redoes_timeouts_and_crashes_only():
    records = [_r("a"), _r("b", "error"), _r("c", "timeout"), _r("d", "crash")]
    assert rec.done(records) == {"a": 5, "b": 5}


def test_a_file_seen_through_two_mount_paths_is_one_file():
    """Issue 24 item 6: shards audited through /mnt/a/lib and /mnt/b/lib of one folder
    were counted twice by --merge (the records were keyed by absolute path)."""
    one = {**_r("props/x.blend"), "path": "/mnt/a/lib/props/x.blend"}
    two = {**_r("props/x.blend", worst_corner=2.0), "path": "/mnt/b/lib/props/x.blend"}
    got = rec.latest([one, _r("y.blend"), two])
    assert [r["relative"] for r in got] == ["props/x.blend", "y.blend"] and got[0]["worst_corner"] == 2.0
    assert rec.counts(got)["files"] == 2


def test_a_torn_last_line_is_skipped_with_what_is_glued_to_it():
    """Issue 24 item 7: a power cut leaves the last line without its end; the next line
    appended is glued to it. Both halves are skipped, every whole line is kept."""
    torn = rec.line(_r("a")) + rec.line(_r("b"))[:-25]
    text = torn + rec.line(_r("c")) + rec.line(_r("d"))
    assert [r["relative"] for r in rec.read_lines(text)] == ["a", "d"]


def test_summary_and_page_name_every_file(tmp_path):
    records = [
        _r("small.blend", nodes=3, flagged=1, worst_node="Child", worst_shear_deg=2.0, worst_corner=0.1),
        _r("big.blend", nodes=9, flagged=4, worst_node="Arm > Bone", worst_shear_deg=30.0, worst_corner=2.5),
        _r("bad.blend", "error", message="'bad.blend': not a .blend file"),
    ]
    table = rec.summary_table(records)
    assert table.index("big.blend") < table.index("small.blend")  # worst first
    assert "3 files: 2 inspected (2 with flagged nodes), 1 unreadable" in table
    assert "bad.blend: error: 'bad.blend': not a .blend file" in table
    page = audit_html(records, str(tmp_path))
    assert page.index("big.blend") < page.index("small.blend")
    assert "Arm &gt; Bone" in page and "&#x27;bad.blend&#x27;: not a .blend file" in page


def test_the_page_shows_only_failures_in_red(tmp_path):
    """The counts "0 unreadable, 0 timed out, 0 crashed" are no alarm: plain; one over 0 is red."""
    fine = audit_html([_r("a.blend", worst_shear_deg=1.0)], str(tmp_path))
    assert "0 unreadable, 0 timed out, 0 crashed" in fine and "class=bad" not in fine
    crashed = audit_html([_r("a.blend"), _r("b.blend", "crash", message="signal 11")], str(tmp_path))
    assert "0 unreadable, 0 timed out, <span class=bad>1 crashed</span>" in crashed
