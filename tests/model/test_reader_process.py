"""The readers' process and its spare (model/exports/reader_process.py) with a real
Python process that waits for one request line, as ufbx's and usd-core's do."""

from __future__ import annotations

import os

from hierarchy_inspector.addon.model.exports.reader_process import ReaderProcess, Spares

ECHO = ["-c", "import sys; line = sys.stdin.readline(); sys.stderr.write('got ' + line)"]


class Echo(ReaderProcess):
    def __init__(self):
        super().__init__("test", ECHO)

    def ask(self, path: str) -> str:
        self._send(path, {"path": path})
        return self._finish(timeout=60)


def test_a_request_is_one_json_line_and_close_removes_the_folder():
    echo = Echo()
    folder = echo._folder.name
    assert echo.waiting() and os.path.isdir(folder)
    assert echo.ask("a.fbx").strip() == 'got {"path": "a.fbx"}'
    assert not echo.waiting()
    echo.close()
    assert not os.path.exists(folder)


def test_a_waiting_spare_is_taken_and_a_used_one_is_replaced():
    made: list[Echo] = []

    def make() -> Echo:
        made.append(Echo())
        return made[-1]

    spares = Spares(make, lambda: True)
    spares.prepare()
    spares.prepare()  # one spare at most
    assert len(made) == 1
    first = spares.take()
    assert first is made[0] and len(made) == 1
    first.ask("x")  # used: it no longer waits
    spares._spare.append(first)
    second = spares.take()
    assert second is not first and len(made) == 2 and first._proc.poll() is not None
    second.close()
    none = Spares(make, lambda: False)
    none.prepare()
    assert len(made) == 2  # nothing started where the reader is missing
