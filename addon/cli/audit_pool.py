"""The audit's worker processes (no bpy here): at most ``--jobs`` ``audit-worker``
processes, each auditing many files in turn (:mod:`.audit_worker`), so that Blender's
start-up is paid once per worker instead of once per file, while a crash or a hang
still costs only the file that caused it:

- a worker that dies on a file is replaced; the file is tried once more in a fresh
  worker when the dead one had audited other files before (their leftovers could be
  the cause), and recorded as a crash with the signal and the worker's last words
  when it dies there too;
- a file that takes longer than ``--timeout`` has its worker's process group killed,
  the file is recorded as timed out, and a fresh worker takes the next file;
- workers die with this process: on Linux the kernel kills them when it ends
  (``PR_SET_PDEATHSIG``, also after a ``kill -9``), elsewhere they end at the end of
  their input; on Ctrl-C they are killed;
- everything the workers write (their results, their stderr, Blender's session folders:
  their ``$TMPDIR``) is in one scratch folder (:mod:`..model.system.scratch`), removed at the
  end, or by the next audit when this one was killed.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from ..model.system import scratch
from .console import EXIT_INPUT

#: A worker is replaced after this many files (whatever Blender keeps from file to file
#: stays bounded; bpy 4.2 from PyPI has been seen to corrupt its heap after many resets).
FILES_PER_WORKER = 200

_PR_SET_PDEATHSIG = 1


@dataclass
class Task:
    """One file to audit: ``index`` (unique in the run), its paths, and where its
    picture goes (None: none is drawn)."""

    index: int
    path: str
    relative: str
    picture: str | None = None
    mtime_ns: int = 0
    retried: bool = False
    started: float = field(default_factory=time.perf_counter)


def _die_with_parent(parent: int):
    """A ``preexec_fn``: on Linux the child is killed when this process ends (and ends
    at once if this process has ended already); elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent ended before the request took effect
            os._exit(1)

    return preexec


class Worker:
    """One ``audit-worker`` process and the task it is on; its results, stderr and
    ``$TMPDIR`` are in ``folder``."""

    def __init__(self, command: list[str], folder: str, number: int):
        self.folder = folder
        self.stderr: BinaryIO = open(os.path.join(folder, f"worker{number}.err"), "w+b")
        tmp = os.path.join(folder, f"tmp{number}")  # Blender's session folder goes in here
        os.makedirs(tmp, exist_ok=True)
        env = dict(os.environ, TMPDIR=tmp, TMP=tmp, TEMP=tmp)
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            start_new_session=True,  # its own process group: a timeout stops Blender and anything it started
            preexec_fn=_die_with_parent(os.getpid()),
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        os.set_blocking(self.process.stdout.fileno(), False)
        self.buffer = b""
        self.task: Task | None = None
        self.files = 0
        self.err_from = 0

    def result(self, task: Task) -> str:
        """Where the worker writes ``task``'s record."""
        return os.path.join(self.folder, f"{task.index}.json")

    def send(self, task: Task) -> None:
        self.task = task
        task.started = time.perf_counter()
        self.err_from = os.fstat(self.stderr.fileno()).st_size
        line = {"index": task.index, "path": task.path, "result": self.result(task), "picture": task.picture}
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(line) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except OSError:  # it died already: seen as a crash by the caller
            pass

    def replies(self) -> list[dict]:
        """The whole reply lines that have arrived."""
        assert self.process.stdout is not None
        try:
            while chunk := os.read(self.process.stdout.fileno(), 65536):
                self.buffer += chunk
        except BlockingIOError:
            pass
        *lines, self.buffer = self.buffer.split(b"\n")
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:  # not ours (a library printing to the pipe): ignored
                continue
        return out

    def last_words(self) -> str:
        """Our last line on the worker's stderr since its task began (else its last line)."""
        self.stderr.flush()
        self.stderr.seek(self.err_from)
        lines = self.stderr.read().decode("utf-8", "replace").splitlines()
        ours = [ln.removeprefix("hierarchy_inspector: ") for ln in lines if ln.startswith("hierarchy_inspector:")]
        ours = [ln for ln in ours if not ln.startswith(("audit-worker:", "audit-file:"))]  # summary lines
        return (ours or [ln for ln in lines if ln.strip()] or [""])[-1].strip()[:500]

    def end(self, wait: float = 10.0) -> None:
        """End the worker: its input closed (it finishes and exits), killed if it has not
        after ``wait`` seconds or at once when ``wait`` is 0."""
        if wait and self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(timeout=wait)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _record(task: Task, out_dir: str, status: str, code, message: str, result: str | None = None) -> dict:
    record: dict = {
        "path": task.path,
        "relative": task.relative,
        "mtime_ns": task.mtime_ns,
        "seconds": round(time.perf_counter() - task.started, 3),
        "exit_code": code,
    }
    if result is not None:
        with open(result, encoding="utf-8") as f:
            record.update(json.load(f))
        if record.get("picture"):
            record["picture"] = os.path.relpath(record["picture"], out_dir).replace(os.sep, "/")
    record.update(status=status, message=message)
    return record


