"""One running testee process: its pipes, reader threads, and how it is ended.

The runner (``suites/testee/_runner.py``) writes requests with ``send`` and reads response
lines with ``receive``; stderr lines are echoed as they come and the last ones kept for crash
reports.

Bounds: a response line longer than ``max_line_bytes`` is never held: the reader hands over
``OutputTooLong`` as soon as the limit is passed (the line may never end) and skips the rest in
chunks; the runner fails the case and stops the testee. A stderr line is echoed a chunk at a
time.

Ending it: the process runs in a new session, so that killing its process group ends what it
started (``sh -c``, a JVM). A descendant that starts a session of its own leaves that group:
on Linux a watcher thread records the testee's descendants (from ``/proc``) while it runs, and
ending the testee kills every recorded descendant still alive (matched by its start time, so
a reused process id is never hit). A daemon that double-forks and orphans itself between two
looks of the watcher (``WATCH_INTERVAL``) escapes it: a testee must not daemonize.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_LINE_BYTES", "SHUTDOWN_GRACE", "OutputTooLong", "TesteeProcess"]

_STDERR_LINES = 20
_CHUNK = 64 * 1024
SHUTDOWN_GRACE = 5.0
"""Seconds a testee gets to exit after shutdown, and reader threads to finish."""
MAX_LINE_BYTES = 256 * 1024 * 1024
"""The longest response line the runner reads (256 MiB)."""
WATCH_INTERVAL = 0.2
"""Seconds between two looks for the testee's descendants."""
_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class OutputTooLong:
    """A response line longer than the limit: handed over at once, then skipped unread."""

    limit: int


def _process_table() -> dict[int, list[tuple[int, int]]]:
    """Parent id → its children as (process id, start time in clock ticks), from ``/proc``."""
    children: dict[int, list[tuple[int, int]]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (_PROC / entry.name / "stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()  # after "(command)": state, ppid…
                children.setdefault(int(fields[1]), []).append((int(entry.name), int(fields[19])))
    return children


def _descendants(pid: int) -> set[tuple[int, int]]:
    """Every living descendant of ``pid`` as (process id, start time)."""
    table = _process_table()
    found: set[tuple[int, int]] = set()
    todo = [pid]
    while todo:
        for child in table.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child[0])
    return found


def _start_time(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        stat = (_PROC / str(pid) / "stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[19])
    return None


class TesteeProcess:
    """One running testee process with its reader threads."""

    def __init__(
        self, argv: list[str], echo: Callable[[str], None], *, max_line_bytes: int = MAX_LINE_BYTES
    ) -> None:
        # a new session, so that a timeout kills the testee's children too (sh -c, JVM, …)
        self.popen = subprocess.Popen(  # noqa: S603 - the user's own command, without a shell
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
        self.max_line_bytes = max_line_bytes
        self.lines: queue.Queue[bytes | OutputTooLong | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self.descendants: set[tuple[int, int]] = set()
        self._ended = threading.Event()
        self.threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, args=(echo,), daemon=True),
        ]
        if _PROC.is_dir():
            self.threads.append(threading.Thread(target=self._watch, daemon=True))
        for thread in self.threads:
            thread.start()

    def _read_stdout(self) -> None:
        stdout = self.popen.stdout
        if stdout is None:  # pragma: no cover - Popen was given stdout=PIPE
            return
        while line := stdout.readline(self.max_line_bytes + 1):
            if len(line) <= self.max_line_bytes or line.endswith(b"\n"):
                self.lines.put(line)
                continue
            self.lines.put(OutputTooLong(limit=self.max_line_bytes))  # now: it may never end
            while line and not line.endswith(b"\n"):  # skip the rest, never held whole
                line = stdout.readline(_CHUNK)
        self.lines.put(None)

    def _read_stderr(self, echo: Callable[[str], None]) -> None:
        stderr = self.popen.stderr
        if stderr is None:  # pragma: no cover - Popen was given stderr=PIPE
            return
        while raw := stderr.readline(_CHUNK):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.stderr.append(line)
            echo(line)

    def _watch(self) -> None:
        """Record the testee's descendants while it runs (they may leave its group)."""
        while not self._ended.is_set() and self.popen.poll() is None:
            self.descendants |= _descendants(self.popen.pid)
            self._ended.wait(WATCH_INTERVAL)

    def send(self, line: bytes) -> None:
        """Write one request line; a testee that has gone shows up when reading."""
        assert self.popen.stdin is not None

        # a writer thread: a testee that reads nothing while its pipe is full must not
        # block the runner beyond the timeout
        def write() -> None:
            with contextlib.suppress(OSError, ValueError):
                assert self.popen.stdin is not None
                self.popen.stdin.write(line)
                self.popen.stdin.flush()

        threading.Thread(target=write, daemon=True).start()

    def drain(self) -> list[bytes | OutputTooLong]:
        """The lines already written and not asked for (an end of output stays queued)."""
        stray: list[bytes | OutputTooLong] = []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return stray
            if line is None:
                self.lines.put(None)
                return stray
            stray.append(line)

    def receive(self, timeout: float) -> bytes | OutputTooLong | None:
        """The next line, ``None`` when the testee closed its output; ``TimeoutError``."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def exit_status(self) -> str:
        """How the process ended, once it has (waits a little for it)."""
        try:
            code = self.popen.wait(timeout=SHUTDOWN_GRACE)
        except subprocess.TimeoutExpired:
            self.kill()
            return "closed its output but did not exit; killed"
        # the stderr reader may still hold the last lines a crash report quotes
        self.threads[1].join(timeout=SHUTDOWN_GRACE)
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by signal {signal.Signals(-code).name}"
        return f"exit status {code}"

    def kill(self) -> None:
        """Kill the testee, what is left of its process group, and every recorded descendant.

        The group goes too when the testee itself has exited: a child left holding its pipes
        would keep the readers waiting.
        """
        if self.popen.poll() is None and _PROC.is_dir():
            self.descendants |= _descendants(self.popen.pid)
        self._ended.set()
        with contextlib.suppress(OSError):  # ProcessLookupError: nothing left
            if os.name == "posix":
                os.killpg(self.popen.pid, signal.SIGKILL)
            elif self.popen.poll() is None:  # pragma: no cover - no process groups
                self.popen.kill()
        for pid, started in self.descendants:
            if _start_time(pid) == started:  # the same process, not a reused id
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=SHUTDOWN_GRACE)
        self._join()

    def close(self, shutdown: bytes) -> None:
        """Say shutdown, close stdin, give the testee time to exit, then kill it."""
        if self.popen.poll() is None and _PROC.is_dir():
            self.descendants |= _descendants(self.popen.pid)  # before they are orphaned
        if self.popen.poll() is None:
            assert self.popen.stdin is not None
            with contextlib.suppress(OSError, ValueError):
                self.popen.stdin.write(shutdown)
                self.popen.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=SHUTDOWN_GRACE)
        self.kill()

    def _join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=SHUTDOWN_GRACE)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
