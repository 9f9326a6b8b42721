"""One running testee process: its pipes, reader threads, and how it is ended.

The runner (``suites/testee/_runner.py``) writes requests with ``send`` and reads response
lines with ``receive``; stderr lines are echoed as they come and the last ones kept for crash
reports. The process runs in a new session, so that ending it ends what it started (``sh -c``,
a JVM).
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

__all__ = ["SHUTDOWN_GRACE", "TesteeProcess"]

_STDERR_LINES = 20
SHUTDOWN_GRACE = 5.0
"""Seconds a testee gets to exit after shutdown, and reader threads to finish."""


class TesteeProcess:
    """One running testee process with its reader threads."""

    def __init__(self, argv: list[str], echo: Callable[[str], None]) -> None:
        # a new session, so that a timeout kills the testee's children too (sh -c, JVM, …)
        self.popen = subprocess.Popen(  # noqa: S603 - the user's own command, without a shell
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )  # fmt: skip
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self.threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, args=(echo,), daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self, echo: Callable[[str], None]) -> None:
        assert self.popen.stderr is not None
        for raw in self.popen.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.stderr.append(line)
            echo(line)

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

    def drain(self) -> list[bytes]:
        """The lines already written and not asked for (an end of output stays queued)."""
        stray: list[bytes] = []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return stray
            if line is None:
                self.lines.put(None)
                return stray
            stray.append(line)

    def receive(self, timeout: float) -> bytes | None:
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
        """Kill the testee and what is left of its process group (all started by it).

        The group goes too when the testee itself has exited: a child left holding its pipes
        would keep the readers waiting.
        """
        with contextlib.suppress(OSError):  # ProcessLookupError: nothing left
            if os.name == "posix":
                os.killpg(self.popen.pid, signal.SIGKILL)
            elif self.popen.poll() is None:  # pragma: no cover - no process groups
                self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=SHUTDOWN_GRACE)
        self._join()

    def close(self, shutdown: bytes) -> None:
        """Say shutdown, close stdin, give the testee time to exit, then kill it."""
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