class Pool:
    """At most ``jobs`` workers running ``command``, kept from one :meth:`run` to the
    next, and the scratch folder they share; a context manager (workers ended and the
    folder removed on the way out, killed when interrupted)."""

    def __init__(self, command: list[str], jobs: int, timeout: float, out_dir: str):
        self.command, self.jobs, self.timeout, self.out_dir = command, jobs, timeout, out_dir
        self.folder = scratch.make("audit")  # a killed audit's folder is removed here
        self.workers: list[Worker] = []
        self.selector = selectors.DefaultSelector()
        self.started = self.finished = self.total = 0
        self.append: Callable[[dict], None] = lambda _record: None
        self.report: Callable[[int, int, str], None] | None = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, kind, _value, _traceback) -> None:
        self.close(clean=kind is None)

    def run(self, tasks: list[Task], append, report=None) -> None:
        """Audit ``tasks``; ``append(record)`` as each file finishes (in the order they
        finish); ``report(done, total, relative)`` after each."""
        self.append, self.report = append, report
        self.finished, self.total = 0, len(tasks)
        queue = collections.deque(tasks)
        while queue or self.busy():
            for worker in self.idle():
                if worker.files >= FILES_PER_WORKER:
                    self.retire(worker, wait=10.0)
                elif queue:
                    worker.send(queue.popleft())
            while queue and len(self.workers) < self.jobs:
                self.start().send(queue.popleft())
            self.wait(0.05)
            self.check(self.timeout)

    def busy(self) -> bool:
        return any(w.task is not None for w in self.workers)

    def idle(self) -> list[Worker]:
        return [w for w in self.workers if w.task is None]

    def start(self) -> Worker:
        self.started += 1
        worker = Worker(self.command, self.folder, self.started)
        assert worker.process.stdout is not None
        self.selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def retire(self, worker: Worker, wait: float = 0.0) -> None:
        assert worker.process.stdout is not None
        self.selector.unregister(worker.process.stdout)
        self.workers.remove(worker)
        worker.end(wait)

    def _done(self, worker: Worker, record: dict) -> None:
        self.append(record)
        self.finished += 1
        worker.task = None
        if self.report:
            self.report(self.finished, self.total, record["relative"])

    def _answered(self, worker: Worker) -> None:
        """Take the worker's replies: the record of its task, read from its result."""
        for reply in worker.replies():
            task = worker.task
            if task is None or reply.get("index") != task.index:
                continue
            worker.files += 1
            code = reply.get("code")
            if code == 0 and os.path.exists(worker.result(task)):
                self._done(worker, _record(task, self.out_dir, "ok", 0, "", worker.result(task)))
            elif code == EXIT_INPUT:
                self._done(worker, _record(task, self.out_dir, "error", code, reply.get("message", "")))
            else:
                why = reply.get("message") or f"the worker answered {code}"
                self._done(worker, _record(task, self.out_dir, "crash", code, why))

    def wait(self, seconds: float) -> None:
        for key, _events in self.selector.select(timeout=seconds):
            self._answered(key.data)

    def check(self, timeout: float) -> None:
        """Workers past ``timeout`` on their file are stopped and the file recorded;
        workers that died are replaced (their file tried once more in a fresh worker when
        they had audited others before, else recorded as a crash)."""
        now = time.perf_counter()
        for worker in list(self.workers):
            code = worker.process.poll()
            task = worker.task
            if task is not None and code is None and now - task.started > timeout:
                self.retire(worker)
                record = _record(task, self.out_dir, "timeout", None, "")
                record["message"] = f"stopped after {record['seconds']:.0f} s (--timeout)"
                self._done(worker, record)
            elif code is not None:
                self._answered(worker)  # its last answer may have come with its end
                task = worker.task
                self.retire(worker)
                if task is None:
                    continue
                if worker.files and not task.retried:  # leftovers of other files may be the cause
                    task.retried = True
                    self.start().send(task)
                    continue
                why = (
                    f"the worker died of signal {-code} ({_signal_name(-code)})"
                    if code < 0
                    else worker.last_words() or f"the worker exited with {code}"
                )
                self._done(worker, _record(task, self.out_dir, "crash", code, why))

    def close(self, clean: bool) -> None:
        """End every worker (let them finish when ``clean``, else kill them) and remove
        the scratch folder."""
        for worker in list(self.workers):
            self.retire(worker, wait=10.0 if clean else 0.0)
        self.selector.close()
        shutil.rmtree(self.folder, ignore_errors=True)
